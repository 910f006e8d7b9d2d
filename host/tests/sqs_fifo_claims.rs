//! FIFO claims of several messages through the real host: one receive takes a run of a
//! group, and deletes / visibility changes act on the claim as one gesture.

mod sqs_messages_support;
mod support;

use serde_json::{json, Value};
use sqs_messages_support::broker;
use std::time::{Duration, Instant};
use support::Endpoint;

async fn fifo(ep: &Endpoint, name: &str, visibility: u32) -> String {
    ep.create_queue(
        name,
        json!({"FifoQueue": "true", "ContentBasedDeduplication": "true",
               "VisibilityTimeout": visibility.to_string()}),
    )
    .await
}

async fn send(ep: &Endpoint, url: &str, group: &str, body: &str) {
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": body, "MessageGroupId": group}),
    )
    .await;
}

async fn receive(ep: &Endpoint, url: &str) -> Vec<Value> {
    let r = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "MaxNumberOfMessages": 10,
                   "MessageSystemAttributeNames": ["All"]}),
        )
        .await;
    r["Messages"].as_array().cloned().unwrap_or_default()
}

fn bodies(ms: &[Value]) -> Vec<String> {
    ms.iter()
        .map(|m| m["Body"].as_str().unwrap_or("").to_string())
        .collect()
}

fn count(m: &Value) -> &str {
    m["Attributes"]["ApproximateReceiveCount"]
        .as_str()
        .unwrap_or("")
}

fn handle(m: &Value) -> String {
    m["ReceiptHandle"].as_str().unwrap_or("").to_string()
}

async fn delete_batch(ep: &Endpoint, url: &str, ms: &[&Value]) -> Value {
    let entries: Vec<Value> = ms
        .iter()
        .enumerate()
        .map(|(i, m)| json!({"Id": format!("e{i}"), "ReceiptHandle": handle(m)}))
        .collect();
    ep.sqs_ok(
        "DeleteMessageBatch",
        json!({"QueueUrl": url, "Entries": entries}),
    )
    .await
}

fn all_ok(r: &Value, n: usize) {
    assert_eq!(r["Successful"].as_array().map(Vec::len), Some(n), "{r}");
    assert!(r.get("Failed").is_none(), "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_receive_takes_the_run_and_one_release_frees_it() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "run.fifo", 30).await;
    for b in ["m1", "m2", "m3", "m4"] {
        send(&ep, &url, "g", b).await;
    }
    let got = receive(&ep, &url).await;
    assert_eq!(bodies(&got), ["m1", "m2", "m3", "m4"]);
    assert!(got.iter().all(|m| count(m) == "1"), "{got:?}");
    let entries: Vec<Value> = got
        .iter()
        .enumerate()
        .map(|(i, m)| json!({"Id": format!("v{i}"), "ReceiptHandle": handle(m), "VisibilityTimeout": 0}))
        .collect();
    let r = ep
        .sqs_ok(
            "ChangeMessageVisibilityBatch",
            json!({"QueueUrl": url, "Entries": entries}),
        )
        .await;
    all_ok(&r, 4);
    let again = receive(&ep, &url).await;
    assert_eq!(bodies(&again), ["m1", "m2", "m3", "m4"]);
    assert!(again.iter().all(|m| count(m) == "2"), "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_order_deletes_settle_the_whole_claim() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "ooo.fifo", 30).await;
    for b in ["m1", "m2", "m3", "m4"] {
        send(&ep, &url, "g", b).await;
    }
    let got = receive(&ep, &url).await;
    assert_eq!(bodies(&got), ["m1", "m2", "m3", "m4"]);
    all_ok(&delete_batch(&ep, &url, &[&got[2], &got[1]]).await, 2);
    // Nothing of the group is visible while the claim holds it.
    assert!(receive(&ep, &url).await.is_empty());
    all_ok(&delete_batch(&ep, &url, &[&got[0]]).await, 1);
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": handle(&got[3])}),
    )
    .await;
    // The whole claim is gone and the group is not blocked.
    assert!(receive(&ep, &url).await.is_empty());
    send(&ep, &url, "g", "m5").await;
    let next = receive(&ep, &url).await;
    assert_eq!(bodies(&next), ["m5"]);
    assert_eq!(count(&next[0]), "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redelivered_claim_skips_what_was_deleted() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "redeliver.fifo", 2).await;
    for b in ["m1", "m2", "m3", "m4"] {
        send(&ep, &url, "g", b).await;
    }
    let got = receive(&ep, &url).await;
    assert_eq!(bodies(&got), ["m1", "m2", "m3", "m4"]);
    all_ok(&delete_batch(&ep, &url, &[&got[1]]).await, 1);
    tokio::time::sleep(std::time::Duration::from_millis(3200)).await;
    let again = receive(&ep, &url).await;
    assert_eq!(bodies(&again), ["m1", "m3", "m4"]);
    // The redelivery settles normally: deleting it all empties the group.
    all_ok(
        &delete_batch(&ep, &url, &[&again[0], &again[1], &again[2]]).await,
        3,
    );
    assert!(receive(&ep, &url).await.is_empty());
    tokio::time::sleep(std::time::Duration::from_millis(3200)).await;
    assert!(receive(&ep, &url).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_receive_spans_groups_each_in_order() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "groups.fifo", 30).await;
    for i in 1..=3 {
        send(&ep, &url, "a", &format!("a{i}")).await;
        send(&ep, &url, "b", &format!("b{i}")).await;
    }
    let got = receive(&ep, &url).await;
    let all = bodies(&got);
    assert_eq!(all.len(), 6, "{all:?}");
    let a: Vec<&String> = all.iter().filter(|b| b.starts_with('a')).collect();
    let b: Vec<&String> = all.iter().filter(|b| b.starts_with('b')).collect();
    assert_eq!(a, ["a1", "a2", "a3"]);
    assert_eq!(b, ["b1", "b2", "b3"]);
    // A smaller maximum is honoured across claims.
    let url2 = fifo(&ep, "groups2.fifo", 30).await;
    for i in 1..=3 {
        send(&ep, &url2, "a", &format!("a{i}")).await;
        send(&ep, &url2, "b", &format!("b{i}")).await;
    }
    let r = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url2, "MaxNumberOfMessages": 4}),
        )
        .await;
    assert_eq!(r["Messages"].as_array().map(Vec::len), Some(4), "{r}");
}

