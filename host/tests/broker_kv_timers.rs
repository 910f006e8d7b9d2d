//! The key/value store and timers over loopback HTTP.

mod broker_support;

use broker_support::TestBroker;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn res(r: &broker_support::Resp) -> Vec<Value> {
    assert_eq!(r.status, 200, "{}", r.json);
    r.json["results"]
        .as_array()
        .unwrap_or_else(|| panic!("results in {}", r.json))
        .clone()
}

#[tokio::test]
async fn kv_versions_and_compare_and_set() {
    let b = TestBroker::start().await;
    let r = res(&b.kv(json!([{"op": "put", "ns": "qs", "key": "qs:q:a", "value": {"n": 1}, "forever": true, "expect": 0}])).await);
    assert_eq!(
        (
            r[0]["applied"].clone(),
            r[0]["op"].clone(),
            r[0]["index"].clone()
        ),
        (json!(true), json!("put"), json!(0))
    );
    let v1 = r[0]["version"].as_i64().unwrap();
    assert!(v1 > 0);
    // expect 0 loses to an existing row and reports the winner.
    let r = res(&b.kv(json!([{"op": "put", "ns": "qs", "key": "qs:q:a", "value": 2, "forever": true, "expect": 0}])).await);
    assert_eq!(
        r[0],
        json!({"index": 0, "op": "put", "applied": false, "reason": "exists", "key": "qs:q:a", "value": {"n": 1}, "version": v1})
    );
    // expect N updates; a stale N loses with "version"; N on a missing key is "absent".
    let r = res(&b.kv(json!([{"op": "put", "ns": "qs", "key": "qs:q:a", "value": 3, "forever": true, "expect": v1}])).await);
    let v2 = r[0]["version"].as_i64().unwrap();
    assert_ne!(v2, v1);
    let r = res(&b.kv(json!([{"op": "put", "ns": "qs", "key": "qs:q:a", "value": 4, "forever": true, "expect": v1},
                             {"op": "put", "ns": "qs", "key": "qs:q:none", "value": 4, "forever": true, "expect": 5}])).await);
    assert_eq!(
        (r[0]["reason"].clone(), r[0]["version"].clone()),
        (json!("version"), json!(v2))
    );
    assert_eq!(
        (
            r[1]["reason"].clone(),
            r[1]["version"].clone(),
            r[1]["value"].clone()
        ),
        (json!("absent"), json!(0), Value::Null)
    );
    // get hit / miss; null value differs from absence.
    res(&b
        .kv(json!([{"op": "put", "ns": "qs", "key": "nul", "value": null, "forever": true}]))
        .await);
    let r = res(&b.kv(json!([{"op": "get", "ns": "qs", "key": "qs:q:a"}, {"op": "get", "ns": "qs", "key": "missing"},
                             {"op": "get", "ns": "qs", "key": "nul"}])).await);
    assert_eq!(
        (
            r[0]["found"].clone(),
            r[0]["value"].clone(),
            r[0]["version"].clone()
        ),
        (json!(true), json!(3), json!(v2))
    );
    assert_eq!(r[0]["expiresAt"], Value::Null);
    assert!(r[0]["updatedAt"].is_string());
    assert_eq!(
        r[1],
        json!({"index": 1, "op": "get", "found": false, "key": "missing"})
    );
    assert_eq!(
        (r[2]["found"].clone(), r[2]["value"].clone()),
        (json!(true), Value::Null)
    );
    // delete variants.
    let r = res(&b
        .kv(json!([{"op": "delete", "ns": "qs", "key": "missing"},
                             {"op": "delete", "ns": "qs", "key": "missing2", "expect": 0},
                             {"op": "delete", "ns": "qs", "key": "qs:q:a", "expect": v2}]))
        .await);
    assert_eq!(
        (r[0]["applied"].clone(), r[0]["reason"].clone()),
        (json!(false), json!("absent"))
    );
    assert_eq!(
        (r[1]["applied"].clone(), r[1]["version"].clone()),
        (json!(true), json!(0))
    );
    assert_eq!(
        (
            r[2]["applied"].clone(),
            r[2]["value"].clone(),
            r[2]["version"].clone()
        ),
        (json!(true), json!(3), json!(v2))
    );
    // putIfAbsent echoes its name; check writes nothing.
    let r = res(&b
        .kv(
            json!([{"op": "putIfAbsent", "ns": "qs", "key": "pia", "value": 1, "ttlSeconds": 60},
                             {"op": "check", "ns": "qs", "key": "nothing", "expect": 0},
                             {"op": "check", "ns": "qs", "key": "nul", "expect": 0}]),
        )
        .await);
    assert_eq!(
        (r[0]["op"].clone(), r[0]["applied"].clone()),
        (json!("putIfAbsent"), json!(true))
    );
    assert_eq!(r[1]["applied"], true);
    assert_eq!(
        (r[2]["applied"].clone(), r[2]["reason"].clone()),
        (json!(false), json!("exists"))
    );
    b.stop().await;
}

