//! `ReceiveMessage`.
//!
//! On a standard queue ONE wide pop claims up to `MaxNumberOfMessages` messages across
//! lanes and ONE transaction takes them out of their lanes (see `receive_standard` and
//! `visibility`): each held by a visibility timer, or at `VisibilityTimeout=0` pushed back
//! at once as its redelivery copy. Lanes do not bound what is in flight, and a message in
//! flight blocks nothing. `ApproximateReceiveCount` is carried in the message's copy.
//!
//! On a FIFO queue, sequential pops each claim a RUN of one group (batch = the budget left)
//! under one lease, as SQS hands out several messages of a group at once; on a FIFO queue a
//! lane is a message group, and the broker skips a lane with a live lease, which is exactly
//! SQS's "a group is blocked while a message of it is in flight". `ApproximateReceiveCount`
//! is each message's own (the KV counter, on both brokers), and `claims` keeps what the
//! later verbs need to treat a claim as one gesture.
//!
//! - `WaitTimeSeconds` is the broker's long poll.
//! - `ReceiveRequestAttemptId` is accepted and ignored: a retried receive claims afresh,
//!   and the messages the lost answer held become visible again when their visibility ends.
//! - A message whose receive count exceeds the queue's `maxReceiveCount` is not returned
//!   but moved to the dead-letter queue (see `redrive`). Its slot is not refilled, so a
//!   receive may answer fewer messages than were claimable, or none after a long poll
//!   whose one find was moved; SQS itself promises no more than "up to".

use super::claims;
use super::input::Input;
use super::lanes;
use super::message_attrs::{select_message_attributes, SystemSelection};
use super::naming;
use super::receive_counts;
use super::redrive;
use super::registry::{self, QueueRecord};
use super::visibility::{self, Fate};
pub use crate::calendar::parse_iso_ms;
use crate::http::Transport;
use crate::model::{
    attrs_to_api, md5_of_body, md5_of_message_attributes, mint, Attrs, Envelope, ReceiptHandle,
};
use crate::queen::{
    Ack, PopOptions, Popped, PoppedMessage, RollbackReason, Transaction, TxnOutcome,
};
use crate::ctx::Ctx;
use crate::wire::{ApiError, ErrorCode};
use futures_util::future::join_all;
use serde_json::{json, Map, Value};

/// SQS's in-flight ceiling: a receipt handle is good for twelve hours.
pub const HANDLE_LIFETIME_MS: i64 = 12 * 3600 * 1000;
pub const MAX_VISIBILITY_SECONDS: i64 = 43_200;
const MAX_WAIT_SECONDS: i64 = 20;

pub async fn receive_message<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let max = range(
        &input,
        "MaxNumberOfMessages",
        1,
        1,
        10,
        "Must be between 1 and 10, if provided.",
    )?;
    let wait = range(
        &input,
        "WaitTimeSeconds",
        q.receive_wait_seconds() as i64,
        0,
        MAX_WAIT_SECONDS,
        "Must be >= 0 and <= 20, if provided.",
    )?;
    let visibility = range(
        &input,
        "VisibilityTimeout",
        q.visibility_timeout() as i64,
        0,
        MAX_VISIBILITY_SECONDS,
        "Must be >= 0 and <= 43200, if provided.",
    )?;
    // Accepted and not acted on (docs/divergences.md), but held to SQS's format.
    if let Some(attempt) = input.opt_str("ReceiveRequestAttemptId")? {
        super::send::check_id("ReceiveRequestAttemptId", attempt)?;
    }
    let mut system_names = input.str_list("AttributeNames")?;
    system_names.extend(input.str_list("MessageSystemAttributeNames")?);
    let selection = SystemSelection::new(system_names);
    let user_names = input.str_list("MessageAttributeNames")?;

    let view = View {
        q,
        selection: &selection,
        user_names: &user_names,
    };
    if q.fifo {
        let lease = (visibility as u64).max(1);
        return receive_fifo(
            ctx,
            &view,
            max as usize,
            wait as u64,
            lease,
            visibility == 0,
        )
        .await;
    }
    receive_standard(ctx, &view, max as usize, wait as u64, visibility as u64).await
}

