//! The SNS records in Queen's KV store, and reading them.
//!
//! - `qs:t:<topic>`: a topic (attributes, tags).
//! - `qs:s:<topic>:<uuid>`: a subscription, so "the subscriptions of T" is the prefix
//!   walk `qs:s:<topic>:` and the account-wide listing walks `qs:s:` (a topic name holds
//!   no `:`, so one topic's prefix never matches another's).
//! - `qs:sx:<topic>:<sha256(protocol, endpoint)>`: the uuid of the one subscription per
//!   (topic, protocol, endpoint), written with the record under `expect: 0`, which makes
//!   `Subscribe` idempotent without a walk and safe against a concurrent twin.
//! - `qs:td:<topic>:<scope>`: a FIFO topic's deduplication marker, five minutes long.
//!
//! Every mutation is a compare-and-set on the version it read.

use super::arn::sha256_hex;
use super::errors::broker;
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::queen::{KvOp, KvRow};
use crate::wire::ApiError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

pub const TOPIC_PREFIX: &str = "qs:t:";
pub const SUB_PREFIX: &str = "qs:s:";

pub fn topic_key(name: &str) -> String {
    format!("{TOPIC_PREFIX}{name}")
}

pub fn subs_prefix(topic: &str) -> String {
    format!("{SUB_PREFIX}{topic}:")
}

pub fn sub_key(topic: &str, id: &str) -> String {
    format!("{SUB_PREFIX}{topic}:{id}")
}

/// A subscription an `UnsubscribeURL` removed, kept under its token for as long as the
/// `UnsubscribeConfirmation`'s `SubscribeURL` may restore it.
pub fn gone_key(topic: &str, token: &str) -> String {
    format!("qs:sns:gone:{topic}:{token}")
}

pub fn endpoint_key(topic: &str, protocol: &str, endpoint: &str) -> String {
    let digest = sha256_hex(format!("{protocol}\n{endpoint}").as_bytes());
    format!("qs:sx:{topic}:{digest}")
}

/// The counter a FIFO topic numbers its messages with (`publish`).
pub fn sequence_key(topic: &str) -> String {
    format!("qs:sns:seq:{topic}")
}

pub fn dedup_key(topic: &str, scope: &str) -> String {
    format!("qs:td:{topic}:{}", sha256_hex(scope.as_bytes()))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopicRecord {
    pub name: String,
    pub fifo: bool,
    /// Settable attributes as the client set them (defaults are applied on read).
    pub attributes: BTreeMap<String, String>,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Unix seconds.
    pub created: i64,
}

impl TopicRecord {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }
    pub fn content_based_dedup(&self) -> bool {
        self.attr("ContentBasedDeduplication") == Some("true")
    }
    /// `FifoThroughputScope=MessageGroup` narrows deduplication to the message group.
    pub fn dedup_per_group(&self) -> bool {
        self.attr("FifoThroughputScope") == Some("MessageGroup")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubRecord {
    pub id: String,
    pub topic: String,
    pub protocol: String,
    /// The queue ARN as the client wrote it.
    pub endpoint: String,
    /// The queue's name (the registry key `qs:q:<queue>`).
    pub queue: String,
    /// Settable attributes as set (RawMessageDelivery, FilterPolicy, ...).
    pub attributes: BTreeMap<String, String>,
    pub created: i64,
    /// An `http`/`https` subscription's confirmation token (`webhook::confirm`), kept once
    /// confirmed so that a repeated confirmation answers the same ARN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Not yet confirmed: nothing is delivered to it, and it is listed as
    /// `PendingConfirmation` (an SQS subscription is confirmed when it is made).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    /// An `http`/`https` subscription confirmed by a call a client made (not by a GET of
    /// its `SubscribeURL`): `ConfirmationWasAuthenticated`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirmed_by_call: bool,
    /// Confirmed by such a call with `AuthenticateOnUnsubscribe=true`: only a call, never an
    /// `UnsubscribeURL`, removes it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsubscribe_by_call_only: bool,
}

impl SubRecord {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }
    pub fn raw(&self) -> bool {
        self.attr("RawMessageDelivery") == Some("true")
    }
    /// Delivered by a POST to its endpoint (`webhook`), not pushed into a queue.
    pub fn is_webhook(&self) -> bool {
        matches!(self.protocol.as_str(), "http" | "https")
    }
}

/// A record as read, with the version a compare-and-set must name.
#[derive(Debug, Clone)]
pub struct Versioned<R> {
    pub record: R,
    pub version: i64,
}

pub fn decode<R: for<'de> Deserialize<'de>>(row: KvRow) -> Option<Versioned<R>> {
    serde_json::from_value(row.value)
        .ok()
        .map(|record| Versioned {
            record,
            version: row.version,
        })
}

pub fn to_value<R: Serialize>(r: &R) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}

