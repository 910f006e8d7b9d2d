//! Held by a broker lease (standard queues): a message too large for a visibility timer,
//! in a lane of its own (`solo.<MessageId>`), held the way a lane holds a message: a
//! pinned pop of ONE message under a lease of the visibility timeout, so a delete is an
//! exact ack and a visibility change an exact extension or release, and the lease blocks
//! nothing else. Handles minted before timers name such leases too.
//!
//! - Delete is ack `completed`. A stale handle (lease gone, cursor already past, nothing
//!   to resolve) deletes nothing and answers success, which is SQS's documented contract.
//! - A visibility change is a lease extension, or at 0 ack `retry` (released, no charge
//!   against the retry budget). A lease that is gone is `MessageNotInflight`. The broker
//!   never shortens a lease, so a timeout SHORTER than what remains keeps the longer one;
//!   only 0 makes a message visible before its lease ends.
//! - The broker's attempt counter belongs to the claim, so these deliveries are counted in
//!   the key/value store (`counts`), on both brokers.
//! - A delayed message too large for a timer waits in its own lane under a lease taken
//!   after its push (`hold_lanes`); it carries the end of its delay (`carried::VISIBLE_AT`)
//!   so that whoever pops it earlier holds it back (`still_delayed`).

use super::{counts, dead_letter_copy, lease_handle, lease_of, message_id, not_deleted};
use super::{not_inflight, Changed, Delivery};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{carried, Envelope, ReceiptHandle};
use crate::queen::{Ack, AckResult, AckStatus, AckVerdict, PopOptions, Popped, PoppedMessage};
use crate::sqs::redrive::{self, DeadLetter};
use crate::sqs::registry::QueueRecord;
use crate::wire::ApiError;
use futures_util::future::join_all;

/// Lanes of one oversized message each: `solo.<MessageId>`.
const SOLO_PREFIX: &str = "solo.";

pub fn solo_lane(message_id: &str) -> String {
    format!("{SOLO_PREFIX}{message_id}")
}

pub fn is_solo_lane(partition: &str) -> bool {
    partition.starts_with(SOLO_PREFIX)
}

/// Whole seconds a popped message of a lane of its own is still delayed for, if any.
pub fn still_delayed(e: &Envelope, m: &PoppedMessage, now_ms: i64) -> Option<u64> {
    if !is_solo_lane(&m.partition) {
        return None;
    }
    let left_ms = carried::visible_at(e)?.saturating_sub(now_ms);
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
    let _visible_if_it_failed = join_all(holds).await;
}

/// Receives the messages of `lanes` (lanes of their own) under leases of the visibility
/// timeout: counted, dead-lettered past `maxReceiveCount`, at visibility 0 released as
/// soon as the answer is made.
pub async fn hold<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    dlq: &mut DeadLetter,
    lanes: &[String],
    visibility_s: u64,
) -> Result<Vec<Delivery>, ApiError> {
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
    let Ok(firsts) = counts::fill(ctx, q, &mut all).await else {
        // Uncounted, they are not answered: given back to their lanes at once.
        let back: Vec<Ack> = held
            .iter()
            .flat_map(|p| {
                p.messages
                    .iter()
                    .map(|m| Ack::of(m, &lease_of(m, p), AckStatus::Retry))
            })
            .collect();
        release_all(ctx, &back).await;
        return Ok(Vec::new());
    };
    let firsts: std::collections::HashMap<String, i64> = all
        .iter()
        .zip(firsts)
        .filter_map(|(m, first)| Some((m.id.clone(), first?)))
        .collect();
    let mut out = Vec::new();
    let mut released: Vec<Ack> = Vec::new();
    for p in &held {
        for m in &p.messages {
            let lease = lease_of(m, p);
            let e = Envelope::from_stored(&m.data);
            let id = message_id(&e, m);
            let count = carried::receive_count(&e) + m.delivery_attempt.unwrap_or(1);
            let max_receives = dlq.target(ctx, q).await?.map(|(_, max)| *max);
            if max_receives.is_some_and(|max| count > max) {
                if let Some((dest, _)) = dlq.confirmed(ctx, q).await? {
                    let copy = dead_letter_copy(q, m, e, count - 1);
                    // Moved, or the lease was lost (someone else's now), or the move failed
                    // (the lease runs out and it comes back): not answered.
                    let _moved_or_back_later =
                        redrive::move_message(ctx, m, &lease, dest, &copy).await;
                    continue;
                }
            }
            if visibility_s == 0 {
                released.push(Ack::of(m, &lease, AckStatus::Retry));
            }
            let mut handle = lease_handle(ctx, q, m, &lease);
            handle.message_id = id;
            let first = carried::first_receive(&e)
                .or_else(|| firsts.get(&m.id).copied())
                .or((count == 1).then_some(ctx.now_ms));
            out.push(Delivery::new(handle, m, e, count, first));
        }
    }
    release_all(ctx, &released).await;
    Ok(out)
}

/// Releases (`VisibilityTimeout=0`, or a failed receive's claims). A release that fails
/// leaves its lease to run out: the messages are visible again then.
pub async fn release_all<T: Transport>(ctx: &Ctx<'_, T>, releases: &[Ack]) {
    if releases.is_empty() {
        return;
    }
    if let Err(e) = ctx.queen.ack_batch(releases).await {
        let _lease_runs_out = e;
    }
}

/// The ack of the message a lease handle names.
pub fn ack(h: &ReceiptHandle, status: AckStatus) -> Ack {
    Ack::new(&h.transaction_id, &h.partition_id, &h.lease_id, status)
}

/// A delete's verdict: applied or stale (success to the client), or a broker failure.
pub fn deleted(r: &AckResult) -> Result<(), ApiError> {
    match r.verdict() {
        AckVerdict::Applied | AckVerdict::Stale | AckVerdict::LeaseGone => Ok(()),
        AckVerdict::Failed => Err(not_deleted()),
    }
}

/// Deletes of lease handles: ack `completed` each, in one call; a verdict per handle.
pub async fn delete<T: Transport>(
    ctx: &Ctx<'_, T>,
    handles: &[&ReceiptHandle],
) -> Result<Vec<Result<(), ApiError>>, ApiError> {
    if let [one] = handles {
        return Ok(vec![deleted(
            &ctx.queen.ack(&ack(one, AckStatus::Completed)).await?,
        )]);
    }
    let acks: Vec<Ack> = handles
        .iter()
        .map(|h| ack(h, AckStatus::Completed))
        .collect();
    Ok(ctx
        .queen
        .ack_batch(&acks)
        .await?
        .iter()
        .map(deleted)
        .collect())
}

/// One extension, or at 0 one release, of the lease the handle names: on a FIFO queue that
/// is the whole claim, and its record is left as it is (the group's next receive rewrites
/// it; deletes recorded meanwhile are still honoured).
pub async fn change<T: Transport>(
    ctx: &Ctx<'_, T>,
    h: &ReceiptHandle,
    seconds: u64,
) -> Result<Changed, ApiError> {
    if seconds == 0 {
        let r = ctx.queen.ack(&ack(h, AckStatus::Retry)).await?;
        if r.success && !r.noop {
            return Ok(Changed::Applied);
        }
        return Err(not_inflight());
    }
    let r = ctx.queen.extend(&h.lease_id, seconds).await?;
    if r.renewed > 0 {
        Ok(Changed::Applied)
    } else {
        Err(not_inflight())
    }
}
