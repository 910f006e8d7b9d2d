//! FIFO claims: the one record per message group that lets deletes act on a claim of
//! several messages one by one, in any order, without ever completing a message nobody
//! deleted.
//!
//! A FIFO receive pops a run of one message group under ONE lease (a claim). The broker
//! settles a claim only from the front: acking message k `completed` completes everything
//! below k. SQS clients delete one by one and in any order, so the facade keeps, per group
//! (partition), ONE record `qs:fc:<queue>:<partitionId>`:
//!
//! `{"lease", "txns", "ids", "deleted"}`: the lease of the group's NEWEST claim, that
//! claim's messages not yet known to be acked (transaction ids and message ids, in offset
//! order), and the message ids deleted and not yet acked.
//!
//! - **A delete** is a compare-and-set that adds its ids to `deleted`, but only while the
//!   record names the handle's lease: once the group was received again the lease differs
//!   and a stale handle deletes nothing (SQS: "the request succeeds, but the message will
//!   not be deleted"). Before that, even after the lease ran out or was released, the
//!   newest handle deletes, as on SQS. When the deletes complete a prefix that one ack
//!   settles, the write goes in one transaction with that ack (`completed` of the prefix's
//!   last message; the broker completes the rest) and already leaves the prefix out
//!   (`settle_at_once`). Otherwise, or when that ack is refused, the write alone is the
//!   delete and the acks follow it step by step, then the acked ids are pruned from the
//!   record. An ack that finds its lease gone leaves them recorded for the next receive.
//! - **A receive** reads the records of the groups it claimed (one KV call): a claim's
//!   LEADING deleted messages are acked on the way through, later deleted ones are
//!   withheld; then the record is rewritten, compare-and-set, naming the new lease. A
//!   claim of one message with nothing recorded needs no record and writes none.
//! - **No delete acks cumulatively without the record**: one record per group, rewritten
//!   by every receive and delete with a lifetime longer than any lease can last (a lease
//!   ends at most 12 hours after its receive, `settle::check_total_visibility`), so a
//!   record cannot expire under a live lease. Without a record the claim is a single
//!   message, or settled.
//! - Records written before this layout (`qs:fc:<leaseId>`) are honoured by refusing to
//!   ack through them: such a delete answers success and the claim comes back when its
//!   lease ends.
//!
//! Message ids, not transaction ids, name deleted messages: a FIFO transaction id is the
//! deduplication id, which a later message of the same group may legitimately reuse once
//! the deduplication window has passed.

