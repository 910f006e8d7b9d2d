//! Helpers for the SNS integration tests: Query calls, a tiny XML reader, subscriber
//! queues, and reading what was delivered to them.
#![allow(dead_code)]

use crate::support::Endpoint;
use bytes::Bytes;
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const ACCOUNT: &str = "000000000000";

/// An SNS Query action; answers (status, XML).
pub async fn sns(ep: &Endpoint, action: &str, params: &[(&str, &str)]) -> (u16, String) {
    let mut all: Vec<(&str, &str)> = vec![("Action", action), ("Version", "2010-03-31")];
    all.extend_from_slice(params);
    ep.query("/", &all).await
}

/// Panics unless the action answered 200.
pub async fn sns_ok(ep: &Endpoint, action: &str, params: &[(&str, &str)]) -> String {
    let (status, xml) = sns(ep, action, params).await;
    assert_eq!(status, 200, "{action} failed: {xml}");
    xml
}

/// (status, `<Code>`, `<Message>`) of an error answer.
pub async fn sns_err(
    ep: &Endpoint,
    action: &str,
    params: &[(&str, &str)],
) -> (u16, String, String) {
    let (status, xml) = sns(ep, action, params).await;
    assert_ne!(status, 200, "{action} unexpectedly succeeded: {xml}");
    (
        status,
        tag(&xml, "Code").unwrap_or_default(),
        tag(&xml, "Message").unwrap_or_default(),
    )
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find(';') else {
            out.push_str(&rest[i..]);
            return out;
        };
        let ent = &rest[i + 1..i + j];
        match ent {
            "amp" => out.push('&'),
            "lt" => out.push('<'),
            "gt" => out.push('>'),
            "quot" => out.push('"'),
            "apos" => out.push('\''),
            e if e.starts_with("#x") => out.extend(
                u32::from_str_radix(&e[2..], 16)
                    .ok()
                    .and_then(char::from_u32),
            ),
            e if e.starts_with('#') => out.extend(e[1..].parse().ok().and_then(char::from_u32)),
            _ => out.push_str(&rest[i..=i + j]),
        }
        rest = &rest[i + j + 1..];
    }
    out.push_str(rest);
    out
}

/// Every `<name>text</name>` in document order (elements with no children).
pub fn tags_all(xml: &str, name: &str) -> Vec<String> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let Some(j) = after.find(&close) else { break };
        out.push(unescape(&after[..j]));
        rest = &after[j + close.len()..];
    }
    out
}

pub fn tag(xml: &str, name: &str) -> Option<String> {
    tags_all(xml, name).into_iter().next()
}

/// An attribute map answered as `<entry><key>..</key><value>..</value></entry>`.
pub fn attributes(xml: &str) -> BTreeMap<String, String> {
    tags_all(xml, "entry")
        .iter()
        .filter_map(|e| Some((tag(e, "key")?, tag(e, "value").unwrap_or_default())))
        .collect()
}

pub async fn create_topic(ep: &Endpoint, name: &str, attrs: &[(&str, &str)]) -> String {
    let mut params: Vec<(String, String)> = vec![("Name".into(), name.into())];
    for (i, (k, v)) in attrs.iter().enumerate() {
        params.push((format!("Attributes.entry.{}.key", i + 1), k.to_string()));
        params.push((format!("Attributes.entry.{}.value", i + 1), v.to_string()));
    }
    let refs: Vec<(&str, &str)> = params
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let xml = sns_ok(ep, "CreateTopic", &refs).await;
    tag(&xml, "TopicArn").expect("TopicArn")
}

pub fn queue_arn(name: &str) -> String {
    format!("arn:aws:sqs:us-east-1:{ACCOUNT}:{name}")
}

async fn broker_call(ep: &Endpoint, method: &str, path: &str, body: Value) -> (u16, Value) {
    let (status, _, bytes) = ep
        .broker
        .handle(method, path, Bytes::from(body.to_string()))
        .await;
    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, v)
}

