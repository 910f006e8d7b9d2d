//! A standard receive: ONE wide pop claims up to `MaxNumberOfMessages` messages across
//! lanes, each popped message is given a [`Fate`], and ONE transaction takes them out of
//! their lanes: each held by a visibility timer carrying its redelivery copy (`timer`), or
//! at `VisibilityTimeout=0` that copy pushed back at once. Late-deleted copies and second
//! copies of one delivery are dropped, messages past `maxReceiveCount` dead-lettered, in
//! that same transaction.
//!
//! `ApproximateReceiveCount` is the count the message carries plus this delivery: a claim's
//! attempt counter would also count receives that answered nothing and messages never
//! delivered. A message whose copy is larger than a timer may carry is given back to its
//! lane instead and held by a lease of its own (`lease::hold`).

use super::{
    dead_letter_copy, emptied_since_read, lease, lease_of, message_id, pop_failed_by_purge,
    pop_rounds, sent_ms, timer, wait_left_ms, Asked, Delivery, HANDLE_LIFETIME_MS,
};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{carried, Envelope, ReceiptHandle};
use crate::queen::{
    Ack, AckStatus, PopOptions, Popped, PoppedMessage, PushItem, QueenError, RollbackReason,
    TimerCancel, TimerOp, Transaction, TxnOutcome,
};
use crate::sqs::redrive::{self, DeadLetter};
use crate::sqs::registry::QueueRecord;
use crate::wire::ApiError;

/// How long a receive's pops are leased before its transaction takes them out of their
/// lanes: if the facade dies in between, the messages are visible again after this.
pub const POP_LEASE_SECONDS: u64 = 30;

/// The longest single wait of a throttled receive transaction (50, 100, … ms: ~1.5 s in
/// all before the receive answers the throttle).
const THROTTLE_BACKOFF_MAX_MS: u64 = 800;

pub async fn receive<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    asked: Asked,
) -> Result<Vec<Delivery>, ApiError> {
    let started = ctx.queen.transport().clock_ms();
    for _ in 0..pop_rounds(&asked) {
        let wait_ms = wait_left_ms(ctx, started, asked.wait_s);
        let opts = PopOptions {
            wait_ms: (wait_ms > 0).then_some(wait_ms),
            lease_seconds: Some(POP_LEASE_SECONDS),
        };
        let max = asked.max as u32;
        let popped = match ctx.queen.pop_wide(&q.name, opts, max, max).await {
            Ok(Some(popped)) => popped,
            Ok(None) => break,
            Err(e) if pop_failed_by_purge(ctx, q, &e).await? => break,
            Err(e) => return Err(e.into()),
        };
        match answer_popped(ctx, q, &popped, asked.visibility_s).await? {
            Answer::Messages(out) => return Ok(out),
            Answer::Consumed => continue,
            Answer::Nothing => break,
        }
    }
    Ok(Vec::new())
}

/// What a standard receive answers from one pop.
enum Answer {
    Messages(Vec<Delivery>),
    /// Everything popped was consumed unanswered: dropped as dead (deleted late, or a
    /// second copy) or moved to the dead-letter queue.
    Consumed,
    /// Nothing to answer for another reason (held back, given back, not taken).
    Nothing,
}

