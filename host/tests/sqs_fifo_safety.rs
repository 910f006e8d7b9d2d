//! FIFO claims that cannot lose or misplace a message (issue 9, item 3): each test here
//! reproduced a way the FIFO claim path lost a message, deleted one nobody deleted, or
//! moved one nobody received.

mod sqs_messages_support;
mod support;

use serde_json::{json, Value};
use sqs_messages_support::broker;
use std::time::Duration;
use support::Endpoint;

const ARN_PREFIX: &str = "arn:aws:sqs:us-east-1:000000000000:";

async fn fifo(ep: &Endpoint, name: &str, attrs: Value) -> String {
    let mut a = json!({"FifoQueue": "true", "ContentBasedDeduplication": "true"});
    for (k, v) in attrs.as_object().cloned().unwrap_or_default() {
        a[k] = v;
    }
    ep.create_queue(name, a).await
}

async fn send(ep: &Endpoint, url: &str, group: &str, body: &str) -> Value {
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": body, "MessageGroupId": group}),
    )
    .await
}

async fn receive(ep: &Endpoint, url: &str, max: u32, visibility: Option<u32>) -> Vec<Value> {
    let mut input = json!({"QueueUrl": url, "MaxNumberOfMessages": max,
                           "MessageSystemAttributeNames": ["All"]});
    if let Some(v) = visibility {
        input["VisibilityTimeout"] = json!(v);
    }
    let r = ep.sqs_ok("ReceiveMessage", input).await;
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

async fn delete(ep: &Endpoint, url: &str, m: &Value) {
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": handle(m)}),
    )
    .await;
}

/// Every facade KV row under `prefix` (key, value, expiresAt).
async fn rows(ep: &Endpoint, prefix: &str) -> Vec<Value> {
    let (status, r) = broker(
        ep,
        "POST",
        "/api/v1/kv",
        json!({"operations": [{"op": "getPrefix", "ns": "qs", "prefix": prefix, "limit": 1000}]}),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    r["results"][0]["rows"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// (a) A claim's record must outlive its lease: when it expired first (its refresh after
/// an extension was a compare-and-set that lost to a concurrent out-of-order delete, and
/// was ignored), the next delete acked cumulatively and completed messages never deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_record_outlives_its_extended_lease() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "outlive.fifo", json!({"VisibilityTimeout": "2"})).await;
    const GROUPS: usize = 8;
    for g in 0..GROUPS {
        for i in 1..=3 {
            send(&ep, &url, &format!("g{g}"), &format!("g{g}-m{i}")).await;
        }
    }
    for _ in 0..GROUPS {
        let got = receive(&ep, &url, 3, None).await;
        assert_eq!(got.len(), 3, "{:?}", bodies(&got));
        // A visibility change racing an out-of-order delete of the same claim.
        let change = ep.sqs_ok(
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": handle(&got[0]), "VisibilityTimeout": 600}),
        );
        let (_, _) = tokio::join!(change, delete(&ep, &url, &got[2]));
    }
    let lease_end = now_ms() + 590_000;
    let records = rows(&ep, "qs:fc:").await;
    assert!(!records.is_empty(), "no claim records at all");
    for r in &records {
        let expires = r["expiresAt"]
            .as_str()
            .and_then(queen_sqs::calendar::parse_iso_ms)
            .unwrap_or(i64::MAX);
        assert!(
            expires >= lease_end,
            "claim record {} expires {} ms before its lease does",
            r["key"],
            lease_end - expires
        );
    }
}

/// (a) The 12-hour cap on total visibility (AWS's), which is what lets a claim record's
/// fixed lifetime cover every lease of its claim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visibility_cannot_reach_past_twelve_hours_from_receive() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "cap.fifo", json!({"VisibilityTimeout": "30"})).await;
    send(&ep, &url, "g", "m1").await;
    let got = receive(&ep, &url, 1, None).await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, code) = ep
        .sqs_err(
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": handle(&got[0]), "VisibilityTimeout": 43200}),
        )
        .await;
    assert_eq!(
        (status, code.as_str()),
        (400, "InvalidParameterValueException"),
        "an extension past 12 h from receive"
    );
    ep.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": handle(&got[0]), "VisibilityTimeout": 43000}),
    )
    .await;
}

/// (b) A delete with the handle of an earlier delivery must not delete the message once
/// it has been received again (AWS: "the request succeeds, but the message will not be
/// deleted"); it landed in the group's delete-set and was skipped on a later delivery.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_handle_cannot_delete_a_redelivered_message() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "stale.fifo", json!({"VisibilityTimeout": "30"})).await;
    for b in ["m1", "m2", "m3"] {
        send(&ep, &url, "g", b).await;
    }
    let first = receive(&ep, &url, 10, Some(1)).await;
    assert_eq!(bodies(&first), ["m1", "m2", "m3"]);
    // Past the 1 s claim, with room for a loaded machine.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let second = receive(&ep, &url, 10, Some(1)).await;
    assert_eq!(bodies(&second), ["m1", "m2", "m3"]);
    // The first consumer, late, deletes m2 with its stale handle: success, nothing deleted.
    delete(&ep, &url, &first[1]).await;
    // Past the 1 s claim, with room for a loaded machine.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let third = receive(&ep, &url, 10, None).await;
    assert_eq!(
        bodies(&third),
        ["m1", "m2", "m3"],
        "a stale handle deleted a message received again since"
    );
}

