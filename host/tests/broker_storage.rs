//! Storage follows the backlog, not throughput × retention (issue 19, defect 11): what every
//! consumer group acknowledged leaves the store promptly, while what is queued, leased, owed
//! to a slower group or still inside the dedup window stays. The store is read directly
//! from its SQLite file, next to the broker's own connections.

mod broker_support;

use broker_support::{ack_of, TestBroker};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Options as the SQS facade configures a standard queue: retention on, 4 days for both
/// ages (so before reclaiming, every acked message stayed 4 days), no dedup window.
fn facade_like(queue: &str, dedup_window: i64) -> Value {
    json!({"queue": queue, "options": {"leaseTime": 30, "retentionEnabled": true,
        "retentionSeconds": 345600, "completedRetentionSeconds": 345600,
        "dedupWindowSeconds": dedup_window, "deadLetterQueue": false, "dlqAfterMaxRetries": false}})
}

/// (rows, payload bytes) of the queue's stored messages.
fn stored(b: &TestBroker, queue: &str) -> (i64, i64) {
    let conn = rusqlite::Connection::open(b.dir.join("queen.sqlite3")).expect("open store");
    conn.query_row(
        "SELECT COUNT(*), COALESCE(SUM(LENGTH(m.payload)), 0) FROM messages m
           JOIN partitions p ON p.id = m.partition_id JOIN queues q ON q.id = p.queue_id
          WHERE q.name = ?1",
        [queue],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .expect("count")
}

/// The stored offsets of the queue, in order.
fn offsets(b: &TestBroker, queue: &str) -> Vec<i64> {
    let conn = rusqlite::Connection::open(b.dir.join("queen.sqlite3")).expect("open store");
    let mut st = conn
        .prepare(
            "SELECT m.offset FROM messages m JOIN partitions p ON p.id = m.partition_id
               JOIN queues q ON q.id = p.queue_id WHERE q.name = ?1 ORDER BY m.offset",
        )
        .expect("prepare");
    let rows = st
        .query_map([queue], |r| r.get(0))
        .expect("query")
        .collect::<Result<Vec<i64>, _>>()
        .expect("rows");
    rows
}

/// Waits up to 3 s (three retention steps) for `cond`; the last value either way.
async fn within_steps<T>(mut probe: impl FnMut() -> T, cond: impl Fn(&T) -> bool) -> T {
    let until = Instant::now() + Duration::from_secs(3);
    loop {
        let v = probe();
        if cond(&v) || Instant::now() > until {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn body(i: usize, size: usize) -> Value {
    json!(format!("{i:06}{}", "x".repeat(size.saturating_sub(6))))
}

async fn push_n(b: &TestBroker, queue: &str, from: usize, n: usize, size: usize) {
    let items: Vec<Value> = (from..from + n)
        .map(|i| json!({"queue": queue, "partition": "p", "payload": body(i, size)}))
        .collect();
    for chunk in items.chunks(100) {
        b.push(Value::Array(chunk.to_vec())).await;
    }
}

/// Pops batches of `batch` for `group` (the queue mode when `None`) until `n` messages were
/// taken, acking each batch when `ack` says so; returns the messages.
async fn take(
    b: &TestBroker,
    queue: &str,
    group: Option<&str>,
    batch: usize,
    n: usize,
    ack: bool,
) -> Vec<Value> {
    let mut got = Vec::new();
    let g = group
        .map(|g| format!("&consumerGroup={g}"))
        .unwrap_or_default();
    while got.len() < n {
        let want = batch.min(n - got.len());
        let p = b.pop(&format!("{queue}?batch={want}&wait=false{g}")).await;
        assert_eq!(p.status, 200, "pop after {} of {n}", got.len());
        let ms = p.json["messages"].as_array().expect("messages").clone();
        if ack {
            ack_all(b, &ms, group).await;
        }
        got.extend(ms);
    }
    got
}

/// Acks these messages `completed` in one batch and asserts every ack succeeded.
async fn ack_all(b: &TestBroker, ms: &[Value], group: Option<&str>) -> Vec<Value> {
    let acks: Vec<Value> = ms.iter().map(|m| ack_of(m, "completed")).collect();
    let mut body = json!({ "acknowledgments": acks });
    if let Some(g) = group {
        body["consumerGroup"] = json!(g);
    }
    let r = b.http.post("/api/v1/ack/batch", body).await;
    let out = r.json.as_array().expect("ack answers").clone();
    assert!(out.iter().all(|a| a["success"] == true), "{}", r.json);
    out
}

async fn pending(b: &TestBroker, queue: &str) -> i64 {
    b.http
        .get(&format!(
            "/api/v1/resources/queues/{queue}/depth?group=__QUEUE_MODE__"
        ))
        .await
        .json["pending"]
        .as_i64()
        .unwrap_or(-1)
}

#[tokio::test]
async fn acked_messages_leave_the_store_within_a_few_steps() {
    let b = TestBroker::start().await;
    b.configure(facade_like("drained", 0)).await;
    push_n(&b, "drained", 0, 300, 1024).await;
    take(&b, "drained", None, 10, 300, true).await;
    let left = within_steps(|| stored(&b, "drained"), |s| s.0 == 0).await;
    assert_eq!(
        left,
        (0, 0),
        "rows and payload bytes left after acking all 300"
    );
    // Offsets stay monotonic, the depth is exact, and what comes next is delivered.
    assert_eq!(pending(&b, "drained").await, 0);
    let fresh = b
        .push(json!([{"queue": "drained", "partition": "p", "payload": "next"}]))
        .await;
    assert_eq!(fresh[0]["offset"], 300, "offsets are never reused");
    assert_eq!(pending(&b, "drained").await, 1);
    let p = b.pop("drained?batch=10&wait=false").await;
    let ms = p.json["messages"].as_array().expect("messages");
    assert_eq!((ms.len(), ms[0]["data"].clone()), (1, json!("next")));
    b.stop().await;
}

#[tokio::test]
async fn queued_leased_and_slower_group_messages_are_kept() {
    let b = TestBroker::start().await;
    b.configure(facade_like("kept", 0)).await;
    push_n(&b, "kept", 0, 30, 512).await;
    // A named group holds 0..=4 (so both groups have cursors before any ack), queue mode
    // acks 0..=9 and leases 10..=19, then the named group acks its five.
    let audit = take(&b, "kept", Some("audit"), 5, 5, false).await;
    take(&b, "kept", None, 10, 10, true).await;
    let leased = take(&b, "kept", None, 10, 10, false).await;
    assert_eq!(
        offsets(&b, "kept").len(),
        30,
        "the named group's lease holds everything"
    );
    ack_all(&b, &audit, Some("audit")).await;
    let want: Vec<i64> = (5..30).collect();
    let got = within_steps(|| offsets(&b, "kept"), |o| *o == want).await;
    assert_eq!(got, want, "only what both groups acked goes");
    // The named group catches up past the lease: the leased span still stays.
    take(&b, "kept", Some("audit"), 10, 20, true).await;
    let want: Vec<i64> = (10..30).collect();
    let got = within_steps(|| offsets(&b, "kept"), |o| *o == want).await;
    assert_eq!(got, want, "a live lease keeps its claim");
    ack_all(&b, &leased, None).await;
    let want: Vec<i64> = (20..30).collect();
    let got = within_steps(|| offsets(&b, "kept"), |o| *o == want).await;
    assert_eq!(got, want, "queued for the queue mode: kept");
    assert_eq!(pending(&b, "kept").await, 10);
    // Every kept message is delivered whole.
    let rest = take(&b, "kept", None, 10, 10, false).await;
    let first: Vec<Value> = rest.iter().map(|m| m["data"].clone()).collect();
    let expect: Vec<Value> = (20..30).map(|i| body(i, 512)).collect();
    assert_eq!(first, expect);
    b.stop().await;
}

#[tokio::test]
async fn acks_inside_a_live_lease_still_resolve_by_transaction_id() {
    let b = TestBroker::start().await;
    b.configure(facade_like("span", 0)).await;
    let items: Vec<Value> = ["a", "b", "c"]
        .iter()
        .map(|t| json!({"queue": "span", "partition": "p", "payload": t, "transactionId": t}))
        .collect();
    b.push(Value::Array(items)).await;
    let ms = b.pop("span?batch=3&wait=false").await.json["messages"]
        .as_array()
        .expect("messages")
        .clone();
    // b acked first: a is implicitly completed, the lease still holds c.
    ack_all(&b, &ms[1..2], None).await;
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert_eq!(
        offsets(&b, "span"),
        vec![0, 1, 2],
        "the live lease keeps its span"
    );
    // One transaction acks a (below the cursor now) and c: both resolve, nothing rolls back.
    let mut acks: Vec<Value> = [&ms[0], &ms[2]]
        .iter()
        .map(|m| ack_of(m, "completed"))
        .collect();
    for a in acks.iter_mut() {
        a["type"] = json!("ack");
    }
    let r = b
        .http
        .post("/api/v1/transaction", json!({"operations": acks}))
        .await;
    assert_eq!(r.json["success"], true, "{}", r.json);
    let left = within_steps(|| stored(&b, "span"), |s| s.0 == 0).await;
    assert_eq!(left.0, 0, "the completed batch goes");
    b.stop().await;
}

#[tokio::test]
async fn dedup_ids_outlive_the_payload_for_their_window() {
    let b = TestBroker::start().await;
    b.configure(facade_like("fifo", 3600)).await;
    let first = b
        .push(json!([{"queue": "fifo", "partition": "g1", "payload": "x".repeat(4096), "transactionId": "dedup-1"}]))
        .await;
    let m = b.pop("fifo?batch=1&wait=false").await.json["messages"][0].clone();
    ack_all(&b, std::slice::from_ref(&m), None).await;
    let left = within_steps(|| stored(&b, "fifo"), |s| s.0 == 0).await;
    assert_eq!(left, (0, 0), "the payload goes with the message");
    // The id is still known: a resend is the duplicate of the original, not a new message.
    let again = b
        .push(json!([{"queue": "fifo", "partition": "g1", "payload": "y", "transactionId": "dedup-1"}]))
        .await;
    assert_eq!(again[0]["status"], "duplicate", "{again:?}");
    assert_eq!(again[0]["message_id"], first[0]["message_id"]);
    assert_eq!(again[0]["offset"], 0);
    assert_eq!(pending(&b, "fifo").await, 0);
    // A lease-less ack of it is below the cursor (a no-op success), not unresolvable.
    let mut late = ack_of(&m, "completed");
    late["leaseId"] = Value::Null;
    let r = b.ack(late).await;
    assert_eq!(
        (r[0]["success"].clone(), r[0]["noop"].clone()),
        (json!(true), json!(true)),
        "{r:?}"
    );
    // Another partition's id is its own (the window is per partition).
    let other = b
        .push(json!([{"queue": "fifo", "partition": "g2", "payload": "z", "transactionId": "dedup-1"}]))
        .await;
    assert_eq!(other[0]["status"], "queued");
    // A deleted and re-created queue forgets its ids.
    let d = b
        .http
        .call("DELETE", "/api/v1/resources/queues/fifo", None)
        .await;
    assert_eq!(d.status, 200, "{}", d.json);
    b.configure(facade_like("fifo", 3600)).await;
    let fresh = b
        .push(json!([{"queue": "fifo", "partition": "g1", "payload": "w", "transactionId": "dedup-1"}]))
        .await;
    assert_eq!(fresh[0]["status"], "queued", "{fresh:?}");
    b.stop().await;
}

/// Bytes of the store's pages in use (free pages left out), the WAL's latest pages included.
fn used_bytes(b: &TestBroker) -> i64 {
    let conn = rusqlite::Connection::open(b.dir.join("queen.sqlite3")).expect("open store");
    let q = |p: &str| -> i64 {
        conn.query_row(&format!("PRAGMA {p}"), [], |r| r.get(0))
            .expect("pragma")
    };
    (q("page_count") - q("freelist_count")) * q("page_size")
}

#[tokio::test]
async fn a_queued_backlog_takes_about_its_own_size() {
    let b = TestBroker::start().await;
    b.configure(facade_like("backlog", 0)).await;
    let empty = used_bytes(&b);
    // 2,000 bodies of 1 KiB over 8 partitions: 2 MiB of payload.
    let items: Vec<Value> = (0..2000)
        .map(|i| json!({"queue": "backlog", "partition": (i % 8).to_string(), "payload": body(i, 1024)}))
        .collect();
    for chunk in items.chunks(100) {
        b.push(Value::Array(chunk.to_vec())).await;
    }
    let (_, payload) = stored(&b, "backlog");
    let grown = used_bytes(&b) - empty;
    assert!(
        grown < payload * 3 / 2,
        "{grown} bytes of pages for {payload} bytes of payload"
    );
    b.stop().await;
}

#[tokio::test]
async fn timers_holding_message_copies_take_about_their_size() {
    use base64::Engine;
    let b = TestBroker::start().await;
    let empty = used_bytes(&b);
    // 1,000 visibility-style timers, each holding a 1,200-byte message copy: 1.2 MB.
    let copy = base64::engine::general_purpose::STANDARD.encode("m".repeat(1200));
    for chunk in 0..10 {
        let ops: Vec<Value> = (0..100)
            .map(|i| {
                json!({"op": "schedule", "queue": "held", "timerKey": format!("sqs.v.{chunk}.{i}"),
                            "delayMs": 600000, "txn": format!("t{chunk}.{i}"), "payload": copy})
            })
            .collect();
        let r = b
            .http
            .post("/api/v1/timers", json!({ "operations": ops }))
            .await;
        assert_eq!(r.status, 200, "{}", r.json);
    }
    let grown = used_bytes(&b) - empty;
    assert!(
        grown < 1_200_000 * 3 / 2,
        "{grown} bytes of pages for 1,200,000 bytes of timer payload"
    );
    b.stop().await;
}

fn len(b: &TestBroker, file: &str) -> u64 {
    std::fs::metadata(b.dir.join(file))
        .map(|m| m.len())
        .unwrap_or(0)
}

#[tokio::test]
async fn the_store_file_follows_the_backlog_through_a_sustained_drain() {
    let b = TestBroker::start().await;
    b.configure(facade_like("steady", 0)).await;
    // 40 rounds of 100 × 4 KiB sent, received and acked: 16 MiB through a backlog of 400 KiB.
    for round in 0..40 {
        push_n(&b, "steady", round * 100, 100, 4096).await;
        take(&b, "steady", None, 10, 100, true).await;
    }
    let db = within_steps(|| len(&b, "queen.sqlite3"), |n| *n < 4 << 20).await;
    assert!(
        db < 4 << 20,
        "db after 16 MiB through the queue: {db} bytes"
    );
    // A backlog of 12 MiB, then drained: the file gives most of the space back.
    push_n(&b, "steady", 4000, 3000, 4096).await;
    let full = len(&b, "queen.sqlite3");
    assert!(
        full > 8 << 20,
        "the backlog is in the file (the rest in the WAL): {full}"
    );
    take(&b, "steady", None, 10, 3000, true).await;
    let db = within_steps(|| len(&b, "queen.sqlite3"), |n| *n < 6 << 20).await;
    assert!(
        db < 6 << 20,
        "db after draining 12 MiB: {db} bytes (queued: {full})"
    );
    let wal = len(&b, "queen.sqlite3-wal");
    assert!(wal <= 6 << 20, "WAL: {wal} bytes");
    assert_eq!(stored(&b, "steady"), (0, 0));
    b.stop().await;
}
