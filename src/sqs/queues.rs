//! Queue lifecycle: create, delete, look up, list, attributes, purge. The registry
//! record (`qs:q:<name>`) is what exists; the Queen queue is its storage, configured
//! from the record with a whole-row `/configure`.

use super::attributes::{self, Changes, Phase, DELAY_TIMER_PREFIX};
use super::input::{invalid, Input};
use super::registry::{self, QueueRecord, Stored};
use super::{inflight, naming, tags};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::queen::{KvOp, TimerCancel, TimerOp};
use crate::wire::{ApiError, ErrorCode};
use base64::Engine;
use serde_json::{json, Map, Value};

/// Seconds a deleted name stays `QueueDeletedRecently`, and a purged queue `PurgeQueueInProgress`.
const COOLDOWN_SECONDS: u64 = 60;
/// ListQueues without MaxResults answers at most this many URLs, as SQS does.
const LIST_PAGE_DEFAULT: usize = 1000;
/// No listing walks further into the registry than this.
pub const LIST_CAP: usize = 10_000;
/// Timer cancels in flight at once while clearing a queue's delayed sends.
/// The broker takes at most 256 timer operations per call.
const CANCELS_PER_CALL: usize = 256;

pub async fn create_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let name = input.str("QueueName")?;
    let supplied = input.str_map("Attributes")?;
    // The kind is the FifoQueue attribute's (absent: standard), and the name must agree:
    // `q.fifo` without FifoQueue=true is a standard queue's name with a `.` in it.
    let fifo = attributes::fifo_requested(&supplied)?;
    if !naming::valid_name_for(name, fifo) {
        return Err(attributes::bad_queue_name(fifo));
    }
    let changes = attributes::parse(fifo, Phase::Create, &supplied)?;
    let new_tags = tags::validate_new(&input.str_map("tags")?)?;
    let url = naming::queue_url(&ctx.base_url, ctx.cfg, name);

    // Registry first: whoever claims the key made the queue; everyone else is
    // answered by the idempotency rule against what the winner stored.
    let found = ctx
        .queen
        .kv_results(vec![
            KvOp::get(registry::key(name)),
            KvOp::get(registry::tombstone_key(name)),
        ])
        .await?;
    if let Some(row) = found.first().and_then(|r| r.row()) {
        match serde_json::from_value::<QueueRecord>(row.value) {
            Ok(record) if record.deleting.is_some() => {
                finish_delete(ctx, name, Some(row.version)).await?;
            }
            Ok(record) => return existing(ctx, &record, &changes, url).await,
            Err(_) => {}
        }
    }
    if found.get(1).and_then(|r| r.row()).is_some() {
        return Err(deleted_recently());
    }
    attributes::check_redrive_target(ctx, name, fifo, &changes).await?;
    // A Queen queue the registry does not know is not adopted: /configure would rewrite it.
    // The one exception is the leftover of this facade's own delete (see `leftover`).
    let native = ctx
        .queen
        .list_queues()
        .await?
        .into_iter()
        .find(|q| q.name == name);
    if let Some(native) = native {
        if leftover(ctx, &native).await? {
            ctx.queen.delete_queue(name).await?;
        } else {
            return match registry::load(ctx, name).await? {
            Some(s) => existing(ctx, &s.record, &changes, url).await,
            None => Err(ApiError::new(
                ErrorCode::QueueNameExists,
                format!("A queue named {name} already exists in the broker and was not created through SQS."),
            )),
            };
        }
    }

    let now = ctx.now_s();
    let record = QueueRecord {
        name: name.to_string(),
        fifo,
        partitions: if fifo {
            0
        } else {
            changes.partitions.unwrap_or(ctx.cfg.default_partitions)
        },
        attributes: attributes::initial(fifo, &changes),
        tags: new_tags,
        created: now,
        modified: now,
        purged: 0,
        queue_dedup: None,
        purging: None,
        deleting: None,
    };
    let record = QueueRecord {
        queue_dedup: fifo.then(|| super::dedup::queue_scoped(&record)),
        ..record
    };
    let version = match registry::create(ctx, &record).await? {
        Ok(v) => v,
        Err(Some(winner)) => return existing(ctx, &winner.record, &changes, url).await,
        Err(None) => return Err(deleted_recently()),
    };
    if let Err(e) = ctx.queen.configure(name, &record.queen_options()).await {
        // Leave no record behind that names a queue the broker never got.
        let _ = registry::remove(ctx, name, Some(version)).await;
        return Err(e.into());
    }
    Ok(json!({ "QueueUrl": url }))
}

