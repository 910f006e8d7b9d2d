//! `GET /metrics` (Prometheus text format), read after known traffic: requests by service,
//! action, status and error code with latency histograms, broker calls by route and outcome,
//! and the slots in use.

mod support;

use serde_json::json;
use std::time::{Duration, Instant};
use support::Endpoint;

/// The value of the sample whose name and labels are exactly `series`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_and_broker_calls() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("metered", json!({})).await;
    for i in 0..3 {
        ep.sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": format!("m{i}")}),
        )
        .await;
    }
    let (status, _) = ep.sqs("GetQueueUrl", json!({"QueueName": "absent"})).await;
    assert_eq!(status, 400);

    let (status, headers, body) = ep.raw("GET", "/metrics", &[], "").await;
    assert_eq!(status, 200);
    assert!(headers
        .iter()
        .any(|(k, v)| k == "content-type" && v.starts_with("text/plain")));
    let text = String::from_utf8(body).unwrap();
    let sends =
        r#"queen_sqs_requests_total{service="sqs",action="SendMessage",status="200",error=""}"#;
    assert_eq!(sample(&text, sends), Some(3.0), "{text}");
    let missing = r#"queen_sqs_requests_total{service="sqs",action="GetQueueUrl",status="400",error="QueueDoesNotExist"}"#;
    assert_eq!(sample(&text, missing), Some(1.0), "{text}");
    let count = r#"queen_sqs_request_seconds_count{service="sqs",action="SendMessage"}"#;
    assert_eq!(sample(&text, count), Some(3.0));
    let inf = r#"queen_sqs_request_seconds_bucket{service="sqs",action="SendMessage",le="+Inf"}"#;
    assert_eq!(sample(&text, inf), Some(3.0));
    // Three sends pushed three times (the queue record is read from the cache after the first).
    let pushes = r#"queen_sqs_broker_calls_total{route="push",outcome="2xx"}"#;
    assert_eq!(sample(&text, pushes), Some(3.0), "{text}");
    assert!(text.contains(r#"queen_sqs_broker_call_seconds_count{route="push"} 3"#));
    assert!(text.contains("route=\"kv\""), "{text}");
    // The scrape itself holds no component slot. The last request's slot is given back once
    // its instance is back in the pool, which is a moment *after* its answer reached the
    // client (the guest returns from its handler after writing the body): on a loaded machine
    // this scrape can come first and read 1 (issue 21 item 10). So: at most that one now, and
    // both gauges at 0 within a bounded wait (a slot that is never given back fails here).
    let slots = sample(&text, "queen_sqs_requests_in_component");
    assert!(matches!(slots, Some(v) if v == 0.0 || v == 1.0), "{text}");
    assert_eq!(sample(&text, "queen_sqs_long_polls_waiting"), Some(0.0));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, _, body) = ep.raw("GET", "/metrics", &[], "").await;
        assert_eq!(status, 200);
        let now = String::from_utf8(body).unwrap();
        let slots = sample(&now, "queen_sqs_requests_in_component");
        let polls = sample(&now, "queen_sqs_long_polls_waiting");
        if slots == Some(0.0) && polls == Some(0.0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "slots in use still {slots:?}, long polls {polls:?}, 10 s after the last answer"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Every non-comment line is `series value`.
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (_, value) = line.rsplit_once(' ').expect(line);
        assert!(value.parse::<f64>().is_ok(), "{line}");
    }
}
