//! Queue tags. They live in the registry record, never reach the Queen queue, and
//! change only through TagQueue and UntagQueue (a CreateQueue applies them only when
//! it creates).

use super::input::{missing, Input};
use super::registry;
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::wire::{ApiError, ErrorCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const MAX_TAGS: usize = 50;
const MAX_KEY_CHARS: usize = 128;
const MAX_VALUE_CHARS: usize = 256;

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidParameterValue, msg)
}

fn check_pair(key: &str, value: &str) -> Result<(), ApiError> {
    let chars = key.chars().count();
    if chars == 0 || chars > MAX_KEY_CHARS {
        return Err(bad(
            "Tag keys must be between 1 and 128 characters in length.",
        ));
    }
    // AWS reserves the prefix for its own tags, in any casing.
    if key.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("aws:")) {
        return Err(bad(
            "Tag keys beginning with aws: are reserved for AWS use.",
        ));
    }
    if value.chars().count() > MAX_VALUE_CHARS {
        return Err(bad(
            "Tag values must be between 0 and 256 characters in length.",
        ));
    }
    if !crate::model::valid_tag_text(key) || !crate::model::valid_tag_text(value) {
        return Err(bad(
            "Tag keys and values may contain only Unicode letters, digits, whitespace and _ . : / = + - @.",
        ));
    }
    Ok(())
}

fn too_many() -> ApiError {
    bad(format!(
        "Too many tags: a queue can have at most {MAX_TAGS}."
    ))
}

/// The tags of a CreateQueue, checked as TagQueue checks them.
pub fn validate_new(pairs: &[(&str, &str)]) -> Result<BTreeMap<String, String>, ApiError> {
    let mut out = BTreeMap::new();
    for &(k, v) in pairs {
        check_pair(k, v)?;
        out.insert(k.to_string(), v.to_string());
    }
    if out.len() > MAX_TAGS {
        return Err(too_many());
    }
    Ok(out)
}

pub async fn list_queue_tags<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    if stored.record.tags.is_empty() {
        return Ok(json!({}));
    }
    Ok(json!({ "Tags": stored.record.tags }))
}

pub async fn tag_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let pairs = input.str_map("Tags")?;
    if pairs.is_empty() {
        return Err(missing("Tags"));
    }
    let add = validate_new(&pairs)?;
    registry::update(ctx, &stored.record.name, |record| {
        record.tags.extend(add.clone());
        if record.tags.len() > MAX_TAGS {
            return Err(too_many());
        }
        Ok(())
    })
    .await?;
    Ok(json!({}))
}

pub async fn untag_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let keys = input.str_list("TagKeys")?;
    if keys.is_empty() {
        return Err(missing("TagKeys"));
    }
    for k in &keys {
        check_pair(k, "")?;
    }
    registry::update(ctx, &stored.record.name, |record| {
        for k in &keys {
            record.tags.remove(*k);
        }
        Ok(())
    })
    .await?;
    Ok(json!({}))
}