/// A standard receive: one wide pop, then ONE transaction that takes what it answers out
/// of its lanes (see `visibility`): each message held by a visibility timer carrying its
/// redelivery copy, or at `VisibilityTimeout=0` that copy pushed back at once. Late-deleted
/// copies and second copies of one delivery are dropped, messages past `maxReceiveCount`
/// dead-lettered, in that same transaction.
///
/// `ApproximateReceiveCount` is the count the message carries plus this delivery: a claim's
/// attempt counter would also count receives that answered nothing and messages never
/// delivered. A message whose copy is larger than a timer may carry is given back to its
/// lane instead and held by a lease of its own (`hold_by_lease`).
/// What is left of a long poll's `wait_s` since `started` (the transport's clock): a
/// receive that pops again waits no longer in all than it was asked to. All of it without
/// a clock.
fn wait_left_ms<T: Transport>(ctx: &Ctx<'_, T>, started: Option<u64>, wait_s: u64) -> u64 {
    let wait_ms = wait_s * 1000;
    match (started, ctx.queen.transport().clock_ms()) {
        (Some(s), Some(now)) => wait_ms.saturating_sub(now.saturating_sub(s)),
        _ => wait_ms,
    }
}

/// Pops after a pop that held nothing deliverable (copies of deliveries deleted late,
/// second copies of one delivery, messages moved to the dead-letter queue): such a pop
/// returns at once, so the receive pops again rather than answer empty while messages are
/// visible (a long poll waits again then; it waited for nothing the first time).
const DEAD_POP_RETRIES: usize = 3;

async fn receive_standard<T: Transport>(
    ctx: &Ctx<'_, T>,
    v: &View<'_>,
    max: usize,
    wait_s: u64,
    visibility_s: u64,
) -> Result<Value, ApiError> {
    let started = ctx.queen.transport().clock_ms();
    for _ in 0..=DEAD_POP_RETRIES {
        let wait_ms = wait_left_ms(ctx, started, wait_s);
        let opts = PopOptions {
            wait_ms: (wait_ms > 0).then_some(wait_ms),
            lease_seconds: Some(visibility::POP_LEASE_SECONDS),
        };
        let Some(popped) = ctx
            .queen
            .pop_wide(&v.q.name, opts, max as u32, max as u32)
            .await?
        else {
            break;
        };
        match answer_popped(ctx, v, &popped, visibility_s).await? {
            Answer::Messages(out) => return Ok(json!({ "Messages": out })),
            Answer::Consumed => continue,
            Answer::Nothing => break,
        }
    }
    Ok(json!({}))
}

/// What a standard receive answers from one pop.
enum Answer {
    Messages(Vec<Value>),
    /// Everything popped was consumed unanswered: dropped as dead (deleted late, or a
    /// second copy) or moved to the dead-letter queue.
    Consumed,
    /// Nothing to answer for another reason (held back, given back, not taken).
    Nothing,
}

