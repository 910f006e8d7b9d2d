//! What a sustained drain leaves on the embedded broker's disk (`storage` scenario, issue 19
//! defect 11). Producers push batches of 10 while consumers pop(10) and ack each batch, the
//! backlog held under `BENCH_STORAGE_BACKLOG`, until `BENCH_STORAGE_MESSAGES` were delivered
//! and `BENCH_STORAGE_LEFT` more are still queued (so the store can be set against a backlog).
//! Reported per queue shape: bytes the broker process caused to be written to storage
//! (`write_bytes` of /proc/PID/io, so WAL, checkpoints and vacuum all count) per delivered
//! message, and the store's files (database + WAL) right after the drain and after
//! `SETTLE_SECS` of maintenance, next to what is still queued or in flight.
//!
//! Needs `--host-pid` (the broker's process) and `--data-dir` (its data directory).

use crate::scenarios::Env;
use anyhow::{ensure, Context, Result};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Seconds of maintenance (retention steps tick every second) before the second look.
const SETTLE_SECS: u64 = 5;

/// One queue shape of the scenario.
struct Shape {
    label: &'static str,
    lanes: u64,
    /// The queue's `dedupWindowSeconds`; > 0 pushes carry their own transaction ids, as a
    /// FIFO queue's deduplication ids do.
    dedup_window: i64,
}

const SHAPES: &[Shape] = &[
    Shape {
        label: "standard (256 lanes, no dedup window)",
        lanes: 256,
        dedup_window: 0,
    },
    Shape {
        label: "FIFO-like (1,000 groups, dedup ids, 300 s window)",
        lanes: 1_000,
        dedup_window: 300,
    },
];

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// `write_bytes` of the process: bytes it caused to be sent to the storage layer.
fn written(pid: u32) -> Result<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io"))
        .with_context(|| format!("/proc/{pid}/io"))?;
    io.lines()
        .find_map(|l| l.strip_prefix("write_bytes:"))
        .and_then(|v| v.trim().parse().ok())
        .context("no write_bytes in /proc/PID/io")
}

/// (database, WAL) file sizes in bytes.
fn files(dir: &Path) -> (u64, u64) {
    let len = |f: &str| std::fs::metadata(dir.join(f)).map(|m| m.len()).unwrap_or(0);
    (len("queen.sqlite3"), len("queen.sqlite3-wal"))
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / 1_048_576.0)
}

/// Queue options as the SQS facade sends them for a queue with the default retention.
fn options(s: &Shape) -> serde_json::Value {
    json!({"leaseTime": 30, "retryLimit": 3, "deadLetterQueue": false, "dlqAfterMaxRetries": false,
           "retentionEnabled": true, "retentionSeconds": 345600, "completedRetentionSeconds": 345600,
           "dedupWindowSeconds": s.dedup_window})
}

struct Drained {
    secs: f64,
    written: u64,
    delivered: u64,
}

/// Counters the producers and consumers of one run share.
#[derive(Clone)]
struct Flow {
    pushed: Arc<AtomicU64>,
    delivered: Arc<AtomicU64>,
    /// Push no further than this.
    to_push: u64,
    /// Consume until this many are delivered.
    to_deliver: u64,
    /// Most messages pushed and not yet delivered.
    backlog: u64,
}

/// Pushes batches of 10 until `to_push`, never more than `backlog` ahead of the consumers.
async fn produce(
    env_queen: crate::native::Queen,
    q: Arc<String>,
    s: (u64, bool),
    f: Flow,
    bytes: usize,
) -> Result<()> {
    loop {
        let so_far = f.pushed.load(Ordering::Relaxed);
        if so_far >= f.to_push {
            return Ok(());
        }
        if so_far >= f.delivered.load(Ordering::Relaxed) + f.backlog {
            tokio::time::sleep(Duration::from_millis(2)).await;
            continue;
        }
        let first = f.pushed.fetch_add(10, Ordering::Relaxed);
        if first >= f.to_push {
            return Ok(());
        }
        let k = 10.min(f.to_push - first);
        env_queen.push_sized(&q, s.0, first, k, bytes, s.1).await?;
    }
}