#[tokio::test]
async fn kv_required_precondition_aborts_the_whole_call() {
    let b = TestBroker::start().await;
    let r = res(&b.kv(json!([{"op": "put", "ns": "qs", "key": "held", "value": {"held": "by-someone-else"}, "forever": true}])).await);
    let v = r[0]["version"].clone();
    let r = b
        .kv(json!([{"op": "put", "ns": "qs", "key": "side", "value": 1, "forever": true},
                   {"op": "put", "ns": "qs", "key": "held", "value": 2, "forever": true, "expect": 1, "required": true}]))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json,
        json!({"ok": false, "reason": "kv_precondition", "failedIndex": 1, "kvReason": "version",
                              "version": v, "value": {"held": "by-someone-else"}})
    );
    let g = res(&b
        .kv(json!([{"op": "get", "ns": "qs", "key": "side"}]))
        .await);
    assert_eq!(g[0]["found"], false, "nothing of the call was written");
    b.stop().await;
}

#[tokio::test]
async fn kv_ttl_expiry_incr_and_batch_order() {
    let b = TestBroker::start().await;
    let r = res(&b
        .kv(json!([{"op": "put", "ns": "t", "key": "short", "value": "x", "ttlSeconds": 1}]))
        .await);
    assert!(r[0]["version"].as_i64().unwrap() > 0);
    let g = res(&b
        .kv(json!([{"op": "get", "ns": "t", "key": "short"}]))
        .await);
    assert!(g[0]["expiresAt"].is_string());
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let g = res(&b.kv(json!([{"op": "get", "ns": "t", "key": "short"}, {"op": "put", "ns": "t", "key": "short", "value": "y", "forever": true, "expect": 0}])).await);
    assert_eq!(g[0]["found"], false, "expired rows are invisible");
    assert_eq!(g[1]["applied"], true, "an expired row counts as absent");
    // incr: create with delta, ceiling refuses without writing, type error on strings.
    let r = res(&b
        .kv(json!([{"op": "incr", "ns": "t", "key": "n", "delta": 2, "max": 3, "ttlSeconds": 60}]))
        .await);
    assert_eq!(
        (r[0]["applied"].clone(), r[0]["value"].clone()),
        (json!(true), json!(2))
    );
    let r = res(&b
        .kv(json!([{"op": "incr", "ns": "t", "key": "n", "delta": 2, "max": 3, "ttlSeconds": 60}]))
        .await);
    assert_eq!(
        (
            r[0]["applied"].clone(),
            r[0]["reason"].clone(),
            r[0]["value"].clone()
        ),
        (json!(false), json!("limit"), json!(2))
    );
    let r = res(&b
        .kv(json!([{"op": "incr", "ns": "t", "key": "n", "delta": 0.5, "forever": true}]))
        .await);
    assert_eq!(r[0]["value"], json!(2.5));
    let r = res(&b
        .kv(json!([{"op": "incr", "ns": "t", "key": "short", "delta": 1, "forever": true}]))
        .await);
    assert_eq!(r[0]["reason"], "type");
    // Reads in a batch see the batch's writes; results by input index.
    let r = res(&b.kv(json!([{"op": "getMany", "ns": "t", "keys": ["w", "zz"]}, {"op": "put", "ns": "t", "key": "w", "value": 9, "forever": true}])).await);
    assert_eq!(r[0]["rows"][0]["value"], 9);
    assert_eq!(r[0]["missing"], json!(["zz"]));
    assert_eq!(r[0]["truncated"], false);
    assert_eq!(r[1]["op"], "put");
    b.stop().await;
}

