//! A visibility change to 0 racing the timer that holds the delivery (issue 19, checker
//! engine seed 461). The change pushes the message's copy back and cancels the timer in one
//! transaction; when the released engine's sweeper holds the timer at that moment, the
//! cancel answers `too_late` and the fire still pushes its own copy, at once or after the
//! sweeper's claim lease. A message released, received and deleted must not come back by
//! that second copy. Both brokers.
//!
//! The race is made on purpose: a replica's broker calls pass a proxy that plays the
//! sweeper's hold, taking the cancel out of the change's transaction and answering
//! `too_late` for it, so the timer stays and fires at its own time.

mod sqs_messages_support;
mod support;

use bytes::Bytes;
use serde_json::{json, Value};
use sqs_messages_support::*;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{Endpoint, TestBroker};

/// Whether a broker call is a visibility change's release: a push of the copy with the
/// cancel of its timer.
fn is_release(path: &str, body: &Value) -> bool {
    path.starts_with("/api/v1/transaction")
        && body["operations"][0]["type"] == "push"
        && body["timers"][0]["op"] == "cancel"
}

/// Forwards a release without its cancel and answers the cancel `too_late`, as the engine
/// does while its sweeper holds the timer.
fn forward_as_too_late(broker: &TestBroker, body: &Value) -> (u16, Vec<u8>) {
    let mut stripped = body.clone();
    stripped
        .as_object_mut()
        .expect("an object")
        .remove("timers");
    let (status, _, answer) = tokio::runtime::Handle::current().block_on(broker.handle(
        "POST",
        "/api/v1/transaction",
        Bytes::from(stripped.to_string()),
    ));
    let mut answer: Value = serde_json::from_slice(&answer).expect("a transaction answer");
    if answer["success"] == true {
        let results = answer["results"].as_array_mut().expect("results");
        let index = results.len();
        results.push(json!({"index": index, "type": "timer", "ok": false, "status": "too_late"}));
    }
    (status, answer.to_string().into_bytes())
}

/// One message received at `visibility` through `b` and changed to 0 there.
async fn receive_and_release(b: &Endpoint, url: &str, visibility: u64) -> String {
    let got = receive(
        b,
        url,
        json!({"MaxNumberOfMessages": 1, "VisibilityTimeout": visibility, "WaitTimeSeconds": 5}),
    )
    .await;
    assert_eq!(got.len(), 1, "one message received");
    b.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": got[0]["ReceiptHandle"], "VisibilityTimeout": 0}),
    )
    .await;
    got[0]["Body"].as_str().unwrap().to_string()
}

/// Two releases whose timers the sweeper "holds": one due within the change's margin (its
/// fire is marked in the change's own transaction), one due later (marked after the
/// transaction, from the verdict). Each released copy is delivered once and deleted; after
/// both timers fired, nothing comes back and nothing is left in the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_whose_timer_the_sweeper_holds_does_not_bring_the_message_back() {
    let a = Endpoint::start().await;
    let url = make_queue(&a, "toolate", &[], 1).await;
    let broker = a.broker.clone();
    let releases = Arc::new(AtomicUsize::new(0));
    let seen_releases = releases.clone();
    let b = a
        .replica_behind(Arc::new(move |seen: &support::Seen| {
            let body: Value = serde_json::from_slice(seen.body).ok()?;
            if !is_release(seen.path_and_query, &body) {
                return None;
            }
            seen_releases.fetch_add(1, SeqCst);
            Some(forward_as_too_late(&broker, &body))
        }))
        .await;
    let url_b = url.replace(&a.url, &b.url);
    send(&a, &url, "due soon").await;
    send(&a, &url, "due later").await;
    let mut released = vec![receive_and_release(&b, &url_b, 1).await];
    released.push(receive_and_release(&b, &url_b, 8).await);
    released.sort();
    assert_eq!(released, ["due later", "due soon"]);
    assert_eq!(
        releases.load(SeqCst),
        2,
        "both changes met the sweeper's hold"
    );

    // The released copies: each delivered once more, then deleted.
    let mut delivered: Vec<String> = Vec::new();
    let until = Instant::now() + Duration::from_secs(20);
    while delivered.len() < 2 && Instant::now() < until {
        for m in receive(&a, &url, json!({"WaitTimeSeconds": 1})).await {
            delivered.push(m["Body"].as_str().unwrap().to_string());
            a.sqs_ok(
                "DeleteMessage",
                json!({"QueueUrl": url, "ReceiptHandle": m["ReceiptHandle"]}),
            )
            .await;
        }
    }
    delivered.sort();
    assert_eq!(
        delivered,
        ["due later", "due soon"],
        "each released copy once"
    );

    // Both timers fire (the later one about 8 s after its receive) ...
    let until = Instant::now() + Duration::from_secs(40);
    while timer_count(&a, "toolate", "vis.").await > 0 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        timer_count(&a, "toolate", "vis.").await,
        0,
        "both timers fired"
    );
    // ... and their copies are dropped where they are popped, not delivered.
    let until = Instant::now() + Duration::from_secs(6);
    while Instant::now() < until {
        let again = receive(&a, &url, json!({"WaitTimeSeconds": 1})).await;
        let bodies: Vec<&str> = again.iter().filter_map(|m| m["Body"].as_str()).collect();
        assert!(
            again.is_empty(),
            "deleted messages came back by the sweeper's fire: {bodies:?}"
        );
    }
    assert_eq!(
        ready_count(&a, "toolate").await,
        0,
        "the fires' copies were consumed"
    );
}

