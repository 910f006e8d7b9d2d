//! Configure, list, delete, depth, retention, health and the error shapes for bad input.

mod broker_support;

use broker_support::{ack_of, TestBroker};
use bytes::Bytes;
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::test]
async fn configure_replace_resets_merge_keeps_and_echoes_the_row() {
    let b = TestBroker::start().await;
    let r = b
        .configure(json!({"queue": "c", "mode": "replace", "leaseTime": 30, "retryLimit": 7,
                          "deadLetterQueue": false, "retentionEnabled": true, "retentionSeconds": 345600,
                          "dedupWindowSeconds": 0}))
        .await;
    assert_eq!(r["configured"], true);
    assert_eq!(r["partitionId"], Value::Null);
    assert_eq!(r["storage"], "segments");
    assert_eq!(r["options"]["leaseTime"], 30);
    assert_eq!(r["options"]["dlqAfterMaxRetries"], true);
    assert_eq!(r["options"]["deadLetterQueue"], false);
    assert_eq!(r["options"]["retryDelay"], 1000);
    let id = r["queueId"].clone();
    // Merge: an absent key keeps, null resets, a value sets.
    let m = b
        .configure(json!({"queue": "c", "options": {"retryLimit": null, "ttl": 5}}))
        .await;
    assert_eq!(m["options"]["leaseTime"], 30);
    assert_eq!(m["options"]["retryLimit"], 3);
    assert_eq!(m["options"]["ttl"], 5);
    assert_eq!(m["queueId"], id);
    // Replace: everything omitted goes back to the default.
    let p = b
        .configure(json!({"queue": "c", "mode": "replace", "options": {"leaseTime": 45}}))
        .await;
    assert_eq!(p["options"]["leaseTime"], 45);
    assert_eq!(p["options"]["dedupWindowSeconds"], 3600);
    assert_eq!(p["options"]["retentionEnabled"], false);
    assert_eq!(p["options"]["ttl"], 3600);
    // Clamp and labels.
    let k = b
        .configure(json!({"queue": "c2", "namespace": "ns", "task": "tk", "options": {"minPopWaitTime": 999999}}))
        .await;
    assert_eq!(k["options"]["minPopWaitTime"], 60000);
    assert_eq!(
        (k["namespace"].clone(), k["task"].clone()),
        (json!("ns"), json!("tk"))
    );
    // Refusals.
    let e = b
        .http
        .post("/api/v1/configure", json!({"mode": "replace"}))
        .await;
    assert_eq!(
        (e.status, e.json["error"].clone()),
        (400, json!("queue is required"))
    );
    let e = b
        .http
        .post("/api/v1/configure", json!({"queue": "c", "mode": "upsert"}))
        .await;
    assert_eq!(e.status, 400);
    assert!(e.json["error"]
        .as_str()
        .unwrap()
        .starts_with("mode must be"));
    let e = b
        .http
        .post(
            "/api/v1/configure",
            json!({"queue": "c", "options": {"retentionSinkHoldMaxSeconds": 5}}),
        )
        .await;
    assert_eq!(
        (e.status, e.json["invalid"].clone()),
        (400, json!("retentionSinkHoldMaxSeconds"))
    );
    b.stop().await;
}

