//! Held by a visibility timer (standard queues).
//!
//! A receive takes its messages OUT of their lanes at once (`standard`): one transaction
//! acks them and schedules, per message, a timer that pushes the message back (its
//! redelivery copy, `carried::redelivery`) when its visibility timeout ends. No lane is
//! held while a message is in flight, so lanes do not bound how many messages are in
//! flight, and a held message blocks nothing behind it.
//!
//! - The handle names the timer, `vis.<MessageId>.<receive count>.r<receive>`: each
//!   delivery has its own, so a handle from an earlier delivery never touches a later one's
//!   timer, and two receives of one copy (a pop whose lease ran out under a stalled
//!   receive, popped again by another) never share one: undoing one cannot cancel the
//!   other's.
//! - Delete cancels the timer. When it has fired already, SQS still deletes the message
//!   if nobody received it since; a tombstone `qs:del:<queue>:<MessageId>.<receive count>`
//!   marks that delivery, and a receive that pops the copy made at that very delivery
//!   drops it instead of answering it (`deleted_late`).
//! - ChangeMessageVisibility reads the timer back (its payload is the copy) and
//!   reschedules it: it can shorten a timeout as well as extend it. A reschedule that
//!   finds the timer fired creates a new one; its fire is marked and it is cancelled
//!   again (`void_stray`). A change that finds the timer fired answers success and
//!   changes nothing, as SQS does once a visibility has ended (`Changed::Visible`),
//!   unless that delivery was deleted late or purged (`Changed::Deleted`). To 0, the
//!   copy is pushed and the timer cancelled in one transaction, so the message is
//!   visible when the call returns. Should the engine's sweeper hold the timer at that
//!   moment (its cancel answers `too_late`), its fire will push a second copy of that
//!   delivery, at once or after its claim lease: the fire's broker id is marked
//!   (`stray_key`, beside the tombstones) and a receive drops that copy, so a message
//!   released and deleted does not come back (checker engine seed 461).
//!
//! - A reschedule carries a fence (a create-only KV write in its transaction) that the host
//!   writes itself when the call's outcome is unknown, so a change that reaches the broker
//!   after the host gave up on it cannot re-create a fired timer (`reschedule_fenced`).
//!
//! Costs per message: one cancel per delete (a batch is one call). No KV write on a
//! receive or a delete, so the released engine's KV rate limits do not throttle them; a
//! visibility change writes its fence (one KV row, gone after `FENCE_SECONDS`).

use super::{received_ms, Changed};
use crate::calendar::parse_iso_ms;
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{Envelope, ReceiptHandle};
use crate::queen::{
    KvOp, PushItem, QueenError, RollbackReason, ScheduleOp, TimerCancel, TimerOp, TimerPeek,
    TimerSchedule, TimerVerdict, Transaction, TxnOutcome,
};
use crate::sqs::registry::{self, QueueRecord};
use crate::wire::{ApiError, ErrorCode};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// Timer keys of messages in flight; delayed sends use `sqs.`.
pub const TIMER_PREFIX: &str = "vis.";
/// The deduplication window of a standard queue's lanes. No send carries a transaction id
/// there (SQS standard queues deduplicate nothing); only a visibility change to 0 does,
/// the id of the timer it replaces, so that it and the timer's fire never both land.
pub const DUPLICATE_GUARD_SECONDS: u64 = 120;
/// The largest payload a broker timer carries (decoded), on both brokers.
pub const TIMER_PAYLOAD_MAX: usize = 1_048_576;

