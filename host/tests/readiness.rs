//! Liveness and readiness: `/healthz` answers from the process alone (a load balancer must
//! not restart a replica because its broker is away); `/readyz` reaches the broker and
//! answers 503 while it cannot, so a load balancer stops routing to that replica.

mod support;

use serde_json::Value;
use std::time::Instant;
use support::{fresh_dir, Endpoint, TestBroker, HANDLE_SECRET};

async fn get(ep: &Endpoint, path: &str) -> (u16, Value) {
    let (status, _, body) = ep.raw("GET", path, &[], Vec::new()).await;
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_follows_the_broker_and_liveness_does_not() {
    let dir = fresh_dir("ready");
    let broker = TestBroker::start(dir.clone()).await;
    let env = vec![
        ("QUEEN_URL".to_string(), broker.url()),
        (
            "QUEEN_SQS_HANDLE_SECRET".to_string(),
            HANDLE_SECRET.to_string(),
        ),
        ("QUEEN_SQS_AUTH".to_string(), "off".to_string()),
    ];
    let ep = Endpoint::serve_remote(env, broker.clone(), dir).await;

    assert_eq!(get(&ep, "/healthz").await.0, 200);
    let (status, body) = get(&ep, "/readyz").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "ready");

    broker.stop().await;
    let started = Instant::now();
    let (status, body) = get(&ep, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "not ready");
    assert!(started.elapsed().as_secs() < 5, "a probe must not hang");
    assert_eq!(get(&ep, "/healthz").await.0, 200, "liveness stays up");

    broker.restart().await;
    let (status, body) = get(&ep, "/readyz").await;
    assert_eq!(status, 200, "{body}");
    broker.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misconfigured_replica_is_neither_live_nor_ready() {
    let ep = Endpoint::with_env(&[("QUEEN_SQS_HANDLE_SECRET", "short")]).await;
    assert_eq!(get(&ep, "/healthz").await.0, 503);
    let (status, body) = get(&ep, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "misconfigured");
}
