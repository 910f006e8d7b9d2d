//! The 23 SQS actions over Queen. Each takes the JSON protocol's input shape and
//! answers the JSON protocol's output shape; the wire layer does the rest.

pub mod attributes;
pub mod batch;
pub mod dedup;
pub mod inflight;
pub mod input;
pub mod lanes;
pub mod message_attrs;
pub mod movetasks;
pub mod naming;
pub mod permissions;
pub mod queues;
pub mod receive;
pub mod redrive;
pub mod registry;
pub mod render;
pub mod send;
pub mod settle;
pub mod sources;
pub mod tags;

use crate::ctx::Ctx;
use crate::http::Transport;
use crate::wire::{Action, ApiError, ErrorCode};
use input::Input;
use serde_json::Value;

/// The SQS half of the dispatch table. `AddPermission`/`RemovePermission` arrive here
/// only for SQS; the SNS forms are the SNS module's.
pub async fn dispatch<T: Transport>(
    ctx: &Ctx<'_, T>,
    action: Action,
    input: Value,
) -> Result<Value, ApiError> {
    let input = Input(&input);
    match action {
        Action::CreateQueue => queues::create_queue(ctx, input).await,
        Action::DeleteQueue => queues::delete_queue(ctx, input).await,
        Action::GetQueueUrl => queues::get_queue_url(ctx, input).await,
        Action::ListQueues => queues::list_queues(ctx, input).await,
        Action::GetQueueAttributes => queues::get_queue_attributes(ctx, input).await,
        Action::SetQueueAttributes => queues::set_queue_attributes(ctx, input).await,
        Action::PurgeQueue => queues::purge_queue(ctx, input).await,
        Action::ListQueueTags => tags::list_queue_tags(ctx, input).await,
        Action::TagQueue => tags::tag_queue(ctx, input).await,
        Action::UntagQueue => tags::untag_queue(ctx, input).await,
        Action::AddPermission => permissions::add_permission(ctx, input).await,
        Action::RemovePermission => permissions::remove_permission(ctx, input).await,
        Action::ListDeadLetterSourceQueues => {
            sources::list_dead_letter_source_queues(ctx, input).await
        }
        Action::SendMessage => send::send_message(ctx, input).await,
        Action::SendMessageBatch => send::send_message_batch(ctx, input).await,
        Action::ReceiveMessage => receive::receive_message(ctx, input).await,
        Action::DeleteMessage => settle::delete_message(ctx, input).await,
        Action::DeleteMessageBatch => settle::delete_message_batch(ctx, input).await,
        Action::ChangeMessageVisibility => settle::change_message_visibility(ctx, input).await,
        Action::ChangeMessageVisibilityBatch => {
            settle::change_message_visibility_batch(ctx, input).await
        }
        Action::StartMessageMoveTask => movetasks::start_message_move_task(ctx, input).await,
        Action::CancelMessageMoveTask => movetasks::cancel_message_move_task(ctx, input).await,
        Action::ListMessageMoveTasks => movetasks::list_message_move_tasks(ctx, input).await,
        other => Err(ApiError::new(
            ErrorCode::InvalidAction,
            format!("{} is not an SQS action.", other.name()),
        )),
    }
}