async fn answer_popped<T: Transport>(
    ctx: &Ctx<'_, T>,
    v: &View<'_>,
    popped: &Popped,
    visibility_s: u64,
) -> Result<Answer, ApiError> {
    let q = v.q;
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
        let lease = m
            .lease_id
            .clone()
            .unwrap_or_else(|| popped.lease_id.clone());
        if plan.given_back.contains(&m.partition_id) {
            plan.fates.push((m, lease, Fate::Leave));
            continue;
        }
        if let Some(seconds) = visibility::still_delayed(&e, m, ctx.now_ms) {
            plan.given_back.push(m.partition_id.clone());
            plan.delayed.push((m.partition.clone(), seconds));
            plan.fates.push((m, lease, Fate::GiveBack));
            continue;
        }
        let id = visibility::message_id(&e, m);
        let carried = redrive::carried_count(&e);
        // One delivery, twice in the lane (a visibility change raced its timer's fire):
        // answered once.
        if dropped.contains(&i) || deliveries.contains(&(id.clone(), carried)) {
            plan.fates.push((m, lease, Fate::Drop));
            continue;
        }
        deliveries.push((id.clone(), carried));
        let count = carried + 1;
        if let Some((dest, max_receives)) = dlq.target(ctx, q).await? {
            if count > *max_receives {
                let sent = sent_ms(&e, m);
                let copy = redrive::dead_letter_copy(e, &q.name, &id, carried, sent);
                let push = redrive::copy_push(m, dest, copy.to_json(), false);
                plan.fates.push((m, lease, Fate::DeadLetter(push)));
                continue;
            }
        }
        plan.hold(ctx, q, m, e, lease, visibility_s);
    }
    // What was not taken (a rolled-back transaction, a failed ack) stays with its pop's
    // lease and comes back when that runs out; it is not answered.
    let taken = visibility::settle_receive(ctx, q, &plan.fates, visibility_s).await?;
    let is_taken = |slot: usize| taken.get(slot).copied().unwrap_or(false);
    let mut out: Vec<Value> = plan
        .answered
        .into_iter()
        .filter(|a| is_taken(a.slot))
        .map(|a| timed_answer(ctx, v, plan.fates[a.slot].0, a))
        .collect();
    if !plan.given_back.is_empty() {
        visibility::give_back(ctx, &plan.fates).await;
    }
    if !plan.delayed.is_empty() {
        visibility::hold_lanes(ctx, q, &plan.delayed).await;
    }
    let lanes: Vec<String> = plan
        .solo
        .into_iter()
        .filter(|(slot, _)| matches!(plan.fates[*slot].2, Fate::GiveBack) || is_taken(*slot))
        .map(|(_, lane)| lane)
        .collect();
    if !lanes.is_empty() {
        out.extend(hold_by_lease(ctx, v, &mut dlq, &lanes, visibility_s).await?);
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
        let id = visibility::message_id(&e, m);
        let carried = redrive::carried_count(&e);
        let count = carried + 1;
        let sent = sent_ms(&e, m);
        let first = visibility::first_receive(&e).unwrap_or(ctx.now_ms);
        let copy = visibility::redelivery_copy(e.clone(), &id, count, sent, first);
        let timer_key = visibility::timer_key(&id, count, &lease);
        let slot = self.fates.len();
        // A lane of its own counts its deliveries in the key/value store, not in the copy:
        // every receive of it is a lease, even at visibility 0 (a copy pushed back would
        // carry a count that starts again).
        let fate = if visibility::is_solo_lane(&m.partition) {
            self.given_back.push(m.partition_id.clone());
            self.solo.push((slot, m.partition.clone()));
            self.fates.push((m, lease, Fate::GiveBack));
            return;
        } else if visibility_s == 0 {
            Fate::Requeue(visibility::requeue(q, &m.partition, &copy))
        } else if let Some(payload) = visibility::fits_a_timer(&copy) {
            Fate::Hold {
                timer_key: timer_key.clone(),
                payload,
            }
        } else {
            // It carries the deliveries before this one (`hold_by_lease` counts this one).
            let lane = visibility::solo_lane(&id);
            let moved = visibility::redelivery_copy(e, &id, carried, sent, first);
            self.solo.push((slot, lane.clone()));
            let push = visibility::requeue(q, &lane, &moved);
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

/// Of the popped messages, those whose delivery was deleted after its timer fired (by
/// index): one KV read, for redelivered copies only. A copy in a lane of its own is held
/// by leases: no timer handle names it.
async fn deleted_late<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    messages: &[PoppedMessage],
    envelopes: &[Envelope],
) -> Vec<usize> {
    let copies: Vec<(usize, String, u32)> = messages
        .iter()
        .zip(envelopes)
        .enumerate()
        .filter(|(_, (m, e))| {
            e.system.contains_key(visibility::MESSAGE_ID) && !visibility::is_solo_lane(&m.partition)
        })
        .map(|(i, (m, e))| (i, visibility::message_id(e, m), redrive::carried_count(e)))
        .collect();
    visibility::deleted_late(ctx, q, &copies).await
}

/// A message held by a timer, as answered: its handle names the timer.
fn timed_answer<T>(ctx: &Ctx<'_, T>, v: &View<'_>, m: &PoppedMessage, a: Answered) -> Value {
    let handle = ReceiptHandle {
        queue: v.q.name.clone(),
        partition: m.partition.clone(),
        partition_id: String::new(),
        transaction_id: String::new(),
        lease_id: String::new(),
        message_id: visibility::message_id(&a.envelope, m),
        timer_key: Some(a.timer_key),
        expiry_unix_ms: ctx.now_ms + HANDLE_LIFETIME_MS,
    };
    render(
        ctx,
        v,
        m,
        handle,
        &a.envelope,
        a.count,
        Some(a.first_receive_ms),
    )
}

/// Messages too large for a visibility timer, each in a lane of its own
/// (`visibility::solo_lane`), held the way a lane holds a message: a pinned pop of ONE
/// message under a lease of the visibility timeout, so a delete is an exact ack and a
/// visibility change an exact extension or release, and the lease blocks nothing else. The
/// broker's attempt counter belongs to the claim, so these deliveries are counted in the
/// key/value store (`receive_counts`), on both brokers.
async fn hold_by_lease<T: Transport>(
    ctx: &Ctx<'_, T>,
    v: &View<'_>,
    dlq: &mut DeadLetter,
    lanes: &[String],
    visibility_s: u64,
) -> Result<Vec<Value>, ApiError> {
    let q = v.q;
    // At visibility 0 the lease is released as soon as the answer is made (a lease of 0
    // would mean the broker's default).
    let opts = PopOptions {
        wait_ms: None,
        lease_seconds: Some(visibility_s.max(1)),
    };
    let pops = join_all(
        lanes
            .iter()
            .map(|lane| ctx.queen.pop_one(&q.name, Some(lane), opts)),
    )
    .await;
    let mut held: Vec<Popped> = pops.into_iter().filter_map(|p| p.ok().flatten()).collect();
    let mut all: Vec<&mut PoppedMessage> = held
        .iter_mut()
        .flat_map(|p| p.messages.iter_mut())
        .collect();
    for m in all.iter_mut() {
        m.delivery_attempt = None;
    }
    if receive_counts::fill(ctx, q, &mut all).await.is_err() {
        // Uncounted, they are not answered: given back to their lanes at once.
        let back: Vec<Ack> = held
            .iter()
            .flat_map(|p| {
                p.messages.iter().map(|m| {
                    let lease = m.lease_id.clone().unwrap_or_else(|| p.lease_id.clone());
                    claims::ack(&m.transaction_id, &m.partition_id, &lease, "retry")
                })
            })
            .collect();
        release_all(ctx, &back).await;
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut released: Vec<Ack> = Vec::new();
    for p in &held {
        for m in &p.messages {
            let lease = m.lease_id.clone().unwrap_or_else(|| p.lease_id.clone());
            let e = Envelope::from_stored(&m.data);
            let id = visibility::message_id(&e, m);
            let count = redrive::carried_count(&e) + m.delivery_attempt.unwrap_or(1);
            if let Some((dest, max_receives)) = dlq.target(ctx, q).await? {
                if count > *max_receives {
                    let sent = sent_ms(&e, m);
                    let copy = redrive::dead_letter_copy(e, &q.name, &id, count - 1, sent);
                    // Moved, or the lease was lost (someone else's now), or the move failed
                    // (the lease runs out and it comes back): not answered.
                    let _moved_or_back_later =
                        redrive::move_message(ctx, m, &lease, dest, &copy).await;
                    continue;
                }
            }
            if visibility_s == 0 {
                released.push(claims::ack(
                    &m.transaction_id,
                    &m.partition_id,
                    &lease,
                    "retry",
                ));
            }
            let mut handle = lease_handle(ctx, q, m, &lease);
            handle.message_id = id;
            let first = visibility::first_receive(&e).or((count == 1).then_some(ctx.now_ms));
            out.push(render(ctx, v, m, handle, &e, count, first));
        }
    }
    release_all(ctx, &released).await;
    Ok(out)
}

/// A handle naming the broker lease a message is held under.
fn lease_handle<T>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    m: &PoppedMessage,
    lease_id: &str,
) -> ReceiptHandle {
    ReceiptHandle {
        queue: q.name.clone(),
        partition: m.partition.clone(),
        partition_id: m.partition_id.clone(),
        transaction_id: m.transaction_id.clone(),
        lease_id: lease_id.to_string(),
        message_id: m.id.clone(),
        timer_key: None,
        expiry_unix_ms: ctx.now_ms + HANDLE_LIFETIME_MS,
    }
}

/// What a receive renders with.
struct View<'a> {
    q: &'a QueueRecord,
    selection: &'a SystemSelection,
    user_names: &'a [&'a str],
}

