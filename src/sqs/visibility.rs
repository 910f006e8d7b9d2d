//! Visibility on standard queues, held by timers.
//!
//! A receive takes its messages OUT of their lanes at once: one transaction acks them and
//! schedules, per message, a timer that pushes the message back (its redelivery copy) when
//! its visibility timeout ends. No lane is held while a message is in flight, so lanes do
//! not bound how many messages are in flight, and a held message blocks nothing behind it.
//!
//! - The handle names the timer, `vis.<MessageId>.<receive count>.r<receive>`: each
//!   delivery has its own, so a handle from an earlier delivery never touches a later one's
//!   timer, and two receives of one copy (a pop whose lease ran out under a stalled
//!   receive, popped again by another) never share one: undoing one cannot cancel the
//!   other's.
//! - At `VisibilityTimeout=0` the copy is pushed back in the receive's own transaction
//!   instead: visible at once, and counted.
//! - A copy larger than a timer may carry (`fits_a_timer`) is not held here: the receive
//!   moves it to a lane of its own and holds it there by a lease (`receive::hold_by_lease`).
//! - Delete cancels the timer. When it has fired already, SQS still deletes the message
//!   if nobody received it since; a tombstone `qs:del:<queue>:<MessageId>.<receive count>`
//!   marks that delivery, and a receive that pops the copy made at that very
//!   delivery drops it instead of answering it.
//! - ChangeMessageVisibility reads the timer back (its payload is the copy) and
//!   reschedules it: it can shorten a timeout as well as extend it. A reschedule that
//!   finds the timer fired creates a new one; that one is cancelled again. A change that
//!   finds the timer fired answers success and changes nothing, as SQS does once a
//!   visibility has ended (`Changed::Visible`), unless that delivery was deleted late
//!   (its tombstone: `InvalidParameterValue`, as SQS). To 0, the copy is pushed and the
//!   timer cancelled in one transaction, so the message is visible when the call returns;
//!   should the timer have fired in between, the message exists twice (a duplicate, never
//!   a loss).
//! - The copy carries what the message was: its MessageId, SentTimestamp, receive count
//!   and first receive time, as `queen.*` system attributes of the envelope.
//!
//! Costs per message: the pop, one transaction per receive (acks + timers), one cancel per
//! delete (a batch is one call). No KV write on the happy path, so the released engine's
//! KV rate limits do not throttle receives.

use super::redrive;
use super::registry::QueueRecord;
use crate::http::Transport;
use crate::model::{Envelope, ReceiptHandle};
use crate::queen::{
    Ack, KvOp, PopOptions, PoppedMessage, PushItem, QueenError, RollbackReason, TimerCancel,
    TimerOp, TimerSchedule, TimerVerdict, Transaction, TxnOutcome,
};
use crate::ctx::Ctx;
use crate::wire::{ApiError, ErrorCode};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// Timer keys of messages in flight; delayed sends use `sqs.`.
pub const TIMER_PREFIX: &str = "vis.";
/// The SQS MessageId a redelivered copy stands for.
pub const MESSAGE_ID: &str = "queen.messageId";
/// When the message was first received (ms since the epoch).
pub const FIRST_RECEIVE: &str = "queen.firstReceive";
/// The deduplication window of a standard queue's lanes. No send carries a transaction id
/// there (SQS standard queues deduplicate nothing); only a visibility change to 0 does,
/// the id of the timer it replaces, so that it and the timer's fire never both land.
pub const DUPLICATE_GUARD_SECONDS: u64 = 120;
/// How long a receive's pops are leased before its transaction takes them out of their
/// lanes: if the facade dies in between, the messages are visible again after this.
pub const POP_LEASE_SECONDS: u64 = 30;

/// The largest payload a broker timer carries (decoded), on both brokers.
pub const TIMER_PAYLOAD_MAX: usize = 1_048_576;

/// The timer key of one delivery: the message, its receive count, and the receive (a tag
/// of the pop's lease id, unique per pop call).
pub fn timer_key(message_id: &str, count: u32, lease_id: &str) -> String {
    let tag: String = lease_id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .rev()
        .take(12)
        .collect();
    format!("{TIMER_PREFIX}{message_id}.{count}.r{tag}")
}