/// The timer key of one delivery: the message, its receive count, and the receive (a tag
/// of the pop's lease id, unique per pop call).
pub fn key(message_id: &str, count: u32, lease_id: &str) -> String {
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

fn key_of(h: &ReceiptHandle) -> &str {
    h.timer_key.as_deref().unwrap_or("")
}

/// The copy's payload text, when a timer can carry it.
pub fn fits(copy: &Envelope) -> Option<String> {
    let text = copy.to_json().to_string();
    (text.len() <= TIMER_PAYLOAD_MAX).then_some(text)
}

/// The timer that pushes `text` (a copy) back into `partition` after `delay_ms`, keyed by
/// the delivery; the push it makes carries the key as its transaction id.
pub fn schedule(
    q: &QueueRecord,
    key: &str,
    partition: &str,
    delay_ms: u64,
    text: &str,
) -> TimerSchedule {
    TimerSchedule {
        op: ScheduleOp::Schedule,
        queue: q.name.clone(),
        timer_key: key.to_string(),
        partition: partition.to_string(),
        delay_ms,
        txn: key.to_string(),
        payload: STANDARD.encode(text.as_bytes()),
    }
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

/// The mark of a timer's fire that a visibility change to 0 superseded: the copy the fire
/// pushes, under the broker id `fire_id`, is a second one of that delivery. Beside the
/// delivery's tombstones, so the receive's one prefix read finds both.
fn stray_key(queue: &str, message_id: &str, count: u32, fire_id: &str) -> String {
    format!("qs:del:{queue}:{message_id}.{count}.fire.{fire_id}")
}

/// A copy a receive popped and may have to drop: its slot, MessageId, the receive count
/// it carries, and its broker id.
pub struct PoppedCopy<'c> {
    pub slot: usize,
    pub message_id: String,
    pub count: u32,
    pub broker_id: &'c str,
}

/// What the marks of one message say: the oldest delivery deleted late, and the fires
/// superseded (receive count, broker id).
#[derive(Default)]
struct Marks {
    oldest_deleted: Option<u32>,
    strays: Vec<(u32, String)>,
}

impl Marks {
    fn read(rows: &[crate::queen::KvRow], prefix: &str) -> Marks {
        let mut marks = Marks::default();
        for rest in rows.iter().filter_map(|r| r.key.strip_prefix(prefix)) {
            if let Ok(count) = rest.parse::<u32>() {
                marks.oldest_deleted = Some(marks.oldest_deleted.map_or(count, |o| o.min(count)));
            } else if let Some((count, fire)) = rest.split_once(".fire.") {
                if let Ok(count) = count.parse::<u32>() {
                    marks.strays.push((count, fire.to_string()));
                }
            }
        }
        marks
    }

    fn drops(&self, c: &PoppedCopy<'_>) -> bool {
        self.oldest_deleted
            .is_some_and(|deleted| deleted <= c.count)
            || self
                .strays
                .iter()
                .any(|(count, fire)| *count == c.count && fire == c.broker_id)
    }
}

/// Of the popped copies, those deleted late or pushed by a superseded fire (`stray_key`):
/// a copy is dropped when a delivery of its message as old as the copy's, or older, was
/// deleted after its visibility ended. As SQS deletes a visible message by an older
/// receipt handle (recorded: the filter-policy tests receive at visibility 0, receive
/// again, and delete by the first handle), so a copy made since an older delivery's late
/// delete does not come back either; a delete by an older handle while a newer delivery
/// is in flight may so delete the message ("the request succeeds, but the message might
/// not be deleted", SQS says of it). One KV call for all of them: a prefix read of each
/// message's tombstones.
pub async fn deleted_late<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    copies: &[PoppedCopy<'_>],
) -> Vec<usize> {
    let mut ids: Vec<&str> = Vec::new();
    for c in copies {
        if !ids.contains(&c.message_id.as_str()) {
            ids.push(&c.message_id);
        }
    }
    if ids.is_empty() {
        return Vec::new();
    }
    let ops: Vec<KvOp> = ids
        .iter()
        .map(|id| KvOp::get_prefix(tombstone_prefix(&q.name, id), None, TOMBSTONES_READ))
        .collect();
    // Read again after a pause when the read fails (checker engine seed 549: a 429 on it
    // delivered a superseded fire's copy after the delete of the delivery before it). Should
    // every try fail, the copies are delivered: a duplicate, never a loss.
    let Some(results) = tried(ctx, || async {
        ctx.queen.kv_results(ops.clone()).await.ok()
    })
    .await
    else {
        return Vec::new();
    };
    let marks: Vec<Marks> = ids
        .iter()
        .zip(results.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(id, r)| {
            r.map_or_else(Marks::default, |r| {
                Marks::read(&r.rows, &tombstone_prefix(&q.name, id))
            })
        })
        .collect();
    copies
        .iter()
        .filter(|c| {
            let at = ids.iter().position(|x| *x == c.message_id);
            at.is_some_and(|i| marks[i].drops(c))
        })
        .map(|c| c.slot)
        .collect()
}

/// How many tombstones of one message a receive reads: a message is deleted late once or
/// a few times at most.
const TOMBSTONES_READ: u32 = 100;
/// Tries of a follow-up call whose failure leaves a duplicate behind (a tombstone read, a
/// stray timer's cancel or mark, a fence's close), with pauses of 20 ms, then 80 ms.
const FOLLOW_UP_TRIES: usize = 3;

/// `call` tried up to `FOLLOW_UP_TRIES` times, until it answers something.
async fn tried<T, R, F, Fut>(ctx: &Ctx<'_, T>, mut call: F) -> Option<R>
where
    T: Transport,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<R>>,
{
    let mut pause_ms = 20;
    for attempt in 1..=FOLLOW_UP_TRIES {
        if let Some(answer) = call().await {
            return Some(answer);
        }
        if attempt < FOLLOW_UP_TRIES {
            ctx.queen.transport().pause(pause_ms).await;
            pause_ms *= 4;
        }
    }
    None
}

fn tombstone_prefix(queue: &str, message_id: &str) -> String {
    format!("qs:del:{queue}:{message_id}.")
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
    // Fired (or being fired): the copy is back in the queue; mark that delivery, unless a
    // newer delivery holds the message now: SQS does not delete a message in flight by an
    // older delivery's handle ("the request succeeds, but the message will not be
    // deleted"), while it deletes a visible one by it.
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
        if newer_delivery(ctx, q, &h.message_id, count)
            .await?
            .is_some()
        {
            continue;
        }
        let mark = tombstone_key(&q.name, &h.message_id, count);
        if !late.contains(&mark) {
            late.push(mark);
        }
    }
    mark_deleted(ctx, q, late).await?;
    Ok(handles.iter().map(|_| Ok(())).collect())
}

/// Writes tombstones (`tombstone_key`s): a receive that pops a copy of such a delivery
/// drops it instead of answering it.
async fn mark_deleted<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    marks: Vec<String>,
) -> Result<(), ApiError> {
    if marks.is_empty() {
        return Ok(());
    }
    let ttl = q.retention_seconds().max(60);
    let ops = marks
        .into_iter()
        .map(|k| KvOp::put_ttl(k, serde_json::json!(true), ttl, None))
        .collect();
    ctx.queen.kv_results(ops).await?;
    Ok(())
}

