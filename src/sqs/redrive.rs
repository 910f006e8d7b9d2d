//! Moving a message between queues atomically: ONE `POST /api/v1/transaction` holding
//! the push to the destination and the ack `completed` of the original under its lease.
//! Used by redrive-on-receive (a message past `maxReceiveCount` goes to the dead-letter
//! queue) and by the message move tasks (the way back).
//!
//! What a dead-lettered copy carries. The envelope's keys are fixed (`b`, `a`, `s`, `m`),
//! so the original MessageId travels in `m` and the rest in `s`, the system attributes,
//! under `queen.*` names that are never returned as AWS system attributes:
//! - `queen.receiveCount` (Number): the deliveries consumers saw before the move, so the
//!   copy's `ApproximateReceiveCount` continues from it;
//! - `queen.sourceQueue` (String): the queue it was dead-lettered from (the move task's
//!   default destination, and `DeadLetterQueueSourceArn` on receive);
//! - `queen.sentTimestamp` (Number): the original's `SentTimestamp`, kept like SQS keeps it.
//!
//! Receive surfaces `m` as `queen.originalMessageId` and `queen.sourceQueue` as itself.

use super::lanes;
use super::registry::QueueRecord;
use crate::http::Transport;
use crate::model::{AttrData, AttrValue, Envelope};
use crate::queen::{Ack, PoppedMessage, PushItem, RollbackReason, Transaction, TxnOutcome};
use crate::ctx::Ctx;
use crate::wire::{ApiError, ErrorCode};
use serde_json::Value;

pub const RECEIVE_COUNT: &str = "queen.receiveCount";
pub const SOURCE_QUEUE: &str = "queen.sourceQueue";
pub const SENT_TIMESTAMP: &str = "queen.sentTimestamp";
/// The attribute name under which receive shows the envelope's `m`.
pub const ORIGINAL_MESSAGE_ID: &str = "queen.originalMessageId";

/// The facade's own names inside `s`: stripped before system attributes are returned.
pub fn is_internal(name: &str) -> bool {
    name.starts_with("queen.")
}

/// Receives a copy's earlier life counted for (0 for anything never dead-lettered).
pub fn carried_count(e: &Envelope) -> u32 {
    number(e, RECEIVE_COUNT).map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
}

pub fn source_queue(e: &Envelope) -> Option<&str> {
    match &e.system.get(SOURCE_QUEUE)?.value {
        AttrData::String(s) => Some(s),
        AttrData::Binary(_) => None,
    }
}

pub fn sent_timestamp(e: &Envelope) -> Option<i64> {
    number(e, SENT_TIMESTAMP)
}

pub(crate) fn text(e: &Envelope, name: &str) -> Option<String> {
    match &e.system.get(name)?.value {
        AttrData::String(s) => Some(s.clone()),
        AttrData::Binary(_) => None,
    }
}

pub(crate) fn number(e: &Envelope, name: &str) -> Option<i64> {
    match &e.system.get(name)?.value {
        AttrData::String(s) => s.parse().ok(),
        AttrData::Binary(_) => None,
    }
}

pub(crate) fn put(e: &mut Envelope, name: &str, data_type: &str, v: String) {
    e.system.insert(
        name.to_string(),
        AttrValue {
            data_type: data_type.to_string(),
            value: AttrData::String(v),
        },
    );
}

/// The dead-letter copy of a message received `seen` times (the triggering delivery is
/// never handed to anyone and is not counted), first sent at `sent_ms`.
pub fn dead_letter_copy(
    mut e: Envelope,
    source: &str,
    message_id: &str,
    seen: u32,
    sent_ms: Option<i64>,
) -> Envelope {
    put(&mut e, RECEIVE_COUNT, "Number", seen.to_string());
    put(&mut e, SOURCE_QUEUE, "String", source.to_string());
    // What it carried as a message in flight in its source queue is not the copy's.
    e.system.remove(super::visibility::MESSAGE_ID);
    e.system.remove(super::visibility::FIRST_RECEIVE);
    if let Some(ms) = sent_ms {
        put(&mut e, SENT_TIMESTAMP, "Number", ms.to_string());
    }
    // A copy of a copy keeps the first id: that is the message the application knows.
    if e.original_id.is_none() {
        e.original_id = Some(message_id.to_string());
    }
    e
}

/// A copy moved back out of a dead-letter queue: its receive count starts again (or it
/// would dead-letter on its first receive) and it is no longer "from" anywhere. The
/// original id stays, so the message remains correlatable.
pub fn returned_copy(mut e: Envelope) -> Envelope {
    e.system.remove(RECEIVE_COUNT);
    e.system.remove(SOURCE_QUEUE);
    e
}

/// The push of a moved copy into `dest`. A FIFO target keeps the message's group and is
/// keyed by its deduplication id, or by its unique id (`by_id`) when that collided with
/// the target's history; a standard target spreads it by the message's id.
pub fn copy_push(m: &PoppedMessage, dest: &QueueRecord, payload: Value, by_id: bool) -> PushItem {
    let (partition, key) = if dest.fifo {
        let key = if by_id { &m.id } else { &m.transaction_id };
        let group = lanes::group_of(&m.partition);
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
    Ack {
        transaction_id: m.transaction_id.clone(),
        partition_id: m.partition_id.clone(),
        status: "completed",
        lease_id: Some(lease_id.to_string()),
    }
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
            txn.pushes.push(copy_push(m, q, m.data.clone(), false));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_carries_and_returns() {
        let e = Envelope {
            body: "b".into(),
            ..Default::default()
        };
        let c = dead_letter_copy(e, "src", "id-1", 3, Some(1700000000000));
        assert_eq!(carried_count(&c), 3);
        assert_eq!(source_queue(&c), Some("src"));
        assert_eq!(sent_timestamp(&c), Some(1700000000000));
        assert_eq!(c.original_id.as_deref(), Some("id-1"));
        // The JSON form round-trips through the strict envelope reader.
        let back = Envelope::from_payload(&c.to_json()).unwrap();
        assert_eq!(back, c);
        let again = dead_letter_copy(back, "src2", "id-2", 5, None);
        assert_eq!(again.original_id.as_deref(), Some("id-1"));
        let r = returned_copy(again);
        assert_eq!(carried_count(&r), 0);
        assert_eq!(source_queue(&r), None);
        assert_eq!(r.original_id.as_deref(), Some("id-1"));
    }
}
