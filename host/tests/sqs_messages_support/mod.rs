//! Shared by the `sqs_messages*` tests (as `mod sqs_messages_support;`): queues made by writing
//! the registry record and configuring the Queen queue directly, so these tests do not
//! depend on `CreateQueue`; and small readers of answers.
#![allow(dead_code)]

use crate::support::Endpoint;
use queen_sqs::sqs::registry::{self, QueueRecord};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const ACCOUNT: &str = "000000000000";

pub fn arn(name: &str) -> String {
    format!("arn:aws:sqs:us-east-1:{ACCOUNT}:{name}")
}

/// Creates queue `name` (FIFO when it ends `.fifo`) with `partitions` lanes and the given
/// attributes over the defaults; answers its URL.
pub async fn make_queue(
    ep: &Endpoint,
    name: &str,
    attrs: &[(&str, &str)],
    partitions: u32,
) -> String {
    let fifo = name.ends_with(".fifo");
    let mut attributes: BTreeMap<String, String> = registry::DEFAULTS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if fifo {
        attributes.insert("FifoQueue".into(), "true".into());
        attributes.insert("ContentBasedDeduplication".into(), "false".into());
    }
    for (k, v) in attrs {
        attributes.insert(k.to_string(), v.to_string());
    }
    // Through serde rather than a struct literal, so fields the record gains later
    // (with serde defaults) need no change here.
    let record: QueueRecord = serde_json::from_value(json!({
        "name": name,
        "fifo": fifo,
        "partitions": if fifo { 0 } else { partitions },
        "attributes": attributes,
        "tags": {},
        "created": 0,
        "modified": 0,
    }))
    .expect("a queue record");
    let put = json!({"operations": [{
        "op": "put", "ns": "qs", "key": registry::key(name),
        "value": serde_json::to_value(&record).unwrap(), "forever": true
    }]});
    let (status, _, body) = ep
        .broker
        .handle("POST", "/api/v1/kv", put.to_string().into())
        .await;
    assert_eq!(status, 200, "kv put: {}", String::from_utf8_lossy(&body));
    let configure = json!({"queue": name, "mode": "replace", "options": record.queen_options()});
    let (status, _, body) = ep
        .broker
        .handle("POST", "/api/v1/configure", configure.to_string().into())
        .await;
    assert!(
        status < 300,
        "configure: {}",
        String::from_utf8_lossy(&body)
    );
    format!("{}/{ACCOUNT}/{name}", ep.url)
}

/// A broker call made directly (answers status and JSON body).
pub async fn broker(ep: &Endpoint, method: &str, path: &str, body: Value) -> (u16, Value) {
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    let (status, _, out) = ep.broker.handle(method, path, bytes.into()).await;
    let v = serde_json::from_slice(&out).unwrap_or(Value::Null);
    (status, v)
}

/// How many timers of `queue` keyed `prefix…` are pending, asked the way this lane's broker
/// answers it (the released engine has no `mode=count`).
pub async fn timer_count(ep: &Endpoint, queue: &str, prefix: &str) -> u64 {
    ep.broker.timer_count(queue, prefix).await
}

/// Messages of `queue` ready to be received (unconsumed and not in flight), asked the way
/// this lane's broker answers it (the released engine's depth route has no `ready`).
pub async fn ready_count(ep: &Endpoint, queue: &str) -> u64 {
    ep.broker.depth(queue).await.2
}

pub async fn send(ep: &Endpoint, url: &str, body: &str) -> Value {
    ep.sqs_ok("SendMessage", json!({"QueueUrl": url, "MessageBody": body}))
        .await
}

/// Sends one FIFO message; answers its MessageId.
pub async fn send_fifo(ep: &Endpoint, url: &str, body: &str, group: &str, dedup: &str) -> String {
    let v = ep
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": body, "MessageGroupId": group, "MessageDeduplicationId": dedup}),
        )
        .await;
    v["MessageId"].as_str().expect("MessageId").to_string()
}

/// Sends messages `first..first + n` (bodies `m<i>`) with SendMessageBatch, ten at a time.
pub async fn send_batches(ep: &Endpoint, url: &str, first: usize, n: usize) {
    for chunk in (first..first + n).collect::<Vec<_>>().chunks(10) {
        let entries: Vec<Value> = chunk
            .iter()
            .map(|i| json!({"Id": format!("e{i}"), "MessageBody": format!("m{i}")}))
            .collect();
        let v = ep
            .sqs_ok(
                "SendMessageBatch",
                json!({"QueueUrl": url, "Entries": entries}),
            )
            .await;
        assert_eq!(v["Successful"].as_array().map(Vec::len), Some(chunk.len()));
    }
}

/// One ReceiveMessage with all attributes, our `queen.*` extensions named too (`All`
/// alone leaves them out); answers the messages.
pub async fn receive(ep: &Endpoint, url: &str, extra: Value) -> Vec<Value> {
    let mut input = json!({
        "QueueUrl": url,
        "MaxNumberOfMessages": 10,
        "MessageSystemAttributeNames": ["All", "queen.originalMessageId", "queen.sourceQueue"],
        "MessageAttributeNames": ["All"],
    });
    if let (Value::Object(m), Value::Object(e)) = (&mut input, extra) {
        m.extend(e);
    }
    let v = ep.sqs_ok("ReceiveMessage", input).await;
    v["Messages"].as_array().cloned().unwrap_or_default()
}

pub fn attr<'a>(m: &'a Value, name: &str) -> &'a str {
    m["Attributes"][name].as_str().unwrap_or("")
}

pub async fn delete(ep: &Endpoint, url: &str, m: &Value) {
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": m["ReceiptHandle"]}),
    )
    .await;
}

pub async fn sleep_ms(ms: u64) {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
}

/// Sends g1 under a deduplication id, then g2 in another group under the same id while a
/// purge runs 0.5 s in (the send waits on g1's claim, and is routed across the purge):
/// `receiver` must get g2 alone, with its own id, in its own group.
pub async fn a_send_routed_across_a_purge(
    sender: &Endpoint,
    url: &str,
    receiver: &Endpoint,
    receiver_url: &str,
) {
    send_fifo(sender, url, "g1", "g1", "same-id").await;
    let purge = async {
        sleep_ms(500).await;
        sender.sqs_ok("PurgeQueue", json!({"QueueUrl": url})).await;
    };
    let (second, _) = tokio::join!(send_fifo(sender, url, "g2", "g2", "same-id"), purge);
    let got = receive(receiver, receiver_url, json!({"WaitTimeSeconds": 2})).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["Body"], "g2");
    assert_eq!(
        attr(&got[0], "MessageGroupId"),
        "g2",
        "delivered in its own group"
    );
    assert_eq!(got[0]["MessageId"], second.as_str());
}
