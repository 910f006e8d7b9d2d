//! Requests racing a `PurgeQueue` (issue 19, checker engine seed 636). A purge deletes the
//! broker queue and configures a new one; in between, a send re-creates the queue with the
//! broker's defaults. Both brokers.

mod sqs_messages_support;
mod support;

use serde_json::json;
use sqs_messages_support::*;
use std::time::{Duration, Instant};
use support::Endpoint;

/// A FIFO queue's `DelaySeconds` is its broker queue's own delay option. A message sent
/// while a purge had deleted the broker queue re-created it without one, and was delivered
/// 0.06 s after its send on a queue with `DelaySeconds=2` (checker engine seed 636). The
/// broker queue is put in that state here directly: configured with the broker's defaults.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fifo_message_waits_out_the_queue_delay_while_the_broker_queue_has_lost_it() {
    let a = Endpoint::start().await;
    let name = "lost-delay.fifo";
    let url = a
        .create_queue(name, json!({"FifoQueue": "true", "DelaySeconds": "2"}))
        .await;
    let defaults = json!({"queue": name, "mode": "replace", "options": {"delayedProcessing": 0}});
    let (status, v) = broker(&a, "POST", "/api/v1/configure", defaults).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(a.broker.queue_options(name).await["delayedProcessing"], 0);
    let sent = Instant::now();
    send_fifo(&a, &url, "delayed", "g", "d1").await;
    send_fifo(&a, &url, "delayed too", "g", "d2").await;
    let mut delivered = None;
    while sent.elapsed() < Duration::from_secs(8) {
        let got = receive(&a, &url, json!({"VisibilityTimeout": 30})).await;
        if !got.is_empty() {
            delivered = Some((sent.elapsed(), got));
            break;
        }
        sleep_ms(100).await;
    }
    let (after, got) = delivered.expect("delivered once its delay ended");
    assert!(
        after >= Duration::from_millis(1_700),
        "delivered {:.2} s after its send, DelaySeconds=2",
        after.as_secs_f64()
    );
    let bodies: Vec<&str> = got.iter().map(|m| m["Body"].as_str().unwrap()).collect();
    assert_eq!(bodies, ["delayed", "delayed too"]);
    // The receives that found it too young did not count.
    for m in &got {
        assert_eq!(attr(m, "ApproximateReceiveCount"), "1", "{m}");
    }
}

/// A visibility change to 0 pushes the delivery's copy back and cancels its timer in one
/// transaction. One that read the timer before a purge cancelled it, and reached the broker
/// after the purge deleted the broker queue, had its push refused (the engine rolls the
/// transaction back `ack_rejected`: "resolved 0 of 1 pushes") and answered 500 (checker
/// engine seed 636, a `ChangeMessageVisibilityBatch` naming one handle twice). The message
/// was purged: the change is refused as a change of a message that no longer exists, and
/// nothing comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_visibility_change_reaching_the_broker_while_a_purge_has_deleted_its_queue_answers_no_500(
) {
    use std::sync::Arc;
    let a = Endpoint::start().await;
    let url = make_queue(&a, "purge-change", &[("VisibilityTimeout", "30")], 1).await;
    send(&a, &url, "purged").await;
    let got = receive(&a, &url, json!({})).await;
    assert_eq!(got.len(), 1);
    let handle = got[0]["ReceiptHandle"].as_str().unwrap().to_string();
    // Replica b's transactions are held 1.5 s; replica c's purge holds its configure of
    // the new broker queue 3 s, so b's change lands while the queue is deleted.
    let b = a
        .replica_behind(Arc::new(|seen: &support::Seen| {
            if seen.path_and_query.starts_with("/api/v1/transaction") {
                std::thread::sleep(Duration::from_millis(1_500));
            }
            None
        }))
        .await;
    let c = a
        .replica_behind(Arc::new(|seen: &support::Seen| {
            if seen.path_and_query.starts_with("/api/v1/configure") {
                std::thread::sleep(Duration::from_millis(3_000));
            }
            None
        }))
        .await;
    let (url_b, url_c) = (url.replace(&a.url, &b.url), url.replace(&a.url, &c.url));
    let change = tokio::spawn(async move {
        b.sqs(
            "ChangeMessageVisibility",
            json!({"QueueUrl": url_b, "ReceiptHandle": handle, "VisibilityTimeout": 0}),
        )
        .await
    });
    sleep_ms(400).await;
    let purge = tokio::spawn(async move { c.sqs("PurgeQueue", json!({"QueueUrl": url_c})).await });
    let (status, v) = change.await.unwrap();
    assert!(status < 500, "the change answered {status}: {v}");
    let (status, v) = purge.await.unwrap();
    assert_eq!(status, 200, "{v}");
    let back = receive(&a, &url, json!({"WaitTimeSeconds": 2})).await;
    assert!(back.is_empty(), "the purged message came back: {back:?}");
}

