//! What a copy of a message carries from its earlier lives.
//!
//! A message is pushed anew more than once in its life: a visibility timer pushes its
//! redelivery copy back, a dead-letter move pushes a copy into another queue, a move task
//! pushes it back out. The broker mints a new id for every push, so what the message WAS
//! travels in the copy's envelope, as system attributes under `queen.*` names that are
//! never answered as AWS system attributes (the envelope's keys are fixed: `b`, `a`, `s`,
//! `m`):
//!
//! - `queen.messageId`: the SQS MessageId a redelivered copy stands for;
//! - `queen.receiveCount` (Number): the deliveries consumers saw so far, so a copy's
//!   `ApproximateReceiveCount` continues from it;
//! - `queen.firstReceive` (Number): when the message was first received (ms);
//! - `queen.sentTimestamp` (Number): the original's `SentTimestamp`, kept like SQS keeps it;
//! - `queen.sourceQueue`: the queue a dead-lettered copy came from (a move task's default
//!   destination, and `DeadLetterQueueSourceArn` on receive);
//! - `queen.visibleAt` (Number): the end of the delay of a delayed message too large for
//!   a timer (its lane's lease holds it; whoever pops it earlier holds it back).
//!
//! A dead-lettered copy keeps its MessageId (`queen.messageId`, as SQS keeps it) and the
//! first MessageId in the envelope's `m`, which receive shows as `queen.originalMessageId`.

use super::{AttrData, AttrValue, Envelope};

pub const MESSAGE_ID: &str = "queen.messageId";
pub const RECEIVE_COUNT: &str = "queen.receiveCount";
pub const FIRST_RECEIVE: &str = "queen.firstReceive";
pub const SENT_TIMESTAMP: &str = "queen.sentTimestamp";
pub const SOURCE_QUEUE: &str = "queen.sourceQueue";
pub const VISIBLE_AT: &str = "queen.visibleAt";
/// A standard queue's message's `MessageGroupId` (fair queues), answered back on receive;
/// on a FIFO queue, the group a send routed into another group's lane was sent in
/// (`sqs::dedup`; a FIFO message's group is otherwise its lane's).
pub const GROUP_ID: &str = "queen.groupId";
/// The attribute name under which receive shows the envelope's `m`.
pub const ORIGINAL_MESSAGE_ID: &str = "queen.originalMessageId";

/// The facade's own names inside `s`: never returned as AWS system attributes.
pub fn is_internal(name: &str) -> bool {
    name.starts_with("queen.")
}

/// The MessageId a redelivered copy stands for (`None`: the message's first push).
pub fn message_id(e: &Envelope) -> Option<String> {
    text(e, MESSAGE_ID)
}

/// Whether the envelope is a redelivery copy (pushed back by a visibility timer or a
/// visibility change to 0).
pub fn is_redelivery(e: &Envelope) -> bool {
    e.system.contains_key(MESSAGE_ID)
}

/// Receives the message's earlier lives counted for (0 for a message never received).
pub fn receive_count(e: &Envelope) -> u32 {
    number(e, RECEIVE_COUNT).map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
}

pub fn first_receive(e: &Envelope) -> Option<i64> {
    number(e, FIRST_RECEIVE)
}

pub fn sent_timestamp(e: &Envelope) -> Option<i64> {
    number(e, SENT_TIMESTAMP)
}

pub fn source_queue(e: &Envelope) -> Option<&str> {
    match &e.system.get(SOURCE_QUEUE)?.value {
        AttrData::String(s) => Some(s),
        AttrData::Binary(_) => None,
    }
}

pub fn visible_at(e: &Envelope) -> Option<i64> {
    number(e, VISIBLE_AT)
}

/// A standard queue's message's `MessageGroupId`.
pub fn group(e: &Envelope) -> Option<String> {
    text(e, GROUP_ID)
}

pub fn set_group(e: &mut Envelope, group: &str) {
    put(e, GROUP_ID, "String", group.to_string());
}

/// Stamps a delayed message with the end of its delay.
pub fn stamp_visible_at(e: &mut Envelope, now_ms: i64, delay_s: u64) {
    let at = now_ms.saturating_add((delay_s as i64).saturating_mul(1000));
    put(e, VISIBLE_AT, "Number", at.to_string());
}

/// The copy a visibility timer pushes back: the message as it is after `count` receives.
pub fn redelivery(
    mut e: Envelope,
    message_id: &str,
    count: u32,
    sent_ms: Option<i64>,
    first_receive_ms: i64,
) -> Envelope {
    put(&mut e, MESSAGE_ID, "String", message_id.to_string());
    put(&mut e, RECEIVE_COUNT, "Number", count.to_string());
    put(
        &mut e,
        FIRST_RECEIVE,
        "Number",
        first_receive_ms.to_string(),
    );
    if let Some(ms) = sent_ms {
        put(&mut e, SENT_TIMESTAMP, "Number", ms.to_string());
    }
    e
}

