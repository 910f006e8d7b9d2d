//! Statelessness and broker trouble: two hosts in front of one broker behave as one,
//! and a broker that is gone or throttling is answered the way SDKs retry, with no
//! acknowledged message lost.

mod support;

use bytes::Bytes;
use http_body_util::Full;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;
use support::{fresh_dir, Endpoint, TestBroker, HANDLE_SECRET};

fn replica_env(queen_url: &str) -> Vec<(String, String)> {
    vec![
        ("QUEEN_URL".into(), queen_url.into()),
        ("QUEEN_SQS_HANDLE_SECRET".into(), HANDLE_SECRET.into()),
        ("QUEEN_SQS_AUTH".into(), "off".into()),
    ]
}

async fn receive(ep: &Endpoint, url: &str, max: u32) -> Vec<Value> {
    let v = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "MaxNumberOfMessages": max, "WaitTimeSeconds": 1}),
        )
        .await;
    v["Messages"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_with_one_secret_in_front_of_one_broker_behave_as_one() {
    // Host A fronts the broker (in process when it is the embedded one); host B reaches it
    // only through QUEEN_URL.
    let a = Endpoint::start().await;
    let b = Endpoint::serve_remote(
        replica_env(&format!("http://{}", a.broker.addr)),
        a.broker.clone(),
        a.data_dir.clone(),
    )
    .await;

    let url = a
        .create_queue("shared-one", json!({"VisibilityTimeout": "30"}))
        .await;
    let via_b = b
        .sqs_ok("GetQueueUrl", json!({"QueueName": "shared-one"}))
        .await;
    assert!(via_b["QueueUrl"]
        .as_str()
        .unwrap()
        .ends_with("/000000000000/shared-one"));

    let sent = a
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "across replicas"}),
        )
        .await;
    let got = receive(&b, &url, 1).await;
    assert_eq!(got.len(), 1, "B did not see A's message");
    assert_eq!(got[0]["MessageId"], sent["MessageId"]);
    assert_eq!(got[0]["Body"], "across replicas");

    // The handle minted by B deletes through A.
    a.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": got[0]["ReceiptHandle"]}),
    )
    .await;
    let attrs = b
        .sqs_ok("GetQueueAttributes", json!({"QueueUrl": url, "AttributeNames": ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]}))
        .await;
    assert_eq!(attrs["Attributes"]["ApproximateNumberOfMessages"], "0");
    assert_eq!(
        attrs["Attributes"]["ApproximateNumberOfMessagesNotVisible"],
        "0"
    );
    let v = a.sqs_ok("ReceiveMessage", json!({"QueueUrl": url})).await;
    assert!(
        v.get("Messages").is_none(),
        "deleted message came back: {v}"
    );

    // A queue created through B is A's as well.
    b.create_queue("shared-two", json!({})).await;
    let listed = a
        .sqs_ok("ListQueues", json!({"QueueNamePrefix": "shared-"}))
        .await;
    assert_eq!(
        listed["QueueUrls"].as_array().map(Vec::len),
        Some(2),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_outage_is_service_unavailable_and_loses_no_acknowledged_message() {
    // On the engine lane the broker is a Queen engine process: the outage is a SIGKILL,
    // and the restart a new process on the same database and port.
    let dir = fresh_dir("outage");
    let broker = TestBroker::start(dir.clone()).await;
    let ep = Endpoint::serve_remote(replica_env(&broker.url()), broker.clone(), dir.clone()).await;
    let url = ep
        .create_queue("outage", json!({"VisibilityTimeout": "30"}))
        .await;

    let mut acknowledged = BTreeSet::new();
    for i in 0..20 {
        let v = ep
            .sqs_ok(
                "SendMessage",
                json!({"QueueUrl": url, "MessageBody": format!("m{i}")}),
            )
            .await;
        acknowledged.insert(v["MessageId"].as_str().unwrap().to_string());
    }

    broker.stop().await;
    for (action, input) in [
        (
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "during the outage"}),
        ),
        ("ReceiveMessage", json!({"QueueUrl": url})),
        (
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": ["All"]}),
        ),
        ("CreateQueue", json!({"QueueName": "born-in-outage"})),
    ] {
        let (status, body) = ep.sqs(action, input).await;
        assert_eq!(status, 503, "{action}: {body}");
        assert!(
            body["__type"]
                .as_str()
                .unwrap()
                .ends_with("#ServiceUnavailable"),
            "{action}: {body}"
        );
    }

    // The broker comes back on the same database: every acknowledged message is there.
    broker.restart().await;
    let mut seen = BTreeSet::new();
    for _ in 0..20 {
        if seen.len() == acknowledged.len() {
            break;
        }
        for m in receive(&ep, &url, 10).await {
            seen.insert(m["MessageId"].as_str().unwrap().to_string());
            ep.sqs_ok(
                "DeleteMessage",
                json!({"QueueUrl": url, "ReceiptHandle": m["ReceiptHandle"]}),
            )
            .await;
        }
    }
    assert_eq!(seen, acknowledged);
    // Nothing half-applied: the send refused during the outage did not land.
    let v = ep.sqs_ok("ReceiveMessage", json!({"QueueUrl": url})).await;
    assert!(v.get("Messages").is_none(), "{v}");
    broker.stop().await;
}