#[tokio::test]
async fn list_shows_partitions_and_new_ids_after_recreate() {
    let b = TestBroker::start().await;
    b.configure(json!({"queue": "empty"})).await;
    b.push(json!([{"queue": "full", "partition": "0", "payload": 1}, {"queue": "full", "partition": "1", "payload": 2}]))
        .await;
    let l = b.http.get("/api/v1/resources/queues").await;
    assert_eq!(l.status, 200);
    let qs = l.json["queues"].as_array().unwrap();
    let find = |n: &str| qs.iter().find(|q| q["name"] == n).cloned().unwrap();
    assert_eq!(find("empty")["partitions"], 0);
    assert_eq!(find("full")["partitions"], 2);
    assert_eq!(find("full")["messages"]["total"], 2);
    assert_eq!(qs[0]["name"], "full", "newest first");
    assert_eq!(find("full")["namespace"], "full");
    let old_id = find("full")["id"].clone();
    let m = b.pop("full?batch=1").await.json["messages"][0].clone();
    let lease = m["leaseId"].as_str().unwrap().to_string();
    // Delete: existed, then not.
    let d = b
        .http
        .call("DELETE", "/api/v1/resources/queues/full", None)
        .await;
    assert_eq!(d.status, 200);
    assert_eq!(
        d.json,
        json!({"deleted": true, "queue": "full", "existed": true})
    );
    let d = b
        .http
        .call("DELETE", "/api/v1/resources/queues/full", None)
        .await;
    assert_eq!(
        (d.json["deleted"].clone(), d.json["existed"].clone()),
        (json!(false), json!(false))
    );
    assert_eq!(
        b.http
            .get("/api/v1/resources/queues/full/depth")
            .await
            .status,
        404
    );
    // Old handles die with the queue.
    assert_eq!(
        b.ack(ack_of(&m, "completed")).await[0]["error"],
        "consumer not found"
    );
    let r = b
        .http
        .post(
            &format!("/api/v1/lease/{lease}/extend"),
            json!({"seconds": 9}),
        )
        .await;
    assert_eq!(r.json["renewed"], 0);
    b.push(json!([{"queue": "full", "partition": "0", "payload": 1}]))
        .await;
    let l = b.http.get("/api/v1/resources/queues").await;
    let again = l.json["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == "full")
        .cloned()
        .unwrap();
    assert_ne!(again["id"], old_id);
    let p = b.pop("full?batch=1").await;
    assert_ne!(p.json["partitionId"], m["partitionId"]);
    b.stop().await;
}

#[tokio::test]
async fn depth_counts_pending_processing_ready_per_partition() {
    let b = TestBroker::start().await;
    let items: Vec<Value> = (0..5)
        .map(|i| json!({"queue": "dq", "partition": if i < 3 { "a" } else { "b" }, "payload": i}))
        .collect();
    b.push(Value::Array(items)).await;
    let _ = b.pop("dq/partition/a?batch=2").await;
    let d = b
        .http
        .get("/api/v1/resources/queues/dq/depth?group=__QUEUE_MODE__")
        .await
        .json;
    assert_eq!(d["group"], "__QUEUE_MODE__");
    assert_eq!(
        (
            d["pending"].clone(),
            d["processing"].clone(),
            d["ready"].clone()
        ),
        (json!(5), json!(2), json!(3))
    );
    assert_eq!(
        d["partitions"][0],
        json!({"partition": "a", "pending": 3, "processing": 2, "ready": 1})
    );
    assert_eq!(
        d["partitions"][1],
        json!({"partition": "b", "pending": 2, "processing": 0, "ready": 2})
    );
    assert_eq!(
        (d["partitionsPending"].clone(), d["partitionsReady"].clone()),
        (json!(2), json!(2))
    );
    let nd = b.http.get("/api/v1/resources/queues/dq/depth").await.json;
    assert_eq!(nd["group"], Value::Null);
    assert_eq!(nd["processing"], 2);
    b.configure(json!({"queue": "blank"})).await;
    let e = b
        .http
        .get("/api/v1/resources/queues/blank/depth")
        .await
        .json;
    assert_eq!(
        (e["pending"].clone(), e["partitions"].clone()),
        (json!(0), json!([]))
    );
    let nf = b.http.get("/api/v1/resources/queues/nope/depth").await;
    assert_eq!(
        (nf.status, nf.json.clone()),
        (404, json!({"error": "Queue not found"}))
    );
    b.stop().await;
}

#[tokio::test]
async fn retention_moves_the_log_start_without_renumbering() {
    let b = TestBroker::start().await;
    b.configure(
        json!({"queue": "rt", "options": {"retentionEnabled": true, "retentionSeconds": 1}}),
    )
    .await;
    b.push(json!([{"queue": "rt", "payload": 1}, {"queue": "rt", "payload": 2}]))
        .await;
    tokio::time::sleep(Duration::from_millis(2600)).await;
    let fresh = b.push(json!([{"queue": "rt", "payload": 3}])).await;
    assert_eq!(fresh[0]["offset"], 2, "offsets are never reused");
    let p = b.pop("rt?batch=10").await;
    let ms = p.json["messages"].as_array().unwrap();
    assert_eq!(ms.len(), 1, "old messages are gone: {ms:?}");
    assert_eq!(ms[0]["offset"], 2);
    b.stop().await;
}

#[tokio::test]
async fn bad_input_gets_the_documented_error_shapes() {
    let b = TestBroker::start().await;
    for path in [
        "/api/v1/push",
        "/api/v1/ack",
        "/api/v1/ack/batch",
        "/api/v1/configure",
    ] {
        let r = b.http.raw("POST", path, b"{not json".to_vec()).await;
        assert_eq!(r.status, 400, "{path}");
        assert!(
            r.json["error"].as_str().unwrap().starts_with("bad body: "),
            "{path}: {}",
            r.json
        );
    }
    let r = b
        .http
        .post("/api/v1/push", json!({"items": [{"payload": 1}]}))
        .await;
    assert_eq!(r.status, 400);
    let r = b
        .http
        .raw("POST", "/api/v1/transaction", b"[".to_vec())
        .await;
    assert_eq!(
        (
            r.status,
            r.json["success"].clone(),
            r.json["reason"].clone()
        ),
        (400, json!(false), json!("bad_request"))
    );
    let r = b.http.post("/api/v1/transaction", json!({"ops": []})).await;
    assert_eq!(r.json["error"], "transaction requires an operations array");
    let r = b
        .http
        .post(
            "/api/v1/transaction",
            json!({"operations": [{"type": "nope"}]}),
        )
        .await;
    assert_eq!(
        r.json["error"],
        "segments transaction supports only push and ack operations"
    );
    let r = b.http.get("/api/v1/no/such/route").await;
    assert_eq!(
        (r.status, r.json["code"].clone()),
        (404, json!("no_such_route"))
    );
    let r = b.pop("q?batch=lots").await;
    assert_eq!(r.status, 400);
    let r = b.http.get("/api/v1/pop").await;
    assert_eq!(
        r.json,
        json!({"success": false, "error": "namespace or task is required", "messages": []})
    );
    // Over the 64 MiB body limit: 413 (checked in process to keep the test fast).
    let (status, _, body) = b
        .broker
        .handle(
            "POST",
            "/api/v1/push",
            Bytes::from(vec![b' '; 64 * 1024 * 1024 + 1]),
        )
        .await;
    assert_eq!(status, 413);
    assert!(String::from_utf8_lossy(&body).contains("error"));
    let h = b.http.get("/health").await;
    assert_eq!(
        (h.status, h.json.clone()),
        (200, json!({"status": "healthy"}))
    );
    b.stop().await;
}

#[tokio::test]
async fn in_process_handle_answers_like_the_socket() {
    let b = TestBroker::start().await;
    let (s, headers, body) = b
        .broker
        .handle(
            "POST",
            "/api/v1/push",
            Bytes::from(r#"{"items":[{"queue":"ip","payload":7}]}"#),
        )
        .await;
    assert_eq!(s, 201);
    assert!(headers
        .iter()
        .any(|(k, v)| k == "content-type" && v == "application/json"));
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v[0]["status"], "queued");
    let c = b.broker.clone();
    let (s, h, body) = c
        .handle("GET", "/api/v1/pop/queue/none?wait=false", Bytes::new())
        .await;
    assert_eq!((s, h.len(), body.len()), (204, 0, 0));
    let p = b.pop("ip").await;
    assert_eq!(p.json["messages"][0]["data"], 7);
    b.stop().await;
}

#[tokio::test]
async fn discovery_pop_by_namespace() {
    let b = TestBroker::start().await;
    b.push(json!([{"queue": "shop.orders", "payload": 1}]))
        .await;
    let r = b.http.get("/api/v1/pop?namespace=shop&batch=1").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["queue"], "shop.orders");
    let r = b.http.get("/api/v1/pop?task=orders&wait=false").await;
    assert_eq!(r.status, 204, "leased already");
    b.stop().await;
}