/// The registry record and the Queen queue of an SQS queue, written directly (what
/// CreateQueue does), for `n` queues in one KV call.
pub async fn make_queues(ep: &Endpoint, names: &[String], partitions: u32) {
    let mut ops = Vec::new();
    for name in names {
        let fifo = name.ends_with(".fifo");
        let record = json!({
            "name": name, "fifo": fifo, "partitions": if fifo { 0 } else { partitions },
            "attributes": {"VisibilityTimeout": "30"}, "tags": {}, "created": 0, "modified": 0
        });
        ops.push(json!({"op": "put", "ns": "qs", "key": format!("qs:q:{name}"), "value": record, "forever": true}));
    }
    let (status, body) = broker_call(ep, "POST", "/api/v1/kv", json!({"operations": ops})).await;
    assert_eq!(status, 200, "{body}");
    for name in names {
        let fifo = name.ends_with(".fifo");
        let options = json!({
            "leaseTime": 30, "retryLimit": 3, "deadLetterQueue": false, "dlqAfterMaxRetries": false,
            "delayedProcessing": 0, "retentionEnabled": true, "retentionSeconds": 345600,
            "dedupWindowSeconds": if fifo { 300 } else { 0 }
        });
        let (status, body) = broker_call(
            ep,
            "POST",
            "/api/v1/configure",
            json!({"queue": name, "mode": "replace", "options": options}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
}

pub async fn make_queue(ep: &Endpoint, name: &str) -> String {
    make_queues(ep, &[name.to_string()], 4).await;
    queue_arn(name)
}

/// What the facade's DeleteQueue leaves: no registry record, no Queen queue.
pub async fn drop_queue(ep: &Endpoint, name: &str) {
    let op = json!({"op": "delete", "ns": "qs", "key": format!("qs:q:{name}")});
    broker_call(ep, "POST", "/api/v1/kv", json!({"operations": [op]})).await;
    broker_call(
        ep,
        "DELETE",
        &format!("/api/v1/resources/queues/{name}"),
        Value::Null,
    )
    .await;
}

pub async fn broker_queues(ep: &Endpoint) -> Vec<String> {
    let (_, v) = broker_call(ep, "GET", "/api/v1/resources/queues", Value::Null).await;
    v["queues"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|q| q["name"].as_str().or(q["queue"].as_str()).map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// One delivered message as stored: its partition (lane or group), dedup key and payload.
#[derive(Debug, Clone)]
pub struct Delivered {
    pub partition: String,
    pub transaction_id: String,
    pub payload: Value,
}

impl Delivered {
    /// The SQS body (the envelope's `b`).
    pub fn body(&self) -> &str {
        self.payload["b"].as_str().expect("an SQS envelope")
    }
    /// The notification document (enveloped delivery).
    pub fn notification(&self) -> Value {
        serde_json::from_str(self.body()).expect("notification JSON")
    }
}

/// Everything waiting in a queue, claimed with native pops and never acked (each pop
/// claims partitions not yet leased, so the loop ends when all are held).
pub async fn drain(ep: &Endpoint, queue: &str) -> Vec<Delivered> {
    let mut out = Vec::new();
    loop {
        let (status, _, bytes) = ep
            .broker
            .handle(
                "GET",
                &format!("/api/v1/pop/queue/{queue}?batch=100&partitions=1000&wait=false"),
                Bytes::new(),
            )
            .await;
        if status == 204 || bytes.is_empty() {
            return out;
        }
        let v: Value = serde_json::from_slice(&bytes).expect("pop JSON");
        let msgs = v["messages"].as_array().cloned().unwrap_or_default();
        if msgs.is_empty() {
            return out;
        }
        // Settle what was claimed, so the next drain of the same lane is not blocked by a
        // live lease (a later delivery may hash to the same lane).
        let acks: Vec<Value> = msgs
            .iter()
            .map(|m| {
                serde_json::json!({
                    "transactionId": m["transactionId"],
                    "partitionId": m["partitionId"],
                    "leaseId": m["leaseId"],
                    "status": "completed",
                })
            })
            .collect();
        let body = serde_json::json!({ "acknowledgments": acks }).to_string();
        let (status, _, _) = ep
            .broker
            .handle("POST", "/api/v1/ack/batch", Bytes::from(body))
            .await;
        assert_eq!(status, 200, "ack of drained messages");
        for m in msgs {
            out.push(Delivered {
                partition: m["partition"].as_str().unwrap_or("").to_string(),
                transaction_id: m["transactionId"].as_str().unwrap_or("").to_string(),
                payload: m["data"].clone(),
            });
        }
    }
}

/// `Subscribe`'s parameters: the topic, protocol and endpoint, and attributes.
pub fn subscribe_params(
    topic_arn: &str,
    protocol: &str,
    endpoint: &str,
    attrs: &[(&str, &str)],
) -> Vec<(String, String)> {
    let mut params: Vec<(String, String)> = vec![
        ("TopicArn".into(), topic_arn.into()),
        ("Protocol".into(), protocol.into()),
        ("Endpoint".into(), endpoint.into()),
    ];
    for (i, (k, v)) in attrs.iter().enumerate() {
        params.push((format!("Attributes.entry.{}.key", i + 1), k.to_string()));
        params.push((format!("Attributes.entry.{}.value", i + 1), v.to_string()));
    }
    params
}

/// (name, value) pairs as the borrowed form `sns` takes.
pub fn borrowed(params: &[(String, String)]) -> Vec<(&str, &str)> {
    params
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect()
}

pub async fn subscribe(
    ep: &Endpoint,
    topic_arn: &str,
    queue_arn: &str,
    attrs: &[(&str, &str)],
) -> String {
    let params = subscribe_params(topic_arn, "sqs", queue_arn, attrs);
    let xml = sns_ok(ep, "Subscribe", &borrowed(&params)).await;
    tag(&xml, "SubscriptionArn").expect("SubscriptionArn")
}

/// `Publish` with message attributes given as (name, DataType, value).
pub fn publish_params(
    topic_arn: &str,
    message: &str,
    attrs: &[(&str, &str, &str)],
    extra: &[(&str, &str)],
) -> Vec<(String, String)> {
    let mut params: Vec<(String, String)> = vec![
        ("TopicArn".into(), topic_arn.into()),
        ("Message".into(), message.into()),
    ];
    for (i, (name, ty, value)) in attrs.iter().enumerate() {
        let p = format!("MessageAttributes.entry.{}", i + 1);
        params.push((format!("{p}.Name"), name.to_string()));
        params.push((format!("{p}.Value.DataType"), ty.to_string()));
        let field = if ty.starts_with("Binary") {
            "BinaryValue"
        } else {
            "StringValue"
        };
        params.push((format!("{p}.Value.{field}"), value.to_string()));
    }
    for (k, v) in extra {
        params.push((k.to_string(), v.to_string()));
    }
    params
}

pub async fn publish(
    ep: &Endpoint,
    topic_arn: &str,
    message: &str,
    attrs: &[(&str, &str, &str)],
    extra: &[(&str, &str)],
) -> (u16, String) {
    let params = publish_params(topic_arn, message, attrs, extra);
    let refs: Vec<(&str, &str)> = params
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    sns(ep, "Publish", &refs).await
}

pub async fn publish_ok(
    ep: &Endpoint,
    topic_arn: &str,
    message: &str,
    attrs: &[(&str, &str, &str)],
    extra: &[(&str, &str)],
) -> String {
    let (status, xml) = publish(ep, topic_arn, message, attrs, extra).await;
    assert_eq!(status, 200, "Publish failed: {xml}");
    tag(&xml, "MessageId").expect("MessageId")
}