/// The dead-letter copy of a message received `seen` times (the triggering delivery is
/// never handed to anyone and is not counted), first sent at `sent_ms`. It is answered
/// under the message's own MessageId, as SQS answers it.
pub fn dead_letter(
    mut e: Envelope,
    source: &str,
    message_id: &str,
    seen: u32,
    sent_ms: Option<i64>,
) -> Envelope {
    put(&mut e, RECEIVE_COUNT, "Number", seen.to_string());
    put(&mut e, SOURCE_QUEUE, "String", source.to_string());
    put(&mut e, MESSAGE_ID, "String", message_id.to_string());
    // When it was first received in its source queue is not the copy's.
    e.system.remove(FIRST_RECEIVE);
    if let Some(ms) = sent_ms {
        put(&mut e, SENT_TIMESTAMP, "Number", ms.to_string());
    }
    // A copy of a copy keeps the first id: that is the message the application knows.
    if e.original_id.is_none() {
        e.original_id = Some(message_id.to_string());
    }
    e
}

/// A FIFO message moved into its group's current lane after a purge (it was sent into a
/// lane of the queue's earlier incarnation while the purge ran): the same message, so it
/// keeps its MessageId (and with it its receive count) and its SentTimestamp.
pub fn relaned(mut e: Envelope, message_id: &str, sent_ms: Option<i64>) -> Envelope {
    put(&mut e, MESSAGE_ID, "String", message_id.to_string());
    if let Some(ms) = sent_ms {
        put(&mut e, SENT_TIMESTAMP, "Number", ms.to_string());
    }
    e
}

/// A copy moved back out of a dead-letter queue: a new message, as SQS's redrive makes it
/// ("assigned a new messageID"): its receive count starts again (or it would dead-letter
/// on its first receive), it is no longer "from" anywhere, and it is answered under its
/// new id. The first id stays in `m`, so the message remains correlatable.
pub fn returned(mut e: Envelope) -> Envelope {
    e.system.remove(RECEIVE_COUNT);
    e.system.remove(SOURCE_QUEUE);
    e.system.remove(MESSAGE_ID);
    e
}

fn text(e: &Envelope, name: &str) -> Option<String> {
    match &e.system.get(name)?.value {
        AttrData::String(s) => Some(s.clone()),
        AttrData::Binary(_) => None,
    }
}

fn number(e: &Envelope, name: &str) -> Option<i64> {
    match &e.system.get(name)?.value {
        AttrData::String(s) => s.parse().ok(),
        AttrData::Binary(_) => None,
    }
}

fn put(e: &mut Envelope, name: &str, data_type: &str, v: String) {
    e.system.insert(
        name.to_string(),
        AttrValue {
            data_type: data_type.to_string(),
            value: AttrData::String(v),
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Envelope {
        Envelope {
            body: "b".into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_redelivery_carries_what_the_message_was() {
        let c = redelivery(
            plain(),
            "id-1",
            3,
            Some(1_700_000_000_000),
            1_700_000_000_500,
        );
        assert_eq!(message_id(&c).as_deref(), Some("id-1"));
        assert!(is_redelivery(&c));
        assert_eq!(receive_count(&c), 3);
        assert_eq!(sent_timestamp(&c), Some(1_700_000_000_000));
        assert_eq!(first_receive(&c), Some(1_700_000_000_500));
        let back = Envelope::from_payload(&c.to_json()).unwrap();
        assert_eq!(back, c);
        // A copy of a copy keeps the first receive and the sent time it was given.
        let again = redelivery(back, "id-1", 4, None, 1_700_000_000_500);
        assert_eq!(receive_count(&again), 4);
        assert_eq!(sent_timestamp(&again), Some(1_700_000_000_000));
    }

    #[test]
    fn a_dead_letter_copy_carries_and_a_returned_one_starts_again() {
        let inflight = redelivery(plain(), "id-0", 2, None, 5);
        let c = dead_letter(inflight, "src", "id-1", 3, Some(1_700_000_000_000));
        assert_eq!(receive_count(&c), 3);
        assert_eq!(source_queue(&c), Some("src"));
        assert_eq!(sent_timestamp(&c), Some(1_700_000_000_000));
        assert_eq!(c.original_id.as_deref(), Some("id-1"));
        // It keeps its MessageId; when it was first received in its source queue is dropped.
        assert_eq!(message_id(&c).as_deref(), Some("id-1"));
        assert_eq!(first_receive(&c), None);
        let back = Envelope::from_payload(&c.to_json()).unwrap();
        assert_eq!(back, c);
        let again = dead_letter(back, "src2", "id-2", 5, None);
        assert_eq!(again.original_id.as_deref(), Some("id-1"));
        let r = returned(again);
        assert_eq!(receive_count(&r), 0);
        assert_eq!(source_queue(&r), None);
        assert_eq!(message_id(&r), None, "a new message id");
        assert_eq!(r.original_id.as_deref(), Some("id-1"));
    }

    #[test]
    fn a_delay_end_is_stamped_and_read_back() {
        let mut e = plain();
        assert_eq!(visible_at(&e), None);
        stamp_visible_at(&mut e, 1_000, 5);
        assert_eq!(visible_at(&e), Some(6_000));
        assert!(is_internal(VISIBLE_AT));
        assert!(!is_internal("AWSTraceHeader"));
    }
}