/// A FIFO receive: sequential claims, each a run of ONE group under one lease, until `max`
/// messages are claimed or nothing more is claimable. Each claim is then opened against
/// its group's record (see `claims`): deleted messages acked through or withheld, a head
/// past `maxReceiveCount` dead-lettered, the record rewritten for the new lease; what is
/// left is answered.
async fn receive_fifo<T: Transport>(
    ctx: &Ctx<'_, T>,
    v: &View<'_>,
    max: usize,
    wait_s: u64,
    lease_s: u64,
    release: bool,
) -> Result<Value, ApiError> {
    let started = ctx.queen.transport().clock_ms();
    for _ in 0..=DEAD_POP_RETRIES {
        let wait_ms = wait_left_ms(ctx, started, wait_s);
        let popped = pop_claims(ctx, &v.q.name, max, wait_ms, lease_s).await?;
        if popped.is_empty() {
            break;
        }
        // A receive that fails after its claims were made answers nothing: it gives them
        // back at once (ack `retry` at each claim's last message, so even a claim whose
        // deleted head was acked on the way is released), rather than hiding their groups
        // for the visibility timeout. Their receive counts are taken back (`answer_claims`).
        let give_back: Vec<Ack> = popped
            .iter()
            .filter_map(|p| {
                let last = p.messages.last()?;
                let lease = last.lease_id.clone().unwrap_or_else(|| p.lease_id.clone());
                Some(claims::ack(
                    &last.transaction_id,
                    &last.partition_id,
                    &lease,
                    "retry",
                ))
            })
            .collect();
        match answer_claims(ctx, v, popped, lease_s, release).await {
            Ok(answer) if answer.get("Messages").is_some() => return Ok(answer),
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
    Ok(json!({}))
}

/// The FIFO receive's claims opened against their groups' records and answered.
async fn answer_claims<T: Transport>(
    ctx: &Ctx<'_, T>,
    v: &View<'_>,
    mut popped: Vec<Popped>,
    lease_s: u64,
    release: bool,
) -> Result<Value, ApiError> {
    let q = v.q;
    // Per message, on both brokers: the embedded broker's `deliveryAttempt` belongs to
    // the claim, and a claim may hold messages never delivered before.
    let mut all: Vec<&mut PoppedMessage> = popped
        .iter_mut()
        .flat_map(|p| p.messages.iter_mut())
        .collect();
    for m in all.iter_mut() {
        m.delivery_attempt = None;
    }
    receive_counts::fill(ctx, q, &mut all).await?;
    let counted = |p: &Popped| p.messages.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
    let all_ids: Vec<String> = popped.iter().flat_map(counted).collect();
    let mut unanswered: Vec<String> = Vec::new();
    let answer = answer_counted(ctx, v, &popped, lease_s, release, &mut unanswered).await;
    match &answer {
        Ok(_) => receive_counts::uncount(ctx, q, &unanswered).await,
        Err(_) => receive_counts::uncount(ctx, q, &all_ids).await,
    }
    answer
}

/// The counted claims answered; the ids of claims skipped on the way go to `unanswered`.
async fn answer_counted<T: Transport>(
    ctx: &Ctx<'_, T>,
    v: &View<'_>,
    popped: &[Popped],
    lease_s: u64,
    release: bool,
    unanswered: &mut Vec<String>,
) -> Result<Value, ApiError> {
    let q = v.q;
    let partitions: Vec<String> = popped
        .iter()
        .filter_map(|p| p.messages.first().map(|m| m.partition_id.clone()))
        .collect();
    let records = claims::load_groups(ctx, q, &partitions).await?;
    let read_at_ms = ctx.queen.transport().clock_ms();
    let mut dlq = DeadLetter::Unresolved;
    let mut out = Vec::new();
    let mut releases: Vec<Ack> = Vec::new();
    for (p, current) in popped.iter().zip(records) {
        let Some(head) = p.messages.first() else {
            continue;
        };
        let lease = head.lease_id.clone().unwrap_or_else(|| p.lease_id.clone());
        let pid = head.partition_id.clone();
        let opening = claims::open(current.record.as_ref(), &p.messages);
        if lanes::made_before_purge(q, &head.partition) {
            let deleted = current.record.as_ref().map_or(&[][..], |r| &r.deleted[..]);
            redrive::relane(ctx, q, &p.messages, deleted, &lease).await?;
            unanswered.extend(p.messages.iter().map(|m| m.id.clone()));
            continue;
        }
        let mut acked: Vec<String> = Vec::new();
        let mut from = 0;
        if opening.lead > 0 {
            let last = &p.messages[opening.lead - 1];
            let r = ctx
                .queen
                .ack(&claims::ack(
                    &last.transaction_id,
                    &pid,
                    &lease,
                    "completed",
                ))
                .await?;
            if !r.success {
                // The claim is not ours any more (its lease ran out meanwhile).
                unanswered.extend(p.messages.iter().map(|m| m.id.clone()));
                continue;
            }
            acked.extend(p.messages[..opening.lead].iter().map(|m| m.id.clone()));
            from = opening.lead;
        }
        match dead_letter_head(
            ctx,
            q,
            &mut dlq,
            &p.messages[from..],
            &opening.withheld,
            &lease,
        )
        .await?
        {
            Head::Kept => {}
            Head::Moved(n) => {
                acked.extend(p.messages[from..from + n].iter().map(|m| m.id.clone()));
                from += n;
            }
            // Moved by nobody (the move failed: the claim stays leased and comes back), or
            // the lease is someone else's: none of it is answered.
            Head::Held | Head::LeaseLost => {
                unanswered.extend(p.messages[from..].iter().map(|m| m.id.clone()));
                continue;
            }
        }
        let rest = &p.messages[from..];
        let claim = claims::Claim {
            lease: lease.clone(),
            partition_id: pid.clone(),
            messages: rest,
            acked,
            live_until_ms: claims::surely_live_until(p.asked_at_ms, lease_s),
        };
        let record = match claims::write_reopened(ctx, q, &claim, current, read_at_ms).await? {
            claims::Reopened::Written(record) => record,
            claims::Reopened::LeaseLost => {
                unanswered.extend(rest.iter().map(|m| m.id.clone()));
                continue;
            }
        };
        let deleted: &[String] = record.as_ref().map_or(&[], |r| r.deleted.as_slice());
        if release && !rest.is_empty() {
            releases.push(claims::ack(&rest[0].transaction_id, &pid, &lease, "retry"));
        }
        for m in rest.iter().filter(|m| !deleted.contains(&m.id)) {
            let e = Envelope::from_stored(&m.data);
            let count = m.delivery_attempt.unwrap_or(1) + redrive::carried_count(&e);
            out.push(render(
                ctx,
                v,
                m,
                lease_handle(ctx, q, m, &lease),
                &e,
                count,
                // The message's first receive is this one when its count is 1.
                (count == 1).then_some(ctx.now_ms),
            ));
        }
    }
    release_all(ctx, &releases).await;
    if out.is_empty() {
        return Ok(json!({}));
    }
    Ok(json!({ "Messages": out }))
}

/// Sequential claims of one group each, until `max` messages: one long poll first, the
/// rest without waiting.
async fn pop_claims<T: Transport>(
    ctx: &Ctx<'_, T>,
    queue: &str,
    max: usize,
    wait_ms: u64,
    lease_s: u64,
) -> Result<Vec<Popped>, ApiError> {
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
            Err(e) if popped.is_empty() => return Err(e.into()),
            Err(_) => break,
        }
    }
    Ok(popped)
}