/// pop(10) + batch ack until `to_deliver` messages were delivered.
async fn consume(queen: crate::native::Queen, q: Arc<String>, f: Flow) -> Result<()> {
    while f.delivered.load(Ordering::Relaxed) < f.to_deliver {
        match queen.pop_batch(&q, 10).await? {
            Some(c) => {
                let n = queen.ack_batch(&c).await?;
                f.delivered.fetch_add(n, Ordering::Relaxed);
            }
            None => tokio::time::sleep(Duration::from_millis(2)).await,
        }
    }
    Ok(())
}

/// Producers and consumers at once (half the callers each) until `total` messages are
/// delivered and `left` more pushed.
async fn sustain(
    env: &Env,
    q: &Arc<String>,
    s: &Shape,
    (total, left): (u64, u64),
    bytes: usize,
) -> Result<Drained> {
    let f = Flow {
        pushed: Arc::new(AtomicU64::new(0)),
        delivered: Arc::new(AtomicU64::new(0)),
        to_push: total + left,
        to_deliver: total,
        backlog: env_u64("BENCH_STORAGE_BACKLOG", 10_000).max(left),
    };
    let pid = crate::cpu::host_pid().context("the storage scenario needs --host-pid")?;
    let before = written(pid)?;
    let started = Instant::now();
    let producers = (env.clients / 2).max(1);
    let mut tasks = Vec::new();
    for _ in 0..producers {
        let shape = (s.lanes, s.dedup_window > 0);
        let run = produce(env.queen.clone(), q.clone(), shape, f.clone(), bytes);
        tasks.push(tokio::spawn(run));
    }
    for _ in 0..env.clients.saturating_sub(producers).max(1) {
        tasks.push(tokio::spawn(consume(
            env.queen.clone(),
            q.clone(),
            f.clone(),
        )));
    }
    for t in tasks {
        t.await??;
    }
    Ok(Drained {
        secs: started.elapsed().as_secs_f64(),
        written: written(pid)? - before,
        delivered: f.delivered.load(Ordering::Relaxed),
    })
}

/// The shapes to run, `BENCH_STORAGE_SHAPES="0,1"` by default: give one per fresh broker
/// (bench/scripts/storage.sh does) so one shape's store is not counted in another's.
fn chosen() -> Vec<&'static Shape> {
    let spec = std::env::var("BENCH_STORAGE_SHAPES").unwrap_or_else(|_| "0,1".into());
    spec.split(',')
        .filter_map(|i| SHAPES.get(i.trim().parse::<usize>().ok()?))
        .collect()
}