/// What a receive does with one popped message.
enum Fate {
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

async fn answer_popped<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    popped: &Popped,
    visibility_s: u64,
) -> Result<Answer, ApiError> {
    let envelopes: Vec<Envelope> = popped
        .messages
        .iter()
        .map(|m| Envelope::from_stored(&m.data))
        .collect();
    let dropped = deleted_late(ctx, q, &popped.messages, &envelopes).await;

    let mut dlq = DeadLetter::Unresolved;
    let mut plan = Plan::default();
    let mut deliveries: Vec<(String, u32)> = Vec::new();
    for (i, (m, e)) in popped.messages.iter().zip(envelopes).enumerate() {
        let lease = lease_of(m, popped);
        if plan.given_back.contains(&m.partition_id) {
            plan.fates.push((m, lease, Fate::Leave));
            continue;
        }
        if let Some(seconds) = lease::still_delayed(&e, m, ctx.now_ms) {
            plan.given_back.push(m.partition_id.clone());
            plan.delayed.push((m.partition.clone(), seconds));
            plan.fates.push((m, lease, Fate::GiveBack));
            continue;
        }
        let id = message_id(&e, m);
        let carried = carried::receive_count(&e);
        // One delivery, twice in the lane (a visibility change raced its timer's fire):
        // answered once.
        if dropped.contains(&i) || deliveries.contains(&(id.clone(), carried)) {
            plan.fates.push((m, lease, Fate::Drop));
            continue;
        }
        deliveries.push((id.clone(), carried));
        let max_receives = dlq.target(ctx, q).await?.map(|(_, max)| *max);
        if max_receives.is_some_and(|max| carried + 1 > max) {
            if let Some((dest, _)) = dlq.confirmed(ctx, q).await? {
                let copy = dead_letter_copy(q, m, e, carried);
                let push = redrive::copy_push(m, dest, copy.to_json(), false);
                plan.fates.push((m, lease, Fate::DeadLetter(push)));
                continue;
            }
        }
        plan.hold(ctx, q, m, e, lease, visibility_s);
    }
    // What was not taken (a rolled-back transaction, a failed ack) stays with its pop's
    // lease and comes back when that runs out; it is not answered.
    let taken = settle(ctx, q, &plan.fates, visibility_s).await?;
    let is_taken = |slot: usize| taken.get(slot).copied().unwrap_or(false);
    let mut out: Vec<Delivery> = plan
        .answered
        .into_iter()
        .filter(|a| is_taken(a.slot))
        .map(|a| timed_delivery(ctx, q, plan.fates[a.slot].0, a))
        .collect();
    if !plan.given_back.is_empty() {
        retry(ctx, &plan.fates, |f| matches!(f, Fate::GiveBack)).await;
    }
    if !plan.delayed.is_empty() {
        lease::hold_lanes(ctx, q, &plan.delayed).await;
    }
    let lanes: Vec<String> = plan
        .solo
        .into_iter()
        .filter(|(slot, _)| matches!(plan.fates[*slot].2, Fate::GiveBack) || is_taken(*slot))
        .map(|(_, lane)| lane)
        .collect();
    if !lanes.is_empty() {
        out.extend(lease::hold(ctx, q, &mut dlq, &lanes, visibility_s).await?);
    }
    if !out.is_empty() {
        return Ok(Answer::Messages(out));
    }
    let consumed = plan
        .fates
        .iter()
        .all(|(_, _, f)| matches!(f, Fate::Drop | Fate::DeadLetter(_)));
    Ok(if consumed {
        Answer::Consumed
    } else {
        Answer::Nothing
    })
}

/// What a standard receive does with what it popped, decided before its one transaction.
#[derive(Default)]
struct Plan<'p> {
    fates: Vec<(&'p PoppedMessage, String, Fate)>,
    /// The messages answered with a timer handle, by their slot in `fates`.
    answered: Vec<Answered>,
    /// Lanes given back at an oversized message (the rest of such a run stays behind it,
    /// under the pop's lease until the give-back releases it).
    given_back: Vec<String>,
    /// Lanes an oversized message is held in by a lease afterwards, with its fate's slot.
    solo: Vec<(usize, String)>,
    /// Lanes of oversized messages popped before their delay ended (the send's own hold
    /// not taken yet, or failed), with the seconds left: given back, then held for those.
    delayed: Vec<(String, u64)>,
}

/// A message a receive answers with a timer handle.
struct Answered {
    slot: usize,
    timer_key: String,
    envelope: Envelope,
    count: u32,
    first_receive_ms: i64,
}