/// The receive count a timer key was minted at (keys minted before the receive tag end
/// in the count).
fn count_of_key(key: &str) -> Option<u32> {
    let mut parts = key.rsplit('.');
    let last = parts.next()?;
    let count = if last.starts_with('r') {
        parts.next()?
    } else {
        last
    };
    count.parse().ok()
}

/// The copy's payload text, when a timer can carry it.
pub fn fits_a_timer(copy: &Envelope) -> Option<String> {
    let text = copy.to_json().to_string();
    (text.len() <= TIMER_PAYLOAD_MAX).then_some(text)
}

/// Lanes of one oversized message each: `solo.<MessageId>`.
const SOLO_PREFIX: &str = "solo.";

pub fn solo_lane(message_id: &str) -> String {
    format!("{SOLO_PREFIX}{message_id}")
}

pub fn is_solo_lane(partition: &str) -> bool {
    partition.starts_with(SOLO_PREFIX)
}

/// When a delayed message too large for a timer becomes visible (ms since the epoch). Its
/// delay is held by a lease on its lane, taken only after the push; whoever pops it before
/// that (a receive in between, or after a hold that failed) sees this and holds it back.
pub const VISIBLE_AT: &str = "queen.visibleAt";

/// Stamps a delayed oversized message with the end of its delay.
pub fn stamp_visible_at(e: &mut Envelope, now_ms: i64, delay_s: u64) {
    let at = now_ms.saturating_add((delay_s as i64).saturating_mul(1000));
    redrive::put(e, VISIBLE_AT, "Number", at.to_string());
}

/// Whole seconds a popped message of a lane of its own is still delayed for, if any.
pub fn still_delayed(e: &Envelope, m: &PoppedMessage, now_ms: i64) -> Option<u64> {
    if !is_solo_lane(&m.partition) {
        return None;
    }
    let left_ms = redrive::number(e, VISIBLE_AT)?.saturating_sub(now_ms);
    (left_ms > 0).then(|| (left_ms as u64).div_ceil(1000))
}

/// Holds lanes of one message each for a while: a pinned pop under a lease of that many
/// seconds, which blocks nothing else. A hold that fails leaves the message visible; a
/// receive that pops it then holds it back again (`still_delayed`).
pub async fn hold_lanes<T: Transport>(ctx: &Ctx<'_, T>, q: &QueueRecord, lanes: &[(String, u64)]) {
    let holds = lanes.iter().map(|(lane, seconds)| {
        let opts = PopOptions {
            wait_ms: None,
            lease_seconds: Some(*seconds),
        };
        ctx.queen.pop_one(&q.name, Some(lane), opts)
    });
    let _visible_if_it_failed = futures_util::future::join_all(holds).await;
}

/// The push that puts a copy back in its lane at once (a receive at visibility 0).
pub fn requeue(q: &QueueRecord, partition: &str, copy: &Envelope) -> PushItem {
    PushItem {
        queue: q.name.clone(),
        partition: partition.to_string(),
        payload: copy.to_json(),
        transaction_id: None,
    }
}

/// The mark of one delivery deleted after its timer fired. One key per delivery, so a late
/// delete of an older delivery cannot overwrite the mark of a newer one.
fn tombstone_key(queue: &str, message_id: &str, count: u32) -> String {
    format!("qs:del:{queue}:{message_id}.{count}")
}

/// The SQS MessageId of a popped message: a redelivered copy's, else its broker id.
pub fn message_id(e: &Envelope, m: &PoppedMessage) -> String {
    redrive::text(e, MESSAGE_ID).unwrap_or_else(|| m.id.clone())
}

pub fn first_receive(e: &Envelope) -> Option<i64> {
    redrive::number(e, FIRST_RECEIVE)
}

