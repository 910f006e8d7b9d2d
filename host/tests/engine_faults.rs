//! Faults of the released Queen engine (the real-Queen lane only; on the embedded lane the
//! broker's outage and a throttling broker are `sqs_resilience`'s): PostgreSQL lost under
//! the engine, and the engine's own rate limit.

mod support;

use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use support::{fresh_dir, on_engine, psql_in, Endpoint, TestBroker, HANDLE_SECRET};

fn replica_env(queen_url: &str, cache_ms: &str) -> Vec<(String, String)> {
    vec![
        ("QUEEN_URL".into(), queen_url.into()),
        ("QUEEN_SQS_HANDLE_SECRET".into(), HANDLE_SECRET.into()),
        ("QUEEN_SQS_AUTH".into(), "off".into()),
        ("QUEEN_SQS_REGISTRY_CACHE_MS".into(), cache_ms.into()),
    ]
}

async fn sql(statement: String) {
    tokio::task::spawn_blocking(move || psql_in("postgres", &statement))
        .await
        .unwrap()
        .expect("psql");
}

fn error_type(v: &Value) -> &str {
    v["__type"]
        .as_str()
        .unwrap_or("")
        .rsplit('#')
        .next()
        .unwrap_or("")
}

/// Every message still in the queue, received and deleted.
async fn drain(ep: &Endpoint, url: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        let (status, v) = ep
            .sqs(
                "ReceiveMessage",
                json!({"QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 1}),
            )
            .await;
        if status != 200 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        let msgs = v["Messages"].as_array().cloned().unwrap_or_default();
        if msgs.is_empty() {
            break;
        }
        for m in msgs {
            seen.insert(m["MessageId"].as_str().unwrap().to_string());
            ep.sqs_ok(
                "DeleteMessage",
                json!({"QueueUrl": url, "ReceiptHandle": m["ReceiptHandle"]}),
            )
            .await;
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_lost_under_the_engine_is_service_unavailable_and_loses_nothing_acknowledged() {
    if !on_engine() {
        eprintln!("skipped: engine lane only (the embedded broker has no PostgreSQL)");
        return;
    }
    let dir = fresh_dir("pgcut");
    let broker = TestBroker::start(dir.clone()).await;
    let ep =
        Endpoint::serve_remote(replica_env(&broker.url(), "0"), broker.clone(), dir.clone()).await;
    // A second replica holding the queue's record in its cache: its send reaches the push,
    // which the engine answers `buffered` (spooled to its disk) while it has no database.
    let cached =
        Endpoint::serve_remote(replica_env(&broker.url(), "60000"), broker.clone(), dir).await;
    let url = ep.create_queue("pgcut", json!({})).await;
    let url_cached = url.replace(&ep.url, &cached.url);
    let mut acknowledged = BTreeSet::new();
    let v = cached
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url_cached, "MessageBody": "warm"}),
        )
        .await;
    acknowledged.insert(v["MessageId"].as_str().unwrap().to_string());
    for i in 0..20 {
        let v = ep
            .sqs_ok(
                "SendMessage",
                json!({"QueueUrl": url, "MessageBody": format!("m{i}")}),
            )
            .await;
        acknowledged.insert(v["MessageId"].as_str().unwrap().to_string());
    }

    // PostgreSQL goes away for this engine: every connection cut, none allowed back (what a
    // restart looks like from the engine's side, without disturbing the other tests' engines).
    let db = broker.engine().unwrap().database.clone();
    sql(format!("ALTER DATABASE \"{db}\" ALLOW_CONNECTIONS false")).await;
    sql(format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{db}'"
    ))
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    for (action, input) in [
        (
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "during"}),
        ),
        (
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": ["All"]}),
        ),
        ("CreateQueue", json!({"QueueName": "pgcut-new"})),
    ] {
        let (status, v) = ep.sqs(action, input).await;
        assert_eq!(status, 503, "{action}: {v}");
        assert_eq!(error_type(&v), "ServiceUnavailable", "{action}: {v}");
    }
    let (status, v) = cached
        .sqs(
            "SendMessage",
            json!({"QueueUrl": url_cached, "MessageBody": "spooled"}),
        )
        .await;
    assert_eq!((status, error_type(&v)), (503, "ServiceUnavailable"), "{v}");
    let (status, _, _) = ep.raw("GET", "/readyz", &[], Vec::new()).await;
    assert_eq!(status, 503, "not ready without a database");

    sql(format!("ALTER DATABASE \"{db}\" ALLOW_CONNECTIONS true")).await;
    let back = Instant::now();
    loop {
        let (status, _, _) = ep.raw("GET", "/readyz", &[], Vec::new()).await;
        if status == 200 {
            break;
        }
        assert!(
            back.elapsed() < Duration::from_secs(30),
            "the engine never got its database back"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let v = ep
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "after"}),
        )
        .await;
    acknowledged.insert(v["MessageId"].as_str().unwrap().to_string());
    let seen = drain(&ep, &url).await;
    let lost: Vec<_> = acknowledged.difference(&seen).collect();
    assert!(lost.is_empty(), "acknowledged and lost: {lost:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engines_rate_limit_is_request_throttled_and_a_throttled_send_lands_nothing() {
    if !on_engine() {
        eprintln!("skipped: engine lane only (sqs_resilience covers a throttling proxy)");
        return;
    }
    let dir = fresh_dir("ratelimit");
    let broker = TestBroker::start_with(
        dir.clone(),
        &[("QUEEN_KV_READ_RATE", "1"), ("QUEEN_KV_READ_BURST", "2")],
    )
    .await;
    // No record cache: every send reads the registry, so the engine's KV read limit bites.
    let ep =
        Endpoint::serve_remote(replica_env(&broker.url(), "0"), broker.clone(), dir.clone()).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let url = loop {
        let (status, v) = ep.sqs("CreateQueue", json!({"QueueName": "limited"})).await;
        if status == 200 {
            break v["QueueUrl"].as_str().unwrap().to_string();
        }
        assert_eq!(error_type(&v), "RequestThrottled", "{v}");
        assert!(Instant::now() < deadline, "CreateQueue never got through");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let mut sent = BTreeSet::new();
    let mut throttled = 0;
    for i in 0..20 {
        let (status, v) = ep
            .sqs(
                "SendMessage",
                json!({"QueueUrl": url, "MessageBody": format!("m{i}")}),
            )
            .await;
        match status {
            200 => {
                sent.insert(v["MessageId"].as_str().unwrap().to_string());
            }
            _ => {
                // Retryable by every SDK (never OverLimit), and a client error, not a 5xx.
                assert_eq!((status, error_type(&v)), (400, "RequestThrottled"), "{v}");
                throttled += 1;
            }
        }
    }
    assert!(
        throttled > 0,
        "20 sends at a KV read limit of 1/s were never throttled"
    );
    // A replica with the cache reads the record once: what landed is exactly what was answered.
    let reader =
        Endpoint::serve_remote(replica_env(&broker.url(), "60000"), broker.clone(), dir).await;
    let url_r = url.replace(&ep.url, &reader.url);
    let seen = drain(&reader, &url_r).await;
    assert_eq!(seen, sent, "{throttled} throttled sends");
}