/// A receive's releases (`VisibilityTimeout=0`, or a failed receive's claims). A release
/// that fails leaves its lease to run out: the messages are visible again then.
async fn release_all<T: Transport>(ctx: &Ctx<'_, T>, releases: &[Ack]) {
    if releases.is_empty() {
        return;
    }
    if let Err(e) = ctx.queen.ack_batch(releases).await {
        let _one_second_lease_runs_out = e;
    }
}

/// The dead-letter queue of a receive, looked up once.
enum DeadLetter {
    Unresolved,
    /// None: no redrive policy, or its target no longer exists (nothing is moved then: a
    /// message is delivered rather than lost).
    Resolved(Option<(QueueRecord, u32)>),
}

impl DeadLetter {
    async fn target<T: Transport>(
        &mut self,
        ctx: &Ctx<'_, T>,
        q: &QueueRecord,
    ) -> Result<Option<&(QueueRecord, u32)>, ApiError> {
        if let DeadLetter::Unresolved = self {
            let target = match q.redrive(ctx.cfg) {
                // A queue that names itself keeps its messages: moving one into the queue
                // it is in would only move it again on its next receive.
                Some((name, _)) if name == q.name => None,
                Some((name, max)) => registry::load_recent(ctx, &name)
                    .await?
                    .map(|s| (s.record, max)),
                None => None,
            };
            *self = DeadLetter::Resolved(target);
        }
        Ok(match self {
            DeadLetter::Resolved(t) => t.as_ref(),
            DeadLetter::Unresolved => None,
        })
    }
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
    let Some((dest, max_receives)) = dlq.target(ctx, q).await?.cloned() else {
        return Ok(Head::Kept);
    };
    let count_of = |m: &PoppedMessage| {
        m.delivery_attempt.unwrap_or(1) + redrive::carried_count(&Envelope::from_stored(&m.data))
    };
    let exceeded = |m: &PoppedMessage| !deleted.contains(&m.id) && count_of(m) > max_receives;
    let run = messages
        .iter()
        .take_while(|m| deleted.contains(&m.id) || exceeded(m))
        .count();
    // The run's deleted messages are completed with its moves, trailing ones too: left
    // to the claim, a claim of nothing else would be answered empty and stay leased.
    if !messages[..run].iter().any(exceeded) {
        return Ok(Head::Kept);
    }
    let n = run;
    let moving: Vec<&PoppedMessage> = messages[..n].iter().filter(|m| exceeded(m)).collect();
    let last = &messages[n - 1];
    // First keyed by transaction id; on a dedup collision, once more by message id.
    for by_id in [false, true] {
        let pushes = moving
            .iter()
            .map(|m| {
                let e = Envelope::from_stored(&m.data);
                let copy = redrive::dead_letter_copy(
                    e.clone(),
                    &q.name,
                    &m.id,
                    count_of(m) - 1,
                    sent_ms(&e, m),
                );
                redrive::copy_push(m, &dest, copy.to_json(), by_id)
            })
            .collect();
        let txn = Transaction {
            pushes,
            acks: vec![claims::ack(
                &last.transaction_id,
                &last.partition_id,
                lease_id,
                "completed",
            )],
            kv: Vec::new(),
            timers: Vec::new(),
        };
        match ctx.queen.transaction(&txn).await? {
            TxnOutcome::Committed(_) => return Ok(Head::Moved(n)),
            TxnOutcome::RolledBack {
                reason: RollbackReason::Duplicate,
                ..
            } if !by_id => continue,
            TxnOutcome::RolledBack {
                reason: RollbackReason::AckRejected,
                ..
            } => return Ok(Head::LeaseLost),
            TxnOutcome::RolledBack { .. } => return Ok(Head::Held),
        }
    }
    Ok(Head::Held)
}

