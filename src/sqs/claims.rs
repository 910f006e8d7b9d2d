//! FIFO claims of several messages: the records that let deletes and visibility changes
//! act on a claim as one gesture.
//!
//! A FIFO receive pops a run of one message group under ONE lease (a claim). The broker
//! settles a claim only from the front: acking message k `completed` completes everything
//! below k, `retry` releases the whole claim, an extension extends all of it. SQS clients
//! delete messages one by one and in any order, so:
//!
//! - **Claim record** `qs:fc:<leaseId>`, written at receive for claims of more than one
//!   message (single-message claims need none and settle exactly as on a standard queue):
//!   `{"partitionId", "txns", "ids", "deleted", "untilMs"}`: the claim's transaction ids
//!   and message ids in offset order, the message ids the client has deleted, and when
//!   the record may go (lease end + 60 s; refreshed by an extension). A delete adds its
//!   ids to `deleted` under compare-and-set, computes the longest all-deleted prefix of
//!   the claim and, when that prefix grew, acks `completed` its last message: the broker
//!   completes the rest. A message deleted out of order stays recorded until the prefix
//!   reaches it. The record goes when the whole claim is deleted or released.
//! - **Delete-set** `qs:fd:<queue>:<partitionId>` = `{"ids": [...]}`: message ids deleted
//!   out of order, reachable by partition (ttl = the queue's retention). If the lease ends
//!   with such deletes pending, the group is redelivered from its first unacked message,
//!   including messages the client already deleted. Receive reads the delete-set of every
//!   claimed partition (one KV call): a claim's LEADING deleted messages are acked on the
//!   way through, and any later deleted message is withheld and entered in the new
//!   claim's record as already deleted, so the prefix rule still covers it.
//!
//! Message ids, not transaction ids, name deleted messages: a FIFO transaction id is the
//! deduplication id, which a later message of the same group may legitimately reuse once
//! the deduplication window has passed.

use crate::http::Transport;
use crate::queen::{Ack, KvOp, KvResult};
use crate::service::Ctx;
use crate::wire::ApiError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A claim record outlives its lease by this much, so a delete racing the expiry still
/// finds it.
const RECORD_GRACE_MS: i64 = 60_000;
/// Compare-and-set attempts before a record update gives up.
const CAS_TRIES: usize = 8;

pub fn claim_key(lease_id: &str) -> String {
    format!("qs:fc:{lease_id}")
}