/// How long after a delete a replica's stale queue record can still accept a send (the
/// record cache's largest bound), plus slack for the send in flight.
const LEFTOVER_WINDOW_MS: i64 = crate::config::MAX_REGISTRY_CACHE_MS as i64 + 10_000;

/// True when a broker queue the registry does not know was created by a send accepted
/// just after this facade deleted the SQS queue of that name (a replica still held the
/// record): its creation falls within [`LEFTOVER_WINDOW_MS`] after the recorded delete.
async fn leftover<T: Transport>(
    ctx: &Ctx<'_, T>,
    native: &crate::queen::QueueInfo,
) -> Result<bool, ApiError> {
    let Some(created) = native
        .created_at
        .as_deref()
        .and_then(crate::calendar::parse_iso_ms)
    else {
        return Ok(false);
    };
    let Some(gone) = ctx.queen.kv_get(&registry::gone_key(&native.name)).await? else {
        return Ok(false);
    };
    let Some(deleted) = gone.value.as_i64() else {
        return Ok(false);
    };
    // The delete removes the broker queue a moment after it records the time.
    Ok(created >= deleted - 1_000 && created <= deleted + LEFTOVER_WINDOW_MS)
}

/// CreateQueue of a name that exists: the same URL unless a supplied attribute differs.
/// Tags are neither compared nor applied. A queue whose configure never landed (its
/// creator died in between) is configured here.
async fn existing<T: Transport>(
    ctx: &Ctx<'_, T>,
    record: &QueueRecord,
    changes: &Changes,
    url: String,
) -> Result<Value, ApiError> {
    if let Some(attr) = attributes::first_difference(record, changes) {
        return Err(ApiError::new(
            ErrorCode::QueueNameExists,
            format!(
                "A queue already exists with the same name and a different value for attribute {attr}"
            ),
        ));
    }
    if ctx.queen.depth(&record.name).await?.is_none() {
        // No broker queue behind the record: either its creator died before
        // configuring, or a DeleteQueue is under way (its tombstone is written first).
        if ctx
            .queen
            .kv_get(&registry::tombstone_key(&record.name))
            .await?
            .is_some()
        {
            return Err(deleted_recently());
        }
        ctx.queen
            .configure(&record.name, &record.queen_options())
            .await?;
    }
    Ok(json!({ "QueueUrl": url }))
}

fn deleted_recently() -> ApiError {
    ApiError::new(
        ErrorCode::QueueDeletedRecently,
        "You must wait 60 seconds after deleting a queue before you can create another with the same name.",
    )
}

pub async fn delete_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let name = stored.record.name.as_str();
    // A pending delayed send would re-create the queue when it fires (API §3.3).
    cancel_timers(ctx, name).await?;
    // The tombstone goes first so that a CreateQueue racing this delete cannot read
    // the record, find no broker queue, and configure one back into existence.
    ctx.queen
        .kv_results(vec![
            KvOp::put_ttl(
                registry::tombstone_key(name),
                json!(ctx.now_s()),
                COOLDOWN_SECONDS,
                None,
            ),
            KvOp::put(registry::gone_key(name), json!(ctx.now_ms), None),
        ])
        .await?;
    // Marked before the broker queue goes: cut off after that, the record would name a
    // queue the broker no longer has, and the next send would re-create it with the
    // broker's defaults. Marked, it is gone to every reader (`registry::parse`), and a
    // `CreateQueue` of the name finishes the delete.
    let began = ctx.now_ms;
    let marked = registry::update(ctx, name, |r| {
        r.deleting = Some(began);
        Ok(())
    })
    .await?;
    finish_delete(ctx, name, Some(marked.version)).await?;
    Ok(json!({}))
}

