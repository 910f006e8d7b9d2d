//! Moving a message between queues atomically: ONE `POST /api/v1/transaction` holding
//! the push to the destination and the ack `completed` of the original under its lease.
//! Used by every holder of messages in flight when a message passes `maxReceiveCount`
//! (it goes to the dead-letter queue; `inflight`), by the message move tasks (the way
//! back), and by FIFO receives that meet a lane named before a purge (`relane`).
//!
//! What a moved copy carries from its earlier life is `model::carried`'s.

use super::lanes;
use super::registry::{self, QueueRecord};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{carried, Envelope};
use crate::queen::{
    Ack, AckStatus, PoppedMessage, PushItem, RollbackReason, Transaction, TxnOutcome,
};
use crate::wire::{ApiError, ErrorCode};
use serde_json::Value;

/// The dead-letter queue of a receive, looked up once, when a message first needs it.
pub enum DeadLetter {
    Unresolved,
    /// None: no redrive policy, or its target no longer exists (nothing is moved then: a
    /// message is delivered rather than lost). Read through the record cache.
    Resolved(Option<(QueueRecord, u32)>),
    /// As `Resolved`, read again past the cache before a first move.
    Confirmed(Option<(QueueRecord, u32)>),
}

impl DeadLetter {
    /// The dead-letter queue's record and `maxReceiveCount`, as the record cache has it:
    /// enough to tell whether a message is to be moved.
    pub async fn target<T: Transport>(
        &mut self,
        ctx: &Ctx<'_, T>,
        q: &QueueRecord,
    ) -> Result<Option<&(QueueRecord, u32)>, ApiError> {
        if let DeadLetter::Unresolved = self {
            *self = DeadLetter::Resolved(resolve(ctx, q, false).await?);
        }
        Ok(match self {
            DeadLetter::Resolved(t) | DeadLetter::Confirmed(t) => t.as_ref(),
            DeadLetter::Unresolved => None,
        })
    }

    /// The target of a message about to be moved, its record read past the cache (once per
    /// receive): a dead-letter queue deleted through another replica within the cache's
    /// bound is not pushed into, which would re-create its broker queue as a leftover
    /// holding the message. Without one, the message is delivered.
    pub async fn confirmed<T: Transport>(
        &mut self,
        ctx: &Ctx<'_, T>,
        q: &QueueRecord,
    ) -> Result<Option<&(QueueRecord, u32)>, ApiError> {
        if let DeadLetter::Unresolved | DeadLetter::Resolved(_) = self {
            *self = DeadLetter::Confirmed(resolve(ctx, q, true).await?);
        }
        self.target(ctx, q).await
    }
}

/// The redrive policy's target and `maxReceiveCount`, its record read through the cache or
/// past it (`fresh`).
async fn resolve<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    fresh: bool,
) -> Result<Option<(QueueRecord, u32)>, ApiError> {
    Ok(match q.redrive(ctx.cfg) {
        // A queue that names itself keeps its messages: moving one into the queue it is in
        // would only move it again on its next receive.
        Some((name, _)) if name == q.name => None,
        Some((name, max)) => {
            let found = if fresh {
                registry::load(ctx, &name).await?
            } else {
                registry::load_recent(ctx, &name).await?
            };
            found.map(|s| (s.record, max))
        }
        None => None,
    })
}

/// The push of a moved copy into `dest`. A FIFO target keeps the message's group and is
/// keyed by its deduplication id, or by its unique id (`by_id`) when that collided with
/// the target's history; a standard target spreads it by the message's id.
pub fn copy_push(m: &PoppedMessage, dest: &QueueRecord, payload: Value, by_id: bool) -> PushItem {
    let (partition, key) = if dest.fifo {
        let key = if by_id { &m.id } else { &m.transaction_id };
        // A message routed into another group's lane by its deduplication id, and stored
        // there (`dedup`), belongs to the group it was sent in.
        let sent_in = carried::group(&Envelope::from_stored(&payload));
        let group = sent_in.as_deref().unwrap_or(lanes::group_of(&m.partition));
        (lanes::fifo_lane(dest, group), key.clone())
    } else {
        (lanes::standard_lane(&m.id, dest.partitions), m.id.clone())
    };
    PushItem {
        queue: dest.name.clone(),
        partition,
        payload,
        transaction_id: Some(key),
    }
}