pub fn deleted_key(queue: &str, partition_id: &str) -> String {
    format!("qs:fd:{queue}:{partition_id}")
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimRecord {
    pub partition_id: String,
    pub txns: Vec<String>,
    pub ids: Vec<String>,
    #[serde(default)]
    pub deleted: Vec<String>,
    #[serde(default)]
    pub until_ms: i64,
}

impl ClaimRecord {
    /// How many leading messages of the claim are deleted.
    pub fn prefix_len(&self) -> usize {
        self.ids
            .iter()
            .take_while(|id| self.deleted.contains(id))
            .count()
    }

    pub fn all_deleted(&self) -> bool {
        self.prefix_len() == self.ids.len()
    }

    pub fn holds(&self, message_id: &str) -> bool {
        self.ids.iter().any(|i| i == message_id)
    }

    fn ttl_seconds(&self, now_ms: i64) -> u64 {
        ((self.until_ms - now_ms).max(1000) / 1000) as u64 + 1
    }
}

/// The record of a claim, with its version.
#[derive(Debug, Clone)]
pub struct Stored {
    pub record: ClaimRecord,
    pub version: i64,
}

fn parse(r: &KvResult) -> Option<Stored> {
    let row = r.row()?;
    let record = serde_json::from_value(row.value).ok()?;
    Some(Stored {
        record,
        version: row.version,
    })
}

/// The records of several leases, in order, in one KV call.
pub async fn load<T: Transport>(
    ctx: &Ctx<'_, T>,
    leases: &[String],
) -> Result<Vec<Option<Stored>>, ApiError> {
    if leases.is_empty() {
        return Ok(Vec::new());
    }
    let ops = leases.iter().map(|l| KvOp::get(claim_key(l))).collect();
    let r = ctx.queen.kv_results(ops).await?;
    Ok(r.iter().map(parse).collect())
}

/// A new claim's record: lease end + grace.
pub fn new_record(
    partition_id: &str,
    txns: Vec<String>,
    ids: Vec<String>,
    deleted: Vec<String>,
    now_ms: i64,
    lease_s: u64,
) -> ClaimRecord {
    ClaimRecord {
        partition_id: partition_id.to_string(),
        txns,
        ids,
        deleted,
        until_ms: now_ms + lease_s as i64 * 1000 + RECORD_GRACE_MS,
    }
}

/// Writes new claim records, all in one KV call. Best effort is NOT enough here: without
/// its record a claim's deletes would complete everything below them, so a failure is
/// the receive's failure.
pub async fn write_new<T: Transport>(
    ctx: &Ctx<'_, T>,
    records: &[(String, ClaimRecord)],
) -> Result<(), ApiError> {
    if records.is_empty() {
        return Ok(());
    }
    let ops = records
        .iter()
        .map(|(lease, r)| {
            KvOp::put_ttl(claim_key(lease), json!(r), r.ttl_seconds(ctx.now_ms), None)
        })
        .collect();
    ctx.queen.kv_results(ops).await?;
    Ok(())
}

/// What deleting some of a claim's messages asks of the broker.
#[derive(Debug, Clone, Default)]
pub struct DeletePlan {
    /// Ack `completed` this transaction id under the lease (the prefix grew to it).
    pub ack_txn: Option<String>,
    /// Ids now recorded out of order (to add to the partition's delete-set).
    pub pending: Vec<String>,
    /// Ids the prefix now covers that were pending before (to drop from the delete-set).
    pub covered: Vec<String>,
}

/// Records `ids` as deleted in the claim's record (compare-and-set) and answers what to
/// ack. The record is removed when the whole claim is deleted. `None`: the record
/// vanished meanwhile (the claim was settled by someone else): nothing to do.
pub async fn record_deletes<T: Transport>(
    ctx: &Ctx<'_, T>,
    lease_id: &str,
    mut stored: Stored,
    ids: &[String],
) -> Result<Option<DeletePlan>, ApiError> {
    for _ in 0..CAS_TRIES {
        let before = stored.record.clone();
        let mut rec = before.clone();
        for id in ids {
            if rec.holds(id) && !rec.deleted.contains(id) {
                rec.deleted.push(id.clone());
            }
        }
        let old_prefix = before.prefix_len();
        let new_prefix = rec.prefix_len();
        let op = if rec.all_deleted() {
            KvOp::delete(claim_key(lease_id), Some(stored.version))
        } else {
            KvOp::put_ttl(
                claim_key(lease_id),
                json!(rec),
                rec.ttl_seconds(ctx.now_ms),
                Some(stored.version),
            )
        };
        let r = ctx.queen.kv_results(vec![op]).await?;
        let Some(res) = r.first() else {
            return Ok(None);
        };
        if res.applied() {
            let pending = rec.ids[new_prefix..]
                .iter()
                .filter(|id| rec.deleted.contains(id))
                .cloned()
                .collect();
            let covered = rec.ids[old_prefix..new_prefix]
                .iter()
                .filter(|id| before.deleted.contains(id))
                .cloned()
                .collect();
            let ack_txn = (new_prefix > old_prefix).then(|| rec.txns[new_prefix - 1].clone());
            return Ok(Some(DeletePlan {
                ack_txn,
                pending,
                covered,
            }));
        }
        // Lost the race: the refusal carries the current value and version.
        match serde_json::from_value::<ClaimRecord>(res.value.clone()) {
            Ok(record) if !res.value.is_null() => {
                stored = Stored {
                    record,
                    version: res.version,
                }
            }
            _ => return Ok(None),
        }
    }
    Err(ApiError::new(
        crate::wire::ErrorCode::InternalError,
        "The message could not be deleted (contention); try again.",
    ))
}

/// After an extension to `seconds`: the record lives as long as the lease (plus grace).
pub async fn refresh<T: Transport>(
    ctx: &Ctx<'_, T>,
    lease_id: &str,
    stored: &Stored,
    seconds: u64,
) {
    let mut rec = stored.record.clone();
    rec.until_ms = rec
        .until_ms
        .max(ctx.now_ms + seconds as i64 * 1000 + RECORD_GRACE_MS);
    let op = KvOp::put_ttl(
        claim_key(lease_id),
        json!(rec),
        rec.ttl_seconds(ctx.now_ms),
        Some(stored.version),
    );
    // Best effort: a concurrent delete rewrote it, and a lost refresh only shortens it.
    let _ = ctx.queen.kv_results(vec![op]).await;
}

/// Removes a released claim's record (best effort: it expires anyway).
pub async fn forget<T: Transport>(ctx: &Ctx<'_, T>, lease_id: &str) {
    let _ = ctx
        .queen
        .kv_results(vec![KvOp::delete(claim_key(lease_id), None)])
        .await;
}

/// The delete-sets of several partitions of `queue`, in order, in one KV call.
pub async fn deleted_sets<T: Transport>(
    ctx: &Ctx<'_, T>,
    queue: &str,
    partition_ids: &[String],
) -> Result<Vec<Vec<String>>, ApiError> {
    if partition_ids.is_empty() {
        return Ok(Vec::new());
    }
    let ops = partition_ids
        .iter()
        .map(|p| KvOp::get(deleted_key(queue, p)))
        .collect();
    let r = ctx.queen.kv_results(ops).await?;
    Ok(r.iter().map(|r| ids_of(&r.value, r.found)).collect())
}

fn ids_of(v: &Value, found: Option<bool>) -> Vec<String> {
    if found != Some(true) {
        return Vec::new();
    }
    v.get("ids")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Adds `add` to and removes `remove` from a partition's delete-set, compare-and-set.
pub async fn update_deleted_set<T: Transport>(
    ctx: &Ctx<'_, T>,
    queue: &str,
    partition_id: &str,
    add: &[String],
    remove: &[String],
    ttl_seconds: u64,
) -> Result<(), ApiError> {
    if add.is_empty() && remove.is_empty() {
        return Ok(());
    }
    let key = deleted_key(queue, partition_id);
    let mut current = ctx.queen.kv_results(vec![KvOp::get(key.clone())]).await?;
    for _ in 0..CAS_TRIES {
        let Some(r) = current.first() else {
            return Ok(());
        };
        let found = r.found == Some(true) || (r.applied.is_some() && !r.value.is_null());
        let mut ids = ids_of(&r.value, Some(found));
        let version = if found { r.version } else { 0 };
        ids.retain(|i| !remove.contains(i));
        for a in add {
            if !ids.contains(a) {
                ids.push(a.clone());
            }
        }
        let op = if ids.is_empty() {
            if !found {
                return Ok(());
            }
            KvOp::delete(key.clone(), Some(version))
        } else {
            KvOp::put_ttl(
                key.clone(),
                json!({ "ids": ids }),
                ttl_seconds,
                Some(version),
            )
        };
        current = ctx.queen.kv_results(vec![op]).await?;
        if current.first().is_some_and(KvResult::applied) {
            return Ok(());
        }
    }
    Err(ApiError::new(
        crate::wire::ErrorCode::InternalError,
        "The message could not be deleted (contention); try again.",
    ))
}

/// The ack that settles a claim from the front.
pub fn ack(txn: &str, partition_id: &str, lease_id: &str, status: &'static str) -> Ack {
    Ack {
        transaction_id: txn.to_string(),
        partition_id: partition_id.to_string(),
        status,
        lease_id: Some(lease_id.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(deleted: &[&str]) -> ClaimRecord {
        ClaimRecord {
            partition_id: "p".into(),
            txns: vec!["t1".into(), "t2".into(), "t3".into()],
            ids: vec!["a".into(), "b".into(), "c".into()],
            deleted: deleted.iter().map(|s| s.to_string()).collect(),
            until_ms: 0,
        }
    }

    #[test]
    fn prefix_is_the_leading_deleted_run() {
        assert_eq!(rec(&[]).prefix_len(), 0);
        assert_eq!(rec(&["b", "c"]).prefix_len(), 0);
        assert_eq!(rec(&["b", "a"]).prefix_len(), 2);
        assert!(rec(&["c", "a", "b"]).all_deleted());
        assert!(!rec(&["a", "b"]).all_deleted());
    }
}
