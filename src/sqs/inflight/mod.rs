//! Messages in flight: the one room that holds a delivered message until its visibility
//! ends, and the one seam every verb on a delivery goes through: receive, delete, change
//! of visibility (and their batches), and dead-lettering on the way.
//!
//! How a message is held is read off its receipt handle ([`Hold`]); each kind has a file:
//!
//! - `timer` (standard queues): the receive took the message out of its lane and a
//!   visibility timer carries its copy back when the visibility ends. `standard` decides,
//!   per popped message, what a standard receive does with it.
//! - `lease` (standard queues): the message is held by its lane's broker lease: a message
//!   too large for a timer, in a lane of its own, or a handle minted before timers.
//! - `claim` (FIFO queues): a run of one group under one lease, settled through the
//!   group's record (`claim_record`; deletes and changes in `claim_settle`).
//!
//! A new way of holding a message is a new [`Hold`] variant; the compiler then names every
//! verb that has to learn it. The actions (`receive`, `settle`) parse and answer; only this
//! room talks to the broker about deliveries. Moving a message to its dead-letter queue is
//! `redrive`'s, for every holder.

mod claim;
mod claim_record;
mod claim_settle;
mod counts;
mod lease;
mod standard;
mod timer;

pub use claim_settle::deleted_in_claim;
pub use lease::{hold_lanes, solo_lane};
pub use standard::POP_LEASE_SECONDS;
pub use timer::{DUPLICATE_GUARD_SECONDS, TIMER_PAYLOAD_MAX, TIMER_PREFIX};

use super::registry::{self, QueueRecord};
use crate::calendar::parse_iso_ms;
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{carried, Envelope, ReceiptHandle};
use crate::queen::{Popped, PoppedMessage, QueenError};
use crate::wire::{ApiError, ErrorCode};
use futures_util::future::join_all;

/// SQS's in-flight ceiling: a receipt handle is good for twelve hours.
pub const HANDLE_LIFETIME_MS: i64 = 12 * 3600 * 1000;
/// The longest visibility SQS allows, and the cap on a message's total visibility.
pub const MAX_VISIBILITY_SECONDS: i64 = 43_200;

/// How a delivered message is held, read off its handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    Timer = 0,
    Lease = 1,
    Claim = 2,
}

impl Hold {
    /// Every kind, in the order of their discriminants (an index per kind).
    pub const ALL: [Hold; 3] = [Hold::Timer, Hold::Lease, Hold::Claim];

    pub fn of(q: &QueueRecord, h: &ReceiptHandle) -> Hold {
        if q.fifo {
            Hold::Claim
        } else if h.timer_key.is_some() {
            Hold::Timer
        } else {
            Hold::Lease
        }
    }
}

/// What a receive asks for.
#[derive(Debug, Clone, Copy)]
pub struct Asked {
    pub max: usize,
    pub wait_s: u64,
    pub visibility_s: u64,
}

/// One message a receive delivers, as the holder hands it over to be answered.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The SQS MessageId: the one the message was sent under, whatever copy this is.
    pub message_id: String,
    pub handle: ReceiptHandle,
    pub envelope: Envelope,
    /// `ApproximateReceiveCount`, this delivery included.
    pub count: u32,
    /// `ApproximateFirstReceiveTimestamp`, where it is known.
    pub first_receive_ms: Option<i64>,
    pub sent_ms: Option<i64>,
    /// The broker's id of the copy delivered (a FIFO message's `SequenceNumber`).
    pub broker_id: String,
    /// The lane it was popped from (a FIFO message's group).
    pub lane: String,
    /// The push's transaction id (a FIFO message's `MessageDeduplicationId`).
    pub dedup_id: String,
}

impl Delivery {
    fn new(
        handle: ReceiptHandle,
        m: &PoppedMessage,
        envelope: Envelope,
        count: u32,
        first_receive_ms: Option<i64>,
    ) -> Delivery {
        Delivery {
            message_id: message_id(&envelope, m),
            handle,
            sent_ms: sent_ms(&envelope, m),
            envelope,
            count,
            first_receive_ms,
            broker_id: m.id.clone(),
            lane: m.partition.clone(),
            dedup_id: m.transaction_id.clone(),
        }
    }
}

/// A receive: a FIFO queue's claims, a standard queue's timers (and leases for what is too
/// large for a timer).
pub async fn receive<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    asked: Asked,
) -> Result<Vec<Delivery>, ApiError> {
    if q.fifo {
        claim::receive(ctx, q, asked).await
    } else {
        standard::receive(ctx, q, asked).await
    }
}

/// What a visibility change did, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed {
    /// Extended, shortened or released, as asked.
    Applied,
    /// The delivery's visibility had ended: the message is visible again, and nobody
    /// deleted it. SQS answers such a change with success and changes nothing.
    Visible,
    /// The delivery was deleted after its visibility ended (its tombstone), or its queue
    /// was purged since: SQS refuses the handle.
    Deleted,
}