/// Found by the checker on the engine: a claim released at once (a receive with
/// visibility 0), the group claimed again by one message only, then a delete with the
/// first claim's handle of a message the new claim does not hold. That delete must not
/// complete anything: the group stays blocked behind the message in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_handle_of_a_released_claim_deletes_nothing_behind_a_newer_claim() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "stale-release.fifo", 30).await;
    for b in ["a", "b", "c"] {
        send(&ep, &url, "g", b).await;
    }
    let released = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "MaxNumberOfMessages": 10, "VisibilityTimeout": 0}),
        )
        .await;
    let released = released["Messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(bodies(&released), ["a", "b", "c"]);
    // The group claimed again, by a receive of one message: a, for 30 s.
    let held = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "MaxNumberOfMessages": 1}),
        )
        .await;
    let held = held["Messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(bodies(&held), ["a"]);
    // b deleted with the released claim's handle.
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": released[1]["ReceiptHandle"]}),
    )
    .await;
    let next = receive(&ep, &url).await;
    assert!(
        next.is_empty(),
        "nothing of the group while a is in flight: {:?}",
        bodies(&next)
    );
}

/// Issue 22: what a FIFO claim's deletes cost in broker calls (cache hits are not calls).
/// A delete that completes the claim's deleted prefix reads the group's record, then
/// writes it and acks in one transaction: two calls, a batch as a single delete. (Step by
/// step it recorded, acked, read again and pruned: five.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_delete_costs_two_broker_calls() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let a = Endpoint::start().await;
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let b = a
        .replica_behind(Arc::new(move |_seen: &support::Seen| {
            counter.fetch_add(1, Ordering::SeqCst);
            None
        }))
        .await;
    let url = fifo(&a, "costs.fifo", 30).await;
    for i in 0..10 {
        send(&a, &url, "g", &format!("m{i}")).await;
    }
    let url_b = url.replace(&a.url, &b.url);
    // Warm the replica's cache of the queue's record.
    b.sqs_ok("GetQueueUrl", json!({"QueueName": "costs.fifo"}))
        .await;
    let ms = receive(&b, &url_b).await;
    assert_eq!(ms.len(), 10);
    let before = calls.load(Ordering::SeqCst);
    b.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url_b, "ReceiptHandle": ms[0]["ReceiptHandle"]}),
    )
    .await;
    let single = calls.load(Ordering::SeqCst) - before;
    let before = calls.load(Ordering::SeqCst);
    let entries: Vec<Value> = ms[1..]
        .iter()
        .enumerate()
        .map(|(i, m)| json!({"Id": i.to_string(), "ReceiptHandle": m["ReceiptHandle"]}))
        .collect();
    let r = b
        .sqs_ok(
            "DeleteMessageBatch",
            json!({"QueueUrl": url_b, "Entries": entries}),
        )
        .await;
    assert_eq!(r["Successful"].as_array().map(Vec::len), Some(9), "{r}");
    let batch = calls.load(Ordering::SeqCst) - before;
    assert!(
        single <= 2,
        "a single FIFO delete made {single} broker calls"
    );
    assert!(
        batch <= 2,
        "a FIFO delete batch of 9 made {batch} broker calls"
    );
    assert!(receive(&a, &url).await.is_empty());
}