#[tokio::test]
async fn hostile_numbers_do_not_panic() {
    let b = TestBroker::start().await;
    let big = i64::MAX;
    b.configure(
        json!({"queue": "h", "options": {"leaseTime": big, "windowBuffer": big,
        "delayedProcessing": -5, "retentionEnabled": true, "retentionSeconds": big,
        "completedRetentionSeconds": big, "dedupWindowSeconds": big}}),
    )
    .await;
    b.push(json!([{"queue": "h", "payload": 1, "transactionId": "a"}, {"queue": "h", "payload": 1, "transactionId": "a"}]))
        .await;
    // windowBuffer of forever: nothing is claimable, and the huge timeout is not waited for.
    let r = b
        .pop(&format!("h?wait=false&timeout={big}&leaseSeconds={big}"))
        .await;
    assert_eq!(r.status, 204);
    b.configure(json!({"queue": "h", "options": {"windowBuffer": 0}}))
        .await;
    let r = b.pop(&format!("h?wait=false&leaseSeconds={big}")).await;
    assert_eq!(r.status, 200);
    let lease = r.json["leaseId"].as_str().unwrap().to_string();
    let e = b
        .http
        .post(
            &format!("/api/v1/lease/{lease}/extend"),
            json!({"seconds": 1e300}),
        )
        .await;
    assert_eq!((e.status, e.json["renewed"].clone()), (200, json!(1)));
    let k = b
        .kv(json!([{"op": "put", "ns": "h", "key": "k", "value": 1, "ttlSeconds": big}]))
        .await;
    assert_eq!(k.json["results"][0]["applied"], true);
    let t = b
        .http
        .post("/api/v1/timers", json!([{"op": "schedule", "queue": "h", "timerKey": "k", "delayMs": -1e300, "txn": "t", "payload": "MQ=="}]))
        .await;
    assert_eq!(t.json["results"][0]["ok"], true);
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let d = b.http.get("/api/v1/resources/queues/h/depth").await;
    assert_eq!(
        d.status, 200,
        "the broker is still answering after the sweeps"
    );
    assert_eq!(d.json["pending"], 2, "the past-due timer fired: {}", d.json);
    b.stop().await;
}
