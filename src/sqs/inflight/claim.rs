//! Held by a claim (FIFO queues): a receive's sequential pops each claim a RUN of one
//! group (batch = the budget left) under one lease, as SQS hands out several messages of a
//! group at once. A FIFO queue's lane is a message group and the broker skips a lane with
//! a live lease, which is exactly SQS's "a group is blocked while a message of it is in
//! flight".
//!
//! Each claim is opened against its group's record (`claim_record`): deleted messages
//! acked through or withheld, a head past `maxReceiveCount` dead-lettered, the record
//! rewritten for the new lease; what is left is delivered. `ApproximateReceiveCount` is
//! each message's own (`counts`, on both brokers). Deletes and visibility changes of a
//! claim are `claim_settle`'s.

use super::claim_record::{self, Claim, Reopened, Stored};
use super::lease::release_all;
use super::{
    counts, dead_letter_copy, lease_handle, lease_of, pop_failed_by_purge, pop_rounds, sent_ms,
    wait_left_ms, Asked, Delivery,
};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{carried, Envelope};
use crate::queen::{
    Ack, AckStatus, PopOptions, Popped, PoppedMessage, QueenError, RollbackReason, Transaction,
    TxnOutcome,
};
use crate::sqs::lanes;
use crate::sqs::redrive::{self, DeadLetter};
use crate::sqs::registry::QueueRecord;
use crate::wire::ApiError;

/// A FIFO receive: sequential claims, each a run of ONE group under one lease, until `max`
/// messages are claimed or nothing more is claimable; then each claim opened and answered.
/// At visibility 0 the claims are held for a second and released once answered.
pub async fn receive<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    asked: Asked,
) -> Result<Vec<Delivery>, ApiError> {
    let lease_s = asked.visibility_s.max(1);
    let release = asked.visibility_s == 0;
    let started = ctx.queen.transport().clock_ms();
    for _ in 0..pop_rounds(&asked) {
        let wait_ms = wait_left_ms(ctx, started, asked.wait_s);
        let popped = match pop_claims(ctx, &q.name, asked.max, wait_ms, lease_s).await {
            Ok(popped) => popped,
            Err(e) if pop_failed_by_purge(ctx, q, &e).await? => break,
            Err(e) => return Err(e.into()),
        };
        if popped.is_empty() {
            break;
        }
        // A receive that fails after its claims were made answers nothing: it gives them
        // back at once (ack `retry` at each claim's last message, so even a claim whose
        // deleted head was acked on the way is released), rather than hiding their groups
        // for the visibility timeout. Their receive counts are taken back (`answer`).
        let give_back: Vec<Ack> = popped
            .iter()
            .filter_map(|p| {
                let last = p.messages.last()?;
                Some(Ack::of(last, &lease_of(last, p), AckStatus::Retry))
            })
            .collect();
        match answer(ctx, q, popped, lease_s, release).await {
            Ok(out) if !out.is_empty() => return Ok(out),
            // Every claim came to nothing (its messages deleted already, dead-lettered, or
            // its lease lost): those groups are settled or held, so popping again finds
            // others, as SQS answers what is visible.
            Ok(_) => continue,
            Err(e) => {
                release_all(ctx, &give_back).await;
                return Err(e);
            }
        }
    }
    Ok(Vec::new())
}

/// Sequential claims of one group each, until `max` messages: one long poll first, the
/// rest without waiting.
async fn pop_claims<T: Transport>(
    ctx: &Ctx<'_, T>,
    queue: &str,
    max: usize,
    wait_ms: u64,
    lease_s: u64,
) -> Result<Vec<Popped>, QueenError> {
    let mut popped: Vec<Popped> = Vec::new();
    let mut claimed = 0;
    // Each round claims a group, or claims again one whose earlier claim expired; a
    // broker that answers every pop after its lease cannot keep the receive going.
    let mut rounds = 0;
    while claimed < max && rounds <= max {
        rounds += 1;
        let wait_ms = (popped.is_empty() && wait_ms > 0).then_some(wait_ms);
        let opts = PopOptions {
            wait_ms,
            lease_seconds: Some(lease_s),
        };
        match ctx
            .queen
            .pop_run(queue, None, opts, (max - claimed) as u32)
            .await
        {
            Ok(Some(p)) => {
                // A group popped again: its earlier claim's lease ran out while that pop's
                // answer was on the way (a slow broker), and the broker handed the group
                // out anew. Only the newer claim holds it.
                let group = |c: &Popped| c.messages.first().map(|m| m.partition_id.clone());
                let mine = group(&p);
                let again = popped
                    .iter()
                    .position(|c| mine.is_some() && group(c) == mine);
                if let Some(i) = again {
                    claimed -= popped.remove(i).messages.len();
                }
                claimed += p.messages.len();
                popped.push(p);
            }
            Ok(None) => break,
            // Claims already made are answered; only a receive with none reports it.
            Err(e) if popped.is_empty() => return Err(e),
            Err(_) => break,
        }
    }
    Ok(popped)
}

