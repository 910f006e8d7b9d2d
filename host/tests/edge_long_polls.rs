//! Issue 21, item 4: ten thousand long polls on one host, every one let in and answered
//! 200, none throttled, all waiting at once where the machine lets them in within a poll's
//! wait, and what a waiting poll costs the host is measured.
//!
//! The host runs as a process of its own (the built binary, embedded broker): its memory is
//! read from `/proc`, and its connections do not share this process's open-files limit
//! with the test's ten thousand client sockets. It listens on a port it picked and names it
//! on stderr, which is how the test finds it: nothing else can answer in its place.

use queen_sqs_host::serve::{raise_open_files_limit, Limits};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const POLLS: usize = 10_000;
const SENT: usize = 20;
/// The stated ceiling for a waiting poll's private memory in the host (measured on the
/// release host: about 105 KiB; docs/hardening.md, "Ten thousand long polls").
const MAX_KIB_PER_POLL: u64 = 256;

/// The started host, killed (by its own pid) when dropped.
struct Host {
    child: Child,
    addr: SocketAddr,
    dir: std::path::PathBuf,
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start_host() -> Host {
    let dir = std::env::temp_dir().join(format!(
        "queen-sqs-test-long-polls-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_queen-sqs-host"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--broker-listen",
            "127.0.0.1:0",
        ])
        .arg("--data-dir")
        .arg(&dir)
        .env("QUEEN_SQS_AUTH", "off")
        // The pollers connect first and send together: their connections wait for that.
        .env("QUEEN_SQS_HEADER_TIMEOUT_MS", "120000")
        .env("QUEEN_SQS_HANDLE_SECRET", "long-polls-test-handle-secret")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the host");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            eprintln!("host: {line}");
            let _ = tx.send(line);
        }
    });
    // A debug host compiles the component first.
    let until = Instant::now() + Duration::from_secs(180);
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let line = rx.recv_timeout(left).expect("the host names its endpoint");
        if let Some(rest) = line.split("SQS/SNS endpoint on http://").nth(1) {
            let addr = rest.split_whitespace().next().unwrap().parse().unwrap();
            return Host { child, addr, dir };
        }
    }
}

/// One JSON-protocol SQS call on a connection of its own: (status, body).
async fn call(addr: SocketAddr, action: &str, body: &str) -> std::io::Result<(u16, String)> {
    exchange(TcpStream::connect(addr).await?, addr, action, body).await
}

/// One request on a connection already made, and its answer.
async fn exchange(
    mut s: TcpStream,
    addr: SocketAddr,
    action: &str,
    body: &str,
) -> std::io::Result<(u16, String)> {
    let head = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-amz-json-1.0\r\n\
         X-Amz-Target: AmazonSQS.{action}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await?;
    s.write_all(body.as_bytes()).await?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).await?;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    Ok((status, body))
}

async fn metrics_text(addr: SocketAddr) -> Option<String> {
    let mut s = TcpStream::connect(addr).await.ok()?;
    let req = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).await.ok()?;
    Some(text)
}

async fn metric(addr: SocketAddr, name: &str) -> Option<f64> {
    metrics_text(addr)
        .await?
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// The host's broker calls that did not answer 2xx, by route and outcome (what a poll's
/// 503 came from).
async fn broker_trouble(addr: SocketAddr) -> Vec<String> {
    let text = metrics_text(addr).await.unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("queen_sqs_broker_calls_total{") && !l.contains("\"2xx\""))
        .map(str::to_string)
        .collect()
}

