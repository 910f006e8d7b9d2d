//! A received message as answered: its id and minted receipt handle, the body and its
//! MD5, the system attributes asked for, and the user attributes selected with their MD5.

use super::lanes;
use super::message_attrs::{select_message_attributes, SystemSelection};
use super::naming;
use super::registry::QueueRecord;
use crate::ctx::Ctx;
use crate::model::{
    attrs_to_api, carried, md5_of_body, md5_of_message_attributes, mint, sequence, AttrData, Attrs,
};
use crate::sqs::inflight::Delivery;
use serde_json::{json, Map, Value};

/// What a receive asked to be shown of each message.
pub struct Shown<'a> {
    pub system: &'a SystemSelection,
    pub user_names: &'a [&'a str],
}

pub fn message<T>(ctx: &Ctx<'_, T>, q: &QueueRecord, shown: &Shown<'_>, d: Delivery) -> Value {
    let mut out = Map::new();
    out.insert("MessageId".into(), json!(d.message_id));
    let handle = mint(&d.handle, &ctx.cfg.handle_secret);
    out.insert("ReceiptHandle".into(), json!(handle));
    out.insert("MD5OfBody".into(), json!(md5_of_body(&d.envelope.body)));
    out.insert("Body".into(), json!(d.envelope.body));

    let attrs = system_attributes(ctx, q, &d, shown.system);
    if !attrs.is_empty() {
        out.insert("Attributes".into(), Value::Object(attrs));
    }
    let selected: Attrs = select_message_attributes(&d.envelope.attrs, shown.user_names);
    if let Some(digest) = md5_of_message_attributes(&selected) {
        out.insert("MD5OfMessageAttributes".into(), json!(digest));
        out.insert("MessageAttributes".into(), attrs_to_api(&selected));
    }
    Value::Object(out)
}

/// The system attributes asked for. `SenderId` is the account's principal (which key sent
/// a message is not recorded). `ApproximateFirstReceiveTimestamp` is answered where a
/// message in flight carries it (standard queues held by visibility timers) and on a
/// message's first receive.
fn system_attributes<T>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    d: &Delivery,
    sel: &SystemSelection,
) -> Map<String, Value> {
    let mut a = Map::new();
    if sel.is_empty() {
        return a;
    }
    let mut add = |name: &str, v: Option<String>| {
        if let Some(v) = v {
            if sel.wants(name) {
                a.insert(name.to_string(), Value::String(v));
            }
        }
    };
    add("ApproximateReceiveCount", Some(d.count.to_string()));
    add(
        "ApproximateFirstReceiveTimestamp",
        d.first_receive_ms.map(|ms| ms.to_string()),
    );
    add("SentTimestamp", d.sent_ms.map(|ms| ms.to_string()));
    add("SenderId", Some(naming::sender_id(ctx.cfg)));
    let e = &d.envelope;
    if q.fifo {
        add("SequenceNumber", sequence::from_message_id(&d.broker_id));
        add("MessageGroupId", Some(lanes::group_of(&d.lane).to_string()));
        add("MessageDeduplicationId", Some(d.dedup_id.clone()));
    } else {
        add("MessageGroupId", carried::group(e));
    }
    for (name, v) in &e.system {
        if !carried::is_internal(name) {
            if let AttrData::String(s) = &v.value {
                add(name, Some(s.clone()));
            }
        }
    }
    if let Some(source) = carried::source_queue(e) {
        add(
            "DeadLetterQueueSourceArn",
            Some(naming::queue_arn(ctx.cfg, source)),
        );
        add(carried::SOURCE_QUEUE, Some(source.to_string()));
    }
    add(carried::ORIGINAL_MESSAGE_ID, e.original_id.clone());
    a
}