/// A visibility change of a timed handle: the timer read back and rescheduled, or at 0
/// the copy pushed and the timer cancelled together.
///
/// `slot` tells apart the entries of one batch (each gets a fence key of its own).
pub async fn change<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    h: &ReceiptHandle,
    seconds: u64,
    slot: usize,
) -> Result<Changed, ApiError> {
    let key = key_of(h);
    let peek = ctx.queen.timer_peek(&q.name, key).await?;
    if !peek.found {
        let held = not_held(ctx, q, h).await?;
        if held == Changed::Visible && seconds == 0 {
            return release_current(ctx, q, h).await;
        }
        return Ok(held);
    }
    if seconds == 0 {
        return release(ctx, q, h, peek).await;
    }
    let op = TimerSchedule {
        op: ScheduleOp::Reschedule,
        queue: q.name.clone(),
        timer_key: key.to_string(),
        partition: peek.partition,
        delay_ms: seconds * 1000,
        txn: peek.txn,
        payload: peek.payload,
    };
    let fence = fence_key(&q.name, key, ctx.request_id, slot);
    match reschedule_fenced(ctx, op, fence).await? {
        Some(Landed {
            verdict: TimerVerdict::Rescheduled,
            ..
        }) => Ok(Changed::Applied),
        Some(Landed {
            verdict: TimerVerdict::Scheduled,
            fire_id,
        }) => {
            // The timer fired between the read and the reschedule, which created a new
            // one: the message is back in the queue, so the new timer must not fire too.
            void_stray(ctx, q, h, fire_id).await;
            Ok(Changed::Visible)
        }
        _ => not_held(ctx, q, h).await,
    }
}