/// Deletes, one verdict per handle in order: success also for a stale handle (SQS's
/// contract), a failure only when the broker failed to settle it.
pub async fn delete<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    handles: &[ReceiptHandle],
) -> Result<Vec<Result<Removed, ApiError>>, ApiError> {
    let done =
        |v: Vec<Result<(), ApiError>>| v.into_iter().map(|r| r.map(|()| Removed::Done)).collect();
    let mut verdicts: Vec<Result<Removed, ApiError>> =
        handles.iter().map(|_| Ok(Removed::Done)).collect();
    for kind in Hold::ALL {
        let slots: Vec<usize> = (0..handles.len())
            .filter(|&i| Hold::of(q, &handles[i]) == kind)
            .collect();
        if slots.is_empty() {
            continue;
        }
        let mine: Vec<&ReceiptHandle> = slots.iter().map(|&i| &handles[i]).collect();
        let answers = match kind {
            Hold::Timer => done(timer::delete(ctx, q, &mine).await?),
            Hold::Lease => done(lease::delete(ctx, &mine).await?),
            Hold::Claim => claim_settle::delete(ctx, q, &mine).await?,
        };
        for (slot, v) in slots.into_iter().zip(answers) {
            verdicts[slot] = v;
        }
    }
    Ok(verdicts)
}

/// What a delete did with its handle, short of a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removed {
    /// Deleted, or stale (SQS answers a stale handle success and deletes nothing).
    Done,
    /// A FIFO handle whose visibility ended: SQS refuses it as expired, and the message
    /// is not deleted.
    Expired,
}

/// Visibility changes `(handle, seconds)`, one verdict per change in order. A standard
/// queue's run at once, each on its own; a FIFO queue's are grouped by claim first, as
/// the entries of one claim are one gesture.
pub async fn change<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    changes: &[(ReceiptHandle, u64)],
) -> Vec<Result<Changed, ApiError>> {
    if q.fifo {
        return claim_settle::change(ctx, q, changes).await;
    }
    join_all(
        changes
            .iter()
            .enumerate()
            .map(|(slot, (h, seconds))| async move {
                match Hold::of(q, h) {
                    Hold::Timer => timer::change(ctx, q, h, *seconds, slot).await,
                    Hold::Lease | Hold::Claim => lease::change(ctx, h, *seconds).await,
                }
            }),
    )
    .await
}

/// When the handle's delivery was made (ms since the epoch), read off its expiry.
pub fn received_ms(h: &ReceiptHandle) -> i64 {
    h.expiry_unix_ms - HANDLE_LIFETIME_MS
}

/// A refused visibility change of a lease or claim that is gone.
pub(crate) fn not_inflight() -> ApiError {
    ApiError::new(
        ErrorCode::MessageNotInflight,
        "Message does not exist or is not available for visibility timeout change.",
    )
}

fn not_deleted() -> ApiError {
    ApiError::new(
        ErrorCode::InternalError,
        "The message could not be deleted; try again.",
    )
}

/// The SQS MessageId of a popped message: a redelivered copy's, else its broker id.
fn message_id(e: &Envelope, m: &PoppedMessage) -> String {
    carried::message_id(e).unwrap_or_else(|| m.id.clone())
}

/// When the message was first sent: carried by a copy, else its `createdAt`.
fn sent_ms(e: &Envelope, m: &PoppedMessage) -> Option<i64> {
    carried::sent_timestamp(e).or_else(|| m.created_at.as_deref().and_then(parse_iso_ms))
}

/// The copy of popped message `m` (as `e`) that goes to its dead-letter queue, received
/// `seen` times there.
fn dead_letter_copy(q: &QueueRecord, m: &PoppedMessage, e: Envelope, seen: u32) -> Envelope {
    let id = message_id(&e, m);
    let sent = sent_ms(&e, m);
    carried::dead_letter(e, &q.name, &id, seen, sent)
}

/// The lease a popped message is held under: its own, else its pop's.
fn lease_of(m: &PoppedMessage, p: &Popped) -> String {
    m.lease_id.clone().unwrap_or_else(|| p.lease_id.clone())
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
        behind_in_claim: false,
        expiry_unix_ms: ctx.now_ms + HANDLE_LIFETIME_MS,
    }
}

/// Whether the queue was purged, deleted or re-created since `q` was read (a purge under
/// way counts): its record read afresh, on the rare path where a commit was refused. Then
/// a message popped under `q` may belong to the emptied broker queue, and is left to its
/// lease: gone with that queue, or back when the lease ends if it was the new queue's.
pub(super) async fn emptied_since_read<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
) -> Result<bool, ApiError> {
    Ok(match registry::load(ctx, &q.name).await? {
        None => true,
        Some(now) => {
            let r = &now.record;
            r.purging.is_some() || r.purged != q.purged || r.created != q.created
        }
    })
}

/// Whether a failed pop is a purge's doing: the released engine answers a pop that races
/// the broker queue's delete 500 ("pop failed"; checker, engine seed 422). SQS answers a
/// receive during a purge empty, and so does the endpoint then.
pub(super) async fn pop_failed_by_purge<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    e: &QueenError,
) -> Result<bool, ApiError> {
    match e {
        QueenError::Failed { status, .. } if *status >= 500 => emptied_since_read(ctx, q).await,
        _ => Ok(false),
    }
}

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

/// Pops a receive makes while its pops hold nothing deliverable (copies of deliveries
/// deleted late, second copies of one delivery, messages moved to the dead-letter queue):
/// such a pop returns at once, so the receive pops again rather than answer empty while
/// messages are visible. A short poll pops at most 4 times; a long poll, whose client asked
/// to wait for a message, keeps popping (waiting what is left of its wait) up to 64 times:
/// checker seed 412 saw a long poll of one message answer empty in 34 ms after four pops
/// that each met a message due for the dead-letter queue, while the queue held more.
fn pop_rounds(asked: &Asked) -> usize {
    if asked.wait_s == 0 {
        4
    } else {
        64
    }
}
