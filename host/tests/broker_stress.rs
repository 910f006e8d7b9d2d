//! Concurrency and durability: 32 competing poppers never share a live message, and every
//! answered push survives a SIGKILL of the broker process.

mod broker_support;

use broker_support::{ack_of, temp_dir, Http, TestBroker, TOKEN};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "BROKER_TEST_CHILD_DIR";

/// Not a test: the body of the child process of `sigkill_after_answered_pushes_loses_nothing`
/// (this test binary re-executed with `--ignored --exact`). Runs a broker until killed.
#[test]
#[ignore = "helper process for the SIGKILL test"]
fn child_broker_process() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let b = queen_sqs_host::broker::start(queen_sqs_host::broker::BrokerConfig {
            listen: "127.0.0.1:0".parse().expect("addr"),
            data_dir: dir.into(),
            token: TOKEN.to_string(),
        })
        .await
        .expect("child broker");
        println!("CHILD-LISTENING {}", b.addr);
        std::future::pending::<()>().await;
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_after_answered_pushes_loses_nothing() {
    sigkill_after_answered_pushes("full").await;
}

/// `QUEEN_SQS_BROKER_FLUSH=normal` gives up flushing each commit, not what a killed process
/// leaves behind: the OS still holds every write it answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_with_unflushed_commits_loses_nothing() {
    sigkill_after_answered_pushes("normal").await;
}

async fn sigkill_after_answered_pushes(flush: &str) {
    let dir = temp_dir("kill");
    let mut child = Command::new(std::env::current_exe().expect("test exe"))
        .env("QUEEN_SQS_BROKER_FLUSH", flush)
        .args([
            "--ignored",
            "--exact",
            "child_broker_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child broker");
    let stdout = child.stdout.take().expect("child stdout");
    let reader = tokio::task::spawn_blocking(move || {
        for line in BufReader::new(stdout).lines() {
            let line = line.ok()?;
            // libtest prints "test child_broker_process ... " in front on the same line.
            if let Some((_, a)) = line.split_once("CHILD-LISTENING ") {
                return a.trim().parse::<std::net::SocketAddr>().ok();
            }
        }
        None
    });
    let addr = match tokio::time::timeout(Duration::from_secs(60), reader).await {
        Ok(Ok(Some(a))) => a,
        _ => {
            let _ = child.kill();
            panic!("the child broker never printed its address");
        }
    };
    let http = Arc::new(Http::new(addr));
    // 200 pushes from 20 concurrent clients, each answered before the kill.
    let mut tasks = Vec::new();
    for c in 0..20 {
        let http = http.clone();
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for i in 0..10 {
                let r = http
                    .post(
                        "/api/v1/push",
                        json!({"items": [{"queue": "durable", "partition": format!("p{}", c % 4),
                                                               "payload": {"c": c, "i": i}}]}),
                    )
                    .await;
                assert_eq!(r.status, 201);
                assert_eq!(r.json[0]["status"], "queued");
                ids.push(r.json[0]["message_id"].as_str().expect("id").to_string());
            }
            ids
        }));
    }
    let mut acked: HashSet<String> = HashSet::new();
    for t in tasks {
        acked.extend(t.await.expect("pusher"));
    }
    assert_eq!(acked.len(), 200);
    child.kill().expect("SIGKILL"); // std's kill() is SIGKILL on Unix
    let _ = child.wait();
    // Reopen the same database in process and drain it.
    let b = TestBroker::start_in(dir).await;
    let d = b
        .http
        .get("/api/v1/resources/queues/durable/depth")
        .await
        .json;
    assert_eq!(d["pending"], 200, "{d}");
    let mut seen = HashSet::new();
    loop {
        let p = b.pop("durable?batch=100&partitions=0&wait=false").await;
        if p.status == 204 {
            break;
        }
        for m in p.json["messages"].as_array().expect("messages") {
            seen.insert(m["id"].as_str().expect("id").to_string());
        }
    }
    assert_eq!(
        seen, acked,
        "every answered push is in the reopened database"
    );
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_poppers_never_share_a_live_message() {
    const MESSAGES: usize = 3000;
    const POPPERS: usize = 32;
    let b = TestBroker::start().await;
    for chunk in 0..(MESSAGES / 500) {
        let items: Vec<Value> = (0..500)
            .map(|i| {
                let n = chunk * 500 + i;
                json!({"queue": "race", "partition": format!("p{}", n % 48), "payload": n})
            })
            .collect();
        b.push(Value::Array(items)).await;
    }
    let held: Arc<Mutex<HashSet<String>>> = Arc::default();
    let deliveries: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let violations: Arc<Mutex<Vec<String>>> = Arc::default();
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..POPPERS {
        let http = Http::new(b.broker.addr);
        let (held, deliveries, violations) = (held.clone(), deliveries.clone(), violations.clone());
        tasks.push(tokio::spawn(async move {
            let mut empties = 0;
            while empties < 3 && started.elapsed() < Duration::from_secs(40) {
                let p = http
                    .get("/api/v1/pop/queue/race?batch=5&wait=false&leaseSeconds=120")
                    .await;
                if p.status == 204 {
                    empties += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
                empties = 0;
                let msgs = p.json["messages"].as_array().expect("messages").clone();
                for m in &msgs {
                    let id = m["id"].as_str().expect("id").to_string();
                    if !held.lock().expect("lock").insert(id.clone()) {
                        violations.lock().expect("lock").push(id.clone());
                    }
                    *deliveries.lock().expect("lock").entry(id).or_default() += 1;
                }
                // Release our hold before the ack: after it, the message may legally move on.
                for m in &msgs {
                    held.lock()
                        .expect("lock")
                        .remove(m["id"].as_str().expect("id"));
                }
                let last = msgs.last().expect("non-empty");
                let r = http.post("/api/v1/ack", ack_of(last, "completed")).await;
                assert_eq!(r.json[0]["success"], true, "{}", r.json);
            }
        }));
    }
    for t in tasks {
        t.await.expect("popper");
    }
    let v = violations.lock().expect("lock").clone();
    assert!(v.is_empty(), "messages handed to two live holders: {v:?}");
    let d = deliveries.lock().expect("lock").clone();
    assert_eq!(d.len(), MESSAGES, "every message delivered");
    let twice: Vec<_> = d.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "no redelivery without expiry: {twice:?}");
    b.stop().await;
}