/// A committed reschedule: the timer's verdict, and the broker id its fire gives the copy.
struct Landed {
    verdict: TimerVerdict,
    fire_id: Option<String>,
}

/// Makes harmless the timer a reschedule created after the one it meant had fired: its
/// fire would push a second copy of a delivery whose first copy is back in the queue, and
/// that copy would come back after the first one's redelivery was deleted. The fire is
/// marked first (`stray_key`: a receive drops its copy), since by the time the change's
/// answer is heard the new timer may have fired already (checker engine seed 565: the
/// answer came 1.6 s late, the new timer was due after 1 s), then the timer is cancelled,
/// so that, in time, no copy is pushed at all.
async fn void_stray<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    h: &ReceiptHandle,
    fire_id: Option<String>,
) {
    let key = key_of(h);
    if let (Some(fire), Some(count)) = (fire_id, count_of_key(key)) {
        mark_stray(ctx, q, stray_key(&q.name, &h.message_id, count, &fire)).await;
    }
    cancel_stray(ctx, q, key).await;
}

/// How long a reschedule's fence stands: longer than any call can travel to the broker
/// after the host stopped waiting for it (the host waits 30 s).
const FENCE_SECONDS: u64 = 600;

/// The fence of one reschedule: a key only that call, or the host giving up on it, writes.
fn fence_key(queue: &str, timer_key: &str, request_id: &str, slot: usize) -> String {
    format!("qs:vf:{queue}:{timer_key}.{request_id}.{slot}")
}

/// A reschedule that cannot land late. The broker's reschedule is an upsert: one that
/// reaches it after the timer fired creates a new timer, whose fire brings the delivery
/// back once more, even after its redelivery was deleted (checker embedded seed 521: a
/// change held 31 s on its way, answered 503 by the host meanwhile, landed after the fire,
/// the redelivery and its delete; the message came back). So the reschedule rides in a
/// transaction with a create-only write of its fence key, and when the call's outcome is
/// unknown the host writes that key itself: the reschedule, should it still arrive, then
/// rolls back on it. The timer's verdict, when the call answered.
async fn reschedule_fenced<T: Transport>(
    ctx: &Ctx<'_, T>,
    op: TimerSchedule,
    fence: String,
) -> Result<Option<Landed>, ApiError> {
    let txn = Transaction {
        kv: vec![KvOp::put_ttl(
            fence.clone(),
            serde_json::json!(true),
            FENCE_SECONDS,
            Some(0),
        )
        .required()],
        timers: vec![TimerOp::Schedule(op)],
        ..Transaction::default()
    };
    match ctx.queen.transaction(&txn).await {
        Ok(TxnOutcome::Committed(results)) => Ok(results.last().and_then(|r| {
            r.status.as_deref().map(|status| Landed {
                verdict: TimerVerdict::of(status),
                fire_id: r.message_id.clone(),
            })
        })),
        // Its fence stands: an earlier send of this very call committed, its verdict unheard.
        Ok(TxnOutcome::RolledBack {
            reason: RollbackReason::KvPrecondition,
            ..
        }) => Err(QueenError::Unavailable("a visibility change of unknown outcome".into()).into()),
        Ok(TxnOutcome::RolledBack { reason, error }) => Err(ApiError::new(
            ErrorCode::ServiceUnavailable,
            format!("The visibility change failed ({reason}): {error}"),
        )),
        // Refused whole: nothing can land later.
        Err(e @ QueenError::Throttled { .. }) => Err(e.into()),
        Err(e) => {
            close_fence(ctx, fence).await;
            Err(e.into())
        }
    }
}