impl<'p> Plan<'p> {
    /// Holds a message being delivered: by a timer carrying its copy; at visibility 0 the
    /// copy pushed back; too large for a timer, in a lane of its own (moved there first,
    /// or given back to it), held by a lease after the transaction.
    fn hold<T>(
        &mut self,
        ctx: &Ctx<'_, T>,
        q: &QueueRecord,
        m: &'p PoppedMessage,
        e: Envelope,
        lease: String,
        visibility_s: u64,
    ) {
        let id = message_id(&e, m);
        let carried = carried::receive_count(&e);
        let count = carried + 1;
        let sent = sent_ms(&e, m);
        let first = carried::first_receive(&e).unwrap_or(ctx.now_ms);
        let copy = carried::redelivery(e.clone(), &id, count, sent, first);
        let timer_key = timer::key(&id, count, &lease);
        let slot = self.fates.len();
        // A lane of its own counts its deliveries in the key/value store, not in the copy:
        // every receive of it is a lease, even at visibility 0 (a copy pushed back would
        // carry a count that starts again).
        let fate = if lease::is_solo_lane(&m.partition) {
            self.given_back.push(m.partition_id.clone());
            self.solo.push((slot, m.partition.clone()));
            self.fates.push((m, lease, Fate::GiveBack));
            return;
        } else if visibility_s == 0 {
            Fate::Requeue(timer::requeue(q, &m.partition, &copy))
        } else if let Some(payload) = timer::fits(&copy) {
            Fate::Hold {
                timer_key: timer_key.clone(),
                payload,
            }
        } else {
            // It carries the deliveries before this one (`lease::hold` counts this one).
            let lane = lease::solo_lane(&id);
            let moved = carried::redelivery(e, &id, carried, sent, first);
            self.solo.push((slot, lane.clone()));
            let push = timer::requeue(q, &lane, &moved);
            self.fates.push((m, lease, Fate::Relocate(push)));
            return;
        };
        self.answered.push(Answered {
            slot,
            timer_key,
            envelope: e,
            count,
            first_receive_ms: first,
        });
        self.fates.push((m, lease, fate));
    }
}

/// Of the popped messages, those whose delivery was deleted after its timer fired, or
/// pushed by a fire a visibility change superseded (by index): one KV read, for
/// redelivered copies only. A copy in a lane of its own is held by leases: no timer
/// handle names it.
async fn deleted_late<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    messages: &[PoppedMessage],
    envelopes: &[Envelope],
) -> Vec<usize> {
    let copies: Vec<timer::PoppedCopy<'_>> = messages
        .iter()
        .zip(envelopes)
        .enumerate()
        .filter(|(_, (m, e))| carried::is_redelivery(e) && !lease::is_solo_lane(&m.partition))
        .map(|(slot, (m, e))| timer::PoppedCopy {
            slot,
            message_id: message_id(e, m),
            count: carried::receive_count(e),
            broker_id: &m.id,
        })
        .collect();
    timer::deleted_late(ctx, q, &copies).await
}

/// A message held by a timer, as delivered: its handle names the timer.
fn timed_delivery<T>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    m: &PoppedMessage,
    a: Answered,
) -> Delivery {
    let handle = ReceiptHandle {
        queue: q.name.clone(),
        partition: m.partition.clone(),
        partition_id: String::new(),
        transaction_id: String::new(),
        lease_id: String::new(),
        message_id: message_id(&a.envelope, m),
        timer_key: Some(a.timer_key),
        behind_in_claim: false,
        expiry_unix_ms: ctx.now_ms + HANDLE_LIFETIME_MS,
    };
    Delivery::new(handle, m, a.envelope, a.count, Some(a.first_receive_ms))
}