/// The receive's claims counted, opened against their groups' records and delivered.
/// Messages counted and then not delivered are uncounted again.
async fn answer<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    mut popped: Vec<Popped>,
    lease_s: u64,
    release: bool,
) -> Result<Vec<Delivery>, ApiError> {
    // Per message, on both brokers: the embedded broker's `deliveryAttempt` belongs to
    // the claim, and a claim may hold messages never delivered before.
    let mut all: Vec<&mut PoppedMessage> = popped
        .iter_mut()
        .flat_map(|p| p.messages.iter_mut())
        .collect();
    for m in all.iter_mut() {
        m.delivery_attempt = None;
    }
    let count_ids: std::collections::HashMap<String, String> = all
        .iter()
        .map(|m| (m.id.clone(), counts::count_id(m)))
        .collect();
    let by_count_id = |ids: &[String]| -> Vec<String> {
        ids.iter()
            .map(|id| count_ids.get(id).cloned().unwrap_or_else(|| id.clone()))
            .collect()
    };
    let firsts = counts::fill(ctx, q, &mut all).await?;
    let first_receives: Firsts = all
        .iter()
        .zip(firsts)
        .filter_map(|(m, first)| Some((m.id.clone(), first?)))
        .collect();
    let mut unanswered: Vec<String> = Vec::new();
    let answer = answer_counted(
        ctx,
        q,
        &popped,
        (lease_s, release),
        &first_receives,
        &mut unanswered,
    )
    .await;
    match &answer {
        Ok(_) => counts::uncount(ctx, q, &by_count_id(&unanswered)).await,
        Err(_) => {
            let every: Vec<String> = popped
                .iter()
                .flat_map(|p| p.messages.iter().map(|m| m.id.clone()))
                .collect();
            counts::uncount(ctx, q, &by_count_id(&every)).await
        }
    }
    answer
}

/// Each counted message's first receive (ms since the epoch), by message id.
type Firsts = std::collections::HashMap<String, i64>;

/// The counted claims delivered; the ids of claims skipped on the way go to `unanswered`.
/// At `release` (visibility 0) the claims are released once answered.
async fn answer_counted<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    popped: &[Popped],
    (lease_s, release): (u64, bool),
    firsts: &Firsts,
    unanswered: &mut Vec<String>,
) -> Result<Vec<Delivery>, ApiError> {
    let partitions: Vec<String> = popped
        .iter()
        .filter_map(|p| p.messages.first().map(|m| m.partition_id.clone()))
        .collect();
    let records = claim_record::load_groups(ctx, q, &partitions).await?;
    let read_at_ms = ctx.queen.transport().clock_ms();
    let mut dlq = DeadLetter::Unresolved;
    let mut out = Vec::new();
    let mut releases: Vec<Ack> = Vec::new();
    for (p, current) in popped.iter().zip(records) {
        let (lease, rest, deleted) =
            match open(ctx, q, &mut dlq, p, current, read_at_ms, lease_s).await? {
                Opened::Answer {
                    lease,
                    rest,
                    deleted,
                } => (lease, rest, deleted),
                Opened::Unanswered(ids) => {
                    unanswered.extend(ids);
                    continue;
                }
            };
        if let (true, Some(first)) = (release, rest.first()) {
            releases.push(Ack::of(first, &lease, AckStatus::Retry));
        }
        for (i, m) in rest.iter().enumerate() {
            if deleted.contains(&m.id) {
                continue;
            }
            let e = Envelope::from_stored(&m.data);
            let count = m.delivery_attempt.unwrap_or(1) + carried::receive_count(&e);
            let mut handle = lease_handle(ctx, q, m, &lease);
            // An ack of it would complete the claim's messages before it.
            handle.behind_in_claim = i > 0;
            // Recorded by the count, or this one when its count is 1.
            let first = firsts
                .get(&m.id)
                .copied()
                .or((count == 1).then_some(ctx.now_ms));
            out.push(Delivery::new(handle, m, e, count, first));
        }
    }
    release_all(ctx, &releases).await;
    Ok(out)
}

