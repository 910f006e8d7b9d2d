//! (stub: being written)

use super::input::Input;
use crate::http::Transport;
use crate::service::Ctx;
use crate::wire::{ApiError, ErrorCode};
use serde_json::Value;

pub async fn list_dead_letter_source_queues<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let _ = (ctx, input);
    Err(ApiError::new(
        ErrorCode::InvalidAction,
        "ListDeadLetterSourceQueues is not implemented yet.",
    ))
}
