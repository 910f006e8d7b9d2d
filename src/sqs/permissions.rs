//! AddPermission / RemovePermission: validated as far as SQS validates them and kept
//! in the registry record, never enforced. Authorization here is Queen's, over the
//! SigV4 keypair; there is no principal model for an SQS grant to apply to.

use super::input::{invalid, missing, Input};
use super::registry::{self, Permission};
use crate::http::Transport;
use crate::service::Ctx;
use crate::wire::{ApiError, ErrorCode};
use serde_json::{json, Value};

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
    registry::update(ctx, &stored.record.name, |record| {
        if record.permissions.contains_key(label) {
            return Err(ApiError::new(
                ErrorCode::InvalidParameterValue,
                format!("Value {label} for parameter Label is invalid. Reason: Already exists."),
            ));
        }
        record.permissions.insert(label.to_string(), grant.clone());
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
    registry::update(ctx, &stored.record.name, |record| {
        if record.permissions.remove(label).is_none() {
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