/// What opening one claim came to.
enum Opened<'p> {
    /// Deliver `rest` under `lease`, but for the messages recorded `deleted`.
    Answer {
        lease: String,
        rest: &'p [PoppedMessage],
        deleted: Vec<String>,
    },
    /// None of it is delivered (these ids were counted for nothing).
    Unanswered(Vec<String>),
}

/// Opens one claim against its group's record (`current`, read at `read_at_ms`): a lane
/// named before a purge is moved into the group's current lane; the leading deleted
/// messages are acked through; a head past `maxReceiveCount` is dead-lettered; the record
/// is rewritten for the new lease.
async fn open<'p, T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    dlq: &mut DeadLetter,
    p: &'p Popped,
    current: Stored,
    read_at_ms: Option<u64>,
    lease_s: u64,
) -> Result<Opened<'p>, ApiError> {
    let ids = |ms: &[PoppedMessage]| ms.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
    let Some(head) = p.messages.first() else {
        return Ok(Opened::Unanswered(Vec::new()));
    };
    let lease = lease_of(head, p);
    if lanes::made_before_purge(q, &head.partition) {
        let deleted = current.record.as_ref().map_or(&[][..], |r| &r.deleted[..]);
        redrive::relane(ctx, q, &p.messages, deleted, &lease).await?;
        return Ok(Opened::Unanswered(ids(&p.messages)));
    }
    if within_queue_delay(ctx, q, &p.messages) {
        // Given back whole (a claim cannot be shortened); its receive counts are taken
        // back as for any claim not answered.
        let last = &p.messages[p.messages.len() - 1];
        ctx.queen
            .ack(&Ack::of(last, &lease, AckStatus::Retry))
            .await?;
        return Ok(Opened::Unanswered(ids(&p.messages)));
    }
    let opening = claim_record::open(current.record.as_ref(), &p.messages);
    let mut acked: Vec<String> = Vec::new();
    let mut from = 0;
    let lead = &p.messages[..opening.lead];
    for end in claim_record::ack_ends(&txns(lead)) {
        let r = ctx
            .queen
            .ack(&Ack::of(&lead[end - 1], &lease, AckStatus::Completed))
            .await?;
        if !r.success {
            // The claim is not ours any more (its lease ran out meanwhile).
            return Ok(Opened::Unanswered(ids(&p.messages[from..])));
        }
        acked.extend(ids(&p.messages[from..end]));
        from = end;
    }
    // A run moved in several steps when an ack of it would land on an earlier copy of its
    // transaction id (`dead_letter_head`).
    loop {
        let dead = dead_letter_head(ctx, q, dlq, &p.messages[from..], &opening.withheld, &lease);
        match dead.await? {
            Head::Kept => break,
            Head::Moved(n) => {
                acked.extend(ids(&p.messages[from..from + n]));
                from += n;
            }
            // Moved by nobody (the move failed: the claim stays leased and comes back), or
            // the lease is someone else's: none of it is answered.
            Head::Held | Head::LeaseLost => {
                return Ok(Opened::Unanswered(ids(&p.messages[from..])))
            }
        }
    }
    let rest = &p.messages[from..];
    let claim = Claim {
        lease: lease.clone(),
        partition_id: head.partition_id.clone(),
        messages: rest,
        acked,
        live_until_ms: claim_record::surely_live_until(p.asked_at_ms, lease_s),
    };
    match claim_record::write_reopened(ctx, q, &claim, current, read_at_ms).await? {
        Reopened::Written(record) => Ok(Opened::Answer {
            lease,
            rest,
            deleted: record.map(|r| r.deleted).unwrap_or_default(),
        }),
        Reopened::LeaseLost => Ok(Opened::Unanswered(ids(rest))),
    }
}

/// How far the broker's clock may run ahead of ours before a message it hands out after
/// the queue's delay looks too young to us.
const DELAY_CLOCK_SLACK_MS: i64 = 250;