fn render<T>(
    ctx: &Ctx<'_, T>,
    v: &View<'_>,
    m: &PoppedMessage,
    handle: ReceiptHandle,
    e: &Envelope,
    count: u32,
    first_receive_ms: Option<i64>,
) -> Value {
    let q = v.q;
    let mut out = Map::new();
    out.insert("MessageId".into(), json!(handle.message_id));
    let handle = mint(&handle, &ctx.cfg.handle_secret);
    out.insert("ReceiptHandle".into(), json!(handle));
    out.insert("MD5OfBody".into(), json!(md5_of_body(&e.body)));
    out.insert("Body".into(), json!(e.body));

    let attrs = system_attributes(ctx, q, m, e, (count, first_receive_ms), v.selection);
    if !attrs.is_empty() {
        out.insert("Attributes".into(), Value::Object(attrs));
    }
    let selected: Attrs = select_message_attributes(&e.attrs, v.user_names);
    if let Some(d) = md5_of_message_attributes(&selected) {
        out.insert("MD5OfMessageAttributes".into(), json!(d));
        out.insert("MessageAttributes".into(), attrs_to_api(&selected));
    }
    Value::Object(out)
}

/// The system attributes asked for. `SenderId` is the account's principal (which key sent
/// a message is not recorded). `ApproximateFirstReceiveTimestamp` is answered where a
/// message in flight carries it (standard queues held by visibility timers) and on a
/// message's first receive.
fn system_attributes<T>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    m: &PoppedMessage,
    e: &Envelope,
    (count, first_receive_ms): (u32, Option<i64>),
    sel: &SystemSelection,
) -> Map<String, Value> {
    let mut a = Map::new();
    if sel.is_empty() {
        return a;
    }
    let mut add = |name: &str, v: Option<String>| {
        if let Some(v) = v {
            if sel.wants(name) {
                a.insert(name.to_string(), Value::String(v));
            }
        }
    };
    add("ApproximateReceiveCount", Some(count.to_string()));
    add(
        "ApproximateFirstReceiveTimestamp",
        first_receive_ms.map(|ms| ms.to_string()),
    );
    add("SentTimestamp", sent_ms(e, m).map(|ms| ms.to_string()));
    add("SenderId", Some(naming::sender_id(ctx.cfg)));
    if q.fifo {
        add(
            "SequenceNumber",
            crate::model::sequence::from_message_id(&m.id),
        );
        add(
            "MessageGroupId",
            Some(super::lanes::group_of(&m.partition).to_string()),
        );
        add("MessageDeduplicationId", Some(m.transaction_id.clone()));
    }
    for (name, v) in &e.system {
        if !redrive::is_internal(name) {
            if let crate::model::AttrData::String(s) = &v.value {
                add(name, Some(s.clone()));
            }
        }
    }
    if let Some(source) = redrive::source_queue(e) {
        add(
            "DeadLetterQueueSourceArn",
            Some(naming::queue_arn(ctx.cfg, source)),
        );
        add(redrive::SOURCE_QUEUE, Some(source.to_string()));
    }
    add(redrive::ORIGINAL_MESSAGE_ID, e.original_id.clone());
    a
}