/// The copy a visibility timer pushes back: the message as it is after `count` receives.
pub fn redelivery_copy(
    mut e: Envelope,
    message_id: &str,
    count: u32,
    sent_ms: Option<i64>,
    first_receive_ms: i64,
) -> Envelope {
    redrive::put(&mut e, MESSAGE_ID, "String", message_id.to_string());
    redrive::put(&mut e, redrive::RECEIVE_COUNT, "Number", count.to_string());
    redrive::put(
        &mut e,
        FIRST_RECEIVE,
        "Number",
        first_receive_ms.to_string(),
    );
    if let Some(ms) = sent_ms {
        redrive::put(&mut e, redrive::SENT_TIMESTAMP, "Number", ms.to_string());
    }
    e
}

/// What a receive does with one popped message.
pub enum Fate {
    /// Answered, and held for `visibility` by a timer carrying the copy (`payload`, its
    /// JSON text).
    Hold { timer_key: String, payload: String },
    /// Answered at visibility 0: the copy pushed back.
    Requeue(PushItem),
    /// Moved to the dead-letter queue.
    DeadLetter(PushItem),
    /// Deleted after its timer fired, or a second copy of one delivery: dropped.
    Drop,
    /// Too large for a timer: moved to a lane of its own (the push), then held by a lease.
    Relocate(PushItem),
    /// Too large for a timer, in its own lane already: given back to it (ack `retry`)
    /// after the transaction, then held by a lease.
    GiveBack,
    /// Behind a given-back message in its lane: left to the give-back's release.
    Leave,
}

/// Of the popped copies (index, MessageId, receive count carried), those deleted late:
/// one KV read for all of them, only for redelivered copies.
pub async fn deleted_late<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    copies: &[(usize, String, u32)],
) -> Vec<usize> {
    if copies.is_empty() {
        return Vec::new();
    }
    let keys = copies
        .iter()
        .map(|(_, id, count)| tombstone_key(&q.name, id, *count))
        .collect();
    // An unreadable tombstone delivers the message: a duplicate, never a loss.
    let Ok(results) = ctx.queen.kv_results(vec![KvOp::get_many(keys)]).await else {
        return Vec::new();
    };
    let rows = results
        .into_iter()
        .next()
        .map(|r| r.rows)
        .unwrap_or_default();
    copies
        .iter()
        .filter(|(_, id, count)| {
            let key = tombstone_key(&q.name, id, *count);
            rows.iter().any(|r| r.key == key)
        })
        .map(|(i, _, _)| *i)
        .collect()
}

/// Takes popped messages out of their lanes: ONE transaction with the dead-letter pushes,
/// the acks of every message (each under its pop's lease) and the visibility timers.
/// Answers, per message, whether it was taken; what was not taken stays under its pop's
/// lease and comes back when that runs out.
pub async fn settle_receive<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    popped: &[(&PoppedMessage, String, Fate)],
    visibility_s: u64,
) -> Result<Vec<bool>, ApiError> {
    let mut txn = Transaction::default();
    for (m, lease, fate) in popped {
        if matches!(fate, Fate::GiveBack | Fate::Leave) {
            continue;
        }
        txn.acks.push(Ack {
            transaction_id: m.transaction_id.clone(),
            partition_id: m.partition_id.clone(),
            status: "completed",
            lease_id: Some(lease.clone()),
        });
        match fate {
            Fate::Hold { timer_key, payload } => txn.timers.push(TimerOp::Schedule(schedule(
                q,
                timer_key,
                &m.partition,
                visibility_s * 1000,
                payload,
            ))),
            Fate::Requeue(push) | Fate::Relocate(push) | Fate::DeadLetter(push) => {
                txn.pushes.push(push.clone())
            }
            Fate::Drop | Fate::GiveBack | Fate::Leave => {}
        }
    }
    if txn.acks.is_empty() {
        return Ok(vec![false; popped.len()]);
    }
    let mut backoff_ms = 50;
    loop {
        match ctx.queen.transaction(&txn).await {
            Ok(TxnOutcome::Committed(_)) => return Ok(vec![true; popped.len()]),
            Ok(TxnOutcome::RolledBack {
                reason: RollbackReason::AckRejected,
                ..
            }) => {
                return settle_in_two_steps(ctx, q, popped, txn).await;
            }
            Ok(TxnOutcome::RolledBack { .. }) => return Ok(vec![false; popped.len()]),
            // The released engine charges a timers rider to its KV write rate (100 calls/s
            // by default): wait a little and try again, then give the messages back.
            Err(QueenError::Throttled { .. }) if backoff_ms <= THROTTLE_BACKOFF_MAX_MS => {
                ctx.queen.transport().pause(backoff_ms).await;
                backoff_ms *= 2;
            }
            Err(e) => {
                // Given back at once (ack `retry` is never rate-limited as a KV write), so
                // a receive that failed does not hide them for the pop's lease.
                retry(ctx, popped, |_| true).await;
                return Err(e.into());
            }
        }
    }
}