/// Whether a message of the claim was sent less than the queue's `DelaySeconds` ago. The
/// broker's own delay option holds such messages back, but a send that re-creates the
/// broker queue while a `PurgeQueue` has deleted it (before the purge configures the new
/// one) leaves the queue with the broker's defaults for that moment: no delay (checker
/// engine seed 636 saw a message delivered 0.06 s after its send, `DelaySeconds=2`).
fn within_queue_delay<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    messages: &[PoppedMessage],
) -> bool {
    let delay_ms = q.delay_seconds() as i64 * 1000;
    delay_ms > 0
        && messages.iter().any(|m| {
            let e = Envelope::from_stored(&m.data);
            sent_ms(&e, m)
                .is_some_and(|sent| sent + delay_ms - DELAY_CLOCK_SLACK_MS > ctx.wall_ms())
        })
}

/// The transaction ids of `messages`, in order.
fn txns(messages: &[PoppedMessage]) -> Vec<&str> {
    messages.iter().map(|m| m.transaction_id.as_str()).collect()
}

/// What dead-lettering did to the head of a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Head {
    /// Nothing at the head is past `maxReceiveCount`.
    Kept,
    /// The first n messages left the claim (moved, or deleted ones acked with them).
    Moved(usize),
    /// The move failed: the claim stays leased and comes back when its lease ends.
    Held,
    /// The lease was gone: the claim is someone else's.
    LeaseLost,
}

/// Dead-letters the messages at the head of a claim whose OWN receive count passed
/// `maxReceiveCount`, as SQS does: one message each, never the messages behind them. Acks
/// are cumulative, so only a leading run can move (deleted messages inside it are acked
/// with it, not copied); a message further in moves once it reaches the head. One
/// transaction: the copies and the ack `completed` of the run's last message.
async fn dead_letter_head<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    dlq: &mut DeadLetter,
    messages: &[PoppedMessage],
    deleted: &[String],
    lease_id: &str,
) -> Result<Head, ApiError> {
    let Some(max_receives) = dlq.target(ctx, q).await?.map(|(_, max)| *max) else {
        return Ok(Head::Kept);
    };
    let count_of = |m: &PoppedMessage| {
        m.delivery_attempt.unwrap_or(1) + carried::receive_count(&Envelope::from_stored(&m.data))
    };
    let exceeded = |m: &PoppedMessage| !deleted.contains(&m.id) && count_of(m) > max_receives;
    let run = messages
        .iter()
        .take_while(|m| deleted.contains(&m.id) || exceeded(m))
        .count();
    // Up to where one ack completes it (the rest is the next step's).
    let run = claim_record::ack_ends(&txns(&messages[..run]))
        .first()
        .copied()
        .unwrap_or(0);
    if run == 0 {
        return Ok(Head::Kept);
    }
    // The run's deleted messages are completed with its moves, trailing ones too: left
    // to the claim, a claim of nothing else would be answered empty and stay leased.
    if !messages[..run].iter().any(exceeded) {
        return Ok(Head::Kept);
    }
    // Read again past the record cache before moving: a dead-letter queue deleted
    // through another replica keeps its messages where they are.
    let Some((dest, _)) = dlq.confirmed(ctx, q).await?.cloned() else {
        return Ok(Head::Kept);
    };
    let moving: Vec<&PoppedMessage> = messages[..run].iter().filter(|m| exceeded(m)).collect();
    let last = &messages[run - 1];
    // Keyed by the message's id, not its deduplication id, as SQS keys a FIFO message it
    // moves to a FIFO dead-letter queue: two messages that shared a deduplication id are
    // stored there as the two messages they are.
    let pushes = moving
        .iter()
        .map(|m| {
            let copy = dead_letter_copy(q, m, Envelope::from_stored(&m.data), count_of(m) - 1);
            redrive::copy_push(m, &dest, copy.to_json(), true)
        })
        .collect();
    let txn = Transaction {
        pushes,
        acks: vec![Ack::of(last, lease_id, AckStatus::Completed)],
        kv: Vec::new(),
        timers: Vec::new(),
    };
    match ctx.queen.transaction(&txn).await? {
        TxnOutcome::Committed(_) => Ok(Head::Moved(run)),
        TxnOutcome::RolledBack {
            reason: RollbackReason::AckRejected,
            ..
        } => Ok(Head::LeaseLost),
        TxnOutcome::RolledBack { .. } => Ok(Head::Held),
    }
}
