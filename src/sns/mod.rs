//! The 17 SNS actions (topics and subscriptions in Queen's KV) and filter policies.

pub mod filter;

use crate::http::Transport;
use crate::service::Ctx;
use crate::wire::{Action, ApiError, ErrorCode};
use serde_json::Value;

pub async fn dispatch<T: Transport>(
    ctx: &Ctx<'_, T>,
    action: Action,
    input: Value,
) -> Result<Value, ApiError> {
    let _ = (ctx, &input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        format!("{} is not implemented yet.", action.name()),
    ))
}