/// (b) The newest handle still deletes after its claim was released and before anyone
/// received the group again (AWS deletes it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_newest_handle_deletes_after_a_release() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "newest.fifo", json!({"VisibilityTimeout": "30"})).await;
    for b in ["m1", "m2", "m3"] {
        send(&ep, &url, "g", b).await;
    }
    let got = receive(&ep, &url, 10, None).await;
    assert_eq!(bodies(&got), ["m1", "m2", "m3"]);
    // The whole claim given back (a change to 0 of part of it keeps the group blocked:
    // sqs_delivery_edges.rs).
    let entries: Vec<Value> = got
        .iter()
        .enumerate()
        .map(|(i, m)| json!({"Id": format!("e{i}"), "ReceiptHandle": handle(m), "VisibilityTimeout": 0}))
        .collect();
    ep.sqs_ok(
        "ChangeMessageVisibilityBatch",
        json!({"QueueUrl": url, "Entries": entries}),
    )
    .await;
    delete(&ep, &url, &got[1]).await;
    let again = receive(&ep, &url, 10, None).await;
    assert_eq!(bodies(&again), ["m1", "m3"]);
    assert!(again.iter().all(|m| count(m) == "2"), "{again:?}");
}

/// (c) Concurrent out-of-order deletes of one claim: everything is deleted, the group
/// is free, and nothing is left behind in the KV store (ids stuck there grew the record
/// until every delete of the group failed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_out_of_order_deletes_leave_nothing_behind() {
    let ep = Endpoint::start().await;
    let url = fifo(&ep, "parallel.fifo", json!({"VisibilityTimeout": "60"})).await;
    for round in 0..3 {
        for i in 1..=10 {
            send(&ep, &url, "g", &format!("r{round}-m{i}")).await;
        }
        // A long poll: on the engine the previous round's covering ack may take a moment
        // to free the group (acks are fused); a group left leased would stay empty for the
        // whole 60 s visibility timeout and still fail here.
        let got = ep
            .sqs_ok(
                "ReceiveMessage",
                json!({"QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 5,
                       "MessageSystemAttributeNames": ["All"]}),
            )
            .await["Messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(got.len(), 10, "round {round}: {:?}", bodies(&got));
        // Last first, so the covering delete races the out-of-order ones.
        support::join_all(got.iter().rev().map(|m| delete(&ep, &url, m))).await;
        assert!(receive(&ep, &url, 10, None).await.is_empty());
        let left: Vec<Value> = [rows(&ep, "qs:fd:").await, rows(&ep, "qs:fc:").await].concat();
        assert!(
            left.is_empty(),
            "round {round}: ids left behind after every message was deleted: {left:?}"
        );
    }
    send(&ep, &url, "g", "after").await;
    assert_eq!(bodies(&receive(&ep, &url, 10, None).await), ["after"]);
}

/// (d) A poison message at the head of a group that grew while it kept failing: only it
/// goes to the dead-letter queue (AWS moves the message that exceeded maxReceiveCount);
/// the messages behind it, never received, are delivered with a count of 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poison_head_is_dead_lettered_alone() {
    let ep = Endpoint::start().await;
    let dlq = fifo(&ep, "poison-dlq.fifo", json!({})).await;
    let policy = json!({"deadLetterTargetArn": format!("{ARN_PREFIX}poison-dlq.fifo"),
                        "maxReceiveCount": 2})
    .to_string();
    let url = fifo(
        &ep,
        "poison.fifo",
        json!({"VisibilityTimeout": "30", "RedrivePolicy": policy}),
    )
    .await;
    send(&ep, &url, "g", "poison").await;
    for n in ["1", "2"] {
        let got = receive(&ep, &url, 10, Some(1)).await;
        assert_eq!(bodies(&got), ["poison"]);
        assert_eq!(count(&got[0]), n);
        tokio::time::sleep(Duration::from_millis(1600)).await;
    }
    send(&ep, &url, "g", "m2").await;
    send(&ep, &url, "g", "m3").await;
    let got = receive(&ep, &url, 10, None).await;
    assert_eq!(
        bodies(&got),
        ["m2", "m3"],
        "the messages behind a poison head were dead-lettered with it"
    );
    assert!(got.iter().all(|m| count(m) == "1"), "{got:?}");
    let moved = receive(&ep, &dlq, 10, None).await;
    assert_eq!(bodies(&moved), ["poison"]);
    assert_eq!(count(&moved[0]), "3");
}

