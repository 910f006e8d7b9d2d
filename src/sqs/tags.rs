//! (stub: being written)

use super::input::Input;
use crate::http::Transport;
use crate::service::Ctx;
use crate::wire::{ApiError, ErrorCode};
use serde_json::Value;

pub async fn list_queue_tags<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "ListQueueTags is not implemented yet.",
    ))
}

pub async fn tag_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "TagQueue is not implemented yet.",
    ))
}

pub async fn untag_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "UntagQueue is not implemented yet.",
    ))
}