/// Writes a reschedule's fence after its call failed with an unknown outcome. Tried three
/// times; should every try fail (the broker unreachable), the call may still land late.
async fn close_fence<T: Transport>(ctx: &Ctx<'_, T>, fence: String) {
    let op = KvOp::put_ttl(fence, serde_json::json!(false), FENCE_SECONDS, Some(0));
    // Written (the reschedule can no longer land), or found (it committed already).
    tried(ctx, || async {
        ctx.queen.kv_results(vec![op.clone()]).await.ok()
    })
    .await;
}

/// Cancels a timer a reschedule created after the one it meant had fired. Tried three
/// times: while it stands, it will push a second copy of a message that is back in its
/// queue already (checker engine seed 441: a broker 503 on the one cancel, and the message
/// came back after its delete). Should every try fail, that duplicate is what is left.
async fn cancel_stray<T: Transport>(ctx: &Ctx<'_, T>, q: &QueueRecord, key: &str) {
    tried(ctx, || async {
        ctx.queen.timer_cancel(&q.name, key).await.ok()
    })
    .await;
}

/// Marks a superseded fire after the change committed. Tried three times, and the change
/// succeeds whatever comes of it: the copy is visible as asked, and an unmarked fire is a
/// duplicate, never a loss.
async fn mark_stray<T: Transport>(ctx: &Ctx<'_, T>, q: &QueueRecord, mark: String) {
    tried(ctx, || async {
        mark_deleted(ctx, q, vec![mark.clone()]).await.ok()
    })
    .await;
}

/// A change to 0 by the handle of an earlier delivery: SQS makes the message visible when
/// a newer delivery holds it (recorded: test_terminate_visibility_timeout_after_receive
/// receives at visibility 0, again for 3 s, then changes the first handle to 0 and
/// receives the message at once). The newest delivery's timer is found among the message's
/// (`vis.<MessageId>.<count>…`, one short listing) and released as its own handle would.
async fn release_current<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    h: &ReceiptHandle,
) -> Result<Changed, ApiError> {
    let mine = count_of_key(key_of(h)).unwrap_or(0);
    let Some(key) = newer_delivery(ctx, q, &h.message_id, mine).await? else {
        return Ok(Changed::Visible);
    };
    let current = ReceiptHandle {
        timer_key: Some(key.clone()),
        ..h.clone()
    };
    let peek = ctx.queen.timer_peek(&q.name, &key).await?;
    if !peek.found {
        return Ok(Changed::Visible);
    }
    release(ctx, q, &current, peek).await
}

/// The timer of the newest delivery of a message later than its `count`th, if one holds
/// it now: one short listing of the message's timers (`vis.<MessageId>.<count>…`).
async fn newer_delivery<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    message_id: &str,
    count: u32,
) -> Result<Option<String>, ApiError> {
    let prefix = format!("{TIMER_PREFIX}{message_id}.");
    let (keys, _) = ctx.queen.timer_keys(&q.name, Some(&prefix), 10).await?;
    Ok(keys
        .into_iter()
        .take_while(|k| k.starts_with(&prefix))
        .filter_map(|k| Some((count_of_key(&k)?, k)))
        .filter(|(c, _)| *c > count)
        .max()
        .map(|(_, k)| k))
}