#[tokio::test]
async fn kv_prefix_pages_in_byte_order() {
    let b = TestBroker::start().await;
    let ops: Vec<Value> = ["p:b", "p:a", "p:c", "p:ab", "q:a", "p:é"]
        .iter()
        .map(|k| json!({"op": "put", "ns": "pg", "key": k, "value": k, "forever": true}))
        .collect();
    res(&b.kv(Value::Array(ops)).await);
    let r = res(&b
        .kv(json!([{"op": "getPrefix", "ns": "pg", "prefix": "p:", "limit": 2}]))
        .await);
    let keys: Vec<_> = r[0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["key"].clone())
        .collect();
    assert_eq!(keys, vec![json!("p:a"), json!("p:ab")]);
    assert_eq!(
        (r[0]["truncated"].clone(), r[0]["nextAfter"].clone()),
        (json!(true), json!("p:ab"))
    );
    let r = res(&b.kv(json!([{"op": "getPrefix", "ns": "pg", "prefix": "p:", "limit": 2, "after": "p:ab", "keysOnly": true}])).await);
    let rows = r[0]["rows"].as_array().unwrap();
    assert_eq!(
        rows.iter().map(|x| x["key"].clone()).collect::<Vec<_>>(),
        vec![json!("p:b"), json!("p:c")]
    );
    assert!(rows[0].get("value").is_none(), "keysOnly omits values");
    let r = res(&b
        .kv(json!([{"op": "getPrefix", "ns": "pg", "prefix": "p:", "after": "p:c"}]))
        .await);
    assert_eq!(
        r[0]["rows"].as_array().unwrap().len(),
        1,
        "byte order puts é last"
    );
    assert_eq!(
        (r[0]["truncated"].clone(), r[0]["nextAfter"].clone()),
        (json!(false), Value::Null)
    );
    b.stop().await;
}