use crate::ctx::Ctx;
use crate::http::Transport;
use crate::queen::{
    Ack, AckStatus, KvOp, KvResult, PoppedMessage, RollbackReason, Transaction, TxnOutcome,
};
use crate::sqs::registry::QueueRecord;
use crate::wire::{ApiError, ErrorCode};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Compare-and-set attempts before a record update gives up (each refusal carries the
/// current value, so a retry costs one call).
const CAS_TRIES: usize = 32;
/// A lease ends at most this long after its receive (SQS's cap on total visibility).
const MAX_LEASE_SECONDS: u64 = 12 * 3600;
/// Margin for clock skew between the replicas that mint and extend a claim.
const RECORD_MARGIN_SECONDS: u64 = 3600;

pub fn record_key(queue: &str, partition_id: &str) -> String {
    format!("qs:fc:{queue}:{partition_id}")
}

/// The per-claim record of earlier versions.
fn legacy_key(lease_id: &str) -> String {
    format!("qs:fc:{lease_id}")
}

/// How long a record lives from its last write: past any lease of its claim, and as long
/// as the queue keeps messages (a recorded delete must meet its message's redelivery).
fn record_ttl(q: &QueueRecord) -> u64 {
    q.retention_seconds().max(MAX_LEASE_SECONDS) + RECORD_MARGIN_SECONDS
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimRecord {
    pub lease: String,
    pub txns: Vec<String>,
    pub ids: Vec<String>,
    #[serde(default)]
    pub deleted: Vec<String>,
    /// Messages of the claim given a visibility of 0: the group stays blocked (as on SQS)
    /// until every message of the claim is deleted or released, then the lease is released.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub released: Vec<String>,
}

impl ClaimRecord {
    /// How many leading messages of the claim are deleted.
    pub fn prefix_len(&self) -> usize {
        self.ids
            .iter()
            .take_while(|id| self.deleted.contains(id))
            .count()
    }

    pub fn holds(&self, message_id: &str) -> bool {
        self.ids.iter().any(|i| i == message_id)
    }

    /// Worth keeping: a claim of several messages, or deletes not yet acked.
    fn needed(&self) -> bool {
        self.ids.len() > 1 || !self.deleted.is_empty()
    }

    /// The first message neither deleted nor released, when every message left in the
    /// claim was released: the lease may be released at it. `None` while any is held.
    pub fn release_at(&self) -> Option<&str> {
        let mut left = self
            .ids
            .iter()
            .zip(&self.txns)
            .filter(|(id, _)| !self.deleted.contains(id));
        let (_, first) = left.clone().next()?;
        left.all(|(id, _)| self.released.contains(id))
            .then_some(first.as_str())
    }

    /// Forgets `acked` (now below the broker's cursor).
    fn prune(&mut self, acked: &[String]) {
        let keep: Vec<bool> = self.ids.iter().map(|i| !acked.contains(i)).collect();
        let mut k = keep.iter();
        self.txns.retain(|_| *k.next().unwrap_or(&true));
        self.ids.retain(|i| !acked.contains(i));
        self.deleted.retain(|i| !acked.contains(i));
        self.released.retain(|i| !acked.contains(i));
    }
}

/// A record with its version (0: absent).
#[derive(Debug, Clone, Default)]
pub struct Stored {
    pub record: Option<ClaimRecord>,
    pub version: i64,
}

fn stored_of(r: &KvResult) -> Stored {
    match r.row() {
        Some(row) => Stored {
            record: serde_json::from_value(row.value).ok(),
            version: row.version,
        },
        None => Stored::default(),
    }
}

/// What a refused compare-and-set says is there now.
fn current_of(r: &KvResult) -> Stored {
    if r.value.is_null() || r.version == 0 {
        return Stored::default();
    }
    Stored {
        record: serde_json::from_value(r.value.clone()).ok(),
        version: r.version,
    }
}

/// The write that makes the stored record `next` (or removes it), compare-and-set.
fn write_op(q: &QueueRecord, key: &str, before: &Stored, next: &ClaimRecord) -> Option<KvOp> {
    let expect = Some(before.version);
    if next.needed() {
        Some(KvOp::put_ttl(key, json!(next), record_ttl(q), expect))
    } else if before.version != 0 {
        Some(KvOp::delete(key, expect))
    } else {
        None
    }
}

/// The write of a record some acked messages were pruned from (compare-and-set on
/// `version`): removed once nothing is left, else kept, even for one message: a
/// concurrent delete of that last message reads a missing record as "received again
/// since" and deletes nothing, which left the group leased until its visibility ran out.
fn pruned_write(q: &QueueRecord, key: &str, version: i64, next: &ClaimRecord) -> KvOp {
    if next.ids.is_empty() && next.deleted.is_empty() {
        KvOp::delete(key, Some(version))
    } else {
        KvOp::put_ttl(key, json!(next), record_ttl(q), Some(version))
    }
}

fn contention() -> ApiError {
    ApiError::new(
        ErrorCode::InternalError,
        "The message could not be deleted (contention); try again.",
    )
}

// ---------------------------------------------------------------------------------------
// Deletes

/// Where the deletes of one claim stand.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// The group's record.
    Recorded(Stored),
    /// No record: a claim of one message, or settled.
    Unrecorded,
    /// Only a record of the earlier layout: never ack through it.
    Legacy,
}

/// The records of the claims `(partitionId, leaseId)`, in order, in one KV call.
pub async fn lookup<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    claims: &[(String, String)],
) -> Result<Vec<Lookup>, ApiError> {
    let mut keys: Vec<String> = Vec::new();
    for (pid, lease) in claims {
        for k in [record_key(&q.name, pid), legacy_key(lease)] {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let r = ctx
        .queen
        .kv_results(keys.iter().map(|k| KvOp::get(k.clone())).collect())
        .await?;
    let at = |k: &str| keys.iter().position(|x| x == k).and_then(|i| r.get(i));
    Ok(claims
        .iter()
        .map(|(pid, lease)| {
            let current = at(&record_key(&q.name, pid))
                .map(stored_of)
                .unwrap_or_default();
            if current.record.is_some() {
                Lookup::Recorded(current)
            } else if at(&legacy_key(lease)).is_some_and(|r| r.found == Some(true)) {
                Lookup::Legacy
            } else {
                Lookup::Unrecorded
            }
        })
        .collect())
}

/// What recording some deletes asks of the broker next.
#[derive(Debug, Clone, PartialEq)]
pub enum Recorded {
    /// The group was received again since (or settled): the handle deletes nothing.
    Stale,
    /// Recorded; ack `completed` under the lease each step's transaction id in turn,
    /// pruning what each applied one covers; then, when what is left was all released,
    /// release the lease at `release`.
    Ack {
        steps: Vec<AckStep>,
        release: Option<String>,
    },
    /// Recorded; the prefix did not reach them, nothing to ack yet (but the lease is to be
    /// released at `release`, when what is left was all released).
    Pending { release: Option<String> },
}

/// One ack `completed` of a claim's deleted prefix: the transaction id acked, and the
/// message ids it completes.
#[derive(Debug, Clone, PartialEq)]
pub struct AckStep {
    pub txn: String,
    pub covers: Vec<String>,
}

/// Where the acks completing the first `txns.len()` messages of a claim end (exclusive),
/// in order. The broker resolves a transaction id to the LOWEST offset carrying it in the
/// claim, so an ack by an id an earlier message shares lands on that earlier message and
/// completes less than asked; two messages of a group share one when a deduplication id
/// is used again after its window, or a fired timer's copy lands beside the original
/// (checker, engine seed 509). An ack ends at the last message whose id no message before
/// it (still in the claim) carries; what follows is acked by the next call, once the
/// earlier copy is below the cursor. Without repeats that is one ack, of the last.
pub fn ack_ends(txns: &[&str]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut from = 0;
    while from < txns.len() {
        let span = &txns[from..];
        let reach = (1..=span.len())
            .rev()
            .find(|&k| !span[..k - 1].contains(&span[k - 1]))
            .unwrap_or(1);
        from += reach;
        ends.push(from);
    }
    ends
}

/// [`ack_ends`] of a claim's leading `n` messages of `rec`, as steps.
fn ack_steps(rec: &ClaimRecord, n: usize) -> Vec<AckStep> {
    let txns: Vec<&str> = rec.txns[..n].iter().map(String::as_str).collect();
    let mut start = 0;
    ack_ends(&txns)
        .into_iter()
        .map(|end| {
            let step = AckStep {
                txn: rec.txns[end - 1].clone(),
                covers: rec.ids[start..end].to_vec(),
            };
            start = end;
            step
        })
        .collect()
}

/// Which list of the group's record a settle adds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Deleted,
    Released,
}

/// Adds `ids` to the group's `deleted` (or `released`) list while the record names
/// `lease` (compare-and-set).
pub async fn record<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    partition_id: &str,
    lease: &str,
    mut current: Stored,
    ids: &[String],
    mark: Mark,
) -> Result<Recorded, ApiError> {
    let key = record_key(&q.name, partition_id);
    for _ in 0..CAS_TRIES {
        let Some(before) = current.record.clone().filter(|r| r.lease == lease) else {
            return Ok(Recorded::Stale);
        };
        let mut rec = before.clone();
        for id in ids {
            let list = match mark {
                Mark::Deleted => &mut rec.deleted,
                Mark::Released => &mut rec.released,
            };
            if before.holds(id) && !list.contains(id) {
                list.push(id.clone());
            }
        }
        if rec != before {
            let op = KvOp::put_ttl(
                key.clone(),
                json!(rec),
                record_ttl(q),
                Some(current.version),
            );
            let r = ctx.queen.kv_results(vec![op]).await?;
            let Some(res) = r.first() else {
                return Err(contention());
            };
            if !res.applied() {
                current = current_of(res);
                continue;
            }
        }
        let prefix = rec.prefix_len();
        let release = rec.release_at().map(str::to_string);
        return Ok(match prefix {
            0 => Recorded::Pending { release },
            n => Recorded::Ack {
                steps: ack_steps(&rec, n),
                release,
            },
        });
    }
    Err(contention())
}

