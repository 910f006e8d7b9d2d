//! Embedded-broker benchmark (not a test):
//! `cargo run --release -p queen-sqs-host --no-default-features --example broker_bench [SECONDS]`
//!
//! Measures, over loopback HTTP, single-message pushes/s and push+pop+ack cycles/s at 1 and 16
//! concurrent clients, with 0, 10^4, 10^5 and 10^6 messages already stored in the queue.
//! The backlog is added in process (`RunningBroker::handle`, 5000 items per push).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use queen_sqs_host::broker::{auth, start, BrokerConfig, RunningBroker};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const QUEUE: &str = "bench";
const PARTITIONS: usize = 16;

type Http = Client<HttpConnector, Full<Bytes>>;

/// The bearer token of this run's broker (generated at start).
static TOKEN: OnceLock<String> = OnceLock::new();

async fn call(
    http: &Http,
    base: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> anyhow::Result<(u16, Value)> {
    let b = body.map(|v| v.to_string()).unwrap_or_default();
    let req = hyper::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"))
        .header("content-type", "application/json")
        .header(
            "authorization",
            format!("Bearer {}", TOKEN.get().map_or("", String::as_str)),
        )
        .body(Full::new(Bytes::from(b)))?;
    let resp = http.request(req).await?;
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect().await?.to_bytes();
    let v = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)?
    };
    Ok((status, v))
}

fn payload(n: u64) -> Value {
    json!({"n": n, "body": "benchmark payload benchmark payload benchmark payload benchmark payload"})
}

async fn fill(broker: &RunningBroker, from: u64, to: u64) -> anyhow::Result<()> {
    let mut n = from;
    while n < to {
        let end = (n + 5000).min(to);
        let items: Vec<Value> = (n..end)
            .map(|i| json!({"queue": QUEUE, "partition": format!("{}", i as usize % PARTITIONS), "payload": payload(i)}))
            .collect();
        let (s, _, _) = broker
            .handle(
                "POST",
                "/api/v1/push",
                Bytes::from(json!({ "items": items }).to_string()),
            )
            .await;
        anyhow::ensure!(s == 201, "fill push answered {s}");
        n = end;
    }
    Ok(())
}

/// Runs `clients` loops of `op` for `secs`; returns operations per second.
async fn rate<F, Fut>(clients: usize, secs: f64, op: F) -> f64
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static + Clone,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send,
{
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (op, done) = (op.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = 0u64;
            while Instant::now() < until {
                if let Err(e) = op(c, i).await {
                    eprintln!("client {c}: {e}");
                    return;
                }
                i += 1;
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

async fn push_rate(base: Arc<String>, clients: usize, secs: f64) -> f64 {
    let http: Http = Client::builder(TokioExecutor::new()).build_http();
    rate(clients, secs, move |c, i| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            let item = json!({"queue": QUEUE, "partition": format!("{}", c % PARTITIONS), "payload": payload(i)});
            let (s, v) = call(&http, &base, "POST", "/api/v1/push", Some(json!({"items": [item]}))).await?;
            anyhow::ensure!(s == 201 && v[0]["status"] == "queued", "push answered {s} {v}");
            Ok(())
        }
    })
    .await
}

async fn cycle_rate(base: Arc<String>, clients: usize, secs: f64) -> f64 {
    let http: Http = Client::builder(TokioExecutor::new()).build_http();
    rate(clients, secs, move |c, i| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            let p = format!("{}", c % PARTITIONS);
            let item = json!({"queue": QUEUE, "partition": p, "payload": payload(i)});
            let (s, _) = call(
                &http,
                &base,
                "POST",
                "/api/v1/push",
                Some(json!({"items": [item]})),
            )
            .await?;
            anyhow::ensure!(s == 201, "push answered {s}");
            // Pinned to the client's own partition, as a FIFO message group would be.
            let path = format!("/api/v1/pop/queue/{QUEUE}/partition/{p}?batch=1&wait=false");
            let (s, v) = call(&http, &base, "GET", &path, None).await?;
            anyhow::ensure!(s == 200, "pop answered {s}");
            let m = &v["messages"][0];
            let ack = json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                             "leaseId": m["leaseId"], "status": "completed"});
            let (s, v) = call(&http, &base, "POST", "/api/v1/ack", Some(ack)).await?;
            anyhow::ensure!(s == 200 && v[0]["success"] == true, "ack answered {s} {v}");
            Ok(())
        }
    })
    .await
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let dir = std::env::temp_dir().join(format!("broker-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let token = TOKEN.get_or_init(|| auth::generate().expect("randomness"));
    let broker = start(BrokerConfig {
        listen: "127.0.0.1:0".parse()?,
        data_dir: dir.clone(),
        token: token.clone(),
    })
    .await?;
    let base = Arc::new(format!("http://{}", broker.addr));
    println!(
        "embedded broker benchmark: {secs} s per cell, single-message requests over loopback HTTP"
    );
    println!("(stored = messages already in the queue, spread over {PARTITIONS} partitions)\n");
    println!("| stored    | push/s 1 client | push/s 16 clients | cycles/s 1 client | cycles/s 16 clients |");
    println!("|-----------|-----------------|-------------------|-------------------|---------------------|");
    let mut stored = 0u64;
    for target in [0u64, 10_000, 100_000, 1_000_000] {
        let t = Instant::now();
        fill(&broker, stored, target).await?;
        if target > stored {
            eprintln!(
                "filled {} messages in {:.1} s",
                target - stored,
                t.elapsed().as_secs_f64()
            );
        }
        stored = stored.max(target);
        let p1 = push_rate(base.clone(), 1, secs).await;
        let p16 = push_rate(base.clone(), 16, secs).await;
        let c1 = cycle_rate(base.clone(), 1, secs).await;
        let c16 = cycle_rate(base.clone(), 16, secs).await;
        println!("| {target:>9} | {p1:>15.0} | {p16:>17.0} | {c1:>17.0} | {c16:>19.0} |");
    }
    broker.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
