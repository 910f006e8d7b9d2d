//! AddPermission / RemovePermission: validated as far as SQS validates them and kept
//! beside the registry record (`qs:qp:<name>`, removed with it), never enforced. Authorization here is Queen's, over the
//! SigV4 keypair; there is no principal model for an SQS grant to apply to. The queue's
//! `Policy` answers the grants as statements, as SQS folds them into it.

use super::input::{invalid, missing, Input};
use super::registry::{self, Permission};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::queen::KvOp;
use crate::wire::{ApiError, ErrorCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;

type Grants = BTreeMap<String, Permission>;

/// Rounds of a lost compare-and-set before giving up.
const CAS_ROUNDS: usize = 16;

/// Read-modify-write of a queue's grants under compare-and-set, while the queue exists.
async fn update_grants<T, F>(ctx: &Ctx<'_, T>, queue: &str, mut change: F) -> Result<(), ApiError>
where
    T: Transport,
    F: FnMut(&mut Grants) -> Result<(), ApiError>,
{
    let key = registry::permissions_key(queue);
    for _ in 0..CAS_ROUNDS {
        let row = ctx.queen.kv_get(&key).await?;
        let version = row.as_ref().map_or(0, |r| r.version);
        let mut grants: Grants = row
            .and_then(|r| serde_json::from_value(r.value).ok())
            .unwrap_or_default();
        change(&mut grants)?;
        let value = serde_json::to_value(&grants).unwrap_or(Value::Null);
        let done = ctx
            .queen
            .kv_results(vec![KvOp::put(key.clone(), value, Some(version))])
            .await?;
        if done.first().is_some_and(|r| r.applied()) {
            // A grant written as the queue was deleted must not outlive it.
            if registry::load(ctx, queue).await?.is_none() {
                ctx.queen.kv_results(vec![KvOp::delete(key, None)]).await?;
                return Err(super::naming::no_such_queue());
            }
            return Ok(());
        }
    }
    Err(ApiError::new(
        ErrorCode::RequestThrottled,
        "Too many concurrent changes to the queue; retry.",
    ))
}

/// The `Policy` GetQueueAttributes answers: the stored document with one statement per
/// grant (`Sid` its label), or AWS's own document around them when none was stored; no
/// policy when there is neither.
pub async fn answered_policy<T: Transport>(
    ctx: &Ctx<'_, T>,
    record: &registry::QueueRecord,
) -> Result<Option<String>, ApiError> {
    let row = ctx
        .queen
        .kv_get(&registry::permissions_key(&record.name))
        .await?;
    let grants: Grants = row
        .and_then(|r| serde_json::from_value(r.value).ok())
        .unwrap_or_default();
    let stored = record.attr("Policy");
    if grants.is_empty() {
        return Ok(stored.map(str::to_string));
    }
    let arn = super::naming::queue_arn(ctx.cfg, &record.name);
    let mut doc = stored
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .filter(|d| d.get("Statement").is_some_and(Value::is_array))
        .unwrap_or_else(|| {
            json!({"Version": "2008-10-17", "Id": format!("{arn}/SQSDefaultPolicy"), "Statement": []})
        });
    if let Some(list) = doc.get_mut("Statement").and_then(Value::as_array_mut) {
        list.extend(grants.iter().map(|(label, g)| statement(&arn, label, g)));
    }
    Ok(Some(doc.to_string()))
}

/// A grant as SQS writes it: one principal or action is a string, several a list.
fn statement(queue_arn: &str, label: &str, g: &Permission) -> Value {
    let one_or_many = |items: Vec<String>| match items.as_slice() {
        [one] => Value::String(one.clone()),
        _ => json!(items),
    };
    let principals = g
        .accounts
        .iter()
        .map(|a| format!("arn:aws:iam::{a}:root"))
        .collect();
    let actions = g.actions.iter().map(|a| format!("SQS:{a}")).collect();
    json!({
        "Sid": label,
        "Effect": "Allow",
        "Principal": {"AWS": one_or_many(principals)},
        "Action": one_or_many(actions),
        "Resource": queue_arn,
    })
}

const MAX_LABEL_CHARS: usize = 80;
/// The actions SQS lets a grant name.
const GRANTABLE: &[&str] = &[
    "*",
    "SendMessage",
    "ReceiveMessage",
    "DeleteMessage",
    "ChangeMessageVisibility",
    "GetQueueAttributes",
    "GetQueueUrl",
    "ListDeadLetterSourceQueues",
    "PurgeQueue",
    "ListQueueTags",
];

fn label<'a>(input: &Input<'a>) -> Result<&'a str, ApiError> {
    let label = input.str("Label")?;
    let ok = !label.is_empty()
        && label.len() <= MAX_LABEL_CHARS
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !ok {
        return Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            "Value for parameter Label is invalid. Reason: Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.",
        ));
    }
    Ok(label)
}

fn non_empty_list<'a>(input: &Input<'a>, name: &str) -> Result<Vec<&'a str>, ApiError> {
    let items = input.str_list(name)?;
    if items.is_empty() {
        return Err(missing(name));
    }
    if items.iter().any(|s| s.is_empty()) {
        return Err(invalid(name));
    }
    Ok(items)
}

pub async fn add_permission<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let label = label(&input)?;
    let accounts = non_empty_list(&input, "AWSAccountIds")?;
    let actions = non_empty_list(&input, "Actions")?;
    if let Some(bad) = actions.iter().find(|a| !GRANTABLE.contains(a)) {
        return Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            format!("Value SQS:{bad} for parameter ActionName is invalid. Reason: Please refer to the appropriate WSDL for a list of valid actions."),
        ));
    }
    let grant = Permission {
        accounts: accounts.iter().map(|s| s.to_string()).collect(),
        actions: actions.iter().map(|s| s.to_string()).collect(),
    };
    update_grants(ctx, &stored.record.name, |grants| {
        if grants.contains_key(label) {
            return Err(ApiError::new(
                ErrorCode::InvalidParameterValue,
                format!("Value {label} for parameter Label is invalid. Reason: Already exists."),
            ));
        }
        grants.insert(label.to_string(), grant.clone());
        Ok(())
    })
    .await?;
    Ok(json!({}))
}

pub async fn remove_permission<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let label = label(&input)?;
    update_grants(ctx, &stored.record.name, |grants| {
        if grants.remove(label).is_none() {
            return Err(ApiError::new(
                ErrorCode::InvalidParameterValue,
                format!("Value {label} for parameter Label is invalid. Reason: can't find label."),
            ));
        }
        Ok(())
    })
    .await?;
    Ok(json!({}))
}