/// The broker queue, then the record (at `version`, when given), then any timer a send
/// that read the record before it went scheduled since.
async fn finish_delete<T: Transport>(
    ctx: &Ctx<'_, T>,
    name: &str,
    version: Option<i64>,
) -> Result<(), ApiError> {
    ctx.queen.delete_queue(name).await?;
    registry::remove(ctx, name, version).await?;
    if cancel_timers(ctx, name).await? > 0 {
        ctx.queen.delete_queue(name).await?;
    }
    Ok(())
}

/// Cancels every pending timer the facade scheduled on a queue: delayed sends (`sqs.`)
/// and messages in flight (`vis.`). Answers how many it found.
pub async fn cancel_timers<T: Transport>(ctx: &Ctx<'_, T>, queue: &str) -> Result<usize, ApiError> {
    let mut found = 0;
    for prefix in [DELAY_TIMER_PREFIX, inflight::TIMER_PREFIX] {
        // Timer keys list in byte order, so each kind is one run starting after its prefix.
        let mut after = Some(prefix.to_string());
        while let Some(cursor) = after.take() {
            let (keys, next) = ctx.queen.timer_keys(queue, Some(&cursor), 1000).await?;
            let ours: Vec<&String> = keys.iter().take_while(|k| k.starts_with(prefix)).collect();
            let ran_past = ours.len() < keys.len();
            found += ours.len();
            for chunk in ours.chunks(CANCELS_PER_CALL) {
                let ops: Vec<TimerOp> = chunk
                    .iter()
                    .map(|k| TimerOp::Cancel(TimerCancel::new(queue, k)))
                    .collect();
                ctx.queen.timer_ops(&ops).await?;
            }
            if !ran_past {
                after = next;
            }
        }
    }
    Ok(found)
}

pub async fn get_queue_url<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let name = input.str("QueueName")?;
    if let Some(owner) = input.opt_str("QueueOwnerAWSAccountId")? {
        if owner != ctx.cfg.account_id {
            return Err(naming::no_such_queue());
        }
    }
    if !naming::valid_queue_name(name) {
        return Err(naming::no_such_queue());
    }
    registry::require(ctx, name).await?;
    Ok(json!({ "QueueUrl": naming::queue_url(&ctx.base_url, ctx.cfg, name) }))
}

/// A listing cursor: how many records were already walked, and the last name answered.
/// Opaque to the client (base64), checked on the way back in.
pub fn encode_token(walked: usize, last: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{walked}:{last}"))
}

pub fn decode_token(token: &str) -> Result<(usize, String), ApiError> {
    let bad = || invalid("NextToken");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let text = String::from_utf8(bytes).map_err(|_| bad())?;
    let (walked, last) = text.split_once(':').ok_or_else(bad)?;
    let walked: usize = walked.parse().map_err(|_| bad())?;
    if !naming::valid_queue_name(last) {
        return Err(bad());
    }
    Ok((walked, last.to_string()))
}

/// `MaxResults`, when given: 1..1000.
pub fn max_results(input: &Input<'_>) -> Result<Option<usize>, ApiError> {
    match input.opt_int("MaxResults")? {
        None => Ok(None),
        Some(n) if (1..=1000).contains(&n) => Ok(usize::try_from(n).ok()),
        Some(_) => Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            "Value for parameter MaxResults is invalid. Reason: MaxResults must be an integer between 1 and 1000.",
        )),
    }
}