/// What settling some deletes in one transaction came to.
#[derive(Debug, Clone)]
pub enum AtOnce {
    /// Recorded, acked and forgotten together; the lease is to be released at `release`
    /// when what is left of the claim was all released.
    Settled { release: Option<String> },
    /// Not for one transaction (stale, no prefix to ack yet, an ack in several steps, or
    /// an ack the broker refused): the step-by-step path from the record as it stands.
    StepByStep(Stored),
}

/// Deletes `ids` of the claim under `lease` in ONE transaction when they complete a
/// prefix one ack settles: the record with the deletes added and that prefix forgotten
/// (compare-and-set, required) beside the ack `completed` of the prefix's last message.
/// All or nothing, so the record never forgets a message the broker did not complete,
/// and a delete writes the record once instead of twice (the step-by-step path records,
/// acks, reads again and prunes: five broker calls for a single delete, two here with
/// the lookup).
pub async fn settle_at_once<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    partition_id: &str,
    lease: &str,
    mut current: Stored,
    ids: &[String],
) -> Result<AtOnce, ApiError> {
    let key = record_key(&q.name, partition_id);
    for _ in 0..CAS_TRIES {
        let Some(before) = current.record.clone().filter(|r| r.lease == lease) else {
            return Ok(AtOnce::StepByStep(current));
        };
        let mut rec = before.clone();
        for id in ids {
            if before.holds(id) && !rec.deleted.contains(id) {
                rec.deleted.push(id.clone());
            }
        }
        let steps = ack_steps(&rec, rec.prefix_len());
        let [step] = steps.as_slice() else {
            return Ok(AtOnce::StepByStep(current));
        };
        let release = rec.release_at().map(str::to_string);
        rec.prune(&step.covers);
        let write = pruned_write(q, &key, current.version, &rec);
        let txn = Transaction {
            acks: vec![Ack::new(
                &step.txn,
                partition_id,
                lease,
                AckStatus::Completed,
            )],
            kv: vec![write.required()],
            ..Transaction::default()
        };
        match ctx.queen.transaction(&txn).await? {
            TxnOutcome::Committed(_) => return Ok(AtOnce::Settled { release }),
            TxnOutcome::RolledBack {
                reason: RollbackReason::KvPrecondition,
                ..
            } => {
                let r = ctx.queen.kv_results(vec![KvOp::get(key.clone())]).await?;
                current = r.first().map(stored_of).unwrap_or_default();
            }
            // The lease is gone (or the broker no longer resolves the id): recorded
            // without the ack, for the group's next receive to ack on its way through.
            TxnOutcome::RolledBack { .. } => return Ok(AtOnce::StepByStep(current)),
        }
    }
    Err(contention())
}

