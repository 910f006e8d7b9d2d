//! Issue 21, item 3: the guest's CPU per request is bounded. The host advances wasmtime's
//! epoch every 10 ms and charges a request each tick its guest code runs through (and one
//! when it resumes from a wait); past `QUEEN_SQS_GUEST_CPU_MS` the call traps, the request
//! is answered 500 and its instance slot is freed. A guest stuck in a loop would otherwise
//! hold its slot (and a worker thread) for good.

mod sqs_messages_support;
mod support;

use serde_json::json;
use sqs_messages_support::make_queue;
use std::time::{Duration, Instant};
use support::Endpoint;

/// With a budget of 0, any request that runs guest code across a tick is stopped. A long
/// poll always does (it resumes after its wait), so it stands in for a looping request.
/// One long-poll slot: were a stopped request to keep it, the next would be throttled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_past_its_guest_budget_is_answered_500_and_frees_its_slot() {
    let ep = Endpoint::with_env(&[
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_MAX_LONG_POLLS", "1"),
        ("QUEEN_SQS_GUEST_CPU_MS", "0"),
    ])
    .await;
    let url = make_queue(&ep, "budget", &[], 1).await;
    for i in 0..3 {
        let started = Instant::now();
        let (status, v) = ep
            .sqs(
                "ReceiveMessage",
                json!({"QueueUrl": url, "WaitTimeSeconds": 1}),
            )
            .await;
        assert_eq!(status, 500, "request {i}: {v}");
        assert!(
            v["__type"]
                .as_str()
                .unwrap_or("")
                .ends_with("InternalError"),
            "request {i}: {v}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "request {i} took {:?}",
            started.elapsed()
        );
    }
}

/// The default budget (30 s of guest CPU) is far above what any request needs: the same
/// long poll answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_budget_leaves_requests_alone() {
    let ep =
        Endpoint::with_env(&[("QUEEN_SQS_AUTH", "off"), ("QUEEN_SQS_MAX_LONG_POLLS", "1")]).await;
    let url = make_queue(&ep, "budget", &[], 1).await;
    let (status, v) = ep
        .sqs(
            "ReceiveMessage",
            json!({"QueueUrl": url, "WaitTimeSeconds": 1}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
}
