//! Push, pop, ack, lease extension, long polling and lease expiry over loopback HTTP.

mod broker_support;

use broker_support::{ack_of, TestBroker};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[tokio::test]
async fn push_reports_offsets_and_pop_splices_payload_verbatim() {
    let b = TestBroker::start().await;
    // Payload spacing is kept byte for byte.
    let body = br#"{"items":[{"queue":"q","partition":"p1","payload":{"b" : [1, 2]}},{"queue":"q","partition":"p1","payload":"two"},{"queue":"q","partition":"p2","payload":3}]}"#;
    let r = b.http.raw("POST", "/api/v1/push", body.to_vec()).await;
    assert_eq!(r.status, 201);
    let res = r.json.as_array().unwrap();
    assert_eq!(res.len(), 3);
    assert_eq!(res[0]["offset"], 0);
    assert_eq!(res[1]["offset"], 1);
    assert_eq!(res[2]["offset"], 0, "offsets are per partition");
    assert_eq!(res[0]["status"], "queued");
    assert_eq!(res[0]["queueName"], "q");
    assert_eq!(res[1]["index"], 1);
    // Without a transactionId the message id is the transaction id.
    assert_eq!(res[0]["transaction_id"], res[0]["message_id"]);
    let p = b.pop("q/partition/p1?batch=10").await;
    assert_eq!(p.status, 200);
    let text = String::from_utf8(p.bytes.to_vec()).unwrap();
    assert!(
        text.contains(r#""data":{"b" : [1, 2]}"#),
        "verbatim payload in {text}"
    );
    let msgs = p.json["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0]["id"], res[0]["message_id"]);
    assert_eq!(msgs[1]["offset"], 1);
    assert_eq!(msgs[0]["deliveryAttempt"], 1);
    assert_eq!(msgs[0]["traceId"], Value::Null);
    assert_eq!(msgs[0]["consumerGroup"], "__QUEUE_MODE__");
    assert_eq!(p.json["leaseId"], msgs[0]["leaseId"]);
    assert_eq!(p.json["partitionsClaimed"], 1);
    let created = msgs[0]["createdAt"].as_str().unwrap();
    assert_eq!(created.len(), 27, "microsecond timestamp {created}");
    // Empty push answers an empty array.
    let e = b.http.post("/api/v1/push", json!({"items": []})).await;
    assert_eq!((e.status, e.json.clone()), (201, json!([])));
    b.stop().await;
}

#[tokio::test]
async fn empty_pop_is_204_without_body_or_content_type() {
    let b = TestBroker::start().await;
    let r = b.pop("nothing-here?wait=false").await;
    assert_eq!(r.status, 204);
    assert!(r.bytes.is_empty());
    assert!(r.headers.get("content-type").is_none());
    // The wildcard pop created the queue row; a pinned pop of another name does not.
    let d = b
        .http
        .get("/api/v1/resources/queues/nothing-here/depth")
        .await;
    assert_eq!(d.status, 200);
    let r = b.pop("ghost/partition/x?wait=false").await;
    assert_eq!(r.status, 204);
    let d = b.http.get("/api/v1/resources/queues/ghost/depth").await;
    assert_eq!(d.status, 404);
    b.stop().await;
}

#[tokio::test]
async fn dedup_window_original_answer_per_partition_and_zero_disables() {
    let b = TestBroker::start().await;
    b.configure(json!({"queue": "d", "options": {"dedupWindowSeconds": 1}}))
        .await;
    let first = b
        .push(json!([{"queue": "d", "partition": "a", "payload": 1, "transactionId": "k"}]))
        .await;
    let again = b
        .push(
            json!([{"queue": "d", "partition": "a", "payload": 2, "transactionId": "k"},
                     {"queue": "d", "partition": "b", "payload": 3, "transactionId": "k"},
                     {"queue": "d", "partition": "b", "payload": 4, "transactionId": "k"}]),
        )
        .await;
    assert_eq!(again[0]["status"], "duplicate");
    assert_eq!(again[0]["message_id"], first[0]["message_id"]);
    assert_eq!(again[0]["offset"], first[0]["offset"]);
    assert_eq!(again[1]["status"], "queued", "dedup is per partition");
    assert_eq!(
        again[2]["status"], "duplicate",
        "first wins inside one request"
    );
    assert_eq!(again[2]["message_id"], again[1]["message_id"]);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let later = b
        .push(json!([{"queue": "d", "partition": "a", "payload": 5, "transactionId": "k"}]))
        .await;
    assert_eq!(later[0]["status"], "queued", "outside the window");
    assert_eq!(later[0]["offset"], 1);
    // Window 0: no dedup at all.
    b.configure(json!({"queue": "z", "options": {"dedupWindowSeconds": 0}}))
        .await;
    let z = b
        .push(json!([{"queue": "z", "payload": 1, "transactionId": "same"}]))
        .await;
    let z2 = b
        .push(json!([{"queue": "z", "payload": 1, "transactionId": "same"}]))
        .await;
    assert_eq!(z[0]["status"], "queued");
    assert_eq!(z2[0]["status"], "queued");
    assert_eq!(z2[0]["offset"], 1);
    b.stop().await;
}

async fn push_n(b: &TestBroker, q: &str, n: usize) {
    let items: Vec<Value> = (0..n)
        .map(|i| json!({"queue": q, "payload": {"n": i}, "transactionId": format!("t{i}")}))
        .collect();
    b.push(Value::Array(items)).await;
}

#[tokio::test]
async fn ack_last_completes_batch_and_first_keeps_lease() {
    let b = TestBroker::start().await;
    push_n(&b, "a", 6).await;
    let p = b.pop("a?batch=3").await;
    let m = p.json["messages"].as_array().unwrap().clone();
    assert_eq!(m.len(), 3);
    // Completing the first keeps the lease on the rest.
    let r = b.ack(ack_of(&m[0], "completed")).await;
    assert_eq!(
        (r[0]["success"].clone(), r[0]["leaseReleased"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(
        b.pop("a?batch=3&wait=false").await.status,
        204,
        "lease still live"
    );
    // Acking the last completes the batch (m[1] implicitly).
    let r = b.ack(ack_of(&m[2], "completed")).await;
    assert_eq!(r[0]["leaseReleased"], true);
    // A repeat under the released lease fails the lease check.
    let r = b.ack(ack_of(&m[1], "completed")).await;
    assert_eq!(r[0]["success"], false);
    assert_eq!(r[0]["error"], "invalid or expired lease");
    // Lease-less repeat of a retired message: harmless noop.
    let r = b
        .ack(json!({"transactionId": "t1", "partitionId": m[0]["partitionId"], "status": "completed", "error": null, "consumerGroup": null}))
        .await;
    assert_eq!(
        (r[0]["success"].clone(), r[0]["noop"].clone()),
        (json!(true), json!(true))
    );
    // Lease-less non-completed ack below the cursor: already committed.
    let r = b
        .ack(json!({"transactionId": "t1", "partitionId": m[0]["partitionId"], "status": "retry"}))
        .await;
    assert!(r[0]["error"]
        .as_str()
        .unwrap()
        .starts_with("already committed"));
    let p2 = b.pop("a?batch=3").await;
    assert_eq!(p2.json["messages"][0]["transactionId"], "t3");
    assert_eq!(p2.json["messages"][0]["deliveryAttempt"], 1);
    b.stop().await;
}

#[tokio::test]
async fn ack_failures_consumer_unresolvable_and_lease_less_advance() {
    let b = TestBroker::start().await;
    push_n(&b, "f", 3).await;
    let r = b
        .ack(json!({"transactionId": "t0", "partitionId": "00000000-0000-4000-8000-000000000000", "status": "completed"}))
        .await;
    assert_eq!(r[0]["error"], "consumer not found");
    let p = b.pop("f?batch=1").await;
    let m = p.json["messages"][0].clone();
    let mut bad = ack_of(&m, "completed");
    bad["leaseId"] = json!("01900000-0000-7000-8000-000000000000");
    assert_eq!(b.ack(bad).await[0]["error"], "invalid or expired lease");
    let mut unknown = ack_of(&m, "completed");
    unknown["transactionId"] = json!("never-pushed");
    assert!(b.ack(unknown).await[0]["error"]
        .as_str()
        .unwrap()
        .starts_with("unresolvable"));
    let mut beyond = ack_of(&m, "completed");
    beyond["transactionId"] = json!("t2");
    assert_eq!(
        b.ack(beyond).await[0]["error"],
        "position beyond leased batch"
    );
    // A lease-less ack may move the cursor past everything up to t1.
    let r = b
        .ack(json!({"transactionId": "t1", "partitionId": m["partitionId"], "status": "completed"}))
        .await;
    assert_eq!(r[0]["success"], true);
    let p = b.pop("f?batch=5").await;
    let ms = p.json["messages"].as_array().unwrap();
    assert_eq!(ms.len(), 1);
    assert_eq!(ms[0]["transactionId"], "t2");
    b.stop().await;
}

#[tokio::test]
async fn retry_releases_without_budget_and_redelivery_counts_attempts() {
    let b = TestBroker::start().await;
    b.configure(json!({"queue": "r", "options": {"retryLimit": 1}}))
        .await;
    push_n(&b, "r", 2).await;
    for attempt in 1..=3 {
        let p = b.pop("r?batch=1").await;
        let m = p.json["messages"][0].clone();
        assert_eq!(m["transactionId"], "t0");
        assert_eq!(m["deliveryAttempt"], attempt);
        let r = b.ack(ack_of(&m, "retry")).await;
        assert_eq!(
            (r[0]["success"].clone(), r[0]["leaseReleased"].clone()),
            (json!(true), json!(true))
        );
    }
    // Retries never spent the budget: one failed is still allowed before the DLQ.
    let m = b.pop("r?batch=1").await.json["messages"][0].clone();
    assert_eq!(m["deliveryAttempt"], 4);
    let r = b.ack(ack_of(&m, "failed")).await;
    assert_eq!(
        (r[0]["dlq"].clone(), r[0]["leaseReleased"].clone()),
        (json!(false), json!(true))
    );
    let m = b.pop("r?batch=1").await.json["messages"][0].clone();
    assert_eq!(m["transactionId"], "t0");
    let mut nack = ack_of(&m, "failed");
    nack["error"] = json!("boom");
    let r = b.ack(nack).await;
    assert_eq!(r[0]["dlq"], true, "budget spent, native DLQ on by default");
    let m = b.pop("r?batch=1").await.json["messages"][0].clone();
    assert_eq!(m["transactionId"], "t1");
    assert_eq!(m["deliveryAttempt"], 1);
    b.stop().await;
}

#[tokio::test]
async fn failed_without_dlq_drops_and_dlq_status_dead_letters_at_once() {
    let b = TestBroker::start().await;
    b.configure(json!({"queue": "x", "options": {"retryLimit": 0, "deadLetterQueue": false, "dlqAfterMaxRetries": false}}))
        .await;
    push_n(&b, "x", 3).await;
    let m = b.pop("x?batch=1").await.json["messages"][0].clone();
    let r = b.ack(ack_of(&m, "failed")).await;
    assert_eq!(
        (r[0]["dlq"].clone(), r[0]["leaseReleased"].clone()),
        (json!(false), json!(true))
    );
    let m = b.pop("x?batch=1").await.json["messages"][0].clone();
    assert_eq!(m["transactionId"], "t1", "poison message dropped");
    let r = b.ack(ack_of(&m, "dlq")).await;
    assert_eq!(r[0]["dlq"], true);
    let m = b.pop("x?batch=1").await.json["messages"][0].clone();
    assert_eq!(m["transactionId"], "t2");
    b.stop().await;
}

#[tokio::test]
async fn a_nack_is_never_skipped_by_a_completion_above_it() {
    let b = TestBroker::start().await;
    push_n(&b, "n", 3).await;
    let m = b.pop("n?batch=3").await.json["messages"]
        .as_array()
        .unwrap()
        .clone();
    let r = b
        .http
        .post(
            "/api/v1/ack/batch",
            json!({"consumerGroup": null, "acknowledgments": [
            ack_of(&m[0], "completed"), ack_of(&m[2], "completed"), ack_of(&m[1], "retry")]}),
        )
        .await;
    let r = r.json.as_array().unwrap();
    assert!(r.iter().all(|x| x["success"] == true), "{r:?}");
    assert_eq!(r[2]["index"], 2);
    let again = b.pop("n?batch=3").await.json["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        again[0]["transactionId"], "t1",
        "redelivery starts at the nack"
    );
    assert_eq!(again.len(), 2);
    b.stop().await;
}

#[tokio::test]
async fn named_groups_fan_out_and_seed_new() {
    let b = TestBroker::start().await;
    push_n(&b, "g", 2).await;
    let a = b.pop("g?batch=5&consumerGroup=ga").await;
    let q = b.pop("g?batch=5").await;
    assert_eq!(a.json["messages"].as_array().unwrap().len(), 2);
    assert_eq!(
        q.json["messages"].as_array().unwrap().len(),
        2,
        "groups are independent"
    );
    assert_eq!(a.json["consumerGroup"], "ga");
    let n = b
        .pop("g?batch=5&consumerGroup=gn&subscriptionMode=new&wait=false")
        .await;
    assert_eq!(n.status, 204, "a new-mode group skips the backlog");
    push_n(&b, "g", 3).await; // t0..t2 again, dedup answers duplicates for t0,t1
    let n = b.pop("g?batch=5&consumerGroup=gn").await;
    let ids: Vec<_> = n.json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["transactionId"].clone())
        .collect();
    assert_eq!(ids, vec![json!("t2")]);
    // Depth per named group vs queue mode.
    let d = b
        .http
        .get("/api/v1/resources/queues/g/depth?group=ga")
        .await;
    assert_eq!(
        (d.json["pending"].clone(), d.json["processing"].clone()),
        (json!(3), json!(2))
    );
    assert_eq!(d.json["ready"], 1);
    b.stop().await;
}

#[tokio::test]
async fn lease_extend_never_shortens_and_reports_gone_leases() {
    let b = TestBroker::start().await;
    push_n(&b, "l", 1).await;
    let p = b.pop("l?batch=1&leaseSeconds=100").await;
    let lease = p.json["leaseId"].as_str().unwrap().to_string();
    let r = b
        .http
        .post(
            &format!("/api/v1/lease/{lease}/extend"),
            json!({"seconds": 5}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        (r.json["success"].clone(), r.json["renewed"].clone()),
        (json!(true), json!(1))
    );
    let until =
        queen_sqs_host::broker::time::parse_iso(r.json["newExpiresAt"].as_str().unwrap()).unwrap();
    let left = until - queen_sqs_host::broker::time::now_us();
    assert!(left > 90_000_000, "not shortened: {left}us left");
    assert_eq!(r.json["expiresAt"], r.json["newExpiresAt"]);
    assert_eq!(r.json["lease_expires_at"], r.json["newExpiresAt"]);
    // An empty body means 60 s (still below 100: unchanged).
    let r = b
        .http
        .raw("POST", &format!("/api/v1/lease/{lease}/extend"), Vec::new())
        .await;
    assert_eq!(r.json["renewed"], 1);
    let r = b
        .http
        .post(
            &format!("/api/v1/lease/{lease}/extend"),
            json!({"seconds": 500}),
        )
        .await;
    let until =
        queen_sqs_host::broker::time::parse_iso(r.json["newExpiresAt"].as_str().unwrap()).unwrap();
    assert!(until - queen_sqs_host::broker::time::now_us() > 400_000_000);
    let r = b
        .http
        .post("/api/v1/lease/nope/extend", json!({"seconds": 5}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["success"], false);
    assert_eq!(r.json["renewed"], 0);
    assert_eq!(r.json["newExpiresAt"], Value::Null);
    b.stop().await;
}

#[tokio::test]
async fn long_poll_is_woken_by_a_push() {
    let b = TestBroker::start().await;
    let http = broker_support::Http::new(b.broker.addr);
    let started = Instant::now();
    let waiter = tokio::spawn(async move {
        let r = http
            .get("/api/v1/pop/queue/lp?batch=1&wait=true&timeout=10000")
            .await;
        (r, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    push_n(&b, "lp", 1).await;
    let (r, took) = waiter.await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.json["messages"][0]["transactionId"], "t0");
    assert!(
        took < Duration::from_millis(1000),
        "woken by the push, took {took:?}"
    );
    // With nothing pushed, it waits out the timeout and answers 204.
    let t = Instant::now();
    let r = b.pop("lp?wait=true&timeout=400").await;
    assert_eq!(r.status, 204);
    assert!(
        t.elapsed() >= Duration::from_millis(390),
        "{:?}",
        t.elapsed()
    );
    b.stop().await;
}

/// CPU time this process has used (user and system), from `/proc/self/stat`.
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<u64> = rest
        .split(' ')
        .skip(11)
        .take(2)
        .map(|v| v.parse().unwrap())
        .collect();
    // Clock ticks: 100 a second on Linux.
    Duration::from_millis((f[0] + f[1]) * 10)
}

/// A long poll parked on a queue with no delay option costs nothing while nothing happens:
/// it looks again only when woken. Each look is a claim on the single writer thread, and
/// ten thousand polls re-checking once a second kept that thread so busy that pops outlasted
/// their callers' deadlines (issue 21: 587 of 10,000 host long polls answered 503 under
/// load, every one a pop timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parked_long_polls_on_a_quiet_queue_cost_no_cpu() {
    const PARKED: usize = 2_000;
    let b = std::sync::Arc::new(TestBroker::start().await);
    let mut polls = Vec::new();
    for _ in 0..PARKED {
        let b = b.clone();
        polls.push(tokio::spawn(async move {
            let path = "/api/v1/pop/queue/quiet?batch=1&wait=true&timeout=6000";
            let (status, _, _) = b.broker.handle("GET", path, Default::default()).await;
            status
        }));
    }
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let (cpu, wall) = (process_cpu(), Instant::now());
    tokio::time::sleep(Duration::from_millis(3_000)).await;
    let (used, took) = (process_cpu() - cpu, wall.elapsed());
    // One push wakes one parked poll.
    push_n(&b, "quiet", 1).await;
    let mut statuses = std::collections::BTreeMap::new();
    for p in polls {
        *statuses.entry(p.await.unwrap()).or_insert(0usize) += 1;
    }
    assert_eq!(statuses.get(&200), Some(&1), "{statuses:?}");
    assert_eq!(statuses.get(&204), Some(&(PARKED - 1)), "{statuses:?}");
    assert!(
        used < Duration::from_millis(150),
        "{PARKED} parked polls used {used:?} of CPU in {took:?} with nothing happening"
    );
}

#[tokio::test]
async fn expired_lease_redelivers_with_attempt_incremented() {
    let b = TestBroker::start().await;
    push_n(&b, "e", 2).await;
    let first = b.pop("e?batch=1&leaseSeconds=1").await.json;
    let m = first["messages"][0].clone();
    assert_eq!(
        b.pop("e?batch=1&wait=false").await.status,
        204,
        "head-of-line while leased"
    );
    // A long poll parked now is woken by the expiry.
    let t = Instant::now();
    let again = b.pop("e?batch=1&wait=true&timeout=5000").await.json;
    assert!(
        t.elapsed() < Duration::from_millis(2500),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(again["messages"][0]["id"], m["id"]);
    assert_eq!(again["messages"][0]["deliveryAttempt"], 2);
    assert_ne!(again["leaseId"], first["leaseId"]);
    // The old holder's ack is refused.
    let r = b.ack(ack_of(&m, "completed")).await;
    assert_eq!(r[0]["error"], "invalid or expired lease");
    b.stop().await;
}

#[tokio::test]
async fn auto_ack_commits_on_delivery() {
    let b = TestBroker::start().await;
    push_n(&b, "aa", 2).await;
    let p = b.pop("aa?batch=1&autoAck=true").await;
    assert_eq!(p.json["leaseId"], "");
    assert_eq!(p.json["messages"][0]["deliveryAttempt"], 1);
    let p = b.pop("aa?batch=5").await;
    assert_eq!(p.json["messages"].as_array().unwrap().len(), 1);
    assert_eq!(p.json["messages"][0]["transactionId"], "t1");
    b.stop().await;
}

#[tokio::test]
async fn delayed_processing_hides_messages_until_due() {
    let b = TestBroker::start().await;
    b.configure(json!({"queue": "dp", "options": {"delayedProcessing": 1}}))
        .await;
    push_n(&b, "dp", 1).await;
    assert_eq!(b.pop("dp?wait=false").await.status, 204);
    let d = b.http.get("/api/v1/resources/queues/dp/depth").await;
    assert_eq!(d.json["ready"], 1, "hidden messages still count as ready");
    let r = b.pop("dp?wait=true&timeout=3000").await;
    assert_eq!(r.status, 200);
    b.stop().await;
}
