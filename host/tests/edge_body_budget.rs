//! Issue 21, item 2: what unauthenticated clients can make the host hold. In a test
//! binary of its own: it measures this process's resident memory, which other tests
//! running beside it would move.

mod support;

use serde_json::json;
use std::time::{Duration, Instant};
use support::Endpoint;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Resident memory of this process (the endpoint runs in it), in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Issue 21, item 2: bodies are read before any signature is checked, so what anonymous
/// clients can make the host hold is the body budget plus 16 KiB a connection, not
/// connections x body size. 2,000 connections each send half of a declared 1 MiB body
/// (1 GiB in all) and stall; with a 16 MiB budget the host holds about 16 + 2,000 x 16 KiB
/// = 47 MiB of them, and a small request is served at once meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_holding_partial_bodies_are_held_to_the_body_budget() {
    const CONNECTIONS: usize = 2_000;
    const SENT: usize = 512 * 1024;
    static BODY: [u8; SENT] = [b'x'; SENT];
    let ep = Endpoint::with_env(&[
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_BODY_BUDGET_MB", "16"),
    ])
    .await;
    let addr = ep.addr;
    let before = rss_kib();
    let mut held = Vec::new();
    for _ in 0..CONNECTIONS {
        let mut s = TcpStream::connect(addr).await.unwrap();
        held.push(tokio::spawn(async move {
            let head = format!(
                "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: {}\r\n\r\n",
                2 * SENT
            );
            s.write_all(head.as_bytes()).await.ok()?;
            // The host stops reading once the budget is spent: this write may never end.
            s.write_all(&BODY).await.ok()?;
            tokio::time::sleep(Duration::from_secs(60)).await;
            Some(s)
        }));
    }
    // Let the host read what it will.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let grown_mib = rss_kib().saturating_sub(before) / 1024;
    // The endpoint still serves small requests, at once, while the budget is spent.
    let asked = Instant::now();
    let (status, v) = ep.sqs("ListQueues", json!({})).await;
    let answered_in = asked.elapsed();
    for h in &held {
        h.abort();
    }
    eprintln!("resident memory grew {grown_mib} MiB holding {CONNECTIONS} partial bodies");
    assert!(
        grown_mib < 200,
        "resident memory grew {grown_mib} MiB with {} MiB of bodies offered",
        CONNECTIONS * SENT >> 20
    );
    assert_eq!(status, 200, "{v}");
    assert!(answered_in < Duration::from_secs(5), "{answered_in:?}");
}
