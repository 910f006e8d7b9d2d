//! `POST /api/v1/transaction`: commit shapes, the flat index space, and every rollback verdict.

mod broker_support;

use broker_support::{ack_of, TestBroker};
use serde_json::{json, Value};

async fn depth(b: &TestBroker, q: &str) -> Value {
    b.http
        .get(&format!("/api/v1/resources/queues/{q}/depth"))
        .await
        .json
}

#[tokio::test]
async fn commit_moves_a_message_atomically_with_kv_and_timer_riders() {
    let b = TestBroker::start().await;
    b.push(json!([{"queue": "src", "partition": "0", "payload": {"b": "x"}, "transactionId": "t-orig"}])).await;
    let m = b.pop("src?batch=1").await.json["messages"][0].clone();
    let mut ack = ack_of(&m, "completed");
    ack["type"] = json!("ack");
    let r = b
        .http
        .post("/api/v1/transaction", json!({
            "operations": [
                {"type": "push", "items": [
                    {"queue": "dst", "partition": "0", "payload": {"b": "x"}, "transactionId": "move-1"},
                    {"queue": "dst", "partition": "0", "payload": {"b": "y"}, "transactionId": "move-1"}]},
                ack],
            "requiredLeases": [m["leaseId"]],
            "kv": [{"op": "put", "ns": "qs", "key": "qs:mv:job-1", "value": {"moved": 1}, "forever": true, "expect": 0, "required": true},
                   {"op": "get", "ns": "qs", "key": "qs:mv:job-1"}],
            "timers": [{"op": "schedule", "queue": "dst", "timerKey": "later", "delayMs": 60000, "txn": "tt", "payload": "MQ=="}]}))
        .await;
    assert_eq!(r.status, 200);
    let body = &r.json;
    assert_eq!(body["success"], true, "{body}");
    assert!(body["transactionId"].is_string());
    let res = body["results"].as_array().unwrap();
    assert_eq!(res.len(), 6, "2 push items + 1 ack + 2 kv + 1 timer");
    assert_eq!(res[0]["type"], "push");
    assert!(res[0].get("duplicate").is_none());
    assert_eq!(
        (res[1]["duplicate"].clone(), res[1]["messageId"].clone()),
        (json!(true), res[0]["messageId"].clone())
    );
    assert_eq!(
        res[2],
        json!({"index": 2, "type": "ack", "success": true, "transactionId": "t-orig", "error": null, "dlq": false})
    );
    assert_eq!(
        (
            res[3]["index"].clone(),
            res[3]["opIndex"].clone(),
            res[3]["type"].clone()
        ),
        (json!(3), json!(0), json!("kv"))
    );
    assert_eq!(res[3]["applied"], true);
    assert_eq!(
        res[4]["value"],
        json!({"moved": 1}),
        "reads see the rider's own writes"
    );
    assert_eq!(
        (
            res[5]["type"].clone(),
            res[5]["opIndex"].clone(),
            res[5]["status"].clone()
        ),
        (json!("timer"), json!(0), json!("scheduled"))
    );
    assert_eq!(
        depth(&b, "dst").await["pending"],
        1,
        "the in-bundle repeat is not written"
    );
    assert_eq!(depth(&b, "src").await["pending"], 0, "the ack committed");
    let moved = b.pop("dst?batch=5").await.json;
    assert_eq!(moved["messages"][0]["id"], res[0]["messageId"]);
    b.stop().await;
}