/// Lands in group `g` of FIFO queue `name` "a", then "b" under the SAME transaction id
/// (a timer's copy, which skips the broker's deduplication window, as a deduplication id
/// used again after its window does on SQS).
async fn land_two_under_one_id(ep: &Endpoint, name: &str) {
    use base64::Engine;
    let push = json!({"items": [{"queue": name, "partition": "g", "payload": {"b": "a"},
                                 "transactionId": "shared"}]});
    let (status, v) = broker(ep, "POST", "/api/v1/push", push).await;
    assert!(status < 300, "push: {v}");
    let payload = base64::engine::general_purpose::STANDARD.encode(r#"{"b":"b"}"#);
    let schedule = json!({"operations": [{"op": "schedule", "queue": name, "timerKey": "k-b",
        "partition": "g", "delayMs": 0, "txn": "shared", "payload": payload}]});
    let (status, v) = broker(ep, "POST", "/api/v1/timers", schedule).await;
    assert!(status < 300, "timer: {v}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while ep.broker.depth(name).await.0 < 2 {
        assert!(Instant::now() < deadline, "the timer's copy never landed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn receive_after_visibility(ep: &Endpoint, url: &str, visibility_s: u64) -> Vec<Value> {
    tokio::time::sleep(Duration::from_millis(visibility_s * 1000 + 1200)).await;
    receive(ep, url).await
}

/// Checker, engine seed 509: two messages of a group under one transaction id, deleted
/// together. The broker resolves an ack by that id to the LOWER copy, so one ack of the
/// later one completed only the earlier, and the later came back after its delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_two_messages_that_share_a_transaction_id_deletes_both() {
    let ep = Endpoint::start().await;
    let name = "shared-delete.fifo";
    let url = fifo(&ep, name, 2).await;
    land_two_under_one_id(&ep, name).await;
    send(&ep, &url, "g", "c").await;
    let got = receive(&ep, &url).await;
    assert_eq!(bodies(&got), ["a", "b", "c"]);
    all_ok(&delete_batch(&ep, &url, &[&got[0], &got[1]]).await, 2);
    let again = receive_after_visibility(&ep, &url, 2).await;
    assert_eq!(bodies(&again), ["c"], "a deleted message came back");
}

/// The same on a receive's way through: deletes recorded after the claim's lease ran out
/// are acked by the group's next receive, in as many acks as the repeats need.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receive_through_deleted_messages_that_share_a_transaction_id_completes_both() {
    let ep = Endpoint::start().await;
    let name = "shared-receive.fifo";
    let url = fifo(&ep, name, 2).await;
    land_two_under_one_id(&ep, name).await;
    send(&ep, &url, "g", "c").await;
    let got = receive(&ep, &url).await;
    assert_eq!(bodies(&got), ["a", "b", "c"]);
    tokio::time::sleep(Duration::from_millis(2600)).await;
    // The lease ran out; the newest handles still delete (recorded for the next receive).
    all_ok(&delete_batch(&ep, &url, &[&got[0], &got[1]]).await, 2);
    let next = receive(&ep, &url).await;
    assert_eq!(bodies(&next), ["c"]);
    let again = receive_after_visibility(&ep, &url, 2).await;
    assert_eq!(bodies(&again), ["c"], "a deleted message came back");
    assert_eq!(count(&again[0]), "3");
}

/// A run of a claim dead-lettered whose last message shares its transaction id with an
/// earlier one: moved in two steps, each message once (one ack of the run landed on the
/// earlier copy, and the later one was moved again by the next receive).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_lettered_run_that_shares_a_transaction_id_moves_each_message_once() {
    let ep = Endpoint::start().await;
    let dlq = fifo(&ep, "shared-dlq.fifo", 30).await;
    let dlq_arn = ep
        .sqs_ok(
            "GetQueueAttributes",
            json!({"QueueUrl": dlq, "AttributeNames": ["QueueArn"]}),
        )
        .await["Attributes"]["QueueArn"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let name = "shared-source.fifo";
    let url = ep
        .create_queue(
            name,
            json!({"FifoQueue": "true", "ContentBasedDeduplication": "true",
                   "VisibilityTimeout": "1",
                   "RedrivePolicy": json!({"deadLetterTargetArn": dlq_arn,
                                           "maxReceiveCount": 1}).to_string()}),
        )
        .await;
    land_two_under_one_id(&ep, name).await;
    assert_eq!(bodies(&receive(&ep, &url).await), ["a", "b"]);
    tokio::time::sleep(Duration::from_millis(2200)).await;
    // a and b are past maxReceiveCount and move; c, sent since, is delivered.
    send(&ep, &url, "g", "c").await;
    let second = receive(&ep, &url).await;
    assert_eq!(bodies(&second), ["c"]);
    // c moves in turn.
    let third = receive_after_visibility(&ep, &url, 1).await;
    assert!(third.is_empty(), "{:?}", bodies(&third));
    let mut moved = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while moved.len() < 4 && Instant::now() < deadline {
        let batch = receive(&ep, &dlq).await;
        if batch.is_empty() {
            break;
        }
        delete_batch(&ep, &dlq, &batch.iter().collect::<Vec<_>>()).await;
        moved.extend(bodies(&batch));
    }
    assert_eq!(moved, ["a", "b", "c"], "each message moved once");
}

/// A delete of a claim's head after the claim's lease ran out: its one transaction (record
/// and ack) rolls back on the ack, and the delete is recorded alone, for the group's next
/// receive to ack on its way through. The deleted head never comes back; the rest does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_deleted_after_its_lease_ran_out_stays_deleted() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "late-head.fifo", 1).await;
    for b in ["m1", "m2", "m3"] {
        send(&ep, &url, "g", b).await;
    }
    let got = receive(&ep, &url).await;
    assert_eq!(bodies(&got), ["m1", "m2", "m3"]);
    tokio::time::sleep(Duration::from_millis(1_600)).await;
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": handle(&got[0])}),
    )
    .await;
    let again = receive(&ep, &url).await;
    assert_eq!(bodies(&again), ["m2", "m3"]);
    assert!(again.iter().all(|m| count(m) == "2"), "{again:?}");
    all_ok(&delete_batch(&ep, &url, &[&again[0], &again[1]]).await, 2);
    tokio::time::sleep(Duration::from_millis(1_600)).await;
    assert!(receive(&ep, &url).await.is_empty());
}

