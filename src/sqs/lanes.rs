//! Where a message goes: the lane (partition) and the broker's dedup key.
//! A standard queue's lane is chosen by hashing the send's own key across the
//! queue's width (the MessageId does not exist until the push lands); a FIFO
//! queue's lane is its MessageGroupId and its dedup key the MessageDeduplicationId.
//!
//! A FIFO lane is named after its group, and after the purge once the queue was purged:
//! the released engine (queen-engine 1.3.0) keeps its deduplication cache per queue and
//! partition *name* across the delete and re-create a purge is, with the old partition's
//! watermark, so a duplicate pushed into a re-created partition of the same name is not
//! probed and is stored twice. A new name per purge gives the cache a new entry. (A queue
//! deleted and made again is not exposed: `QueueDeletedRecently` keeps the name unused for
//! 60 s, and re-created after that on the engine it deduplicated correctly, tried once.)

use super::registry::QueueRecord;
use crate::queen::PushItem;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A per-message key, unique per request and entry: the request id is random.
pub fn message_key(request_id: &str, index: usize) -> String {
    let digest = Sha256::digest(format!("{request_id}/{index}").as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The lane of a standard queue for `key`: decimal `0..partitions`.
pub fn standard_lane(key: &str, partitions: u32) -> String {
    let digest = Sha256::digest(key.as_bytes());
    let n = u64::from_be_bytes(digest[..8].try_into().unwrap_or([0; 8]));
    (n % u64::from(partitions.max(1))).to_string()
}

/// The lane of entry `index` of one send request on a standard queue: the request's
/// own key hashes to a first lane and the entries take consecutive lanes from there.
/// Lanes are still spread by a hash across requests, and a batch of up to ten never puts
/// two of its messages on one lane when the width allows, because a lane holds one
/// message in flight at a time (the contract's in-flight table is measured on this).
pub fn batch_lane(request_id: &str, index: usize, partitions: u32) -> String {
    let width = u64::from(partitions.max(1));
    let first: u64 = standard_lane(&message_key(request_id, 0), partitions)
        .parse()
        .unwrap_or(0);
    ((first + index as u64) % width).to_string()
}

/// The lane of message group `group` in FIFO queue `q` (see the module's note).
pub fn fifo_lane(q: &QueueRecord, group: &str) -> String {
    if q.purged == 0 {
        group.to_string()
    } else {
        format!("{group}{INCARNATION_MARK}{}", q.purged)
    }
}

/// Whether a FIFO lane was named before the queue's last purge: a send that read the
/// queue's record before the purge (a replica's cached record, or a send racing the
/// purge) pushed into the group's old lane. Its messages belong in the current one.
/// Judged against `q`: a lane newer than the record is never called old.
pub fn made_before_purge(q: &QueueRecord, lane: &str) -> bool {
    q.fifo && q.purged > 0 && incarnation_of(lane) < q.purged
}

/// The purge a FIFO lane's name was made after (0: before any).
fn incarnation_of(lane: &str) -> i64 {
    lane.rsplit_once(INCARNATION_MARK)
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(0)
}

/// Separates a group from the incarnation in a FIFO lane's name: a space, which no
/// MessageGroupId may contain.
const INCARNATION_MARK: char = ' ';

/// The MessageGroupId a FIFO lane holds.
pub fn group_of(lane: &str) -> &str {
    lane.rsplit_once(INCARNATION_MARK)
        .map_or(lane, |(group, _)| group)
}

/// The push for one message into `queue`: FIFO names its group and dedup id;
/// a standard queue spreads by `key` and deduplicates nothing.
pub fn push_item(
    queue: &QueueRecord,
    payload: Value,
    group_id: Option<&str>,
    dedup_id: Option<&str>,
    key: &str,
) -> PushItem {
    if queue.fifo {
        PushItem {
            queue: queue.name.clone(),
            partition: fifo_lane(queue, group_id.unwrap_or("default")),
            payload,
            transaction_id: dedup_id.map(str::to_string),
        }
    } else {
        PushItem {
            queue: queue.name.clone(),
            partition: standard_lane(key, queue.partitions),
            payload,
            transaction_id: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_lane_names_its_group_and_the_queue_incarnation() {
        let mut q: QueueRecord = serde_json::from_value(serde_json::json!({
            "name": "q.fifo", "fifo": true, "partitions": 0, "attributes": {},
            "created": 1, "modified": 1}))
        .unwrap();
        assert_eq!(
            fifo_lane(&q, "g-1"),
            "g-1",
            "never purged: the group's own name"
        );
        q.purged = 1_796_214_731_666;
        let lane = fifo_lane(&q, "g-1");
        assert_ne!(lane, "g-1");
        assert_eq!(group_of(&lane), "g-1");
        assert_eq!(group_of("g-1"), "g-1");
        // Any punctuation a MessageGroupId may hold survives the round trip.
        let odd = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
        assert_eq!(group_of(&fifo_lane(&q, odd)), odd);
        // Lanes named before the last purge are old; the current one is not.
        q.fifo = true;
        assert!(made_before_purge(&q, "g-1"));
        assert!(made_before_purge(&q, "g-1 1796214731000"));
        assert!(!made_before_purge(&q, &lane));
        assert!(
            !made_before_purge(&q, "g-1 1796214731667"),
            "newer than the record"
        );
    }

    #[test]
    fn lanes_spread_over_the_width_and_are_stable() {
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..2000 {
            let lane: u32 = standard_lane(&message_key("rid", i), 8).parse().unwrap();
            assert!(lane < 8);
            seen.insert(lane);
        }
        assert_eq!(seen.len(), 8);
        assert_eq!(standard_lane("k", 64), standard_lane("k", 64));
        assert_ne!(message_key("a", 1), message_key("a", 2));
        let batch: std::collections::BTreeSet<String> =
            (0..10).map(|i| batch_lane("rid", i, 64)).collect();
        assert_eq!(batch.len(), 10);
        assert_eq!(
            batch_lane("rid", 0, 64),
            standard_lane(&message_key("rid", 0), 64)
        );
        assert_eq!(batch_lane("rid", 9, 1), "0");
    }
}
