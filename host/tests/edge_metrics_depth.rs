//! `/metrics` per-queue depths (read from the embedded broker at scrape time) after known
//! traffic, checked against what `GetQueueAttributes` answers; and the metrics switch
//! (`QUEEN_SQS_METRICS=off`: `/metrics` is 404 and the component is not asked to tell the
//! host what it did unless the request log is on).

mod support;

use queen_sqs_host::serve::{Outgoing, Server};
use serde_json::json;
use support::{on_engine, Endpoint};

/// The value of the sample whose name and labels are exactly `series`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

fn state(text: &str, queue: &str, state: &str) -> Option<f64> {
    sample(
        text,
        &format!("queen_sqs_queue_messages{{queue=\"{queue}\",state=\"{state}\"}}"),
    )
}

async fn scrape(ep: &Endpoint) -> String {
    let (status, _, body) = ep.raw("GET", "/metrics", &[], "").await;
    assert_eq!(status, 200);
    String::from_utf8(body).unwrap()
}

/// The three counts SQS answers for a queue, as f64s for comparing with samples.
async fn sqs_counts(ep: &Endpoint, url: &str) -> [Option<f64>; 3] {
    let out = ep
        .sqs_ok(
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": ["All"]}),
        )
        .await;
    let a = &out["Attributes"];
    [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ]
    .map(|n| a[n].as_str().and_then(|v| v.parse().ok()))
}

async fn receive(ep: &Endpoint, url: &str, n: u64) -> Vec<String> {
    let out = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "MaxNumberOfMessages": n, "VisibilityTimeout": 60}),
        )
        .await;
    out["Messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| m["ReceiptHandle"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_depths_follow_known_traffic() {
    if on_engine() {
        return; // the depths come from the embedded broker's store only
    }
    let ep = Endpoint::start().await;
    let text = scrape(&ep).await;
    assert_eq!(
        sample(&text, "queen_sqs_broker_queues"),
        Some(0.0),
        "{text}"
    );

    let std_url = ep.create_queue("depth-std", json!({})).await;
    for i in 0..5 {
        let body = json!({"QueueUrl": std_url, "MessageBody": format!("m{i}")});
        ep.sqs_ok("SendMessage", body).await;
    }
    for i in 0..2 {
        let body =
            json!({"QueueUrl": std_url, "MessageBody": format!("later{i}"), "DelaySeconds": 60});
        ep.sqs_ok("SendMessage", body).await;
    }
    let mut handles = Vec::new();
    while handles.len() < 2 {
        handles.extend(receive(&ep, &std_url, 2 - handles.len() as u64).await);
    }
    let deleted = json!({"QueueUrl": std_url, "ReceiptHandle": handles[0]});
    ep.sqs_ok("DeleteMessage", deleted).await;

    let fifo_url = ep
        .create_queue("depth.fifo", json!({"FifoQueue": "true"}))
        .await;
    for i in 0..3 {
        let body = json!({"QueueUrl": fifo_url, "MessageBody": format!("f{i}"),
            "MessageGroupId": "g1", "MessageDeduplicationId": format!("d{i}")});
        ep.sqs_ok("SendMessage", body).await;
    }
    assert_eq!(receive(&ep, &fifo_url, 1).await.len(), 1);

    let text = scrape(&ep).await;
    assert_eq!(
        sample(&text, "queen_sqs_queue_depth_ok"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "queen_sqs_broker_queues"),
        Some(2.0),
        "{text}"
    );
    // Standard: 5 sent, 2 received (1 deleted since), 2 delayed.
    assert_eq!(state(&text, "depth-std", "ready"), Some(3.0), "{text}");
    assert_eq!(state(&text, "depth-std", "in_flight"), Some(1.0), "{text}");
    assert_eq!(state(&text, "depth-std", "delayed"), Some(2.0), "{text}");
    let timers = |kind: &str| {
        sample(
            &text,
            &format!("queen_sqs_queue_timers{{queue=\"depth-std\",kind=\"{kind}\"}}"),
        )
    };
    assert_eq!(timers("sqs"), Some(2.0), "{text}");
    assert_eq!(timers("vis"), Some(1.0), "{text}");
    // The same numbers an SDK reads, for both kinds of queue (FIFO: one in flight, and the
    // rest of its group counted as SQS counts it).
    for (name, url) in [("depth-std", &std_url), ("depth.fifo", &fifo_url)] {
        let [ready, in_flight, delayed] = sqs_counts(&ep, url).await;
        assert_eq!(state(&text, name, "ready"), ready, "{name}: {text}");
        assert_eq!(state(&text, name, "in_flight"), in_flight, "{name}: {text}");
        assert_eq!(state(&text, name, "delayed"), delayed, "{name}: {text}");
    }
    assert_eq!(state(&text, "depth.fifo", "in_flight"), Some(1.0), "{text}");

    // A deleted queue leaves the scrape.
    ep.sqs_ok("DeleteQueue", json!({"QueueUrl": fifo_url}))
        .await;
    let text = scrape(&ep).await;
    assert_eq!(
        sample(&text, "queen_sqs_broker_queues"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(state(&text, "depth.fifo", "ready"), None, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_off_answers_404_and_requests_still_work() {
    let ep = Endpoint::with_env(&[("QUEEN_SQS_AUTH", "off"), ("QUEEN_SQS_METRICS", "off")]).await;
    let url = ep.create_queue("unmetered", json!({})).await;
    ep.sqs_ok("SendMessage", json!({"QueueUrl": url, "MessageBody": "x"}))
        .await;
    let (status, _, body) = ep.raw("GET", "/metrics", &[], "").await;
    assert_eq!(status, 404);
    let body = String::from_utf8(body).unwrap();
    assert!(body.contains("QUEEN_SQS_METRICS=off"), "{body}");
    assert!(!body.contains("queen_sqs_"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_component_tells_the_host_only_when_someone_listens() {
    let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let server = |pairs: &[(&str, &str)]| {
        Server::new(support::loaded(), env(pairs), Outgoing::new(None)).tells_host()
    };
    assert!(server(&[]), "metrics are on by default");
    assert!(!server(&[("QUEEN_SQS_METRICS", "off")]));
    assert!(server(&[
        ("QUEEN_SQS_METRICS", "off"),
        ("QUEEN_SQS_REQUEST_LOG", "stderr")
    ]));
}