/// Forgets messages the broker has completed (they are below its cursor). Best effort in
/// its effect: ids left behind are pruned by the group's next receive.
pub async fn forget_acked<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    partition_id: &str,
    lease: &str,
    acked: &[String],
) -> Result<(), ApiError> {
    let key = record_key(&q.name, partition_id);
    let r = ctx.queen.kv_results(vec![KvOp::get(key.clone())]).await?;
    let mut current = r.first().map(stored_of).unwrap_or_default();
    for _ in 0..CAS_TRIES {
        // A record naming another lease was rewritten by a receive, which pruned them.
        let Some(before) = current.record.clone().filter(|r| r.lease == lease) else {
            return Ok(());
        };
        let mut next = before.clone();
        next.prune(acked);
        if next == before {
            return Ok(());
        }
        let op = pruned_write(q, &key, current.version, &next);
        let r = ctx.queen.kv_results(vec![op]).await?;
        match r.first() {
            Some(res) if res.applied() => return Ok(()),
            Some(res) => current = current_of(res),
            None => return Err(contention()),
        }
    }
    Err(contention())
}

// ---------------------------------------------------------------------------------------
// Receives

/// A claim popped by a receive: its lease and its messages, in offset order.
pub struct Claim<'a> {
    pub lease: String,
    pub partition_id: String,
    /// What the claim still holds (after acks through deleted and dead-lettered messages).
    pub messages: &'a [PoppedMessage],
    /// Ids of the claim the receive acked (deleted ones, dead-lettered ones).
    pub acked: Vec<String>,
    /// Until when, on the transport's monotonic clock, the lease is surely live (see
    /// [`surely_live_until`]); `None` without a clock.
    pub live_until_ms: Option<u64>,
}

