//! SNS's `http` and `https` subscriptions (issue 24): a POST per delivery, durable in Queen.
//!
//! The component keeps no thread, so nothing it holds can retry a POST later. A delivery
//! is therefore a message in an internal queue of the broker, the outbox (`outbox`),
//! written in the same transaction as the publish's queue pushes: a `Publish` answered
//! 200 has its POSTs recorded, whatever happens to the replica that answered. The POSTs
//! are made by whoever calls the delivery route (`worker`, `POST` [`ROUTE`] with the
//! deployment's delivery token): our host calls it in a loop; another runtime needs a
//! periodic call of it. The route receives from the outbox as an SQS consumer receives,
//! POSTs, and deletes what a subscriber took; a failed POST's message is made visible
//! again after the delay the delivery policy gives (`policy`), and after the last retry
//! it goes to the subscription's dead-letter queue or is dropped, as SNS does.
//!
//! A subscription is confirmed before anything but its confirmation is delivered to it
//! (`confirm`), and it may name only the hosts the operator allows (`endpoint`), so the
//! endpoint cannot be made to send requests anywhere else.

pub mod confirm;
pub mod endpoint;
pub mod links;
pub mod outbox;
pub mod policy;
pub mod worker;

/// The delivery route: a POST with the delivery token works through the outbox.
pub const ROUTE: &str = "/_queen-sqs/sns/deliveries";
/// The header the delivery route reads its token from.
pub const TOKEN_HEADER: &str = "x-queen-sqs-delivery-token";
