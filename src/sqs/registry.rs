//! The queue registry: one `qs:q:<name>` record per queue in Queen's KV store,
//! holding the attributes, the tags and the width. It is the source of truth for
//! what exists; the Queen queue is its storage.

use super::input::Input;
use super::naming;
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::queen::{KvOp, QueueOptions};
use crate::wire::{ApiError, ErrorCode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const QUEUE_PREFIX: &str = "qs:q:";

pub fn key(name: &str) -> String {
    format!("{QUEUE_PREFIX}{name}")
}

/// `QueueDeletedRecently` marker, kept 60 s after a delete (outside the listing prefix).
pub fn tombstone_key(name: &str) -> String {
    format!("qs:dq:{name}")
}

/// When this facade last deleted the queue `name` (Unix ms), kept for good: a broker queue
/// re-created by a send that a stale replica accepted just after the delete is recognised
/// by it as a leftover, not as somebody's native queue.
pub fn gone_key(name: &str) -> String {
    format!("qs:gone:{name}")
}

/// `PurgeQueueInProgress` marker, kept 60 s after a purge.
pub fn purge_key(name: &str) -> String {
    format!("qs:pq:{name}")
}

/// The field of the purge marker that says when the purge began (ms since the epoch): a
/// delivery received before it was taken by that purge.
pub const PURGE_STARTED: &str = "startedMs";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueRecord {
    pub name: String,
    pub fifo: bool,
    /// Lanes of a standard queue, fixed at create; 0 on a FIFO queue (a lane is a group).
    pub partitions: u32,
    /// Every settable attribute's current value by AWS name (plus `queen.*`), defaults included.
    pub attributes: BTreeMap<String, String>,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Unix seconds.
    pub created: i64,
    pub modified: i64,
    /// When the queue was last purged (ms since the epoch; 0: never). With `created` it
    /// names the queue's incarnation, which scopes its deduplication ids (`dedup`); it also
    /// names a purged FIFO queue's lanes (`lanes::fifo_lane`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub purged: i64,
    /// FIFO: whether deduplication spans the queue, as `DeduplicationScope` said at create.
    /// SQS keeps that scope for the queue's life (recorded:
    /// test_fifo_change_to_high_throughput_after_creation: after a change to `messageGroup`
    /// an id used in another group is still a duplicate). `None` on records written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_dedup: Option<bool>,
    /// When a `PurgeQueue` began (ms since the epoch) that has not finished: set before it
    /// deletes the broker queue, cleared when it has configured the new one. A purge cut
    /// off in between leaves a broker queue that the next push re-creates with the broker's
    /// defaults (checker embedded seed 421: a FIFO queue lost its `DelaySeconds`); a push
    /// that sees this configures the queue first (`heal_unfinished_purge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purging: Option<i64>,
    /// When a `DeleteQueue` began (ms since the epoch): set before it deletes the broker
    /// queue, so that a delete cut off before it removed the record leaves no queue
    /// behind. A record so marked is a queue that no longer exists to every reader
    /// ([`parse`]); `CreateQueue` of the name finishes the delete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleting: Option<i64>,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// AddPermission grants by label, kept beside the record (never enforced).
pub fn permissions_key(name: &str) -> String {
    format!("qs:qp:{name}")
}

/// One AddPermission grant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Permission {
    pub accounts: Vec<String>,
    pub actions: Vec<String>,
}

/// A record as read, with the version a compare-and-set must name.
#[derive(Debug, Clone)]
pub struct Stored {
    pub record: QueueRecord,
    pub version: i64,
}

/// Defaults SQS gives a queue, as strings, by attribute name.
pub const DEFAULTS: &[(&str, &str)] = &[
    ("DelaySeconds", "0"),
    ("MaximumMessageSize", "1048576"),
    ("MessageRetentionPeriod", "345600"),
    ("ReceiveMessageWaitTimeSeconds", "0"),
    ("VisibilityTimeout", "30"),
    ("SqsManagedSseEnabled", "true"),
];

impl QueueRecord {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }

    fn num(&self, name: &str, default: u64) -> u64 {
        self.attr(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    pub fn visibility_timeout(&self) -> u64 {
        self.num("VisibilityTimeout", 30)
    }
    pub fn delay_seconds(&self) -> u64 {
        self.num("DelaySeconds", 0)
    }
    pub fn maximum_message_size(&self) -> u64 {
        self.num("MaximumMessageSize", 1_048_576)
    }
    pub fn retention_seconds(&self) -> u64 {
        self.num("MessageRetentionPeriod", 345_600)
    }
    pub fn receive_wait_seconds(&self) -> u64 {
        self.num("ReceiveMessageWaitTimeSeconds", 0)
    }
    pub fn content_based_dedup(&self) -> bool {
        self.attr("ContentBasedDeduplication") == Some("true")
    }
    /// FIFO: 300 s unless `queen.dedupWindowSeconds` widens it; standard: 0 (SQS deduplicates nothing).
    pub fn dedup_window_seconds(&self) -> u64 {
        if !self.fifo {
            return 0;
        }
        self.num("queen.dedupWindowSeconds", 300).max(300)
    }

    /// The complete option bag for `/configure` (a whole-row upsert).
    pub fn queen_options(&self) -> QueueOptions {
        QueueOptions {
            lease_time: self.visibility_timeout().max(1),
            retry_limit: 3,
            dead_letter_queue: false,
            dlq_after_max_retries: false,
            // A standard queue's delay is a timer at send (see `send`); the broker's would
            // also hide redeliveries, and apply a change retroactively.
            delayed_processing: if self.fifo { self.delay_seconds() } else { 0 },
            retention_enabled: true,
            retention_seconds: self.retention_seconds(),
            dedup_window_seconds: if self.fifo {
                self.dedup_window_seconds()
            } else {
                super::inflight::DUPLICATE_GUARD_SECONDS
            },
            completed_retention_seconds: self.retention_seconds(),
        }
    }

    /// The `RedrivePolicy`, when it is set: (dead-letter queue name, maxReceiveCount).
    pub fn redrive(&self, cfg: &crate::config::Config) -> Option<(String, u32)> {
        let policy: serde_json::Value = serde_json::from_str(self.attr("RedrivePolicy")?).ok()?;
        let arn = policy.get("deadLetterTargetArn")?.as_str()?;
        let max = match policy.get("maxReceiveCount")? {
            serde_json::Value::Number(n) => n.as_u64()?,
            serde_json::Value::String(s) => s.parse().ok()?,
            _ => return None,
        };
        Some((
            naming::name_from_arn(cfg, arn)?.to_string(),
            u32::try_from(max).ok()?,
        ))
    }
}

/// Reads a queue's record; `None` when the registry has no such queue.
pub async fn load<T: Transport>(ctx: &Ctx<'_, T>, name: &str) -> Result<Option<Stored>, ApiError> {
    let row = ctx.queen.kv_get(&key(name)).await?;
    Ok(row.and_then(stored))
}

/// Reads a queue's record for the message path, where a record up to
/// `QUEEN_SQS_REGISTRY_CACHE_MS` old will do (a host cache may answer): a queue deleted
/// or changed through another replica is seen within that bound. A miss is never taken
/// from the cache: a queue created through another replica is found at once (one more
/// read, for requests naming a queue that does not exist). Never for a read-modify-write.
pub async fn load_recent<T: Transport>(
    ctx: &Ctx<'_, T>,
    name: &str,
) -> Result<Option<Stored>, ApiError> {
    let row = ctx
        .queen
        .kv_get_cached(&key(name), ctx.cfg.registry_cache_ms)
        .await?;
    match row.and_then(stored) {
        Some(found) => Ok(Some(found)),
        None if ctx.cfg.registry_cache_ms > 0 => load(ctx, name).await,
        None => Ok(None),
    }
}

/// The queue a message action's `QueueUrl` addresses, read through [`load_recent`].
pub async fn by_url_recent<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: &Input<'_>,
) -> Result<Stored, ApiError> {
    let url = input.str("QueueUrl")?;
    let name = naming::name_from_url(ctx.cfg, url)?;
    load_recent(ctx, name)
        .await?
        .ok_or_else(naming::no_such_queue)
}

fn stored(row: crate::queen::KvRow) -> Option<Stored> {
    parse(row.value).map(|record| Stored {
        record,
        version: row.version,
    })
}

/// A record as every reader takes it: a queue that exists. A record this facade cannot
/// read is not a queue it can serve, and one whose `DeleteQueue` began is gone.
pub fn parse(value: serde_json::Value) -> Option<QueueRecord> {
    serde_json::from_value::<QueueRecord>(value)
        .ok()
        .filter(|r| r.deleting.is_none())
}

/// Reads a queue's record or answers `QueueDoesNotExist`.
pub async fn require<T: Transport>(ctx: &Ctx<'_, T>, name: &str) -> Result<Stored, ApiError> {
    load(ctx, name).await?.ok_or_else(naming::no_such_queue)
}

/// The queue an action's `QueueUrl` addresses.
pub async fn by_url<T: Transport>(ctx: &Ctx<'_, T>, input: &Input<'_>) -> Result<Stored, ApiError> {
    let url = input.str("QueueUrl")?;
    let name = naming::name_from_url(ctx.cfg, url)?;
    require(ctx, name).await
}

/// Claims `qs:q:<name>` create-only. `Ok(Ok(version))` when this call made the queue,
/// `Ok(Err(winner))` when another did first (`None` if it is already gone again).
pub async fn create<T: Transport>(
    ctx: &Ctx<'_, T>,
    record: &QueueRecord,
) -> Result<Result<i64, Option<Stored>>, ApiError> {
    let value = serde_json::to_value(record).map_err(|_| internal())?;
    let r = ctx
        .queen
        .kv_results(vec![KvOp::put(key(&record.name), value, Some(0))])
        .await?;
    match r.first() {
        Some(res) if res.applied() => Ok(Ok(res.version)),
        _ => Ok(Err(load(ctx, &record.name).await?)),
    }
}

/// Removes the record (only if it is still at `version`, when given) and, in the same
/// call, the permissions kept beside it.
pub async fn remove<T: Transport>(
    ctx: &Ctx<'_, T>,
    name: &str,
    version: Option<i64>,
) -> Result<(), ApiError> {
    ctx.queen
        .kv_results(vec![
            KvOp::delete(key(name), version),
            KvOp::delete(permissions_key(name), None),
        ])
        .await?;
    Ok(())
}

/// Rounds of a lost compare-and-set before giving up.
const CAS_ROUNDS: usize = 16;

/// Read-modify-write of a record under compare-and-set: `change` edits a fresh copy
/// (answering an error refuses the edit), and a lost race is retried on the new value.
pub async fn update<T, F>(ctx: &Ctx<'_, T>, name: &str, mut change: F) -> Result<Stored, ApiError>
where
    T: Transport,
    F: FnMut(&mut QueueRecord) -> Result<(), ApiError>,
{
    for _ in 0..CAS_ROUNDS {
        let stored = require(ctx, name).await?;
        let mut record = stored.record.clone();
        change(&mut record)?;
        if record == stored.record {
            return Ok(stored);
        }
        let value = serde_json::to_value(&record).map_err(|_| internal())?;
        let r = ctx
            .queen
            .kv_results(vec![KvOp::put(key(name), value, Some(stored.version))])
            .await?;
        if let Some(res) = r.first().filter(|r| r.applied()) {
            return Ok(Stored {
                record,
                version: res.version,
            });
        }
    }
    Err(ApiError::new(
        ErrorCode::RequestThrottled,
        "Too many concurrent changes to the queue; retry.",
    ))
}

/// How long a push waits for a purge of its queue to finish before it goes on.
const PURGE_WAIT_MS: i64 = 5_000;
/// A purge that began longer ago than this is not running any more (cut off): no push
/// waits for it.
const PURGE_LIVE_MS: i64 = 30_000;
/// How often a waiting push reads the queue's record again.
const PURGE_POLL_MS: u64 = 100;

/// Before a push into `q`, when its record says a purge began and has not finished:
///
/// - A purge running now has named the queue's new incarnation, whose FIFO lanes a push
///   would create in the broker queue about to be deleted; the released engine keeps
///   deduplication state by lane name across that delete, so in the queue made again
///   those lanes skip the check (checker engine seed 645: a repeated deduplication id
///   stored twice). So the push waits, up to `PURGE_WAIT_MS`, for the purge to finish.
/// - A purge cut off may have left the broker queue deleted, to be re-created by this push
///   with the broker's defaults. So the queue is configured again (as the purge would have),
///   and once no purge holds its cooldown (a failed one withdraws it) the mark is cleared.
///
/// Free while no purge is marked.
pub async fn heal_unfinished_purge<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
) -> Result<(), ApiError> {
    let Some(began) = q.purging else {
        return Ok(());
    };
    let mut cooling = ctx.queen.kv_get(&purge_key(&q.name)).await?.is_some();
    let mut waited = 0;
    while cooling && ctx.wall_ms() - began < PURGE_LIVE_MS && waited < PURGE_WAIT_MS {
        ctx.queen.transport().pause(PURGE_POLL_MS).await;
        waited += PURGE_POLL_MS as i64;
        match load(ctx, &q.name).await? {
            Some(now) if now.record.purging == Some(began) => {}
            // Finished (or the queue deleted): nothing to heal.
            _ => return Ok(()),
        }
        cooling = ctx.queen.kv_get(&purge_key(&q.name)).await?.is_some();
    }
    ctx.queen.configure(&q.name, &q.queen_options()).await?;
    if !cooling {
        update(ctx, &q.name, |r| {
            if r.purging == Some(began) {
                r.purging = None;
            }
            Ok(())
        })
        .await?;
    }
    Ok(())
}

fn internal() -> ApiError {
    ApiError::new(
        ErrorCode::InternalError,
        "The request processing has failed because of an unknown error, exception or failure.",
    )
}
