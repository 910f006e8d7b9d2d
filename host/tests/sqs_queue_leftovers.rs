//! Queue names and what a cut-off queue operation leaves behind (issue 21, item 8). Both
//! brokers.

mod sqs_messages_support;
mod support;

use bytes::Bytes;
use serde_json::json;
use sqs_messages_support::*;
use std::sync::Arc;
use std::time::Duration;
use support::Endpoint;

fn error_code(body: &serde_json::Value) -> &str {
    body["__type"]
        .as_str()
        .unwrap_or("")
        .rsplit('#')
        .next()
        .unwrap_or("")
}

/// A `DeleteQueue` cut off after its broker delete, before it removed the queue's record
/// (a replica whose broker refuses the record's removal). Before: the record still named
/// the queue, so it was found, and the next send re-created the broker queue with the
/// broker's defaults (a queue with `DelaySeconds` delivered at once). Now the queue is gone
/// to every call, no send re-creates it, and `CreateQueue` of the name finishes the delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_delete_cut_off_before_its_record_went_leaves_no_queue() {
    let a = Endpoint::start().await;
    let url = make_queue(&a, "half-deleted", &[("DelaySeconds", "2")], 1).await;
    let hook: support::Hook = Arc::new(|seen: &support::Seen| {
        let body = String::from_utf8_lossy(seen.body);
        let removes_record = seen.path_and_query.starts_with("/api/v1/kv")
            && body.contains("\"delete\"")
            && body.contains("qs:q:half-deleted");
        removes_record.then(|| (503, br#"{"error":"unavailable"}"#.to_vec()))
    });
    let b = a.replica_behind(hook).await;
    let (status, v) = b
        .sqs(
            "DeleteQueue",
            json!({"QueueUrl": url.replace(&a.url, &b.url)}),
        )
        .await;
    assert!(status >= 500, "the delete was cut off: {status} {v}");
    // Past a's record cache: what a answers now is what the registry says.
    tokio::time::sleep(Duration::from_millis(1_200)).await;

    let (status, v) = a
        .sqs("GetQueueUrl", json!({"QueueName": "half-deleted"}))
        .await;
    assert_eq!(
        (status, error_code(&v)),
        (400, "QueueDoesNotExist"),
        "the queue is gone: {v}"
    );
    let (status, v) = a
        .sqs(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "late"}),
        )
        .await;
    assert_eq!(
        (status, error_code(&v)),
        (400, "QueueDoesNotExist"),
        "no send reaches it: {v}"
    );
    let listed = a.sqs_ok("ListQueues", json!({})).await;
    assert!(
        !listed.to_string().contains("half-deleted"),
        "not listed: {listed}"
    );
    let (status, _, _) = a
        .broker
        .handle(
            "GET",
            "/api/v1/resources/queues/half-deleted/depth",
            Bytes::new(),
        )
        .await;
    assert_eq!(status, 404, "no broker queue was re-created");

    // The name: deleted recently (as after any delete), and free once the delete is done.
    let (status, v) = a
        .sqs("CreateQueue", json!({"QueueName": "half-deleted"}))
        .await;
    assert_eq!(
        (status, error_code(&v)),
        (400, "QueueDeletedRecently"),
        "{v}"
    );
    let (status, v) = a.sqs("DeleteQueue", json!({"QueueUrl": url})).await;
    assert_eq!((status, error_code(&v)), (400, "QueueDoesNotExist"), "{v}");
}

/// A dead-letter queue deleted through another replica while this replica's record cache
/// still holds it (a 60 s cache here). Before: a message past its `maxReceiveCount` was
/// pushed into the deleted queue, re-creating its broker queue as a leftover, and never
/// came back to the source queue. Now the target is read past the cache before a move,
/// and with no dead-letter queue the message is delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_letter_queue_deleted_within_the_cache_bound_is_not_pushed_into() {
    let a = Endpoint::with_env(&[
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_REGISTRY_CACHE_MS", "60000"),
    ])
    .await;
    let dlq = make_queue(&a, "gone-dlq", &[], 1).await;
    let policy = json!({"deadLetterTargetArn": arn("gone-dlq"), "maxReceiveCount": 1}).to_string();
    let url = make_queue(&a, "keeps", &[("RedrivePolicy", &policy)], 1).await;
    a.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "kept"}),
    )
    .await;
    // First delivery, given back at once: a's cache now holds the dead-letter queue's record.
    let first = a
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "VisibilityTimeout": 0, "WaitTimeSeconds": 2}),
        )
        .await;
    assert_eq!(
        first["Messages"].as_array().map(Vec::len),
        Some(1),
        "{first}"
    );
    // Deleted through another replica.
    let b = a.replica_behind(Arc::new(|_: &support::Seen| None)).await;
    b.sqs_ok(
        "DeleteQueue",
        json!({"QueueUrl": dlq.replace(&a.url, &b.url)}),
    )
    .await;
    // The second delivery is past maxReceiveCount, and there is no dead-letter queue.
    let second = a
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "WaitTimeSeconds": 2,
                   "MessageSystemAttributeNames": ["ApproximateReceiveCount"]}),
        )
        .await;
    let got = second["Messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(got.len(), 1, "the message stays with its queue: {second}");
    assert_eq!(got[0]["Body"], "kept");
    assert_eq!(got[0]["Attributes"]["ApproximateReceiveCount"], "2");
    let (status, _, _) = a
        .broker
        .handle(
            "GET",
            "/api/v1/resources/queues/gone-dlq/depth",
            Bytes::new(),
        )
        .await;
    assert_eq!(status, 404, "the deleted queue was not re-created");
}
