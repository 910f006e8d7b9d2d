//! (stub: being written)

use super::input::Input;
use crate::http::Transport;
use crate::service::Ctx;
use crate::wire::{ApiError, ErrorCode};
use serde_json::Value;

pub async fn create_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "CreateQueue is not implemented yet.",
    ))
}

pub async fn delete_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "DeleteQueue is not implemented yet.",
    ))
}

pub async fn get_queue_url<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "GetQueueUrl is not implemented yet.",
    ))
}

pub async fn list_queues<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "ListQueues is not implemented yet.",
    ))
}

pub async fn get_queue_attributes<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "GetQueueAttributes is not implemented yet.",
    ))
}

pub async fn set_queue_attributes<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "SetQueueAttributes is not implemented yet.",
    ))
}

pub async fn purge_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "PurgeQueue is not implemented yet.",
    ))
}
