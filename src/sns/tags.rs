//! `TagResource`, `UntagResource`, `ListTagsForResource` on topic ARNs. Tags live in the
//! topic record; the resource is an ARN, the answer a list of pairs, and a missing
//! resource is `ResourceNotFound` (not the topic actions' `NotFound`).

use super::arn::topic_from_arn;
use super::errors::{broker, invalid, invalid_because, resource_not_found};
use super::input::Params;
use super::records::{load_topic, to_value, topic_key, TopicRecord};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::queen::{KvOp, KvOutcome};
use crate::wire::{ApiError, ErrorCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const MAX_TAGS: usize = 50;
const MAX_KEY: usize = 128;
const MAX_VALUE: usize = 256;
/// Compare-and-set attempts before a contended write gives up.
pub const CAS_ATTEMPTS: usize = 8;

/// Checks tag keys and values (not the count, which depends on what is already there).
pub fn check(tags: &[(&str, &str)]) -> Result<(), ApiError> {
    for (i, (k, v)) in tags.iter().enumerate() {
        // One key twice in one request: which value to keep would be a guess.
        if tags[..i].iter().any(|(earlier, _)| earlier == k) {
            return Err(invalid("Duplicated keys are not allowed."));
        }
        let n = k.chars().count();
        if n == 0 || n > MAX_KEY {
            return Err(invalid_because(
                "Tags",
                format!("A tag key must be 1 to {MAX_KEY} characters long"),
            ));
        }
        if k.to_ascii_lowercase().starts_with("aws:") {
            return Err(invalid_because(
                "Tags",
                "Tag keys beginning with aws: are reserved",
            ));
        }
        if v.chars().count() > MAX_VALUE {
            return Err(invalid_because(
                "Tags",
                format!("A tag value must be at most {MAX_VALUE} characters long"),
            ));
        }
        if !crate::model::valid_tag_text(k) || !crate::model::valid_tag_text(v) {
            return Err(invalid_because(
                "Tags",
                "Tag keys and values may contain only Unicode letters, digits, whitespace and _ . : / = + - @",
            ));
        }
    }
    Ok(())
}

pub fn limit_exceeded() -> ApiError {
    ApiError::new(
        ErrorCode::TagLimitExceeded,
        "Could not complete request: tag quota of per resource exceeded",
    )
}

pub fn as_list(tags: &BTreeMap<String, String>) -> Value {
    Value::Array(
        tags.iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect(),
    )
}

fn resource(ctx_cfg: &crate::config::Config, p: &Params<'_>) -> Result<String, ApiError> {
    let arn = p.str("ResourceArn")?;
    topic_from_arn(ctx_cfg, arn)
        .map(str::to_string)
        .ok_or_else(resource_not_found)
}

/// Applies `change` to the topic's tags under a compare-and-set.
async fn update<T: Transport>(
    ctx: &Ctx<'_, T>,
    topic: &str,
    change: impl Fn(&mut TopicRecord) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    for _ in 0..CAS_ATTEMPTS {
        let Some(stored) = load_topic(ctx, topic).await? else {
            return Err(resource_not_found());
        };
        let mut record = stored.record.clone();
        change(&mut record)?;
        if record == stored.record {
            return Ok(());
        }
        let op = KvOp::put(topic_key(topic), to_value(&record), Some(stored.version));
        if let KvOutcome::Done(r) = ctx.queen.kv(vec![op]).await.map_err(broker)? {
            if r.first().is_some_and(|r| r.applied()) {
                return Ok(());
            }
        }
    }
    Err(ApiError::new(
        ErrorCode::ConcurrentAccess,
        "Can't perform multiple operations on a tag simultaneously. Perform the operations sequentially.",
    ))
}

pub async fn tag_resource<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let topic = resource(ctx.cfg, &p)?;
    let tags = p.tags("Tags")?;
    check(&tags)?;
    update(ctx, &topic, |r| {
        for (k, v) in &tags {
            r.tags.insert(k.to_string(), v.to_string());
        }
        if r.tags.len() > MAX_TAGS {
            return Err(limit_exceeded());
        }
        Ok(())
    })
    .await?;
    Ok(json!({}))
}

pub async fn untag_resource<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let topic = resource(ctx.cfg, &p)?;
    let keys = p.str_list("TagKeys")?;
    update(ctx, &topic, |r| {
        for k in &keys {
            r.tags.remove(*k);
        }
        Ok(())
    })
    .await?;
    Ok(json!({}))
}

pub async fn list_tags_for_resource<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let topic = resource(ctx.cfg, &p)?;
    let stored = load_topic(ctx, &topic)
        .await?
        .ok_or_else(resource_not_found)?;
    Ok(json!({"Tags": as_list(&stored.record.tags)}))
}
