//! Topic lifecycle: `CreateTopic`, `DeleteTopic`, `ListTopics`, `Get/SetTopicAttributes`,
//! and SNS's `AddPermission`/`RemovePermission` (validated, then nothing: no principal
//! model here for a topic policy to apply to).

use super::arn::{is_fifo_name, topic_arn, topic_from_arn, valid_topic_name};
use super::errors::{bad_arn, broker, invalid, invalid_because, topic_not_found};
use super::input::Params;
use super::paging;
use super::permissions;
use super::records::{
    delete_sub_ops, load_topic, subs_of, to_value, topic_key, TopicRecord, TOPIC_PREFIX,
};
use super::tags::{self, CAS_ATTEMPTS, MAX_TAGS};
use super::topic_attrs::{default_policy, normalize, report, same, When};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::queen::{KvOp, KvOutcome};
use crate::wire::{ApiError, ErrorCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The topic a `TopicArn` parameter names: a malformed or foreign ARN is
/// `InvalidParameter`, as AWS answers it; whether it exists is the caller's question.
pub fn topic_param<'a>(
    ctx_cfg: &crate::config::Config,
    p: &Params<'a>,
) -> Result<&'a str, ApiError> {
    let arn = p.str("TopicArn")?;
    topic_from_arn(ctx_cfg, arn).ok_or_else(|| bad_arn("TopicArn", arn))
}

/// Reads a topic or answers `NotFound` (HTTP 404).
pub async fn require<T: Transport>(
    ctx: &Ctx<'_, T>,
    name: &str,
) -> Result<super::records::Versioned<TopicRecord>, ApiError> {
    load_topic(ctx, name).await?.ok_or_else(topic_not_found)
}

fn contended() -> ApiError {
    ApiError::new(
        ErrorCode::ConcurrentAccess,
        "Can't perform multiple operations on a topic simultaneously. Perform the operations sequentially.",
    )
}

pub async fn create_topic<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let name = p.str("Name")?;
    let attrs = p.str_map("Attributes")?;
    let fifo_attr = attrs
        .iter()
        .find(|(k, _)| *k == "FifoTopic")
        .map(|(_, v)| v.eq_ignore_ascii_case("true"))
        .unwrap_or(false);
    let fifo = is_fifo_name(name);
    if !valid_topic_name(name) || (fifo && !fifo_attr) {
        // A `.fifo` name without FifoTopic=true is a standard name with a `.` in it.
        return Err(invalid("Topic Name"));
    }
    if fifo_attr && !fifo {
        return Err(invalid("Topic Name"));
    }
    if p.get("DataProtectionPolicy").is_some() {
        return Err(invalid_because(
            "DataProtectionPolicy",
            "data protection policies are not supported by this endpoint",
        ));
    }
    let mut supplied = BTreeMap::new();
    for (k, v) in &attrs {
        supplied.insert(k.to_string(), normalize(k, v, fifo, When::Create)?);
    }
    let tag_list = p.tags("Tags")?;
    tags::check(&tag_list)?;
    let tag_map: BTreeMap<String, String> = tag_list
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if tag_map.len() > MAX_TAGS {
        return Err(tags::limit_exceeded());
    }
    let mut stored_attrs = supplied.clone();
    // FifoTopic is the record's `fifo`; keeping it twice would let the two disagree.
    stored_attrs.remove("FifoTopic");
    stored_attrs.retain(|_, v| !v.is_empty());
    let record = TopicRecord {
        name: name.to_string(),
        fifo,
        attributes: stored_attrs,
        tags: tag_map.clone(),
        created: ctx.now_s(),
    };
    let arn = topic_arn(ctx.cfg, name);
    for _ in 0..CAS_ATTEMPTS {
        let op = KvOp::put(topic_key(name), to_value(&record), Some(0));
        let created = match ctx.queen.kv(vec![op]).await.map_err(broker)? {
            KvOutcome::Done(r) => r.first().is_some_and(|r| r.applied()),
            KvOutcome::Conflict(_) => false,
        };
        if created {
            return Ok(json!({"TopicArn": arn}));
        }
        // It exists: the same ARN, unless what this request SUPPLIES differs.
        let Some(existing) = load_topic(ctx, name).await? else {
            continue; // deleted in between: try to create again
        };
        let t = &existing.record;
        if supplied.iter().any(|(k, v)| !same(t, k, v)) {
            return Err(invalid_because(
                "Attributes",
                "Topic already exists with different attributes",
            ));
        }
        if tag_map.iter().any(|(k, v)| t.tags.get(k) != Some(v)) {
            return Err(invalid_because(
                "Tags",
                "Topic already exists with different tags",
            ));
        }
        return Ok(json!({"TopicArn": arn}));
    }
    Err(contended())
}