#[tokio::test]
async fn duplicate_of_history_rolls_everything_back() {
    let b = TestBroker::start().await;
    b.push(json!([{"queue": "o.fifo", "partition": "g1", "payload": 1, "transactionId": "dup"}]))
        .await;
    b.push(json!([{"queue": "side", "payload": 1, "transactionId": "s0"}]))
        .await;
    let m = b.pop("side?batch=1").await.json["messages"][0].clone();
    let mut ack = ack_of(&m, "completed");
    ack["type"] = json!("ack");
    let r = b
        .http
        .post("/api/v1/transaction", json!({"operations": [
            {"type": "push", "items": [{"queue": "other", "payload": 1}]},
            {"type": "push", "queue": "o.fifo", "partition": "g1", "payload": 2, "transactionId": "dup"},
            ack],
            "kv": [{"op": "put", "ns": "qs", "key": "k", "value": 1, "forever": true}]}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        (r.json["success"].clone(), r.json["reason"].clone()),
        (json!(false), json!("duplicate"))
    );
    assert!(r.json["error"]
        .as_str()
        .unwrap()
        .starts_with("QDUP duplicate messages in queue \"o.fifo\" partition \"g1\""));
    assert_eq!(r.json["results"], json!([]));
    assert_eq!(
        b.http
            .get("/api/v1/resources/queues/other/depth")
            .await
            .status,
        404,
        "no queue created"
    );
    let kv = b.kv(json!([{"op": "get", "ns": "qs", "key": "k"}])).await;
    assert_eq!(kv.json["results"][0]["found"], false, "no KV write");
    let again = b.ack(ack_of(&m, "completed")).await;
    assert_eq!(
        (again[0]["success"].clone(), again[0]["noop"].clone()),
        (json!(true), json!(false)),
        "the ack was rolled back"
    );
    b.stop().await;
}

#[tokio::test]
async fn rejected_ack_rolls_back_but_completed_below_cursor_is_tolerated() {
    let b = TestBroker::start().await;
    b.push(json!([{"queue": "a", "payload": 1, "transactionId": "m1"}]))
        .await;
    let m = b.pop("a?batch=1").await.json["messages"][0].clone();
    let mut stale = ack_of(&m, "completed");
    stale["type"] = json!("ack");
    stale["leaseId"] = json!("01900000-0000-7000-8000-000000000000");
    let r = b
        .http
        .post(
            "/api/v1/transaction",
            json!({"operations": [
            {"type": "push", "items": [{"queue": "b", "payload": 1}]}, stale]}),
        )
        .await;
    assert_eq!(
        (r.json["success"].clone(), r.json["reason"].clone()),
        (json!(false), json!("ack_rejected"))
    );
    assert!(r.json["error"]
        .as_str()
        .unwrap()
        .contains("invalid or expired lease"));
    assert_eq!(
        b.http.get("/api/v1/resources/queues/b/depth").await.status,
        404
    );
    let mut unknown = ack_of(&m, "completed");
    unknown["type"] = json!("ack");
    unknown["transactionId"] = json!("ghost");
    let r = b
        .http
        .post("/api/v1/transaction", json!({"operations": [unknown]}))
        .await;
    assert_eq!(r.json["reason"], "ack_rejected");
    assert_eq!(
        r.json["error"],
        "QTXN ack references unknown transactionId; transaction rolled back"
    );
    // Complete it, then a lease-less completed ack below the cursor does not abort.
    b.ack(ack_of(&m, "completed")).await;
    let below = json!({"type": "ack", "transactionId": "m1", "partitionId": m["partitionId"], "status": "completed"});
    let r = b
        .http
        .post("/api/v1/transaction", json!({"operations": [below]}))
        .await;
    assert_eq!(r.json["success"], true, "{}", r.json);
    b.stop().await;
}

#[tokio::test]
async fn kv_precondition_rollback_reports_the_flat_failed_index() {
    let b = TestBroker::start().await;
    let w = b.kv(json!([{"op": "put", "ns": "qs", "key": "fence", "value": {"held": "by-someone-else"}, "forever": true}])).await;
    let v = w.json["results"][0]["version"].clone();
    let r = b
        .http
        .post("/api/v1/transaction", json!({"operations": [
            {"type": "push", "items": [{"queue": "kp", "payload": 1}, {"queue": "kp", "payload": 2}]},
            {"type": "push", "items": [{"queue": "kp", "payload": 3}, {"queue": "kp", "payload": 4}]}],
            "kv": [{"op": "put", "ns": "qs", "key": "free", "value": 1, "forever": true},
                   {"op": "put", "ns": "qs", "key": "fence", "value": 2, "forever": true, "expect": 77, "required": true}]}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["success"], false);
    assert_eq!(r.json["reason"], "kv_precondition");
    assert_eq!(r.json["ok"], false);
    assert_eq!(r.json["failedIndex"], 5, "4 push items, then kv ordinal 1");
    assert_eq!(r.json["kvReason"], "version");
    assert_eq!(r.json["version"], v);
    assert_eq!(r.json["value"], json!({"held": "by-someone-else"}));
    assert_eq!(
        b.http.get("/api/v1/resources/queues/kp/depth").await.status,
        404
    );
    let g = b
        .kv(json!([{"op": "get", "ns": "qs", "key": "free"}]))
        .await;
    assert_eq!(g.json["results"][0]["found"], false);
    // Absent key: kvReason absent, version 0, value null.
    let r = b
        .http
        .post(
            "/api/v1/transaction",
            json!({"operations": [],
            "kv": [{"op": "delete", "ns": "qs", "key": "nope", "expect": 3, "required": true}]}),
        )
        .await;
    assert_eq!(
        (
            r.json["failedIndex"].clone(),
            r.json["kvReason"].clone(),
            r.json["version"].clone(),
            r.json["value"].clone()
        ),
        (json!(0), json!("absent"), json!(0), Value::Null)
    );
    // A KV-only bundle commits.
    let r = b
        .http
        .post("/api/v1/transaction", json!({"operations": [], "kv": [{"op": "incr", "ns": "qs", "key": "c", "delta": 1, "forever": true}]}))
        .await;
    assert_eq!(r.json["success"], true);
    assert_eq!(r.json["results"][0]["value"], 1);
    // getPrefix is refused inside a transaction.
    let r = b
        .http
        .post(
            "/api/v1/transaction",
            json!({"operations": [], "kv": [{"op": "getPrefix", "ns": "qs", "prefix": "q"}]}),
        )
        .await;
    assert_eq!(
        (r.status, r.json["reason"].clone()),
        (400, json!("bad_request"))
    );
    b.stop().await;
}

#[tokio::test]
async fn timer_rider_rolls_back_with_the_bundle() {
    let b = TestBroker::start().await;
    b.push(json!([{"queue": "tr", "payload": 1, "transactionId": "x"}]))
        .await;
    let r = b
        .http
        .post("/api/v1/transaction", json!({"operations": [{"type": "push", "items": [{"queue": "tr", "payload": 2, "transactionId": "x"}]}],
            "timers": [{"op": "schedule", "queue": "tr", "timerKey": "k", "delayMs": 60000, "txn": "t", "payload": "MQ=="}]}))
        .await;
    assert_eq!(r.json["reason"], "duplicate");
    assert_eq!(
        b.http
            .get("/api/v1/timers/tr?mode=count&prefix=k")
            .await
            .json["count"],
        0
    );
    let r = b
        .http
        .post("/api/v1/transaction", json!({"operations": [],
            "timers": [{"op": "schedule", "queue": "tr", "timerKey": "k", "delayMs": 9_000_000_000i64, "txn": "t", "payload": "MQ=="}]}))
        .await;
    assert_eq!(
        (r.status, r.json["reason"].clone()),
        (403, json!("timer_horizon_exceeded"))
    );
    b.stop().await;
}

#[tokio::test]
async fn transaction_push_payloads_stay_byte_for_byte() {
    let b = TestBroker::start().await;
    let body = br#"{"operations":[{"type":"push","items":[{"queue":"raw","payload":{"z" : 1.50, "a":[ ]}}]},
                   {"type":"push","queue":"raw","data":{"flat":  true}}]}"#;
    let r = b
        .http
        .raw("POST", "/api/v1/transaction", body.to_vec())
        .await;
    assert_eq!(r.json["success"], true, "{}", r.json);
    let p = b.pop("raw?batch=5").await;
    let text = String::from_utf8(p.bytes.to_vec()).unwrap();
    assert!(text.contains(r#""data":{"z" : 1.50, "a":[ ]}"#), "{text}");
    assert!(text.contains(r#""data":{"flat":  true}"#), "{text}");
    b.stop().await;
}