/// Slack for the two clocks' rates and for the broker starting the lease a little after
/// the pop was asked (which only makes the lease end later).
const LIVE_MARGIN_MS: u64 = 200;

/// The broker starts a pop's lease after the pop was asked, so the lease lasts at least
/// until `asked_at + lease`.
pub fn surely_live_until(asked_at_ms: Option<u64>, lease_seconds: u64) -> Option<u64> {
    asked_at_ms.map(|t| (t + lease_seconds * 1000).saturating_sub(LIVE_MARGIN_MS))
}

/// What recording a receive's claim came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Reopened {
    /// The record written (`None`: the claim needs none).
    Written(Option<ClaimRecord>),
    /// The claim's lease ran out before it was recorded, and the group may be claimed by
    /// another receive since: the claim is not this receive's to answer.
    LeaseLost,
}

/// How a receive treats one claim, given the group's record.
#[derive(Debug, Clone, PartialEq)]
pub struct Opening {
    /// Leading messages the client already deleted: ack `completed` through them.
    pub lead: usize,
    /// Deleted messages further in: withheld from the answer.
    pub withheld: Vec<String>,
}

/// Reads the records of the groups of `claims` (one KV call).
pub async fn load_groups<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    partition_ids: &[String],
) -> Result<Vec<Stored>, ApiError> {
    if partition_ids.is_empty() {
        return Ok(Vec::new());
    }
    let ops = partition_ids
        .iter()
        .map(|p| KvOp::get(record_key(&q.name, p)))
        .collect();
    let r = ctx.queen.kv_results(ops).await?;
    Ok(r.iter().map(stored_of).collect())
}

/// Which of a claim's messages the record says are deleted.
pub fn open(record: Option<&ClaimRecord>, messages: &[PoppedMessage]) -> Opening {
    let deleted: &[String] = record.map_or(&[], |r| r.deleted.as_slice());
    let lead = messages
        .iter()
        .take_while(|m| deleted.contains(&m.id))
        .count();
    let withheld = messages[lead..]
        .iter()
        .filter(|m| deleted.contains(&m.id))
        .map(|m| m.id.clone())
        .collect();
    Opening { lead, withheld }
}

/// The group's record once the new claim holds `messages` (what is left of it after the
/// leading deleted ones were acked and any dead-lettered): the new lease, and the deletes
/// still to honour. Ids of the old record's claim that lie before the new claim's first
/// message are below the broker's cursor and are dropped.
pub fn reopened(
    old: Option<&ClaimRecord>,
    lease: &str,
    messages: &[PoppedMessage],
    acked: &[String],
) -> ClaimRecord {
    let mut deleted: Vec<String> = Vec::new();
    if let Some(old) = old {
        let below: &[String] = match messages
            .first()
            .and_then(|m| old.ids.iter().position(|i| *i == m.id))
        {
            Some(k) => &old.ids[..k],
            None if messages.is_empty() => &[],
            None => &old.ids,
        };
        deleted = old
            .deleted
            .iter()
            .filter(|id| !below.contains(id) && !acked.contains(id))
            .cloned()
            .collect();
    }
    ClaimRecord {
        lease: lease.to_string(),
        txns: messages.iter().map(|m| m.transaction_id.clone()).collect(),
        ids: messages.iter().map(|m| m.id.clone()).collect(),
        deleted,
        released: Vec::new(),
    }
}