/// Removes the topic and every subscription of it. Idempotent: an unknown topic is a
/// success, as AWS documents. The topic's delete names the version read, and `Subscribe`
/// rewrites the topic under its version, so a subscription racing the delete either is
/// in the walk or finds the topic gone.
pub async fn delete_topic<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let name = topic_param(ctx.cfg, &p)?;
    // Two keys per subscription, plus the topic, inside the broker's 256 ops per call.
    const CHUNK: usize = 100;
    for _ in 0..CAS_ATTEMPTS {
        let topic = load_topic(ctx, name).await?;
        let subs = subs_of(ctx, name).await?;
        let (head, last) = subs.split_at(subs.len().saturating_sub(CHUNK));
        for chunk in head.chunks(CHUNK) {
            let ops = chunk
                .iter()
                .flat_map(|s| delete_sub_ops(&s.record))
                .collect();
            ctx.queen.kv_results(ops).await.map_err(broker)?;
        }
        let mut ops: Vec<KvOp> = last
            .iter()
            .flat_map(|s| delete_sub_ops(&s.record))
            .collect();
        let Some(topic) = topic else {
            if !ops.is_empty() {
                ctx.queen.kv_results(ops).await.map_err(broker)?;
            }
            return Ok(json!({}));
        };
        // A FIFO topic's sequence counter goes with it (absent: nothing to delete).
        ops.push(KvOp::delete(crate::sns::records::sequence_key(name), None));
        ops.push(KvOp::delete(topic_key(name), Some(topic.version)).required());
        match ctx.queen.kv(ops).await.map_err(broker)? {
            KvOutcome::Done(_) => return Ok(json!({})),
            KvOutcome::Conflict(_) => continue, // changed under us: walk again
        }
    }
    Err(contended())
}

pub async fn list_topics<T: Transport>(ctx: &Ctx<'_, T>, p: Params<'_>) -> Result<Value, ApiError> {
    let (rows, next) = paging::page(ctx, TOPIC_PREFIX, p.opt_str("NextToken")?).await?;
    let topics: Vec<Value> = rows
        .iter()
        .filter_map(|r| r.key.strip_prefix(TOPIC_PREFIX))
        .map(|name| json!({"TopicArn": topic_arn(ctx.cfg, name)}))
        .collect();
    let mut out = json!({"Topics": topics});
    if let Some(n) = next {
        out["NextToken"] = json!(n);
    }
    Ok(out)
}

pub async fn get_topic_attributes<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let name = topic_param(ctx.cfg, &p)?;
    let topic = require(ctx, name).await?;
    let subs = subs_of(ctx, name).await?;
    let pending = subs.iter().filter(|s| s.record.pending).count();
    let counts = (subs.len() - pending, pending);
    Ok(json!({"Attributes": report(ctx.cfg, &topic.record, counts)}))
}

pub async fn set_topic_attributes<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let name = topic_param(ctx.cfg, &p)?;
    let attr = p.str("AttributeName")?;
    // An absent value clears the attribute, as AWS treats it.
    let value = p.opt_str("AttributeValue")?.unwrap_or("");
    update_topic(ctx, name, |record| {
        let v = normalize(attr, value, record.fifo, When::Set)?;
        if v.is_empty() {
            record.attributes.remove(attr);
        } else {
            record.attributes.insert(attr.to_string(), v);
        }
        Ok(())
    })
    .await?;
    Ok(json!({}))
}

/// Applies `change` to the topic's record under a compare-and-set (a topic that does not
/// exist is `NotFound`); a change that changes nothing writes nothing.
async fn update_topic<T, F>(ctx: &Ctx<'_, T>, name: &str, mut change: F) -> Result<(), ApiError>
where
    T: Transport,
    F: FnMut(&mut TopicRecord) -> Result<(), ApiError>,
{
    for _ in 0..CAS_ATTEMPTS {
        let stored = require(ctx, name).await?;
        let mut record = stored.record.clone();
        change(&mut record)?;
        if record == stored.record {
            return Ok(());
        }
        let op = KvOp::put(topic_key(name), to_value(&record), Some(stored.version));
        if let KvOutcome::Done(r) = ctx.queen.kv(vec![op]).await.map_err(broker)? {
            if r.first().is_some_and(|r| r.applied()) {
                return Ok(());
            }
        }
    }
    Err(contended())
}

/// SNS's `AddPermission`: a statement of the topic's `Policy` (stored, not enforced).
pub async fn add_permission<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let name = topic_param(ctx.cfg, &p)?;
    let label = p.str("Label")?;
    if label.is_empty() {
        return Err(invalid("Label"));
    }
    let accounts = p.str_list("AWSAccountId")?;
    if accounts.is_empty() {
        return Err(invalid("AWSAccountId"));
    }
    let actions = p.str_list("ActionName")?;
    if actions.is_empty() {
        return Err(invalid("ActionName"));
    }
    let arn = topic_arn(ctx.cfg, name);
    update_topic(ctx, name, |record| {
        let policy = current_policy(ctx.cfg, record);
        let granted = permissions::grant(&policy, &arn, label, &accounts, &actions)?;
        record.attributes.insert("Policy".into(), granted);
        Ok(())
    })
    .await?;
    Ok(json!({}))
}

/// SNS's `RemovePermission`: the label's statement leaves the topic's `Policy`.
pub async fn remove_permission<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let name = topic_param(ctx.cfg, &p)?;
    let label = p.str("Label")?;
    update_topic(ctx, name, |record| {
        if let Some(policy) = record.attributes.get("Policy") {
            let revoked = permissions::revoke(policy, label);
            record.attributes.insert("Policy".into(), revoked);
        }
        Ok(())
    })
    .await?;
    Ok(json!({}))
}

/// The topic's `Policy` as answered: what was written, else AWS's default.
fn current_policy(cfg: &crate::config::Config, record: &TopicRecord) -> String {
    match record.attr("Policy").filter(|p| !p.is_empty()) {
        Some(p) => p.to_string(),
        None => default_policy(cfg, &topic_arn(cfg, &record.name)),
    }
}