pub async fn load_topic<T: Transport>(
    ctx: &Ctx<'_, T>,
    name: &str,
) -> Result<Option<Versioned<TopicRecord>>, ApiError> {
    let row = ctx.queen.kv_get(&topic_key(name)).await.map_err(broker)?;
    Ok(row.and_then(decode))
}

pub async fn load_sub<T: Transport>(
    ctx: &Ctx<'_, T>,
    topic: &str,
    id: &str,
) -> Result<Option<Versioned<SubRecord>>, ApiError> {
    let row = ctx
        .queen
        .kv_get(&sub_key(topic, id))
        .await
        .map_err(broker)?;
    Ok(row.and_then(decode))
}

/// A subscription's record as the delivery path reads it: one a host cache may answer, up
/// to `QUEEN_SQS_REGISTRY_CACHE_MS` old, as the fan-out reads a topic's subscriptions (this
/// replica's own writes forget it at once; another's are seen within that bound). A miss is
/// asked of the broker again: a subscription made since is never taken for a gone one.
pub async fn sub_recent<T: Transport>(
    ctx: &Ctx<'_, T>,
    topic: &str,
    id: &str,
) -> Result<Option<SubRecord>, ApiError> {
    let row = row_recent(ctx, &sub_key(topic, id)).await?;
    Ok(row.and_then(decode::<SubRecord>).map(|v| v.record))
}

/// Every subscription of a topic (a topic's fan-out is small next to the cap).
pub async fn subs_of<T: Transport>(
    ctx: &Ctx<'_, T>,
    topic: &str,
) -> Result<Vec<Versioned<SubRecord>>, ApiError> {
    let rows = ctx
        .queen
        .kv_prefix_all(&subs_prefix(topic), MAX_SUBS_PER_TOPIC)
        .await
        .map_err(broker)?;
    Ok(rows.into_iter().filter_map(decode).collect())
}

/// A topic's record as the message path reads it: one a host cache may answer, up to
/// `QUEEN_SQS_REGISTRY_CACHE_MS` old (a miss is asked of the broker again).
pub async fn topic_recent<T: Transport>(
    ctx: &Ctx<'_, T>,
    topic: &str,
) -> Result<Option<TopicRecord>, ApiError> {
    let row = row_recent(ctx, &topic_key(topic)).await?;
    Ok(row.and_then(decode::<TopicRecord>).map(|v| v.record))
}

/// A row as the message path reads it: from the host cache, up to
/// `QUEEN_SQS_REGISTRY_CACHE_MS` old; a miss is asked of the broker again.
async fn row_recent<T: Transport>(
    ctx: &Ctx<'_, T>,
    key: &str,
) -> Result<Option<crate::queen::KvRow>, ApiError> {
    let max_age = ctx.cfg.registry_cache_ms;
    let cached = ctx
        .queen
        .kv_get_cached(key, max_age)
        .await
        .map_err(broker)?;
    match cached {
        Some(row) => Ok(Some(row)),
        None if max_age > 0 => ctx.queen.kv_get(key).await.map_err(broker),
        None => Ok(None),
    }
}

/// AWS's default quota is 12.5 million; a fan-out this wide is not one transaction.
pub const MAX_SUBS_PER_TOPIC: usize = 10_000;

/// The ops that remove one subscription: its record and its endpoint index.
pub fn delete_sub_ops(s: &SubRecord) -> Vec<KvOp> {
    vec![
        KvOp::delete(sub_key(&s.topic, &s.id), None),
        KvOp::delete(endpoint_key(&s.topic, &s.protocol, &s.endpoint), None),
    ]
}
