//! The outbox: the broker queue that holds every POST still to be made, one message per
//! POST. It is a standard queue held as the SQS queues are (`sqs::inflight`), but it is not
//! in the queue registry: no client can name it (a `.` outside a `.fifo` suffix is not a
//! queue name SQS accepts), and its record is this file's constant.

use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::Envelope;
use crate::queen::PushItem;
use crate::sns::errors::broker;
use crate::sns::records::SubRecord;
use crate::sqs::lanes::push_item;
use crate::sqs::registry::QueueRecord;
use crate::wire::ApiError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const QUEUE: &str = "queen-sqs.sns-outbox";
/// Lanes: how many POSTs can be in flight at once without a pop waiting on a lease.
const LANES: u32 = 16;
/// SNS's longest retry policy spans about a day; a POST is kept for SQS's longest retention.
const RETENTION_SECONDS: &str = "1209600";

/// The outbox's record, as the in-flight room reads a queue's.
pub fn record() -> QueueRecord {
    let attributes: BTreeMap<String, String> = [
        ("VisibilityTimeout", "60"),
        ("MessageRetentionPeriod", RETENTION_SECONDS),
        ("DelaySeconds", "0"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    QueueRecord {
        name: QUEUE.to_string(),
        fifo: false,
        partitions: LANES,
        attributes,
        tags: BTreeMap::new(),
        created: 0,
        modified: 0,
        purged: 0,
        queue_dedup: None,
        purging: None,
        deleting: None,
    }
}

/// Makes the broker queue with the outbox's options (idempotent: a whole-row upsert).
/// Called when an HTTP/S subscription is made, so it exists before anything is put in it.
pub async fn ensure<T: Transport>(ctx: &Ctx<'_, T>) -> Result<(), ApiError> {
    let r = record();
    ctx.queen
        .configure(&r.name, &r.queen_options())
        .await
        .map_err(broker)
}

/// What a POST is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    Notification,
    SubscriptionConfirmation,
    UnsubscribeConfirmation,
}

impl Kind {
    /// The `x-amz-sns-message-type` header's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Notification => "Notification",
            Kind::SubscriptionConfirmation => "SubscriptionConfirmation",
            Kind::UnsubscribeConfirmation => "UnsubscribeConfirmation",
        }
    }
}

/// One POST still to be made: everything but the subscription's current endpoint, which
/// is read when it is made (an unsubscribed subscription gets nothing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub kind: Kind,
    pub topic: String,
    /// The subscription's id (its ARN's last part).
    pub sub: String,
    pub message_id: String,
    /// The body, exactly as POSTed: the signed JSON document, or the message itself when
    /// delivery is raw.
    pub body: String,
    pub raw: bool,
    /// The subscription as it was when an `UnsubscribeURL` removed it: an
    /// `UnsubscribeConfirmation` goes to an endpoint no record names any more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gone: Option<SubRecord>,
}

impl Job {
    /// The push that records it, under the publish's per-message key.
    pub fn push(&self, key: &str) -> PushItem {
        let envelope = Envelope {
            body: serde_json::to_string(self).unwrap_or_default(),
            ..Envelope::default()
        };
        push_item(&record(), envelope.to_json(), None, None, key)
    }

    /// The job a delivered outbox message carries; `None` for anything else.
    pub fn read(envelope: &Envelope) -> Option<Job> {
        serde_json::from_str(&envelope.body).ok()
    }
}