/// Checker engine seed 808: a `ChangeMessageVisibilityBatch` to 0 naming a message of the
/// claim deleted a moment before, beside one still in flight (twice). Every entry was
/// refused `MessageNotInflight`; only the deleted one is, and the other is released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_batch_naming_a_deleted_message_still_releases_the_others() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "mixed-release.fifo", 30).await;
    for b in ["m1", "m2", "m3"] {
        send(&ep, &url, "g", b).await;
    }
    let got = receive(&ep, &url).await;
    assert_eq!(bodies(&got), ["m1", "m2", "m3"]);
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": handle(&got[0])}),
    )
    .await;
    let entries = json!([
        {"Id": "deleted", "ReceiptHandle": handle(&got[0]), "VisibilityTimeout": 0},
        {"Id": "held", "ReceiptHandle": handle(&got[1]), "VisibilityTimeout": 0},
        {"Id": "again", "ReceiptHandle": handle(&got[1]), "VisibilityTimeout": 0},
    ]);
    let r = ep
        .sqs_ok(
            "ChangeMessageVisibilityBatch",
            json!({"QueueUrl": url, "Entries": entries}),
        )
        .await;
    let ids = |k: &str| -> Vec<String> {
        let mut v: Vec<String> = r[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| e["Id"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    assert_eq!(ids("Successful"), ["again", "held"], "{r}");
    assert_eq!(ids("Failed"), ["deleted"], "{r}");
    // m3 is still in flight: the group stays blocked; deleting it frees m2 at once.
    assert!(receive(&ep, &url).await.is_empty());
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": handle(&got[2])}),
    )
    .await;
    let again = receive(&ep, &url).await;
    assert_eq!(bodies(&again), ["m2"]);
    assert_eq!(count(&again[0]), "2");
}