/// When the message was first sent: carried on a dead-lettered copy, else its `createdAt`.
fn sent_ms(e: &Envelope, m: &PoppedMessage) -> Option<i64> {
    redrive::sent_timestamp(e).or_else(|| m.created_at.as_deref().and_then(parse_iso_ms))
}

/// An integer parameter within `lo..=hi`, `default` when absent.
fn range(
    input: &Input,
    name: &str,
    default: i64,
    lo: i64,
    hi: i64,
    why: &str,
) -> Result<i64, ApiError> {
    match input.opt_int(name)? {
        None => Ok(default),
        Some(v) if (lo..=hi).contains(&v) => Ok(v),
        Some(v) => Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            format!("Value {v} for parameter {name} is invalid. Reason: {why}"),
        )),
    }
}

/// The `VisibilityTimeout` of a visibility change: 0..=43200.
pub fn visibility_param(input: &Input) -> Result<u64, ApiError> {
    match input.opt_int("VisibilityTimeout")? {
        None => Err(super::input::missing("VisibilityTimeout")),
        Some(v) if (0..=MAX_VISIBILITY_SECONDS).contains(&v) => Ok(v as u64),
        Some(v) => Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            format!("Value {v} for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided."),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_timestamps() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_iso_ms("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(
            parse_iso_ms("2026-11-30T10:00:00.123456Z"),
            Some(1_796_032_800_123)
        );
        assert_eq!(
            parse_iso_ms("2026-11-30T11:00:00.123+01:00"),
            Some(1_796_032_800_123)
        );
        assert_eq!(parse_iso_ms("2000-02-29T00:00:00Z"), Some(951_782_400_000));
        assert_eq!(parse_iso_ms("nonsense"), None);
        assert_eq!(parse_iso_ms("2020-13-01T00:00:00Z"), None);
    }
}