/// Writes a group's record for its new claim, compare-and-set against `current` (read at
/// `read_at_ms` on the transport's clock); on a lost race (a late delete of the previous
/// claim landed) re-reads and recomputes.
///
/// Only while the claim's lease is live: a record read after it ran out may be a NEWER
/// claim's, and writing over it would make every delete of that claim a no-op (its
/// handles would name a lease the record does not). Each record written over was read
/// while the lease was surely live by the clock, or is confirmed so afterwards by
/// extending the lease (a lease that ran out is never revived).
pub async fn write_reopened<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    claim: &Claim<'_>,
    mut current: Stored,
    mut read_at_ms: Option<u64>,
) -> Result<Reopened, ApiError> {
    let key = record_key(&q.name, &claim.partition_id);
    for _ in 0..CAS_TRIES {
        let next = reopened(
            current.record.as_ref(),
            &claim.lease,
            claim.messages,
            &claim.acked,
        );
        let Some(op) = write_op(q, &key, &current, &next) else {
            return Ok(Reopened::Written(None));
        };
        // A claim the receive acked through to its end (deleted or dead-lettered, all of
        // it) ended its lease with that ack: the group may be claimed anew at once. What
        // is left to write is only the pruning of what the ack completed, from the record
        // read before it; once another write got in first, that is the newer claim's.
        let ended = claim.messages.is_empty();
        if !ended && !read_while_live(ctx, claim, read_at_ms).await? {
            return Ok(Reopened::LeaseLost);
        }
        let r = ctx.queen.kv_results(vec![op]).await?;
        match r.first() {
            Some(res) if res.applied() => {
                return Ok(Reopened::Written(next.needed().then_some(next)))
            }
            Some(_) if ended => return Ok(Reopened::Written(None)),
            Some(res) => {
                current = current_of(res);
                read_at_ms = ctx.queen.transport().clock_ms();
            }
            None => break,
        }
    }
    Err(ApiError::new(
        ErrorCode::InternalError,
        "The receive could not record its claim (contention); try again.",
    ))
}

