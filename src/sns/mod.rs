//! The 17 SNS actions, and SNS's forms of `AddPermission`/`RemovePermission`.
//!
//! SNS here is a facade-level construct: topics and subscriptions are `qs:t:` and `qs:s:`
//! records in Queen's KV store (see `records`), and a publish is one broker transaction
//! per message. It subscribes SQS queues of this account, which a publish pushes into, and
//! `http`/`https` endpoints, which a publish records POSTs for in the outbox (`webhook`).

pub mod arn;
pub mod errors;
pub mod filter;
pub mod input;
mod paging;
mod permissions;
pub mod publish;
pub mod records;
pub mod signing;
mod sub_attrs;
mod subscriptions;
mod tags;
mod topic_attrs;
mod topics;
pub mod webhook;

use crate::ctx::Ctx;
use crate::http::Transport;
use crate::wire::{Action, ApiError, ErrorCode};
use input::Params;
use serde_json::Value;

pub async fn dispatch<T: Transport>(
    ctx: &Ctx<'_, T>,
    action: Action,
    input: Value,
) -> Result<Value, ApiError> {
    let p = Params(&input);
    let result = match action {
        Action::CreateTopic => topics::create_topic(ctx, p).await,
        Action::DeleteTopic => topics::delete_topic(ctx, p).await,
        Action::ListTopics => topics::list_topics(ctx, p).await,
        Action::GetTopicAttributes => topics::get_topic_attributes(ctx, p).await,
        Action::SetTopicAttributes => topics::set_topic_attributes(ctx, p).await,
        Action::AddPermission => topics::add_permission(ctx, p).await,
        Action::RemovePermission => topics::remove_permission(ctx, p).await,
        Action::Subscribe => subscriptions::subscribe(ctx, p).await,
        Action::Unsubscribe => subscriptions::unsubscribe(ctx, p).await,
        Action::ConfirmSubscription => subscriptions::confirm_subscription(ctx, p).await,
        Action::ListSubscriptions => subscriptions::list_subscriptions(ctx, p).await,
        Action::ListSubscriptionsByTopic => {
            subscriptions::list_subscriptions_by_topic(ctx, p).await
        }
        Action::GetSubscriptionAttributes => {
            subscriptions::get_subscription_attributes(ctx, p).await
        }
        Action::SetSubscriptionAttributes => {
            subscriptions::set_subscription_attributes(ctx, p).await
        }
        Action::TagResource => tags::tag_resource(ctx, p).await,
        Action::UntagResource => tags::untag_resource(ctx, p).await,
        Action::ListTagsForResource => tags::list_tags_for_resource(ctx, p).await,
        Action::Publish => publish::publish(ctx, p).await,
        Action::PublishBatch => publish::publish_batch(ctx, p).await,
        other => Err(ApiError::new(
            ErrorCode::InvalidAction,
            format!("{} is not an SNS action.", other.name()),
        )),
    };
    // Shared helpers answer in SQS's dialect; nothing SQS-shaped leaves an SNS action.
    result.map_err(errors::sns_flavour)
}
