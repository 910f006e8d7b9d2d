//! Messages in flight on a standard queue, held by visibility timers rather than by their
//! lanes: how many can be in flight, what a held message blocks, visibility that shrinks,
//! deletes that arrive after the timeout, purges and deletes of queues with messages in
//! flight. Every test here failed on the lane-lease design it replaces.

mod sqs_messages_support;
mod support;

use serde_json::{json, Value};
use sqs_messages_support::*;
use std::collections::BTreeSet;
use support::Endpoint;

async fn send_many(ep: &Endpoint, url: &str, n: usize) {
    send_batches(ep, url, 0, n).await;
}

async fn counts(ep: &Endpoint, url: &str) -> (String, String) {
    let v = ep
        .sqs_ok(
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]}),
        )
        .await;
    let a = &v["Attributes"];
    (
        a["ApproximateNumberOfMessages"]
            .as_str()
            .unwrap_or("")
            .to_string(),
        a["ApproximateNumberOfMessagesNotVisible"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lanes_do_not_bound_how_many_messages_are_in_flight() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "wide", &[("VisibilityTimeout", "60")], 2).await;
    send_many(&ep, &url, 30).await;
    let mut seen = BTreeSet::new();
    for _ in 0..8 {
        for m in receive(&ep, &url, json!({"WaitTimeSeconds": 1})).await {
            assert!(
                seen.insert(m["MessageId"].as_str().unwrap().to_string()),
                "delivered twice while in flight: {m}"
            );
        }
        if seen.len() == 30 {
            break;
        }
    }
    assert_eq!(seen.len(), 30, "30 messages in flight on 2 lanes");
    assert_eq!(counts(&ep, &url).await, ("0".into(), "30".into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_in_flight_blocks_nothing_behind_it_in_its_lane() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "hol", &[("VisibilityTimeout", "60")], 1).await;
    send(&ep, &url, "first").await;
    let first = receive(&ep, &url, json!({"MaxNumberOfMessages": 1})).await;
    assert_eq!(first.len(), 1);
    send(&ep, &url, "second").await;
    let second = receive(&ep, &url, json!({"WaitTimeSeconds": 2})).await;
    assert_eq!(
        second.len(),
        1,
        "the one lane is free while 'first' is held"
    );
    assert_eq!(second[0]["Body"], "second");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_visibility_timeout_can_be_shortened() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "shrink", &[("VisibilityTimeout", "60")], 2).await;
    let id = send(&ep, &url, "m").await["MessageId"].clone();
    let m = receive(&ep, &url, json!({})).await.remove(0);
    let first_receive = attr(&m, "ApproximateFirstReceiveTimestamp").to_string();
    assert!(first_receive.parse::<i64>().is_ok(), "{m}");
    ep.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 1}),
    )
    .await;
    let again = receive(&ep, &url, json!({"WaitTimeSeconds": 10})).await;
    assert_eq!(
        again.len(),
        1,
        "visible again about a second later, not after 60 s"
    );
    assert_eq!(again[0]["MessageId"], id);
    assert_eq!(attr(&again[0], "ApproximateReceiveCount"), "2");
    assert_eq!(
        attr(&again[0], "ApproximateFirstReceiveTimestamp"),
        first_receive
    );
    assert_eq!(again[0]["Body"], "m");
    assert_eq!(
        attr(&again[0], "SentTimestamp"),
        attr(&m, "SentTimestamp"),
        "SentTimestamp is the send's, not the redelivery's"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_after_the_timeout_deletes_if_nobody_received_it_since() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "late", &[("VisibilityTimeout", "1")], 2).await;
    send(&ep, &url, "m").await;
    let m = receive(&ep, &url, json!({})).await.remove(0);
    // Let the timeout pass and the message come back (visible, not received).
    let mut back = false;
    for _ in 0..50 {
        sleep_ms(200).await;
        if counts(&ep, &url).await.0 == "1" {
            back = true;
            break;
        }
    }
    assert!(back, "the message came back after its timeout");
    delete(&ep, &url, &m).await;
    assert!(
        receive(&ep, &url, json!({"WaitTimeSeconds": 2}))
            .await
            .is_empty(),
        "deleted although its timeout had passed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_handle_does_not_delete_a_later_delivery() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "stale", &[("VisibilityTimeout", "1")], 2).await;
    send(&ep, &url, "m").await;
    let first = receive(&ep, &url, json!({})).await.remove(0);
    let second = receive(&ep, &url, json!({"WaitTimeSeconds": 10})).await;
    assert_eq!(second.len(), 1);
    assert_eq!(attr(&second[0], "ApproximateReceiveCount"), "2");
    delete(&ep, &url, &first).await;
    let third = receive(&ep, &url, json!({"WaitTimeSeconds": 10})).await;
    assert_eq!(third.len(), 1, "the second delivery was not deleted");
    assert_eq!(attr(&third[0], "ApproximateReceiveCount"), "3");
    delete(&ep, &url, &third[0]).await;
    assert!(receive(&ep, &url, json!({"WaitTimeSeconds": 2}))
        .await
        .is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_delete_of_messages_in_flight_deletes_them_all() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "batchdel", &[("VisibilityTimeout", "2")], 4).await;
    send_many(&ep, &url, 10).await;
    let mut got = Vec::new();
    for _ in 0..5 {
        got.extend(receive(&ep, &url, json!({"WaitTimeSeconds": 1})).await);
        if got.len() == 10 {
            break;
        }
    }
    assert_eq!(got.len(), 10);
    let entries: Vec<Value> = got
        .iter()
        .enumerate()
        .map(|(i, m)| json!({"Id": format!("d{i}"), "ReceiptHandle": m["ReceiptHandle"]}))
        .collect();
    let v = ep
        .sqs_ok(
            "DeleteMessageBatch",
            json!({"QueueUrl": url, "Entries": entries}),
        )
        .await;
    assert_eq!(v["Successful"].as_array().map(Vec::len), Some(10), "{v}");
    assert_eq!(counts(&ep, &url).await, ("0".into(), "0".into()));
    sleep_ms(2500).await;
    assert!(receive(&ep, &url, json!({"WaitTimeSeconds": 1}))
        .await
        .is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purge_drops_messages_in_flight() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "purge", &[("VisibilityTimeout", "1")], 2).await;
    send_many(&ep, &url, 3).await;
    let got = receive(&ep, &url, json!({"WaitTimeSeconds": 1})).await;
    assert!(!got.is_empty());
    ep.sqs_ok("PurgeQueue", json!({"QueueUrl": url})).await;
    assert_eq!(timer_count(&ep, "purge", "vis.").await, 0);
    sleep_ms(1500).await;
    assert!(
        receive(&ep, &url, json!({"WaitTimeSeconds": 1}))
            .await
            .is_empty(),
        "nothing in flight came back after the purge"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_queue_cancels_its_messages_in_flight() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "gone", &[("VisibilityTimeout", "30")], 2).await;
    send_many(&ep, &url, 3).await;
    assert!(!receive(&ep, &url, json!({"WaitTimeSeconds": 1}))
        .await
        .is_empty());
    assert!(timer_count(&ep, "gone", "vis.").await > 0);
    ep.sqs_ok("DeleteQueue", json!({"QueueUrl": url})).await;
    // A timer left behind would re-create the broker queue when it fires.
    assert_eq!(timer_count(&ep, "gone", "vis.").await, 0);
}