/// Two releases of one delivery (a `ChangeMessageVisibilityBatch` naming one handle twice,
/// both to 0) push the same copy under the same transaction id. On the released engine,
/// two such pushes running at once can leave the second neither stored nor named a
/// duplicate: the engine rolls its transaction back `ack_rejected` ("resolved 0 of 1
/// pushes"), and that entry answered 500 (checker engine seed 636, where a purge had just
/// cancelled the timer both releases read). The proxy answers the second release of each
/// delivery with the engine's recorded rollback, and forwards every other call.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_whose_push_meets_a_twin_in_flight_answers_no_500() {
    use std::collections::HashMap;
    use std::sync::Mutex;
    const UNRESOLVED: &str = r#"{"error":"QTXN resolved 0 of 1 pushes (empty or unknown queue/partition)","reason":"ack_rejected","results":[],"success":false,"transactionId":"01a2513c-a700-7000-a2f2-4d443d7d4357"}"#;
    let a = Endpoint::start().await;
    let url = make_queue(&a, "twin-release", &[("VisibilityTimeout", "30")], 1).await;
    let arrivals: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let seen_arrivals = arrivals.clone();
    let b = a
        .replica_behind(Arc::new(move |seen: &support::Seen| {
            let body: Value = serde_json::from_slice(seen.body).unwrap_or(Value::Null);
            if !is_release(seen.path_and_query, &body) {
                return None;
            }
            let txn = body["operations"][0]["items"][0]["transactionId"].to_string();
            let mut arrivals = seen_arrivals.lock().unwrap();
            let n = arrivals.entry(txn).or_default();
            *n += 1;
            (*n == 2).then(|| (200, UNRESOLVED.as_bytes().to_vec()))
        }))
        .await;
    let url_b = url.replace(&a.url, &b.url);
    for round in 0..3 {
        send(&a, &url, &format!("m{round}")).await;
        let got = receive(&b, &url_b, json!({"WaitTimeSeconds": 5})).await;
        assert_eq!(got.len(), 1, "round {round}");
        let handle = &got[0]["ReceiptHandle"];
        let (status, v) = b
            .sqs(
                "ChangeMessageVisibilityBatch",
                json!({"QueueUrl": url_b, "Entries": [
                    {"Id": "one", "ReceiptHandle": handle, "VisibilityTimeout": 0},
                    {"Id": "two", "ReceiptHandle": handle, "VisibilityTimeout": 0},
                ]}),
            )
            .await;
        assert_eq!(status, 200, "round {round}: {v}");
        assert!(
            v["Failed"].as_array().is_none_or(Vec::is_empty),
            "round {round}: {v}"
        );
        // Visible at once, once; deleted, it does not come back.
        let again = receive(&a, &url, json!({"WaitTimeSeconds": 2})).await;
        assert_eq!(again.len(), 1, "round {round}: {again:?}");
        delete(&a, &url, &again[0]).await;
    }
    let left = receive(&a, &url, json!({"WaitTimeSeconds": 1})).await;
    assert!(left.is_empty(), "{left:?}");
    let arrivals = arrivals.lock().unwrap();
    assert_eq!(arrivals.len(), 3, "one timer a round: {arrivals:?}");
    assert!(arrivals.values().all(|n| *n >= 2), "{arrivals:?}");
}