/// What a move did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    Yes,
    /// The original's lease was gone: nothing moved, the message is someone else's now.
    LeaseLost,
}

/// The ack that takes popped message `m`, held under `lease_id`, out of its lane.
fn completed(m: &PoppedMessage, lease_id: &str) -> Ack {
    Ack::of(m, lease_id, AckStatus::Completed)
}

/// Moves popped message `m` (held under `lease_id`) into `dest` as `envelope`, atomically.
/// On a FIFO destination the lane is the message's group (its partition) and the dedup key
/// its own transaction id; should that collide with the destination's history, the move is
/// retried once keyed by the message's unique id, so a move never stalls on dedup.
pub async fn move_message<T: Transport>(
    ctx: &Ctx<'_, T>,
    m: &PoppedMessage,
    lease_id: &str,
    dest: &QueueRecord,
    envelope: &Envelope,
) -> Result<Moved, ApiError> {
    let payload = envelope.to_json();
    let mut attempts = vec![false];
    if dest.fifo && m.transaction_id != m.id {
        attempts.push(true);
    }
    for by_id in attempts {
        let txn = Transaction {
            pushes: vec![copy_push(m, dest, payload.clone(), by_id)],
            acks: vec![completed(m, lease_id)],
            kv: Vec::new(),
            timers: Vec::new(),
        };
        match ctx.queen.transaction(&txn).await? {
            TxnOutcome::Committed(_) => return Ok(Moved::Yes),
            TxnOutcome::RolledBack {
                reason: RollbackReason::Duplicate,
                ..
            } => continue,
            TxnOutcome::RolledBack {
                reason: RollbackReason::AckRejected,
                ..
            } => return Ok(Moved::LeaseLost),
            TxnOutcome::RolledBack { reason, error } => {
                return Err(ApiError::new(
                    ErrorCode::InternalError,
                    format!("Moving message {} failed ({reason}): {error}", m.id),
                ))
            }
        }
    }
    Err(ApiError::new(
        ErrorCode::InternalError,
        format!("Moving message {} was refused as a duplicate.", m.id),
    ))
}

/// The copy [`relane`] pushes: the same message, under its MessageId and SentTimestamp
/// (checker embedded seed 441: it was answered under a new id, its count started again).
fn relaned(m: &PoppedMessage) -> Envelope {
    let e = Envelope::from_stored(&m.data);
    let id = carried::message_id(&e).unwrap_or_else(|| m.id.clone());
    let sent = carried::sent_timestamp(&e).or_else(|| {
        m.created_at
            .as_deref()
            .and_then(crate::calendar::parse_iso_ms)
    });
    carried::relaned(e, &id, sent)
}

/// Moves a claim popped from a FIFO lane named before the queue's last purge
/// (`lanes::made_before_purge`) into its group's current lane, in order, behind what is
/// there: one transaction per message, the copy and the ack `completed` of the original.
/// Messages recorded deleted are only acked. A copy keeps its deduplication id, so one the
/// current lane holds already is a duplicate of a message there and is only acked. Stops at
/// the first refusal (a lease lost): the rest comes back when the lease ends.
pub async fn relane<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    messages: &[PoppedMessage],
    deleted: &[String],
    lease_id: &str,
) -> Result<(), ApiError> {
    for m in messages {
        let mut txn = Transaction {
            pushes: Vec::new(),
            acks: vec![completed(m, lease_id)],
            kv: Vec::new(),
            timers: Vec::new(),
        };
        if !deleted.contains(&m.id) {
            txn.pushes
                .push(copy_push(m, q, relaned(m).to_json(), false));
        }
        let outcome = match ctx.queen.transaction(&txn).await? {
            TxnOutcome::RolledBack {
                reason: RollbackReason::Duplicate,
                ..
            } => {
                txn.pushes.clear();
                ctx.queen.transaction(&txn).await?
            }
            other => other,
        };
        if !matches!(outcome, TxnOutcome::Committed(_)) {
            return Ok(());
        }
    }
    Ok(())
}