/// Runs the chosen shapes, each on its own queue, and prints one table.
pub async fn storage(env: &Env) -> Result<()> {
    let dir = env
        .data_dir
        .clone()
        .context("the storage scenario needs --data-dir")?;
    let total = env_u64("BENCH_STORAGE_MESSAGES", 1_000_000);
    let left = env_u64("BENCH_STORAGE_LEFT", 10_000);
    let bytes = env_u64("BENCH_STORAGE_BYTES", 1_024) as usize;
    println!(
        "\n### storage: {total} messages of {bytes} B delivered and {left} left queued per shape (push 10 / pop 10 + ack batch, {} callers, backlog <= {}), load average {}\n",
        env.clients,
        env_u64("BENCH_STORAGE_BACKLOG", 10_000).max(left),
        crate::load_average()
    );
    println!("| queue | drain msg/s | written / delivered msg | db + WAL after drain | db + WAL after {SETTLE_SECS} s | queued + in flight (payload) | store / queued |");
    println!("|---|---|---|---|---|---|---|");
    for (i, s) in chosen().into_iter().enumerate() {
        let q = Arc::new(format!("bench-{}-storage-{i}", env.tag));
        env.queen.configure(&q, options(s)).await?;
        let d = sustain(env, &q, s, (total, left), bytes).await?;
        let (db0, wal0) = files(&dir);
        tokio::time::sleep(Duration::from_secs(SETTLE_SECS)).await;
        let (db1, wal1) = files(&dir);
        let (pending, _) = env.queen.depth(&q).await?;
        let queued = pending * bytes as u64;
        println!(
            "| {} | {:.0} | {:.0} B | {} + {} | {} + {} | {pending} msgs ({}) | {:.2} |",
            s.label,
            d.delivered as f64 / d.secs,
            d.written as f64 / d.delivered.max(1) as f64,
            mib(db0),
            mib(wal0),
            mib(db1),
            mib(wal1),
            mib(queued),
            (db1 + wal1) as f64 / queued.max(1) as f64,
        );
        eprintln!(
            "[storage] {}: {} delivered in {:.1} s, {} written",
            s.label,
            d.delivered,
            d.secs,
            mib(d.written)
        );
        ensure!(
            d.delivered + pending == total + left,
            "{} delivered + {pending} pending != {} pushed on {q}",
            d.delivered,
            total + left
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Through the SQS facade (`storage-sqs`): the same sustained drain, but SendMessageBatch of
// 10 and ReceiveMessage(10) + DeleteMessageBatch through the endpoint, so every message in
// flight is held by its visibility timer as the facade holds it. The host's process writes
// the embedded broker's store; `--data-dir` is the broker's data directory.

/// One SendMessageBatch of 10 bodies of `bytes` bytes each.
async fn sqs_send_sized(c: &aws_sdk_sqs::Client, url: &str, first: u64, bytes: usize) -> Result<()> {
    use aws_sdk_sqs::types::SendMessageBatchRequestEntry as Entry;
    let mut req = c.send_message_batch().queue_url(url);
    for i in 0..10u64 {
        let head = format!("storage {:>12} ", first + i);
        let body = format!("{head}{}", "x".repeat(bytes.saturating_sub(head.len())));
        req = req.entries(Entry::builder().id(format!("e{i}")).message_body(body).build()?);
    }
    let out = req.send().await.context("SendMessageBatch")?;
    ensure!(out.failed().is_empty(), "failed entries: {:?}", out.failed());
    Ok(())
}

/// SendMessageBatch of 10 until `to_push`, never more than `backlog` ahead of the consumers.
async fn sqs_produce(c: aws_sdk_sqs::Client, url: Arc<String>, f: Flow, bytes: usize) -> Result<()> {
    loop {
        let so_far = f.pushed.load(Ordering::Relaxed);
        if so_far >= f.to_push {
            return Ok(());
        }
        if so_far >= f.delivered.load(Ordering::Relaxed) + f.backlog {
            tokio::time::sleep(Duration::from_millis(2)).await;
            continue;
        }
        let first = f.pushed.fetch_add(10, Ordering::Relaxed);
        if first >= f.to_push {
            return Ok(());
        }
        sqs_send_sized(&c, &url, first, bytes).await?;
    }
}

/// ReceiveMessage(10) + DeleteMessageBatch until `to_deliver` messages were deleted.
async fn sqs_consume(c: aws_sdk_sqs::Client, url: Arc<String>, f: Flow) -> Result<()> {
    while f.delivered.load(Ordering::Relaxed) < f.to_deliver {
        match crate::sdk::receive_delete(&c, &url, 10, 0).await? {
            0 => tokio::time::sleep(Duration::from_millis(2)).await,
            n => {
                f.delivered.fetch_add(n, Ordering::Relaxed);
            }
        }
    }
    Ok(())
}

/// Messages queued and in flight on a queue, by its attributes.
async fn sqs_depth(c: &aws_sdk_sqs::Client, url: &str) -> Result<u64> {
    use aws_sdk_sqs::types::QueueAttributeName as A;
    let out = c
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(A::ApproximateNumberOfMessages)
        .attribute_names(A::ApproximateNumberOfMessagesNotVisible)
        .send()
        .await
        .context("GetQueueAttributes")?;
    let attrs = out.attributes().context("no attributes")?;
    let n = |a: A| attrs.get(&a).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    Ok(n(A::ApproximateNumberOfMessages) + n(A::ApproximateNumberOfMessagesNotVisible))
}

/// One standard queue with default attributes, sustained through the endpoint until
/// `BENCH_STORAGE_MESSAGES` are deleted and `BENCH_STORAGE_LEFT` more sent; prints one
/// table row: store after the drain against what is still queued.
pub async fn storage_sqs(env: &Env) -> Result<()> {
    let dir = env
        .data_dir
        .clone()
        .context("the storage-sqs scenario needs --data-dir (the broker's)")?;
    let total = env_u64("BENCH_STORAGE_MESSAGES", 1_000_000);
    let left = env_u64("BENCH_STORAGE_LEFT", 10_000);
    let bytes = env_u64("BENCH_STORAGE_BYTES", 1_024) as usize;
    let f = Flow {
        pushed: Arc::new(AtomicU64::new(0)),
        delivered: Arc::new(AtomicU64::new(0)),
        to_push: total + left,
        to_deliver: total,
        backlog: env_u64("BENCH_STORAGE_BACKLOG", 10_000).max(left),
    };
    println!(
        "\n### storage through the SQS facade: {total} messages of {bytes} B deleted and {left} left queued (SendMessageBatch 10 / ReceiveMessage 10 + DeleteMessageBatch, {} callers, backlog <= {}), load average {}\n",
        env.clients,
        f.backlog,
        crate::load_average()
    );
    let name = format!("bench-{}-storage-sqs", env.tag);
    let url = Arc::new(crate::sdk::create_queue(&env.sqs, &name, 64).await?);
    let pid = crate::cpu::host_pid().context("the storage-sqs scenario needs --host-pid")?;
    let before = written(pid)?;
    let started = Instant::now();
    let producers = (env.clients / 2).max(1);
    let mut tasks = Vec::new();
    for _ in 0..producers {
        tasks.push(tokio::spawn(sqs_produce(env.sqs.clone(), url.clone(), f.clone(), bytes)));
    }
    for _ in 0..env.clients.saturating_sub(producers).max(1) {
        tasks.push(tokio::spawn(sqs_consume(env.sqs.clone(), url.clone(), f.clone())));
    }
    for t in tasks {
        t.await??;
    }
    let secs = started.elapsed().as_secs_f64();
    let delivered = f.delivered.load(Ordering::Relaxed);
    let written_bytes = written(pid)? - before;
    let (db0, wal0) = files(&dir);
    tokio::time::sleep(Duration::from_secs(SETTLE_SECS)).await;
    let (db1, wal1) = files(&dir);
    let pending = sqs_depth(&env.sqs, &url).await?;
    let queued = pending * bytes as u64;
    println!("| queue | drain msg/s | written / deleted msg | db + WAL after drain | db + WAL after {SETTLE_SECS} s | queued + in flight (bodies) | store / queued |");
    println!("|---|---|---|---|---|---|---|");
    println!(
        "| standard, 64 lanes, default attributes | {:.0} | {:.0} B | {} + {} | {} + {} | {pending} msgs ({}) | {:.2} |",
        delivered as f64 / secs,
        written_bytes as f64 / delivered.max(1) as f64,
        mib(db0),
        mib(wal0),
        mib(db1),
        mib(wal1),
        mib(queued),
        (db1 + wal1) as f64 / queued.max(1) as f64,
    );
    eprintln!(
        "[storage-sqs] {delivered} deleted in {secs:.1} s, {} written",
        mib(written_bytes)
    );
    ensure!(
        delivered + pending == f.to_push,
        "{delivered} deleted + {pending} queued != {} sent",
        f.to_push
    );
    Ok(())
}