#[tokio::test]
async fn kv_refusals_and_path_routes() {
    let b = TestBroker::start().await;
    let cases = [
        (
            json!([{"op": "get", "ns": "Bad", "key": "k"}]),
            400,
            "kv_bad_namespace",
        ),
        (
            json!([{"op": "get", "ns": "ok", "key": ""}]),
            400,
            "kv_bad_key",
        ),
        (
            json!([{"op": "put", "ns": "ok", "key": "k", "value": 1}]),
            400,
            "kv_expiry_not_specified",
        ),
        (
            json!([{"op": "put", "ns": "ok", "key": "k", "value": 1, "ttlSeconds": 0}]),
            400,
            "kv_bad_ttl",
        ),
        (
            json!([{"op": "put", "ns": "ok", "key": "k", "value": 1, "ttlSeconds": 5, "forever": true}]),
            400,
            "kv_expiry_not_specified",
        ),
        (
            json!([{"op": "put", "ns": "ok", "key": "k", "value": 1, "forever": true, "expect": null}]),
            400,
            "kv_bad_expect",
        ),
        (
            json!([{"op": "put", "ns": "ok", "key": "k", "value": 1, "forever": true}, {"op": "delete", "ns": "ok", "key": "k"}]),
            400,
            "kv_duplicate_key_in_call",
        ),
        (
            json!([{"op": "frob", "ns": "ok", "key": "k"}]),
            400,
            "kv_unknown_op",
        ),
        (
            json!([{"op": "getPrefix", "ns": "ok", "prefix": ""}]),
            400,
            "kv_prefix_required",
        ),
        (
            json!([{"op": "get", "ns": "ok", "key": "k", "tenant": "x"}]),
            400,
            "kv_tenant_not_an_input",
        ),
        (
            json!([{"op": "put", "ns": "ok", "key": "k", "value": "x".repeat(70_000), "forever": true}]),
            413,
            "kv_value_too_large",
        ),
        (
            json!([{"op": "get", "ns": "ok", "key": "k".repeat(513)}]),
            413,
            "kv_key_too_large",
        ),
    ];
    for (ops, status, reason) in cases {
        let r = b.kv(ops.clone()).await;
        assert_eq!(
            (r.status, r.json["reason"].clone()),
            (status, json!(reason)),
            "{ops}"
        );
        let code = if status == 413 {
            "payload_too_large"
        } else {
            "kv_bad_request"
        };
        assert_eq!(r.json["error"], code);
        assert!(r.json["detail"].is_string());
    }
    let too_many: Vec<Value> = (0..257)
        .map(|i| json!({"op": "get", "ns": "ok", "key": format!("k{i}")}))
        .collect();
    assert_eq!(
        b.kv(Value::Array(too_many)).await.json["reason"],
        "kv_too_many_ops"
    );
    let r = b.http.raw("POST", "/api/v1/kv", b"{oops".to_vec()).await;
    assert_eq!(
        (r.status, r.json["reason"].clone()),
        (400, json!("kv_bad_body"))
    );
    // A failed validation writes nothing.
    let r = res(&b.kv(json!([{"op": "get", "ns": "ok", "key": "k"}])).await);
    assert_eq!(r[0]["found"], false);
    // Bare array body and empty list.
    let r = b.http.post("/api/v1/kv", json!([])).await;
    assert_eq!(r.json, json!({"results": []}));
    // Path routes.
    let r = b
        .http
        .call(
            "PUT",
            "/api/v1/kv/ok/a%2Fb/c",
            Some(json!({"value": 5, "forever": true})),
        )
        .await;
    assert_eq!(
        (r.json["applied"].clone(), r.json["key"].clone()),
        (json!(true), json!("a/b/c"))
    );
    let g = b.http.get("/api/v1/kv/ok/a/b/c").await;
    assert_eq!(g.json["value"], 5);
    let etag = g.headers.get("etag").unwrap().to_str().unwrap().to_string();
    assert_eq!(etag, format!("\"{}\"", g.json["version"]));
    assert_eq!(
        b.http.get("/api/v1/kv/ok/a/b/c?x=1").await.json["reason"],
        "kv_no_query_string"
    );
    let r = b
        .http
        .call(
            "PUT",
            "/api/v1/kv/ok/z",
            Some(json!({"key": "z", "value": 1, "forever": true})),
        )
        .await;
    assert_eq!(r.json["reason"], "kv_field_in_path");
    let d = b.http.call("DELETE", "/api/v1/kv/ok/a/b/c", None).await;
    assert_eq!(d.json["applied"], true);
    let m = b.http.get("/api/v1/kv/ok/a/b/c").await;
    assert_eq!((m.status, m.json["found"].clone()), (200, json!(false)));
    b.stop().await;
}

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[tokio::test]
async fn timer_fires_with_the_promised_id_and_is_counted_and_cancelled() {
    let b = TestBroker::start().await;
    let r = b
        .http
        .post("/api/v1/timers", json!({"operations": [
            {"op": "schedule", "queue": "tq", "timerKey": "sqs.one", "partition": "7", "delayMs": 300, "txn": "tx-1", "payload": b64(r#"{"b":"later"}"#)},
            {"op": "schedule", "queue": "tq", "timerKey": "sqs.two", "delayMs": 60000, "txn": "tx-2", "payload": b64("3")},
            {"op": "schedule", "queue": "tq", "timerKey": "other", "delayMs": 60000, "txn": "tx-3", "payload": b64("4")}]}))
        .await;
    let rs = res(&r);
    assert_eq!(
        (rs[0]["ok"].clone(), rs[0]["status"].clone()),
        (json!(true), json!("scheduled"))
    );
    let promised = rs[0]["messageId"].clone();
    assert!(rs[0]["deliverAt"].as_str().unwrap().ends_with('Z'));
    let c = b.http.get("/api/v1/timers/tq?mode=count&prefix=sqs.").await;
    assert_eq!(
        c.json,
        json!({"count": 2}),
        "the prefix is literal: \"other\" is not counted"
    );
    // Reschedule replaces and mints a new id.
    let rr = res(&b.http.post("/api/v1/timers", json!([{"op": "reschedule", "queue": "tq", "timerKey": "sqs.two", "delayMs": 50000, "txn": "tx-2b", "payload": b64("5")}])).await);
    assert_eq!(rr[0]["status"], "rescheduled");
    // List pages by key.
    let l = b.http.get("/api/v1/timers/tq?limit=2").await.json;
    let keys: Vec<_> = l["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["timerKey"].clone())
        .collect();
    assert_eq!(keys, vec![json!("other"), json!("sqs.one")]);
    assert_eq!(
        (l["truncated"].clone(), l["nextAfter"].clone()),
        (json!(true), json!("sqs.one"))
    );
    assert!(l["rows"][0].get("payload").is_none());
    let l2 = b.http.get("/api/v1/timers/tq?after=sqs.one").await.json;
    assert_eq!(l2["rows"][0]["txn"], "tx-2b");
    // Peek and cancel.
    let pk = b.http.get("/api/v1/timers/tq/other").await.json;
    assert_eq!(
        (pk["found"].clone(), pk["payload"].clone()),
        (json!(true), json!(b64("4")))
    );
    let cx = b
        .http
        .call("DELETE", "/api/v1/timers/tq/other", None)
        .await
        .json;
    assert_eq!(
        (cx["ok"].clone(), cx["status"].clone(), cx["txn"].clone()),
        (json!(true), json!("cancelled"), json!("tx-3"))
    );
    let cx = b
        .http
        .call("DELETE", "/api/v1/timers/tq/other?txn=tx-3", None)
        .await
        .json;
    assert_eq!(
        (cx["ok"].clone(), cx["status"].clone(), cx["txn"].clone()),
        (json!(false), json!("absent"), json!("tx-3"))
    );
    assert_eq!(
        b.http.get("/api/v1/timers/tq/other").await.json["found"],
        false
    );
    // The fire: the long poll sees the promised id, not early.
    let t = Instant::now();
    let p = b.pop("tq/partition/7?wait=true&timeout=5000").await;
    assert_eq!(p.status, 200);
    let m = &p.json["messages"][0];
    assert_eq!(m["id"], promised);
    assert_eq!(m["transactionId"], "tx-1");
    assert_eq!(m["data"], json!({"b": "later"}));
    assert!(t.elapsed() < Duration::from_millis(2500));
    let c = b.http.get("/api/v1/timers/tq?mode=count&prefix=sqs.").await;
    assert_eq!(c.json["count"], 1, "the fired timer is gone");
    b.stop().await;
}

#[tokio::test]
async fn timer_refusals() {
    let b = TestBroker::start().await;
    let post = |ops: Value| b.http.post("/api/v1/timers", json!({ "operations": ops }));
    let r = post(json!([{"op": "schedule", "queue": "q", "timerKey": "k", "delayMs": 8_000_000_000i64, "txn": "t", "payload": b64("1")}])).await;
    assert_eq!(
        (r.status, r.json["error"].clone(), r.json["reason"].clone()),
        (
            403,
            json!("timer_horizon_exceeded"),
            json!("timers_horizon")
        )
    );
    let r = post(json!([{"op": "schedule", "queue": "q", "timerKey": "k", "delayMs": 1, "txn": "t", "payload": "***"}])).await;
    assert_eq!(
        (r.status, r.json["reason"].clone()),
        (400, json!("timers_payload_not_base64"))
    );
    let r = post(json!([{"op": "schedule", "queue": "q", "timerKey": "k", "delayMs": 1, "txn": "t", "payload": b64("1"), "messageId": "x"}])).await;
    assert_eq!(r.json["reason"], "timers_server_owned_field");
    let r = post(
        json!([{"op": "schedule", "timerKey": "k", "delayMs": 1, "txn": "t", "payload": b64("1")}]),
    )
    .await;
    assert_eq!(r.json["reason"], "timers_queue_required");
    let r = post(
        json!([{"op": "schedule", "queue": "q", "timerKey": "k", "txn": "t", "payload": b64("1")}]),
    )
    .await;
    assert_eq!(r.json["reason"], "timers_delay_required");
    let r = post(json!([{"op": "fire", "queue": "q", "timerKey": "k"}])).await;
    assert_eq!(r.json["reason"], "timers_bad_op");
    let big = "x".repeat(1024 * 1024 + 10);
    let r = post(json!([{"op": "schedule", "queue": "q", "timerKey": "k", "delayMs": 1, "txn": "t", "payload": b64(&big)}])).await;
    assert_eq!(
        (r.status, r.json["reason"].clone()),
        (413, json!("timers_payload_too_large"))
    );
    for (q, reason) in [
        ("mode=count", "timers_count_prefix_required"),
        (
            "mode=count&prefix=a&limit=3",
            "timers_count_page_parameters",
        ),
        ("mode=weird", "timers_read_mode_unknown"),
    ] {
        let r = b.http.get(&format!("/api/v1/timers/q?{q}")).await;
        assert_eq!(
            (r.status, r.json["reason"].clone()),
            (400, json!(reason)),
            "{q}"
        );
    }
    let long = "p".repeat(129);
    let r = b
        .http
        .get(&format!("/api/v1/timers/q?mode=count&prefix={long}"))
        .await;
    assert_eq!(r.json["reason"], "timers_count_prefix_too_long");
    // Nothing was scheduled by any refused batch.
    assert_eq!(b.http.get("/api/v1/timers/q").await.json["rows"], json!([]));
    b.stop().await;
}

#[tokio::test]
async fn zstd_timer_payloads_are_delivered_decompressed() {
    use base64::Engine;
    let b = TestBroker::start().await;
    let doc = br#"{"packed": "yes", "n": [1, 2, 3]}"#;
    let packed =
        ruzstd::encoding::compress_to_vec(&doc[..], ruzstd::encoding::CompressionLevel::Fastest);
    let p64 = base64::engine::general_purpose::STANDARD.encode(&packed);
    let r = b
        .http
        .post(
            "/api/v1/timers",
            json!([{"op": "schedule", "queue": "zq", "timerKey": "z", "delayMs": 0,
                                         "txn": "tz", "payload": p64, "payloadZstd": true}]),
        )
        .await;
    assert_eq!(r.json["results"][0]["ok"], true, "{}", r.json);
    let p = b.pop("zq?wait=true&timeout=3000").await;
    assert_eq!(p.status, 200);
    let text = String::from_utf8(p.bytes.to_vec()).unwrap();
    assert!(
        text.contains(r#""data":{"packed": "yes", "n": [1, 2, 3]}"#),
        "{text}"
    );
    // Not zstd at all: refused at schedule time.
    let r = b
        .http
        .post(
            "/api/v1/timers",
            json!([{"op": "schedule", "queue": "zq", "timerKey": "bad", "delayMs": 0,
                                         "txn": "tb", "payload": b64("{}"), "payloadZstd": true}]),
        )
        .await;
    assert_eq!(
        (r.status, r.json["error"].clone()),
        (400, json!("timers_bad_request"))
    );
    b.stop().await;
}