pub async fn list_queues<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let prefix = input.opt_str("QueueNamePrefix")?.unwrap_or("");
    let max = max_results(&input)?;
    let (walked, after) = match input.opt_str("NextToken")? {
        Some(t) => {
            let (w, last) = decode_token(t)?;
            (w, Some(registry::key(&last)))
        }
        None => (0, None),
    };
    let budget = LIST_CAP.saturating_sub(walked);
    let want = max.unwrap_or(LIST_PAGE_DEFAULT).min(budget);
    let mut names: Vec<String> = Vec::new();
    let mut cursor = after;
    let mut more = false;
    while names.len() < want {
        let limit = u32::try_from(want - names.len()).unwrap_or(1000).min(1000);
        let (rows, next) = ctx
            .queen
            .kv_prefix(
                &format!("{}{prefix}", registry::QUEUE_PREFIX),
                cursor.clone(),
                limit,
            )
            .await?;
        for row in rows {
            if let Some(n) = row.key.strip_prefix(registry::QUEUE_PREFIX) {
                if registry::parse(row.value).is_some() {
                    names.push(n.to_string());
                }
            }
        }
        more = next.is_some();
        match next {
            Some(n) => cursor = Some(n),
            None => break,
        }
    }
    let mut out = Map::new();
    if !names.is_empty() {
        let urls: Vec<String> = names
            .iter()
            .map(|n| naming::queue_url(&ctx.base_url, ctx.cfg, n))
            .collect();
        out.insert("QueueUrls".into(), json!(urls));
    }
    let walked = walked + names.len();
    if max.is_some() && more && walked < LIST_CAP {
        if let Some(last) = names.last() {
            out.insert("NextToken".into(), json!(encode_token(walked, last)));
        }
    }
    Ok(Value::Object(out))
}

pub async fn get_queue_attributes<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let wanted = attributes::requested(&input.str_list("AttributeNames")?)?;
    let record = &stored.record;
    let wants = |n: &str| wanted.iter().any(|w| w == n);

    // The broker is asked only for what was asked for.
    let depth =
        if wants("ApproximateNumberOfMessages") || wants("ApproximateNumberOfMessagesNotVisible") {
            ctx.queen.depth(&record.name).await?.unwrap_or_default()
        } else {
            Default::default()
        };
    // Timers: delayed sends, and (standard queues) messages in flight.
    let (delayed, held) = if wants("ApproximateNumberOfMessagesDelayed")
        || wants("ApproximateNumberOfMessagesNotVisible")
    {
        let counts = ctx
            .queen
            .timer_counts(&record.name, &[DELAY_TIMER_PREFIX, inflight::TIMER_PREFIX])
            .await?;
        (counts[0], counts[1])
    } else {
        (0, 0)
    };

    let mut out = Map::new();
    for name in &wanted {
        let value = match name.as_str() {
            "QueueArn" => Some(naming::queue_arn(ctx.cfg, &record.name)),
            "ApproximateNumberOfMessages" => Some(depth.ready.to_string()),
            "ApproximateNumberOfMessagesNotVisible" => Some((depth.processing + held).to_string()),
            "ApproximateNumberOfMessagesDelayed" => Some(delayed.to_string()),
            "CreatedTimestamp" => Some(record.created.to_string()),
            "LastModifiedTimestamp" => Some(record.modified.to_string()),
            "Policy" => super::permissions::answered_policy(ctx, record).await?,
            // Answered only beside a key, as SQS answers it (a reuse period set while
            // the key is cleared is kept for the next key).
            "KmsDataKeyReusePeriodSeconds" => record
                .attr("KmsMasterKeyId")
                .and(record.attr(name))
                .map(str::to_string),
            other => attributes::effective(record, other),
        };
        if let Some(v) = value {
            out.insert(name.clone(), Value::String(v));
        }
    }
    if out.is_empty() {
        return Ok(json!({}));
    }
    Ok(json!({ "Attributes": out }))
}

pub async fn set_queue_attributes<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    if input.get("Attributes").is_none() {
        return Err(super::input::missing("Attributes"));
    }
    let name = stored.record.name.clone();
    let fifo = stored.record.fifo;
    let supplied = input.str_map("Attributes")?;
    let changes = attributes::parse(fifo, Phase::Set, &supplied)?;
    if changes.set.is_empty() {
        return Ok(json!({}));
    }
    attributes::check_redrive_target(ctx, &name, fifo, &changes).await?;
    let now = ctx.now_s();
    let mut saved = registry::update(ctx, &name, |record| {
        let before = record.attributes.clone();
        attributes::apply(&mut record.attributes, &changes);
        if record.attributes != before {
            record.modified = now.max(record.modified);
        }
        Ok(())
    })
    .await?;
    configure_latest(ctx, &mut saved).await?;
    Ok(json!({}))
}