/// Private resident memory of `pid` (anonymous pages), in KiB. The component's memory image
/// is mapped once per instance and counted in RSS once per mapping, but it is one set of
/// shared pages: it is left out.
fn rss_anon_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_long_polls_wait_at_once_and_are_all_answered() {
    // This process holds ten thousand client sockets.
    if let Some(short) = raise_open_files_limit(&Limits::default(), false) {
        eprintln!("{short}");
    }
    let host = start_host();
    let addr = host.addr;
    let (status, created) = call(addr, "CreateQueue", r#"{"QueueName":"polls"}"#)
        .await
        .unwrap();
    assert_eq!(status, 200, "{created}");
    let url: serde_json::Value = serde_json::from_str(&created).unwrap();
    let url = url["QueueUrl"].as_str().unwrap().to_string();
    // Warm: the first instances and the queue record.
    for _ in 0..3 {
        let body = format!(r#"{{"QueueUrl":"{url}","WaitTimeSeconds":0}}"#);
        assert_eq!(call(addr, "ReceiveMessage", &body).await.unwrap().0, 200);
    }
    let before = rss_anon_kib(host.child.id());

    // Every poller connects first, then all send together: on a loaded machine, ten
    // thousand connects can take longer than one poll's 20 s wait, and the first polls
    // would be answered before the last arrived.
    let connected = Arc::new(AtomicUsize::new(0));
    let mut streams = Vec::with_capacity(POLLS);
    for i in 0..POLLS {
        // Past the listen backlog the kernel resets connections: a hundred at a time.
        if i % 100 == 99 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        streams.push(TcpStream::connect(addr).await.expect("connect a poller"));
        connected.fetch_add(1, Ordering::Relaxed);
    }
    let answered = Arc::new(AtomicUsize::new(0));
    let mut polls = Vec::with_capacity(POLLS);
    for stream in streams {
        let (url, answered) = (url.clone(), answered.clone());
        polls.push(tokio::spawn(async move {
            let body =
                format!(r#"{{"QueueUrl":"{url}","WaitTimeSeconds":20,"MaxNumberOfMessages":1}}"#);
            let answer = exchange(stream, addr, "ReceiveMessage", &body).await;
            answered.fetch_add(1, Ordering::SeqCst);
            answer
        }));
    }
    // Every poll inside the component: waiting there, or answered (and every answer is
    // checked to be a 200 below, so none was throttled). On an idle machine all ten thousand
    // wait at once; a debug host on a loaded one takes longer than a poll's 20 s wait to let
    // them all in (CI under load, 2026-12-07: 9,791 waiting at the peak), so the first ones
    // come back empty meanwhile. The wait goes on while the count grows, and ends once it
    // stalls for 60 s (or after 10 minutes). The host's memory is read when the most polls
    // wait at once (at the end, most may have been answered already).
    let started = Instant::now();
    let (mut inside, mut risen, mut unread) = (0usize, Instant::now(), 0);
    let (mut waiting, mut during) = (0usize, before);
    loop {
        // Answers first: a poll answered between the two reads is counted in neither.
        let done = answered.load(Ordering::SeqCst);
        match metric(addr, "queen_sqs_long_polls_waiting").await {
            Some(n) => {
                let now = n as usize + done;
                if now > inside {
                    (inside, risen) = (now, Instant::now());
                }
                if n as usize > waiting {
                    (waiting, during) = (n as usize, rss_anon_kib(host.child.id()));
                }
            }
            None => unread += 1,
        }
        let stalled = risen.elapsed() > Duration::from_secs(60);
        if inside >= POLLS || stalled || started.elapsed() > Duration::from_secs(600) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        inside,
        POLLS,
        "long polls inside the host, waiting or answered ({} clients connected; {unread} \
         scrapes unanswered; waited {:?})",
        connected.load(Ordering::Relaxed),
        started.elapsed()
    );
    let per_poll = during.saturating_sub(before) / waiting.max(1) as u64;
    eprintln!(
        "{waiting} long polls waiting at once at most: the host's private memory grew \
         from {} MiB to {} MiB, {per_poll} KiB a poll",
        before / 1024,
        during / 1024
    );

    // Sends are served while they wait, and each message reaches exactly one poll.
    for i in 0..SENT {
        let body = format!(r#"{{"QueueUrl":"{url}","MessageBody":"m{i}"}}"#);
        let (status, answer) = call(addr, "SendMessage", &body).await.unwrap();
        assert_eq!(status, 200, "{answer}");
    }
    let mut bodies = Vec::new();
    let mut statuses = std::collections::BTreeMap::new();
    for p in polls {
        let (status, answer) = p.await.unwrap().expect("an answer");
        *statuses.entry(status).or_insert(0usize) += 1;
        if status == 200 {
            let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
            for m in v["Messages"].as_array().into_iter().flatten() {
                bodies.push(m["Body"].as_str().unwrap().to_string());
            }
        } else if statuses[&status] < 3 {
            eprintln!("{status}: {answer}");
        }
    }
    if statuses.get(&200) != Some(&POLLS) {
        panic!(
            "answers by status: {statuses:?}; broker calls not answered 2xx: {:#?}",
            broker_trouble(addr).await
        );
    }
    // Each message reaches one poll at most, and none is lost: on a loaded machine some
    // polls' 20 s end while the sends are made (CI under load, 2026-12-07: 9 of 20 taken
    // by polls), and what no poll took is still in the queue.
    assert!(!bodies.is_empty(), "no waiting poll took a sent message");
    let taken_by_polls = bodies.len();
    for _ in 0..SENT {
        let body =
            format!(r#"{{"QueueUrl":"{url}","WaitTimeSeconds":1,"MaxNumberOfMessages":10}}"#);
        let (status, answer) = call(addr, "ReceiveMessage", &body).await.unwrap();
        assert_eq!(status, 200, "{answer}");
        let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
        let Some(ms) = v["Messages"].as_array().filter(|ms| !ms.is_empty()) else {
            break;
        };
        bodies.extend(ms.iter().map(|m| m["Body"].as_str().unwrap().to_string()));
    }
    bodies.sort();
    let mut expected: Vec<String> = (0..SENT).map(|i| format!("m{i}")).collect();
    expected.sort();
    assert_eq!(
        bodies, expected,
        "each message delivered once ({taken_by_polls} to waiting polls)"
    );
    // The figure means what it says only when most polls waited at once: otherwise the
    // memory of polls answered meanwhile, kept by the allocator, is divided among few
    // (a debug host beside four checker seeds, load 11: 5,213 at once, 262 KiB a poll).
    if waiting >= POLLS * 9 / 10 {
        assert!(
            per_poll <= MAX_KIB_PER_POLL,
            "{per_poll} KiB of private memory a waiting poll (stated ceiling {MAX_KIB_PER_POLL})"
        );
    } else {
        eprintln!(
            "not judged: fewer than {} polls waited at once",
            POLLS * 9 / 10
        );
    }
}