/// The released engine resolves a transactional ack through an index it purges some time
/// after the push (`completedRetentionSeconds`, at least 900 s), so a message that waited
/// longer than that cannot be acked inside a transaction, while a plain ack still works.
/// Then: the timers and dead-letter pushes in one transaction, the plain acks after it.
/// A message whose ack fails (its lease lost, or its queue deleted meanwhile) stays with its
/// lease: its timer is cancelled again and it is not answered. Should that cancel come too
/// late, the message exists twice (a duplicate, never a loss).
async fn settle_in_two_steps<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    popped: &[(&PoppedMessage, String, Fate)],
    mut txn: Transaction,
) -> Result<Vec<bool>, ApiError> {
    let acks = std::mem::take(&mut txn.acks);
    if !txn.pushes.is_empty() || !txn.timers.is_empty() {
        match ctx.queen.transaction(&txn).await? {
            TxnOutcome::Committed(_) => {}
            TxnOutcome::RolledBack { .. } => return Ok(vec![false; popped.len()]),
        }
    }
    let taken: Vec<bool> = match ctx.queen.ack_batch(&acks).await {
        Ok(answers) if answers.len() == acks.len() => answers.iter().map(|a| a.success).collect(),
        _ => vec![false; popped.len()],
    };
    let undo: Vec<TimerOp> = popped
        .iter()
        .zip(&taken)
        .filter_map(|((_, _, fate), ok)| match fate {
            Fate::Hold { timer_key, .. } if !ok => {
                Some(TimerOp::Cancel(TimerCancel::new(&q.name, timer_key)))
            }
            _ => None,
        })
        .collect();
    if !undo.is_empty() {
        let _ = ctx.queen.timer_ops(&undo).await;
    }
    Ok(taken)
}

/// The longest single wait of a throttled receive transaction (50, 100, … ms: ~1.5 s in
/// all before the receive answers the throttle).
const THROTTLE_BACKOFF_MAX_MS: u64 = 800;

/// Gives the oversized messages of a receive back to their lanes (ack `retry` at each:
/// the lane's lease ends there, the messages before it having been taken).
pub async fn give_back<T: Transport>(ctx: &Ctx<'_, T>, popped: &[(&PoppedMessage, String, Fate)]) {
    retry(ctx, popped, |f| matches!(f, Fate::GiveBack)).await;
}

/// Acks `retry` each popped message whose fate `pick` names, under its pop's lease, in
/// one call. One that fails leaves that lease to run out: the message comes back then.
async fn retry<T: Transport>(
    ctx: &Ctx<'_, T>,
    popped: &[(&PoppedMessage, String, Fate)],
    pick: impl Fn(&Fate) -> bool,
) {
    let acks: Vec<Ack> = popped
        .iter()
        .filter(|(_, _, f)| pick(f))
        .map(|(m, lease, _)| Ack {
            transaction_id: m.transaction_id.clone(),
            partition_id: m.partition_id.clone(),
            status: "retry",
            lease_id: Some(lease.clone()),
        })
        .collect();
    if !acks.is_empty() {
        let _lease_runs_out_otherwise = ctx.queen.ack_batch(&acks).await;
    }
}

fn schedule(
    q: &QueueRecord,
    key: &str,
    partition: &str,
    delay_ms: u64,
    text: &str,
) -> TimerSchedule {
    TimerSchedule {
        op: "schedule",
        queue: q.name.clone(),
        timer_key: key.to_string(),
        partition: partition.to_string(),
        delay_ms,
        txn: key.to_string(),
        payload: STANDARD.encode(text.as_bytes()),
    }
}