/// Takes popped messages out of their lanes: ONE transaction with the dead-letter pushes,
/// the acks of every message (each under its pop's lease) and the visibility timers.
/// Answers, per message, whether it was taken; what was not taken stays under its pop's
/// lease and comes back when that runs out.
async fn settle<T: Transport>(
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
        txn.acks.push(Ack::of(m, lease, AckStatus::Completed));
        match fate {
            Fate::Hold { timer_key, payload } => txn.timers.push(TimerOp::Schedule(
                timer::schedule(q, timer_key, &m.partition, visibility_s * 1000, payload),
            )),
            Fate::Requeue(push) | Fate::Relocate(push) | Fate::DeadLetter(push) => {
                txn.pushes.push(push.clone())
            }
            Fate::Drop | Fate::GiveBack | Fate::Leave => {}
        }
    }
    if txn.acks.is_empty() {
        return Ok(vec![false; popped.len()]);
    }
    let repeats = split_repeats(&mut txn.acks);
    let mut backoff_ms = 50;
    loop {
        match ctx.queen.transaction(&txn).await {
            Ok(TxnOutcome::Committed(_)) => {
                ack_repeats(ctx, &repeats).await;
                return Ok(vec![true; popped.len()]);
            }
            Ok(TxnOutcome::RolledBack {
                reason: RollbackReason::AckRejected,
                ..
            }) => {
                return settle_in_two_steps(ctx, q, popped, txn, &repeats).await;
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
    repeats: &[Vec<Ack>],
) -> Result<Vec<bool>, ApiError> {
    let acks = std::mem::take(&mut txn.acks);
    if emptied_since_read(ctx, q).await? {
        // The refusal is the purge's (or DeleteQueue's): the popped messages went with the
        // broker queue. Pushing their copies first would bring them back into the new one.
        return Ok(vec![false; popped.len()]);
    }
    if !txn.pushes.is_empty() || !txn.timers.is_empty() {
        match ctx.queen.transaction(&txn).await? {
            TxnOutcome::Committed(_) => {}
            TxnOutcome::RolledBack { .. } => return Ok(vec![false; popped.len()]),
        }
    }
    let answered = ctx.queen.ack_batch(&acks).await;
    ack_repeats(ctx, repeats).await;
    // One answer per first ack; a repeat is taken with its first.
    let by_ack: Vec<bool> = match answered {
        Ok(answers) if answers.len() == acks.len() => answers.iter().map(|a| a.success).collect(),
        _ => vec![false; acks.len()],
    };
    let taken: Vec<bool> = popped
        .iter()
        .map(|(m, _, fate)| {
            !matches!(fate, Fate::GiveBack | Fate::Leave)
                && acks.iter().zip(&by_ack).any(|(a, ok)| {
                    *ok && a.partition_id == m.partition_id && a.transaction_id == m.transaction_id
                })
        })
        .collect();
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

/// Splits off the acks that repeat a (partition, transaction id) named earlier in `acks`,
/// by round: the broker resolves every ack of one call to the lowest unacked copy of its
/// transaction id, so two copies of one id in a lane (a fired timer's copy skips the dedup
/// window) acked in one call left the higher copy unacked, and the pop's lease, with the
/// whole lane, held until it ran out. Round `n` holds each id's `n+1`-th ack; sent after the
/// first call, each round reaches the next copy.
fn split_repeats(acks: &mut Vec<Ack>) -> Vec<Vec<Ack>> {
    let mut rounds: Vec<Vec<Ack>> = Vec::new();
    let mut firsts: Vec<Ack> = Vec::new();
    for ack in acks.drain(..) {
        let seen =
            |a: &Ack| a.partition_id == ack.partition_id && a.transaction_id == ack.transaction_id;
        let earlier = firsts.iter().filter(|a| seen(a)).count()
            + rounds.iter().flatten().filter(|a| seen(a)).count();
        match earlier {
            0 => firsts.push(ack),
            n => {
                if rounds.len() < n {
                    rounds.resize_with(n, Vec::new);
                }
                rounds[n - 1].push(ack);
            }
        }
    }
    *acks = firsts;
    rounds
}

/// Sends the repeats of [`split_repeats`], one call per round. One that fails leaves its
/// lease to run out, as before.
async fn ack_repeats<T: Transport>(ctx: &Ctx<'_, T>, rounds: &[Vec<Ack>]) {
    for round in rounds {
        let _lease_runs_out_otherwise = ctx.queen.ack_batch(round).await;
    }
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
        .map(|(m, lease, _)| Ack::of(m, lease, AckStatus::Retry))
        .collect();
    if !acks.is_empty() {
        let _lease_runs_out_otherwise = ctx.queen.ack_batch(&acks).await;
    }
}

#[cfg(test)]
mod repeats_tests {
    use super::*;

    fn ack(p: &str, t: &str) -> Ack {
        Ack::new(t, p, "lease", AckStatus::Completed)
    }

    #[test]
    fn repeated_transaction_ids_go_in_later_rounds_one_per_copy() {
        let mut acks = vec![
            ack("p", "a"),
            ack("p", "b"),
            ack("p", "a"),
            ack("q", "a"),
            ack("p", "a"),
        ];
        let rounds = split_repeats(&mut acks);
        let names = |v: &[Ack]| {
            v.iter()
                .map(|a| format!("{}/{}", a.partition_id, a.transaction_id))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&acks), ["p/a", "p/b", "q/a"]);
        assert_eq!(rounds.len(), 2);
        assert_eq!(names(&rounds[0]), ["p/a"]);
        assert_eq!(names(&rounds[1]), ["p/a"]);
        let mut distinct = vec![ack("p", "a"), ack("p", "b")];
        assert!(split_repeats(&mut distinct).is_empty());
        assert_eq!(distinct.len(), 2);
    }
}