/// A FIFO send whose deduplication id another group claimed a moment ago waits (up to
/// 2 s) for that group's message to land, then is routed into that group's lane. A purge
/// that ran meanwhile leaves that lane to the purged incarnation: a receive with a fresh
/// record moves its message into the group it was sent in, but a replica whose record was
/// cached from before the purge took the lane for the group's own and delivered the
/// message in the holder's group (checker embedded seed 604). The send now starts again
/// under the new incarnation, where the purged message's claim is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_send_routed_across_a_purge_keeps_its_group_for_a_replica_with_an_older_record() {
    let a = Endpoint::start().await;
    let url = a
        .create_queue("routed.fifo", json!({"FifoQueue": "true"}))
        .await;
    let r = a.replica(&[("QUEEN_SQS_REGISTRY_CACHE_MS", "60000")]).await;
    let url_r = url.replace(&a.url, &r.url);
    // Replica r reads the queue's record now, and keeps it past the purge.
    assert!(receive(&r, &url_r, json!({})).await.is_empty());
    a_send_routed_across_a_purge(&a, &url, &r, &url_r).await;
}

/// Checker engine seed 645 (faults profile): a purge held up by faults names the queue's new
/// incarnation before it deletes the broker queue, and sends that read the record meanwhile
/// pushed into the new incarnation's lanes of the queue about to be deleted. The released
/// engine keeps deduplication state by partition name across a delete, so in the queue made
/// again those lane names skipped the check: a send repeating a deduplication id used since
/// the purge was stored a second time. Replica c's purge has its delete held 2 s; replica d
/// reads the queue's record on every request.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sends_made_while_a_purge_deletes_the_queue_leave_deduplication_whole() {
    use std::sync::Arc;
    let a = Endpoint::start().await;
    let url = a
        .create_queue("poisoned.fifo", json!({"FifoQueue": "true"}))
        .await;
    let c = a
        .replica_behind(Arc::new(|seen: &support::Seen| {
            let delete = seen.method == hyper::Method::DELETE
                && seen.path_and_query.starts_with("/api/v1/resources/queues/");
            if delete {
                std::thread::sleep(Duration::from_millis(2_000));
            }
            None
        }))
        .await;
    let d = a.replica(&[("QUEEN_SQS_REGISTRY_CACHE_MS", "0")]).await;
    let (url_c, url_d) = (url.replace(&a.url, &c.url), url.replace(&a.url, &d.url));
    let purge = tokio::spawn(async move { c.sqs("PurgeQueue", json!({"QueueUrl": url_c})).await });
    sleep_ms(500).await;
    // While the purge waits on its delete: these may be purged with the queue.
    for i in 0..3 {
        let (status, v) = d
            .sqs(
                "SendMessage",
                json!({"QueueUrl": url_d, "MessageBody": format!("during-{i}"),
                       "MessageGroupId": "g", "MessageDeduplicationId": format!("during-{i}")}),
            )
            .await;
        assert!(status < 500, "{status} {v}");
    }
    let (status, v) = purge.await.unwrap();
    assert_eq!(status, 200, "{v}");
    let first = send_fifo(&d, &url_d, "first", "g", "x").await;
    assert_eq!(send_fifo(&d, &url_d, "again", "g", "x").await, first);
    let got = receive(&d, &url_d, json!({"WaitTimeSeconds": 2})).await;
    let bodies: Vec<&str> = got.iter().map(|m| m["Body"].as_str().unwrap()).collect();
    assert!(
        !bodies.contains(&"again"),
        "a duplicate was stored: {bodies:?}"
    );
}

/// Checker engine seed 808 (no fault injected): the released engine answered a purge's
/// queue delete `500 {"error":"delete failed: db error"}` once, and the purge answered 503.
/// A delete is idempotent: it is asked again, and the purge answers 200 and empties.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_purge_whose_queue_delete_fails_once_in_the_broker_database_succeeds() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let a = Endpoint::start().await;
    let url = a.create_queue("db-error", json!({})).await;
    for i in 0..3 {
        send(&a, &url, &format!("m{i}")).await;
    }
    let failed = Arc::new(AtomicUsize::new(0));
    let seen_fail = failed.clone();
    let r = a
        .replica_behind(Arc::new(move |seen: &support::Seen| {
            let delete = seen.method == hyper::Method::DELETE
                && seen.path_and_query.starts_with("/api/v1/resources/queues/");
            (delete && seen_fail.fetch_add(1, Ordering::SeqCst) == 0)
                .then(|| (500, br#"{"error":"delete failed: db error"}"#.to_vec()))
        }))
        .await;
    let url_r = url.replace(&a.url, &r.url);
    let (status, v) = r.sqs("PurgeQueue", json!({"QueueUrl": url_r})).await;
    assert_eq!(status, 200, "{v}");
    assert!(
        failed.load(Ordering::SeqCst) >= 2,
        "the delete was not asked again"
    );
    assert!(receive(&a, &url, json!({"WaitTimeSeconds": 1}))
        .await
        .is_empty());
}
