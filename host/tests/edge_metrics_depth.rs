//! `/metrics` per-queue depths (read from the embedded broker at scrape time) after known
//! traffic, checked against what `GetQueueAttributes` answers; who may see them (a key
//! pair, never an anonymous scrape) and what any number of scrapers cost the broker (one
//! read per interval); and the metrics switch
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
    scrape_as(ep, &[]).await
}

async fn scrape_as(ep: &Endpoint, headers: &[(&str, &str)]) -> String {
    let (status, _, body) = ep.raw("GET", "/metrics", headers, "").await;
    let body = String::from_utf8(body).unwrap();
    assert_eq!(status, 200, "{body}");
    body
}

/// `Authorization: Basic` for `user:password`.
fn basic(user_password: &str) -> String {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(user_password);
    format!("Basic {encoded}")
}

/// A broker queue made natively (the endpoint's own SQS calls would need signing).
async fn broker_queue(ep: &Endpoint, name: &str) {
    let body = json!({"queue": name, "options": {}}).to_string();
    let (status, _, out) = ep
        .broker
        .handle("POST", "/api/v1/configure", body.into())
        .await;
    assert!(status < 300, "{status} {}", String::from_utf8_lossy(&out));
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
    // Every scrape reads (the default shares one read for 5 s).
    let ep = Endpoint::with_env(&[
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_METRICS_DEPTH_MS", "0"),
    ])
    .await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anonymous_scrape_names_no_queue_and_reads_nothing_from_the_broker() {
    if on_engine() {
        return; // the per-queue series come from the embedded broker's store only
    }
    let ep = Endpoint::with_env(&[
        (
            "QUEEN_SQS_CREDENTIALS",
            "AKSCRAPE:scrape-secret:,AKOTHER:other-secret:",
        ),
        ("QUEEN_SQS_METRICS_DEPTH_MS", "0"),
    ])
    .await;
    broker_queue(&ep, "payroll-private").await;

    let anonymous = scrape(&ep).await;
    assert!(
        anonymous.contains("queen_sqs_requests_in_component"),
        "{anonymous}"
    );
    assert!(!anonymous.contains("payroll-private"), "{anonymous}");
    assert!(!anonymous.contains("queue=\""), "{anonymous}");
    assert!(!anonymous.contains("queen_sqs_queue_depth"), "{anonymous}");

    for pair in ["AKSCRAPE:scrape-secret", "AKOTHER:other-secret"] {
        let auth = basic(pair);
        let holder = scrape_as(&ep, &[("authorization", &auth)]).await;
        assert_eq!(
            state(&holder, "payroll-private", "ready"),
            Some(0.0),
            "{holder}"
        );
        assert_eq!(sample(&holder, "queen_sqs_queue_depth_ok"), Some(1.0));
    }
    // Two scrapes by key holders, two reads; the anonymous one read nothing.
    let auth = basic("AKSCRAPE:scrape-secret");
    let holder = scrape_as(&ep, &[("authorization", &auth)]).await;
    assert_eq!(
        sample(&holder, "queen_sqs_queue_depth_reads_total"),
        Some(3.0),
        "{holder}"
    );

    for wrong in [
        basic("AKSCRAPE:other-secret"),
        basic("AKSCRAPE"),
        "Bearer x".into(),
    ] {
        let (status, headers, body) = ep
            .raw("GET", "/metrics", &[("authorization", &wrong)], "")
            .await;
        let body = String::from_utf8(body).unwrap();
        assert_eq!(status, 401, "{wrong}: {body}");
        assert!(!body.contains("payroll-private"), "{body}");
        assert!(
            headers
                .iter()
                .any(|(k, v)| k == "www-authenticate" && v.starts_with("Basic")),
            "{headers:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_number_of_scrapers_cost_one_broker_read_per_interval() {
    if on_engine() {
        return;
    }
    let ep = Endpoint::with_env(&[
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_METRICS_DEPTH_MS", "60000"),
    ])
    .await;
    let url = ep.create_queue("scraped", json!({})).await;
    let scrapes = scrapes_at_once(&ep, 24).await;
    for text in &scrapes {
        assert_eq!(
            sample(text, "queen_sqs_queue_depth_reads_total"),
            Some(1.0),
            "{text}"
        );
        assert_eq!(state(text, "scraped", "ready"), Some(0.0), "{text}");
    }
    // Within the interval a scrape shows the read it shares, not the sends since.
    for i in 0..3 {
        let body = json!({"QueueUrl": url, "MessageBody": format!("m{i}")});
        ep.sqs_ok("SendMessage", body).await;
    }
    let text = scrape(&ep).await;
    assert_eq!(
        sample(&text, "queen_sqs_queue_depth_reads_total"),
        Some(1.0)
    );
    assert_eq!(state(&text, "scraped", "ready"), Some(0.0), "{text}");
    let age = sample(&text, "queen_sqs_queue_depth_age_seconds").unwrap();
    assert!((0.0..60.0).contains(&age), "{age}");

    // With no interval each scrape reads, but concurrent ones still share: 24 at once
    // never make 24 reads running side by side (reads are one at a time, and a scrape
    // that waited takes the read that finished while it waited).
    let ep = Endpoint::with_env(&[
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_METRICS_DEPTH_MS", "0"),
    ])
    .await;
    let url = ep.create_queue("scraped", json!({})).await;
    ep.sqs_ok("SendMessage", json!({"QueueUrl": url, "MessageBody": "x"}))
        .await;
    let first = scrape(&ep).await;
    assert_eq!(state(&first, "scraped", "ready"), Some(1.0), "{first}");
    let scrapes = scrapes_at_once(&ep, 24).await;
    let reads = scrapes
        .iter()
        .filter_map(|t| sample(t, "queen_sqs_queue_depth_reads_total"))
        .fold(0.0, f64::max);
    assert!((2.0..=25.0).contains(&reads), "{reads}");
}

/// `n` scrapes at once; their pages.
async fn scrapes_at_once(ep: &Endpoint, n: usize) -> Vec<String> {
    let pages = std::sync::Mutex::new(Vec::new());
    support::join_all((0..n).map(|_| async {
        let text = scrape(ep).await;
        pages.lock().unwrap().push(text);
    }))
    .await;
    pages.into_inner().unwrap()
}