/// A stand-in for a rate-capping proxy in front of Queen: every call is a 429.
async fn throttling_broker() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let service = hyper::service::service_fn(|_req| async {
                    let resp = hyper::Response::builder()
                        .status(429)
                        .header("retry-after", "1")
                        .header("content-type", "application/json")
                        .body(Full::new(Bytes::from_static(
                            b"{\"error\":\"rate limited\",\"code\":\"rate_limited\"}",
                        )))
                        .unwrap();
                    Ok::<_, std::convert::Infallible>(resp)
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttling_broker_is_request_throttled_never_over_limit() {
    let proxy = throttling_broker().await;
    let unused = Endpoint::start().await;
    let ep = Endpoint::serve_remote(
        replica_env(&format!("http://{proxy}")),
        unused.broker.clone(),
        unused.data_dir.clone(),
    )
    .await;

    let (status, _, body) = ep
        .raw(
            "POST",
            "/",
            &[("x-amz-target", "AmazonSQS.SendMessage")],
            json!({"QueueUrl": "http://x/000000000000/q", "MessageBody": "b"}).to_string(),
        )
        .await;
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status, 400, "{v}");
    assert!(
        v["__type"].as_str().unwrap().ends_with("#RequestThrottled"),
        "{v}"
    );

    // SNS spells it its own way.
    let (status, xml) = ep
        .query("/", &[("Action", "ListTopics"), ("Version", "2010-03-31")])
        .await;
    assert_eq!(status, 429, "{xml}");
    assert!(xml.contains("<Code>Throttled</Code>"), "{xml}");
}

/// PurgeQueue is three broker calls (cancel timers, delete, configure). Cut off after the
/// delete, it answers an error and a retry runs at once — not `PurgeQueueInProgress` for
/// 60 s while the queue carries the broker's defaults — and configures the queue again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purge_cut_off_half_way_can_be_retried_at_once() {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    let a = Endpoint::start().await;
    let url = a.create_queue("purged", json!({"DelaySeconds": "2"})).await;
    let fail_configure = Arc::new(AtomicBool::new(false));
    let flag = fail_configure.clone();
    let hook: support::Hook = Arc::new(move |seen: &support::Seen| {
        (seen.path_and_query.starts_with("/api/v1/configure") && flag.swap(false, SeqCst))
            .then(|| (503, br#"{"error":"unavailable"}"#.to_vec()))
    });
    let b = a.replica_behind(hook).await;
    let url_b = url.replace(&a.url, &b.url);
    fail_configure.store(true, SeqCst);
    let (status, body) = b.sqs("PurgeQueue", json!({"QueueUrl": url_b})).await;
    assert_eq!(status, 503, "{body}");
    assert!(
        !fail_configure.load(SeqCst),
        "the configure call was the one cut off"
    );
    b.sqs_ok("PurgeQueue", json!({"QueueUrl": url_b})).await;
    // Configured again: the queue's own DelaySeconds holds a new message back.
    b.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url_b, "MessageBody": "later"}),
    )
    .await;
    assert!(receive(&b, &url_b, 1).await.is_empty(), "delayed 2 s");
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let got = receive(&b, &url_b, 1).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["Body"], "later");
}

/// A broker that answers 500 is in trouble, not the request: the client is told to retry
/// (`ServiceUnavailable`, 503), never `InternalError`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_failure_answers_service_unavailable() {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    let a = Endpoint::start().await;
    let url = a.create_queue("fails", json!({})).await;
    let fail = Arc::new(AtomicBool::new(true));
    let flag = fail.clone();
    let hook: support::Hook = Arc::new(move |seen: &support::Seen| {
        (seen.path_and_query.starts_with("/api/v1/push") && flag.swap(false, SeqCst))
            .then(|| (500, br#"{"error":"pool"}"#.to_vec()))
    });
    let b = a.replica_behind(hook).await;
    let url_b = url.replace(&a.url, &b.url);
    let (status, body) = b
        .sqs(
            "SendMessage",
            json!({"QueueUrl": url_b, "MessageBody": "m"}),
        )
        .await;
    assert!(!fail.load(SeqCst), "the push was the call that failed");
    assert_eq!(status, 503, "{body}");
    assert!(
        body["__type"]
            .as_str()
            .unwrap()
            .ends_with("ServiceUnavailable"),
        "{body}"
    );
    b.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url_b, "MessageBody": "m"}),
    )
    .await;
}

