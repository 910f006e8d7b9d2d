//! (stub: being written)

use super::input::Input;
use crate::http::Transport;
use crate::service::Ctx;
use crate::wire::{ApiError, ErrorCode};
use serde_json::Value;

pub async fn delete_message<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "DeleteMessage is not implemented yet.",
    ))
}

pub async fn delete_message_batch<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "DeleteMessageBatch is not implemented yet.",
    ))
}

pub async fn change_message_visibility<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "ChangeMessageVisibility is not implemented yet.",
    ))
}

pub async fn change_message_visibility_batch<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "ChangeMessageVisibilityBatch is not implemented yet.",
    ))
}