/// Whether the claim's lease was live when the record was read at `read_at_ms`: by the
/// clock when it says so, otherwise by asking the broker now (an extension by at most a
/// second, which succeeds only on a live lease).
async fn read_while_live<T: Transport>(
    ctx: &Ctx<'_, T>,
    claim: &Claim<'_>,
    read_at_ms: Option<u64>,
) -> Result<bool, ApiError> {
    if let (Some(read), Some(until)) = (read_at_ms, claim.live_until_ms) {
        if read <= until {
            return Ok(true);
        }
    }
    Ok(ctx.queen.extend(&claim.lease, 1).await?.renewed > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(deleted: &[&str]) -> ClaimRecord {
        ClaimRecord {
            lease: "l".into(),
            txns: vec!["t1".into(), "t2".into(), "t3".into()],
            ids: vec!["a".into(), "b".into(), "c".into()],
            deleted: deleted.iter().map(|s| s.to_string()).collect(),
            released: Vec::new(),
        }
    }

    #[test]
    fn a_claim_is_released_once_every_message_left_was_released() {
        let mut r = rec(&[]);
        r.released = vec!["c".into()];
        assert_eq!(r.release_at(), None, "a and b are still held");
        r.deleted = vec!["a".into()];
        assert_eq!(r.release_at(), None, "b is still held");
        r.released.push("b".into());
        assert_eq!(
            r.release_at(),
            Some("t2"),
            "released at the first message left"
        );
        r.deleted = vec!["a".into(), "b".into(), "c".into()];
        assert_eq!(r.release_at(), None, "nothing left to release");
        // The next claim's record starts with nothing released.
        let next = reopened(Some(&r), "l2", &[msg("d")], &[]);
        assert!(next.released.is_empty());
    }

    fn msg(id: &str) -> PoppedMessage {
        serde_json::from_value(json!({"id": id, "transactionId": format!("t-{id}"),
            "partitionId": "p", "partition": "g"}))
        .unwrap()
    }

    #[test]
    fn prefix_is_the_leading_deleted_run() {
        assert_eq!(rec(&[]).prefix_len(), 0);
        assert_eq!(rec(&["b", "c"]).prefix_len(), 0);
        assert_eq!(rec(&["b", "a"]).prefix_len(), 2);
        assert_eq!(rec(&["c", "a", "b"]).prefix_len(), 3);
    }

    #[test]
    fn acks_end_before_a_repeated_transaction_id() {
        assert_eq!(ack_ends(&[]), Vec::<usize>::new());
        assert_eq!(ack_ends(&["a", "b", "c"]), [3]);
        // The last repeats an earlier id: acked in two calls, the second once the first
        // copy is below the cursor.
        assert_eq!(ack_ends(&["x", "b", "x"]), [2, 3]);
        assert_eq!(ack_ends(&["x", "x"]), [1, 2]);
        assert_eq!(ack_ends(&["x", "x", "x"]), [1, 2, 3]);
        // A repeat before the last is completed by the ack of the last (cumulative).
        assert_eq!(ack_ends(&["x", "x", "c"]), [3]);
    }

    #[test]
    fn ack_steps_cover_the_prefix_exactly() {
        let r = ClaimRecord {
            lease: "l".into(),
            txns: vec!["x".into(), "b".into(), "x".into(), "d".into()],
            ids: vec!["1".into(), "2".into(), "3".into(), "4".into()],
            deleted: vec![],
            released: vec![],
        };
        let steps = ack_steps(&r, 3);
        assert_eq!(
            steps,
            [
                AckStep {
                    txn: "b".into(),
                    covers: vec!["1".into(), "2".into()]
                },
                AckStep {
                    txn: "x".into(),
                    covers: vec!["3".into()]
                },
            ]
        );
    }

    #[test]
    fn prune_keeps_txns_beside_their_ids() {
        let mut r = rec(&["a", "c"]);
        r.prune(&["a".to_string()]);
        assert_eq!(r.ids, ["b", "c"]);
        assert_eq!(r.txns, ["t2", "t3"]);
        assert_eq!(r.deleted, ["c"]);
        assert!(r.needed());
    }

    #[test]
    fn a_receive_carries_deletes_and_drops_what_is_below_the_cursor() {
        // Old claim a,b,c with a (acked, not pruned) and c deleted; the new claim starts at b.
        let old = rec(&["a", "c"]);
        let ms = [msg("b"), msg("c"), msg("d")];
        assert_eq!(
            open(Some(&old), &ms),
            Opening {
                lead: 0,
                withheld: vec!["c".into()]
            }
        );
        let next = reopened(Some(&old), "l2", &ms, &[]);
        assert_eq!(next.lease, "l2");
        assert_eq!(next.ids, ["b", "c", "d"]);
        assert_eq!(next.deleted, ["c"]);
        // A shorter claim keeps the deletes beyond it.
        let next = reopened(Some(&old), "l3", &ms[..1], &[]);
        assert_eq!(next.deleted, ["c"]);
        assert!(next.needed());
        // A claim past the old one: everything old is below the cursor.
        let next = reopened(Some(&rec(&["a", "b", "c"])), "l4", &[msg("x")], &[]);
        assert!(next.deleted.is_empty());
        assert!(!next.needed());
        // Deletes acked through on the way are forgotten, even beyond the old claim.
        let mut old = rec(&["c"]);
        old.deleted.push("z".into());
        let next = reopened(Some(&old), "l5", &[msg("b")], &["z".to_string()]);
        assert_eq!(next.deleted, ["c"]);
    }
}