/// Deletes of timed handles, one timers call for all; a verdict per handle, in order.
pub async fn delete<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    handles: &[&ReceiptHandle],
) -> Result<Vec<Result<(), ApiError>>, ApiError> {
    // A batch may name one handle twice (SQS asks only for distinct entry ids): one cancel
    // per timer, as the broker wants each key once per call.
    let mut keys: Vec<&str> = Vec::new();
    for h in handles {
        if !keys.contains(&key_of(h)) {
            keys.push(key_of(h));
        }
    }
    let ops: Vec<TimerOp> = keys
        .iter()
        .map(|k| TimerOp::Cancel(TimerCancel::new(&q.name, k)))
        .collect();
    let verdicts = ctx.queen.timer_ops(&ops).await?;
    // Fired (or being fired): the copy is back in the queue; mark that delivery.
    let mut late: Vec<String> = Vec::new();
    for (key, v) in keys.iter().zip(&verdicts) {
        if TimerVerdict::of(&v.status) == TimerVerdict::Cancelled {
            continue;
        }
        let (Some(h), Some(count)) = (
            handles.iter().find(|h| key_of(h) == *key),
            count_of_key(key),
        ) else {
            continue;
        };
        let mark = tombstone_key(&q.name, &h.message_id, count);
        if !late.contains(&mark) {
            late.push(mark);
        }
    }
    if !late.is_empty() {
        let ttl = q.retention_seconds().max(60);
        let ops = late
            .into_iter()
            .map(|k| KvOp::put_ttl(k, serde_json::json!(true), ttl, None))
            .collect();
        ctx.queen.kv_results(ops).await?;
    }
    Ok(handles.iter().map(|_| Ok(())).collect())
}

fn key_of(h: &ReceiptHandle) -> &str {
    h.timer_key.as_deref().unwrap_or("")
}

/// What a visibility change of a timed handle did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed {
    /// The timer was rescheduled, or at 0 the copy pushed back in its place.
    Applied,
    /// The delivery's timer had fired: the message is visible again, and nobody deleted
    /// it. SQS answers such a change with success and changes nothing.
    Visible,
    /// The delivery was deleted after its timer fired (its tombstone), or its queue was
    /// purged since: SQS refuses the handle. A delete while the timer still ran leaves no mark, so that case is
    /// answered as `Visible` (`docs/divergences.md`).
    Deleted,
}

/// A visibility change of a timed handle: the timer read back and rescheduled, or at 0
/// the copy pushed and the timer cancelled together.
pub async fn change<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    h: &ReceiptHandle,
    seconds: u64,
) -> Result<Changed, ApiError> {
    let key = key_of(h);
    let peek = ctx.queen.timer_peek(&q.name, key).await?;
    if !peek.found {
        return not_held(ctx, q, h).await;
    }
    if seconds == 0 {
        let payload = STANDARD
            .decode(peek.payload.as_bytes())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(|| QueenError::BadAnswer("a visibility timer's payload".into()))?;
        // The copy is pushed under the timer's own transaction id, the one its fire
        // gives the message it pushes: should the timer have fired since the read, the
        // broker's deduplication refuses this push and the whole change rolls back, so the
        // message is never in the queue twice (`DUPLICATE_GUARD_SECONDS`).
        let txn = Transaction {
            pushes: vec![PushItem {
                queue: q.name.clone(),
                partition: peek.partition.clone(),
                payload,
                transaction_id: Some(peek.txn.clone()),
            }],
            timers: vec![TimerOp::Cancel(TimerCancel::new(&q.name, key))],
            ..Transaction::default()
        };
        return match ctx.queen.transaction(&txn).await? {
            TxnOutcome::Committed(results) => {
                match results
                    .last()
                    .and_then(|r| r.status.as_deref())
                    .map(TimerVerdict::of)
                {
                    Some(TimerVerdict::Cancelled) => Ok(Changed::Applied),
                    // Being fired as the change committed (or on a queue configured before
                    // the guard): a duplicate, never a loss; visible either way.
                    _ => Ok(Changed::Visible),
                }
            }
            // Fired before the change: the message is visible already.
            TxnOutcome::RolledBack {
                reason: RollbackReason::Duplicate,
                ..
            } => Ok(Changed::Visible),
            TxnOutcome::RolledBack { reason, error } => Err(ApiError::new(
                ErrorCode::InternalError,
                format!("The visibility change failed ({reason}): {error}"),
            )),
        };
    }
    let op = TimerSchedule {
        op: "reschedule",
        queue: q.name.clone(),
        timer_key: key.to_string(),
        partition: peek.partition,
        delay_ms: seconds * 1000,
        txn: peek.txn,
        payload: peek.payload,
    };
    let verdict = ctx.queen.timer_ops(&[TimerOp::Schedule(op)]).await?;
    match verdict.first().map(|v| TimerVerdict::of(&v.status)) {
        Some(TimerVerdict::Rescheduled) => Ok(Changed::Applied),
        Some(TimerVerdict::Scheduled) => {
            // The timer fired between the read and the reschedule, which created a new
            // one: the message is back in the queue, so the new timer must not fire too.
            let _ = ctx.queen.timer_cancel(&q.name, key).await;
            Ok(Changed::Visible)
        }
        _ => not_held(ctx, q, h).await,
    }
}

