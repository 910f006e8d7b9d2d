//! ListDeadLetterSourceQueues: the queues whose RedrivePolicy names this one, found
//! by walking the registry (there is no reverse index to keep consistent).

use super::input::Input;
use super::naming;
use super::queues::{decode_token, encode_token, max_results, LIST_CAP};
use super::registry;
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::wire::ApiError;
use serde_json::{json, Map, Value};

/// Answered without MaxResults, as SQS pages this listing.
const DEFAULT_PAGE: usize = 1000;

pub async fn list_dead_letter_source_queues<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let target = stored.record.name;
    let max = max_results(&input)?;
    let after = match input.opt_str("NextToken")? {
        Some(t) => Some(decode_token(t)?.1),
        None => None,
    };
    let mut sources: Vec<String> = ctx
        .queen
        .kv_prefix_all(registry::QUEUE_PREFIX, LIST_CAP)
        .await?
        .into_iter()
        .filter_map(|row| registry::parse(row.value))
        .filter(|r| r.redrive(ctx.cfg).is_some_and(|(dlq, _)| dlq == target))
        .map(|r| r.name)
        .collect();
    sources.sort();
    if let Some(a) = after {
        sources.retain(|n| *n > a);
    }
    let page = max.unwrap_or(DEFAULT_PAGE);
    let more = sources.len() > page;
    sources.truncate(page);
    let mut out = Map::new();
    out.insert(
        "queueUrls".into(),
        json!(sources
            .iter()
            .map(|n| naming::queue_url(&ctx.base_url, ctx.cfg, n))
            .collect::<Vec<_>>()),
    );
    if more && max.is_some() {
        if let Some(last) = sources.last() {
            out.insert("NextToken".into(), json!(encode_token(0, last)));
        }
    }
    Ok(Value::Object(out))
}