/// A push the broker spools instead of storing (`buffered`: the released engine's answer
/// when its database write fails, as it did when a PurgeQueue deleted the queue under a
/// send; checker, engine seed 462) is pushed again, with the same transaction ids, after a
/// pause: the send is answered 200 once the broker stores it, and the message is there
/// once. Only while the broker keeps spooling is the send answered 503.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_the_broker_spools_is_pushed_again_and_the_send_succeeds() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let a = Endpoint::start().await;
    let url = a.create_queue("spooled", json!({})).await;
    let spooled = Arc::new(AtomicUsize::new(0));
    let count = spooled.clone();
    let hook: support::Hook = Arc::new(move |seen: &support::Seen| {
        if !seen.path_and_query.starts_with("/api/v1/push") || count.fetch_add(1, SeqCst) > 0 {
            return None;
        }
        let sent: Value = serde_json::from_slice(seen.body).unwrap();
        let answer: Vec<Value> = sent["items"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, item)| {
                json!({"index": i, "message_id": "01a243d8-085a-7000-ae22-0c81753ac356",
                       "transaction_id": item["transactionId"], "queueName": item["queue"],
                       "status": "buffered"})
            })
            .collect();
        Some((201, serde_json::to_vec(&answer).unwrap()))
    });
    let b = a.replica_behind(hook).await;
    let url_b = url.replace(&a.url, &b.url);
    let sent = b
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url_b, "MessageBody": "kept"}),
        )
        .await;
    assert!(spooled.load(SeqCst) >= 2, "spooled once, then pushed again");
    let got = receive(&a, &url, 10).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["Body"], "kept");
    assert_eq!(got[0]["MessageId"], sent["MessageId"]);
}

/// Checker, engine seed 513: a spooled push is replayed by the broker too. The send pushed it
/// again and was answered that second message's id; the replay stored a second copy under
/// another MessageId, delivered as a message nobody sent. A standard send's pushes now carry
/// a transaction id of their own, so whichever of the two lands second is a duplicate
/// within the lanes' deduplication window. The replay is scripted here after the second
/// push (the engine's came before it: then the second push is the duplicate).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spooled_push_replayed_by_the_broker_is_stored_once() {
    use std::sync::Mutex;
    let a = Endpoint::start().await;
    let url = a.create_queue("replayed", json!({})).await;
    let spooled: Arc<Mutex<Option<Vec<u8>>>> = Arc::new(Mutex::new(None));
    let keep = spooled.clone();
    let hook: support::Hook = Arc::new(move |seen: &support::Seen| {
        let mut kept = keep.lock().unwrap();
        if !seen.path_and_query.starts_with("/api/v1/push") || kept.is_some() {
            return None;
        }
        *kept = Some(seen.body.to_vec());
        let sent: Value = serde_json::from_slice(seen.body).unwrap();
        let answer: Vec<Value> = sent["items"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, item)| {
                json!({"index": i, "message_id": "01a243d8-085a-7000-ae22-0c81753ac356",
                       "transaction_id": item["transactionId"], "queueName": item["queue"],
                       "status": "buffered"})
            })
            .collect();
        Some((201, serde_json::to_vec(&answer).unwrap()))
    });
    let b = a.replica_behind(hook).await;
    let url_b = url.replace(&a.url, &b.url);
    let sent = b
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url_b, "MessageBody": "once"}),
        )
        .await;
    // The broker's replay of its spool.
    let body = spooled.lock().unwrap().clone().expect("a push was spooled");
    let (status, _, answer) = a.broker.handle("POST", "/api/v1/push", body.into()).await;
    assert!(status < 300, "{}", String::from_utf8_lossy(&answer));
    let got = receive(&a, &url, 10).await;
    let again = receive(&a, &url, 10).await;
    let ids: Vec<&Value> = got.iter().chain(&again).map(|m| &m["MessageId"]).collect();
    assert_eq!(ids, [&sent["MessageId"]], "{got:?} {again:?}");
}