/// Whether the handle's delivery was made before the queue was last purged (or made
/// again): its message is gone with the rest, as SQS says of a purge, so a change of it
/// is refused as a change of a deleted message. The receive time is read off the handle.
fn received_before_emptied(q: &QueueRecord, h: &ReceiptHandle) -> bool {
    let received_ms = h.expiry_unix_ms - super::receive::HANDLE_LIFETIME_MS;
    received_ms < q.purged.max(q.created.saturating_mul(1000))
}

/// A delivery whose timer is gone: deleted late (its tombstone), emptied by a purge, or
/// visible again.
async fn not_held<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    h: &ReceiptHandle,
) -> Result<Changed, ApiError> {
    if received_before_emptied(q, h) {
        return Ok(Changed::Deleted);
    }
    let Some(count) = count_of_key(key_of(h)) else {
        return Ok(Changed::Visible);
    };
    let key = tombstone_key(&q.name, &h.message_id, count);
    let results = ctx
        .queen
        .kv_results(vec![KvOp::get_many(vec![key.clone()])])
        .await?;
    let marked = results
        .into_iter()
        .next()
        .is_some_and(|r| r.rows.iter().any(|row| row.key == key));
    Ok(if marked {
        Changed::Deleted
    } else {
        Changed::Visible
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_the_receive_count() {
        let k = timer_key("0193-ab.c", 7, "0190-aaaa-bbbb-cccc-1234567890ab");
        assert_eq!(k, "vis.0193-ab.c.7.rba0987654321");
        assert_eq!(count_of_key(&k), Some(7));
        // Keys minted before the receive tag.
        assert_eq!(count_of_key("vis.0193-ab.c.7"), Some(7));
        assert_eq!(count_of_key("vis.x"), None);
        // Two receives of one copy hold it under two timers.
        assert_ne!(
            timer_key("m", 2, "0190-0000-0000-0000-00000000000a"),
            timer_key("m", 2, "0190-0000-0000-0000-00000000000b")
        );
    }

    #[test]
    fn a_copy_carries_what_the_message_was() {
        let e = Envelope {
            body: "b".into(),
            ..Default::default()
        };
        let c = redelivery_copy(e, "id-1", 3, Some(1_700_000_000_000), 1_700_000_000_500);
        assert_eq!(redrive::text(&c, MESSAGE_ID).as_deref(), Some("id-1"));
        assert_eq!(redrive::carried_count(&c), 3);
        assert_eq!(redrive::sent_timestamp(&c), Some(1_700_000_000_000));
        assert_eq!(first_receive(&c), Some(1_700_000_000_500));
        let back = Envelope::from_payload(&c.to_json()).unwrap();
        assert_eq!(back, c);
        // A copy of a copy keeps the first receive it was given.
        let again = redelivery_copy(back, "id-1", 4, None, 1_700_000_000_500);
        assert_eq!(redrive::carried_count(&again), 4);
        assert_eq!(redrive::sent_timestamp(&again), Some(1_700_000_000_000));
    }
}