/// AWS holds about 120,000 messages in flight per standard queue; this holds 10,000 at
/// once on the default width: received without deleting until the queue is empty, every
/// message exactly once, and the counts say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_messages_in_flight_at_once() {
    const N: usize = 10_000;
    const WORKERS: usize = 8;
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "tenk", &[("VisibilityTimeout", "900")], 64).await;
    support::join_all((0..WORKERS).map(|w| {
        let (ep, url) = (&ep, url.as_str());
        async move {
            send_batches(ep, url, w * (N / WORKERS), N / WORKERS).await;
        }
    }))
    .await;
    let seen = std::sync::Mutex::new(BTreeSet::new());
    let empties = std::sync::atomic::AtomicUsize::new(0);
    support::join_all((0..WORKERS).map(|_| {
        let (ep, url, seen, empties) = (&ep, url.as_str(), &seen, &empties);
        async move {
            loop {
                // Long polls, as consumers run: a short poll may miss lanes another
                // receive holds for the moment between its pop and its transaction (AWS's
                // short polls, too, may answer empty while messages exist).
                let got = receive_as_sdks_do(ep, url).await;
                if got.is_empty() {
                    if seen.lock().unwrap().len() >= N {
                        return;
                    }
                    // Empty while messages are ready: counted, and retried a few times.
                    if empties.fetch_add(1, std::sync::atomic::Ordering::Relaxed) > 50 {
                        return;
                    }
                    continue;
                }
                let mut seen = seen.lock().unwrap();
                for m in got {
                    let id = m["MessageId"].as_str().unwrap().to_string();
                    assert!(seen.insert(id), "delivered twice while in flight");
                }
            }
        }
    }))
    .await;
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), N, "all in flight at once");
    assert_eq!(counts(&ep, &url).await, ("0".into(), N.to_string()));
    let empties = empties.into_inner();
    println!("{N} in flight; {empties} empty receives (one per worker is the end)");
    assert!(
        empties <= WORKERS,
        "a receive came back empty while messages were ready ({empties})"
    );
}

/// A receive of 10 with a 1 s long poll, retried on a throttle the way the AWS SDKs
/// retry it: the released engine's default KV write rate (100 calls/s, which its timers
/// rider is charged to) throttles eight receivers running flat out.
async fn receive_as_sdks_do(ep: &Endpoint, url: &str) -> Vec<Value> {
    let input = json!({"QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 1});
    for _ in 0..50 {
        let (status, v) = ep.sqs("ReceiveMessage", input.clone()).await;
        if status == 200 {
            return v["Messages"].as_array().cloned().unwrap_or_default();
        }
        let throttled = v["__type"]
            .as_str()
            .is_some_and(|t| t.ends_with("RequestThrottled"));
        assert!(throttled, "ReceiveMessage failed: {v}");
        sleep_ms(100).await;
    }
    panic!("throttled 50 times in a row");
}