/// Configures the broker from `saved`, then again from anything a concurrent
/// SetQueueAttributes stored meanwhile, so the last configure carries the newest record.
async fn configure_latest<T: Transport>(
    ctx: &Ctx<'_, T>,
    saved: &mut Stored,
) -> Result<(), ApiError> {
    for _ in 0..4 {
        ctx.queen
            .configure(&saved.record.name, &saved.record.queen_options())
            .await?;
        match registry::load(ctx, &saved.record.name).await? {
            Some(now) if now.version != saved.version => {
                if now.record.queen_options() == saved.record.queen_options() {
                    return Ok(());
                }
                *saved = now;
            }
            Some(_) => return Ok(()),
            None => {
                // Deleted while we configured: do not leave a broker queue behind.
                ctx.queen.delete_queue(&saved.record.name).await?;
                return Ok(());
            }
        }
    }
    Ok(())
}

pub async fn purge_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let name = stored.record.name.as_str();
    // The cooldown is claimed create-only, so of two concurrent purges one loses.
    let claim = ctx
        .queen
        .kv_results(vec![KvOp::put_ttl(
            registry::purge_key(name),
            json!({ registry::PURGE_STARTED: ctx.now_ms }),
            COOLDOWN_SECONDS,
            Some(0),
        )])
        .await?;
    if !claim.first().is_some_and(|r| r.applied()) {
        return Err(ApiError::new(
            ErrorCode::PurgeQueueInProgress,
            format!("Only one PurgeQueue operation on {name} is allowed every 60 seconds."),
        ));
    }
    // Synchronous delete and recreate; handles minted before it name partitions that
    // no longer exist, so they stop addressing anything.
    if let Err(e) = delete_and_recreate(ctx, name).await {
        // Cut off half way, the broker queue may be gone or carry the broker's defaults (a
        // send re-creates it so): the client's retry must be able to run at once and
        // configure it again, so the cooldown claimed above is withdrawn.
        let withdraw = KvOp::delete(registry::purge_key(name), None);
        let _ = ctx.queen.kv_results(vec![withdraw]).await;
        return Err(e);
    }
    Ok(json!({}))
}

async fn delete_and_recreate<T: Transport>(ctx: &Ctx<'_, T>, name: &str) -> Result<(), ApiError> {
    // Marked first: cut off after the delete, the broker queue would come back with the
    // broker's defaults at the next push; a push that sees the mark configures it first.
    // The new incarnation is named now too (FIFO lanes and deduplication claims carry it):
    // cut off after the delete, the queue would otherwise come back with its lanes under
    // their old names, whose deduplication state the released engine keeps by name, and a
    // duplicate there is stored twice (checker engine seed 597).
    let began = ctx.now_ms;
    registry::update(ctx, name, |r| {
        r.purging = Some(began);
        r.purged = began.max(r.purged + 1);
        Ok(())
    })
    .await?;
    // Timers outlive a broker queue. Those pending now are cancelled first, so none fires
    // into the queue being deleted; a receive that popped before and commits while the
    // purge runs schedules new ones, cancelled after the delete. (One that commits after
    // the delete finds its acks refused and cancels its own.)
    cancel_timers(ctx, name).await?;
    ctx.queen.delete_queue(name).await?;
    cancel_timers(ctx, name).await?;
    let current = registry::require(ctx, name).await?;
    ctx.queen
        .configure(name, &current.record.queen_options())
        .await?;
    registry::update(ctx, name, |r| {
        if r.purging == Some(began) {
            r.purging = None;
        }
        Ok(())
    })
    .await?;
    Ok(())
}
