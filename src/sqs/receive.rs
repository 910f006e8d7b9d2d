//! (stub: being written)

use super::input::Input;
use crate::http::Transport;
use crate::service::Ctx;
use crate::wire::{ApiError, ErrorCode};
use serde_json::Value;

pub async fn receive_message<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "ReceiveMessage is not implemented yet.",
    ))
}