/// A change to 0: the copy the timer carries pushed back into its lane and the timer
/// cancelled, in one transaction.
///
/// Timer verdicts never roll a transaction back, so the copy lands even when another call
/// cancelled the timer between the read and the transaction: a delete of this delivery
/// (kept as a duplicate, `docs/divergences.md`), or a `PurgeQueue` (checker embedded seed
/// 411: the copy landed in the purged queue and the message came back after the purge
/// answered). A cancel that finds no timer cannot tell those from a fire whose copy must
/// stay; a purge that began after the delivery can be told, by its marker: the delivery is
/// then marked deleted (its tombstone drops the copy where it is popped) and the change is
/// refused as a change of a deleted message.
async fn release<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    h: &ReceiptHandle,
    peek: TimerPeek,
) -> Result<Changed, ApiError> {
    let key = key_of(h);
    let payload = STANDARD
        .decode(peek.payload.as_bytes())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| QueenError::BadAnswer("a visibility timer's payload".into()))?;
    // The copy is pushed under the timer's own transaction id, the one its fire gives the
    // message it pushes: should the timer have fired since the read, the broker's
    // deduplication refuses this push and the whole change rolls back, so the message is
    // never in the queue twice (`DUPLICATE_GUARD_SECONDS`).
    // Only a due timer can be in the sweeper's hands: near its due time the mark of its
    // fire rides in the transaction, so no receive can take the fire's copy before it.
    let stray = match (&peek.message_id, count_of_key(key)) {
        (Some(fire), Some(count)) => Some(stray_key(&q.name, &h.message_id, count, fire)),
        _ => None,
    };
    let due_soon = peek
        .deliver_at
        .as_deref()
        .and_then(parse_iso_ms)
        .is_none_or(|due| due <= ctx.now_ms + STRAY_MARK_AHEAD_MS);
    let ttl = q.retention_seconds().max(60);
    let kv = match &stray {
        Some(mark) if due_soon => vec![KvOp::put_ttl(
            mark.clone(),
            serde_json::json!(true),
            ttl,
            None,
        )],
        _ => Vec::new(),
    };
    let marked_in_txn = !kv.is_empty();
    let txn = Transaction {
        pushes: vec![PushItem {
            queue: q.name.clone(),
            partition: peek.partition,
            payload,
            transaction_id: Some(peek.txn),
        }],
        kv,
        timers: vec![TimerOp::Cancel(TimerCancel::new(&q.name, key))],
        ..Transaction::default()
    };
    let mut outcome = ctx.queen.transaction(&txn).await?;
    if unresolved_push(&outcome) {
        ctx.queen.transport().pause(TWIN_PUSH_PAUSE_MS).await;
        outcome = ctx.queen.transaction(&txn).await?;
    }
    match outcome {
        TxnOutcome::Committed(results) => {
            match results
                .last()
                .and_then(|r| r.status.as_deref())
                .map(TimerVerdict::of)
            {
                Some(TimerVerdict::Cancelled) => Ok(Changed::Applied),
                // Held by the sweeper: its fire will push a second copy of this delivery.
                Some(TimerVerdict::TooLate) => {
                    if let (Some(mark), false) = (stray, marked_in_txn) {
                        mark_stray(ctx, q, mark).await;
                    }
                    Ok(Changed::Applied)
                }
                // Cancelled by a delete or a purge since the read: the copy must not
                // stand for the delivery.
                Some(TimerVerdict::Absent) if purged_since_received(ctx, q, h).await? => {
                    let count = count_of_key(key);
                    let marks = count
                        .map(|c| tombstone_key(&q.name, &h.message_id, c))
                        .into_iter()
                        .collect();
                    mark_deleted(ctx, q, marks).await?;
                    Ok(Changed::Deleted)
                }
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
        // Unresolved twice: the broker queue itself is missing (a purge between its delete
        // and its re-creation); the client may try again.
        TxnOutcome::RolledBack {
            reason: reason @ RollbackReason::AckRejected,
            error,
        } => Err(ApiError::new(
            ErrorCode::ServiceUnavailable,
            format!("The visibility change failed ({reason}): {error}"),
        )),
        TxnOutcome::RolledBack { reason, error } => Err(ApiError::new(
            ErrorCode::InternalError,
            format!("The visibility change failed ({reason}): {error}"),
        )),
    }
}

/// How long a release waits before it asks again after its push met a twin in flight.
const TWIN_PUSH_PAUSE_MS: u64 = 50;

/// Whether a release's transaction (a push, no acks) was rolled back because the broker
/// could not resolve its push. The released engine answers so (`ack_rejected`, "resolved
/// 0 of 1 pushes") when the push meets an uncommitted push of the same transaction id: the
/// other release of one handle named twice in a batch, or its timer's fire (checker
/// engine seed 636). Asked again once that one has committed, the push is a duplicate.
fn unresolved_push(outcome: &TxnOutcome) -> bool {
    matches!(
        outcome,
        TxnOutcome::RolledBack {
            reason: RollbackReason::AckRejected,
            ..
        }
    )
}

/// How far ahead of a timer's due time a release marks its fire in the transaction itself:
/// the broker's clock may run ahead of this host's.
const STRAY_MARK_AHEAD_MS: i64 = 2_000;

/// Whether the handle's delivery was made before the queue was last purged (or made
/// again): its message is gone with the rest, as SQS says of a purge, so a change of it
/// is refused as a change of a deleted message.
fn received_before_emptied(q: &QueueRecord, h: &ReceiptHandle) -> bool {
    received_ms(h) < q.purged.max(q.created.saturating_mul(1000))
}

/// Whether a purge of the queue began after the handle's delivery was made: the record says
/// so from the purge's first step (`purged`, the time it began), its cooldown marker too.
async fn purged_since_received<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    h: &ReceiptHandle,
) -> Result<bool, ApiError> {
    if received_before_emptied(q, h) {
        return Ok(true);
    }
    let marker = ctx.queen.kv_get(&registry::purge_key(&q.name)).await?;
    let started = marker.and_then(|row| row.value.get(registry::PURGE_STARTED)?.as_i64());
    Ok(started.is_some_and(|at| received_ms(h) < at))
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

    fn row(key: String) -> crate::queen::KvRow {
        serde_json::from_value(serde_json::json!({"key": key, "value": true})).unwrap()
    }

    #[test]
    fn a_superseded_fire_drops_only_its_own_copy() {
        let prefix = tombstone_prefix("q", "m1");
        let rows = vec![
            row(stray_key("q", "m1", 2, "fire-b")),
            row(tombstone_key("q", "m1", 5)),
        ];
        let marks = Marks::read(&rows, &prefix);
        let copy = |count, broker_id| PoppedCopy {
            slot: 0,
            message_id: "m1".into(),
            count,
            broker_id,
        };
        // The fire's copy of delivery 2 goes; the change's own copy of it stays.
        assert!(marks.drops(&copy(2, "fire-b")));
        assert!(!marks.drops(&copy(2, "released-a")));
        // Another delivery's copy under that broker id is not the fire's.
        assert!(!marks.drops(&copy(3, "fire-b")));
        // The tombstone of delivery 5 drops copies of it and later ones.
        assert!(marks.drops(&copy(5, "x")));
        assert!(marks.drops(&copy(6, "x")));
        assert!(!marks.drops(&copy(4, "x")));
    }

    #[test]
    fn keys_carry_the_receive_count() {
        let k = key("0193-ab.c", 7, "0190-aaaa-bbbb-cccc-1234567890ab");
        assert_eq!(k, "vis.0193-ab.c.7.rba0987654321");
        assert_eq!(count_of_key(&k), Some(7));
        // Keys minted before the receive tag.
        assert_eq!(count_of_key("vis.0193-ab.c.7"), Some(7));
        assert_eq!(count_of_key("vis.x"), None);
        // Two receives of one copy hold it under two timers.
        assert_ne!(
            key("m", 2, "0190-0000-0000-0000-00000000000a"),
            key("m", 2, "0190-0000-0000-0000-00000000000b")
        );
    }
}