/// (e) `DeduplicationScope=queue` (the default) deduplicates across message groups; a
/// duplicate answers the original's MessageId. `messageGroup` scope does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_scope_dedup_spans_groups() {
    let ep = Endpoint::start().await;
    let url = fifo(
        &ep,
        "scope.fifo",
        json!({"ContentBasedDeduplication": "false"}),
    )
    .await;
    let sent = |group: &'static str, body: &'static str, url: String| {
        let ep = &ep;
        async move {
            ep.sqs_ok(
                "SendMessage",
                json!({"QueueUrl": url, "MessageBody": body, "MessageGroupId": group,
                       "MessageDeduplicationId": "same"}),
            )
            .await["MessageId"]
                .as_str()
                .unwrap_or("")
                .to_string()
        }
    };
    let first = sent("a", "x", url.clone()).await;
    let second = sent("b", "y", url.clone()).await;
    assert_eq!(second, first, "a duplicate answers the original's id");
    let r = ep
        .sqs_ok(
            "SendMessageBatch",
            json!({"QueueUrl": url, "Entries": [
                {"Id": "1", "MessageBody": "z", "MessageGroupId": "c", "MessageDeduplicationId": "same"},
                {"Id": "2", "MessageBody": "w", "MessageGroupId": "c", "MessageDeduplicationId": "other"},
                {"Id": "3", "MessageBody": "v", "MessageGroupId": "d", "MessageDeduplicationId": "other"}]}),
        )
        .await;
    let ok = r["Successful"].as_array().cloned().unwrap_or_default();
    assert_eq!(ok.len(), 3, "{r}");
    assert_eq!(ok[0]["MessageId"].as_str(), Some(first.as_str()), "{r}");
    assert_eq!(ok[1]["MessageId"], ok[2]["MessageId"], "{r}");
    let got = receive(&ep, &url, 10, None).await;
    let mut b = bodies(&got);
    b.sort();
    assert_eq!(
        b,
        ["w", "x"],
        "queue-scope duplicates in other groups were delivered"
    );

    let per_group = fifo(
        &ep,
        "pergroup.fifo",
        json!({"ContentBasedDeduplication": "false", "DeduplicationScope": "messageGroup",
               "FifoThroughputLimit": "perMessageGroupId"}),
    )
    .await;
    let one = sent("a", "x", per_group.clone()).await;
    let two = sent("b", "y", per_group.clone()).await;
    assert_ne!(one, two);
    let got = receive(&ep, &per_group, 10, None).await;
    let mut b = bodies(&got);
    b.sort();
    assert_eq!(b, ["x", "y"]);
}

/// (f) Two concurrent sends of one deduplication id in two groups (checker engine seed
/// 462): the claim goes to one sender while the other's push would reach the broker
/// first. The message stored is the claim holder's, in its own group, and both sends
/// answer its MessageId; the other send's body is never stored in the holder's group.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_duplicate_racing_the_holder_of_its_id_is_not_stored_in_the_holders_group() {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Arc;
    let a = Endpoint::start().await;
    let url = fifo(
        &a,
        "race.fifo",
        json!({"ContentBasedDeduplication": "false"}),
    )
    .await;
    // Replica b's push of the holder's message reaches the broker 600 ms late.
    let held = Arc::new(AtomicBool::new(false));
    let seen = held.clone();
    let b = a
        .replica_behind(Arc::new(move |s: &support::Seen| {
            let body = String::from_utf8_lossy(s.body);
            let push = s.path_and_query.starts_with("/api/v1/push");
            if push && body.contains("held-body") && !seen.swap(true, SeqCst) {
                std::thread::sleep(Duration::from_millis(600));
            }
            None
        }))
        .await;
    let url_b = url.replace(&a.url, &b.url);
    let send_in = |ep: Endpoint, url: String, body: &'static str, group: &'static str| async move {
        ep.sqs(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": body, "MessageGroupId": group,
                   "MessageDeduplicationId": "same"}),
        )
        .await
    };
    let holder = tokio::spawn(send_in(b, url_b, "held-body", "g2"));
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while !held.load(SeqCst) && std::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(held.load(SeqCst), "the holder's push is on its way");
    let (status, racer) = a
        .sqs(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "racer-body", "MessageGroupId": "g0",
                   "MessageDeduplicationId": "same"}),
        )
        .await;
    let (holder_status, holder) = holder.await.unwrap();
    assert_eq!(holder_status, 200, "{holder}");
    assert_eq!(status, 200, "{racer}");
    assert_eq!(
        racer["MessageId"], holder["MessageId"],
        "the duplicate answers the holder's MessageId"
    );
    let v = a
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 1,
                   "MessageSystemAttributeNames": ["All"]}),
        )
        .await;
    let got: Vec<(String, String)> = v["Messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|m| {
            let body = m["Body"].as_str().unwrap_or("").to_string();
            let group = m["Attributes"]["MessageGroupId"].as_str().unwrap_or("");
            (body, group.to_string())
        })
        .collect();
    assert_eq!(
        got,
        [("held-body".to_string(), "g2".to_string())],
        "one message, the holder's, in its own group"
    );
}
