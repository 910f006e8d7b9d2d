//! The embedded broker's HTTP listener wants `Authorization: Bearer <token>` on every route
//! but the health checks (issue 10, item 7); calls in process need none. The host binary
//! refuses a non-loopback broker address without `QUEEN_SQS_BROKER_TOKEN`, and keeps the
//! token it generates in the data directory.

mod broker_support;

use broker_support::{temp_dir, Http, Resp, TestBroker, TOKEN};
use serde_json::{json, Value};

/// One call of each kind the finding names (pop, push, KV, queue delete) and the rest of the
/// surface: (method, path, body).
fn guarded_calls() -> Vec<(&'static str, &'static str, Option<Value>)> {
    vec![
        (
            "POST",
            "/api/v1/push",
            Some(json!({"items": [{"queue": "guarded", "partition": "p", "payload": {"n": 1}}]})),
        ),
        ("GET", "/api/v1/pop/queue/guarded?batch=1&wait=false", None),
        (
            "GET",
            "/api/v1/pop/queue/guarded/partition/p?batch=1&wait=false",
            None,
        ),
        (
            "POST",
            "/api/v1/kv",
            Some(
                json!({"operations": [{"op": "put", "ns": "qs", "key": "qs:q:forged", "value": {"forged": true}, "forever": true}]}),
            ),
        ),
        (
            "PUT",
            "/api/v1/kv/qs/qs:q:forged",
            Some(json!({"value": 1, "forever": true})),
        ),
        ("GET", "/api/v1/kv/qs/qs:q:guarded", None),
        ("DELETE", "/api/v1/kv/qs/qs:q:guarded", None),
        ("DELETE", "/api/v1/resources/queues/guarded", None),
        ("GET", "/api/v1/resources/queues", None),
        ("GET", "/api/v1/resources/queues/guarded/depth", None),
        (
            "POST",
            "/api/v1/configure",
            Some(json!({"queue": "other", "options": {}})),
        ),
        (
            "POST",
            "/api/v1/ack",
            Some(
                json!({"transactionId": "x", "partitionId": "y", "leaseId": "z", "status": "completed"}),
            ),
        ),
        (
            "POST",
            "/api/v1/transaction",
            Some(json!({"operations": []})),
        ),
        ("POST", "/api/v1/timers", Some(json!({"timers": []}))),
        ("GET", "/api/v1/nothing-here", None),
        // Health, spelled other than literally, is checked like any route.
        ("GET", "//health", None),
        ("POST", "/health", None),
    ]
}

/// A queue `guarded` with one message and a registry record `qs:q:guarded`.
async fn seeded() -> TestBroker {
    let b = TestBroker::start().await;
    b.push(json!([{"queue": "guarded", "partition": "p", "payload": {"n": 0}}]))
        .await;
    let r = b
        .kv(json!([{"op": "put", "ns": "qs", "key": "qs:q:guarded", "value": {"real": true}, "forever": true}]))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    b
}

/// Nothing a refused call could have done happened: the message is still there, the record
/// unchanged, nothing forged.
async fn untouched(b: &TestBroker) {
    let d = b.http.get("/api/v1/resources/queues/guarded/depth").await;
    assert_eq!(d.status, 200, "{}", d.json);
    assert_eq!(
        d.json["pending"], 1,
        "a refused call changed the queue: {}",
        d.json
    );
    let r = b
        .kv(json!([{"op": "get", "ns": "qs", "key": "qs:q:guarded"},
                   {"op": "get", "ns": "qs", "key": "qs:q:forged"}]))
        .await;
    assert_eq!(
        r.json["results"][0]["value"],
        json!({"real": true}),
        "{}",
        r.json
    );
    assert_eq!(r.json["results"][1]["found"], false, "{}", r.json);
}

fn assert_refused(r: &Resp, what: &str, text: &str) {
    assert_eq!(r.status, 401, "{what} answered {} {}", r.status, r.json);
    assert_eq!(r.json, json!({"error": text}), "{what}");
    assert_eq!(
        r.headers
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap()),
        Some("Bearer"),
        "{what}"
    );
}

#[tokio::test]
async fn a_call_without_the_token_is_refused_and_changes_nothing() {
    let b = seeded().await;
    let anonymous = Http::with_authorization(b.broker.addr, None);
    for (method, path, body) in guarded_calls() {
        let r = anonymous.call(method, path, body).await;
        assert_refused(
            &r,
            &format!("{method} {path} without a token"),
            "Authentication required",
        );
    }
    // An empty bearer is no token either.
    let empty = Http::with_authorization(b.broker.addr, Some("Bearer "));
    assert_refused(
        &empty.get("/api/v1/resources/queues").await,
        "an empty bearer",
        "Authentication required",
    );
    untouched(&b).await;
    b.stop().await;
}

#[tokio::test]
async fn a_call_with_a_wrong_token_is_refused_and_changes_nothing() {
    let b = seeded().await;
    let wrong = [
        "Bearer not-the-broker-token-at-all".to_string(),
        format!("Bearer {TOKEN}x"),
        format!("Bearer {}", &TOKEN[..TOKEN.len() - 1]),
        format!("Basic {TOKEN}"),
        format!("Bearer {}", TOKEN.to_uppercase()),
    ];
    for auth in &wrong {
        let http = Http::with_authorization(b.broker.addr, Some(auth));
        for (method, path, body) in guarded_calls() {
            let r = http.call(method, path, body).await;
            assert_refused(
                &r,
                &format!("{method} {path} with {auth:?}"),
                "Invalid token",
            );
        }
    }
    untouched(&b).await;
    b.stop().await;
}

#[tokio::test]
async fn the_token_opens_pop_push_kv_and_queue_delete() {
    let b = TestBroker::start().await;
    for auth in [
        format!("Bearer {TOKEN}"),
        format!("bearer {TOKEN}"),
        TOKEN.to_string(),
    ] {
        let http = Http::with_authorization(b.broker.addr, Some(&auth));
        let r = http
            .post(
                "/api/v1/push",
                json!({"items": [{"queue": "open", "partition": "p", "payload": {"n": 1}}]}),
            )
            .await;
        assert_eq!(r.status, 201, "push with {auth:?}: {}", r.json);
        let r = http.get("/api/v1/pop/queue/open?batch=1&wait=false").await;
        assert_eq!(r.status, 200, "pop with {auth:?}: {}", r.json);
        assert_eq!(r.json["messages"][0]["data"], json!({"n": 1}), "{}", r.json);
        let r = http
            .post(
                "/api/v1/kv",
                json!({"operations": [{"op": "put", "ns": "qs", "key": "qs:q:open", "value": 7, "forever": true}]}),
            )
            .await;
        assert_eq!(r.status, 200, "kv with {auth:?}: {}", r.json);
        assert_eq!(r.json["results"][0]["applied"], true, "{}", r.json);
        let r = http.get("/api/v1/kv/qs/qs:q:open").await;
        assert_eq!(
            (r.status, r.json["value"].clone()),
            (200, json!(7)),
            "{}",
            r.json
        );
        let r = http
            .call("DELETE", "/api/v1/resources/queues/open", None)
            .await;
        assert_eq!(r.status, 200, "delete with {auth:?}: {}", r.json);
        assert_eq!(r.json["existed"], true, "{}", r.json);
    }
    b.stop().await;
}

#[tokio::test]
async fn health_needs_no_token() {
    let b = TestBroker::start().await;
    let anonymous = Http::with_authorization(b.broker.addr, None);
    for path in ["/health", "/api/v1/health", "/health?probe=1"] {
        let r = anonymous.get(path).await;
        assert_eq!(r.status, 200, "{path}: {}", r.json);
        assert_eq!(r.json["status"], "healthy");
    }
    b.stop().await;
}

/// The host's component (serve::Outgoing) and the test support reach the broker in process:
/// no token, no refusal.
#[tokio::test]
async fn calls_in_process_need_no_token() {
    let b = TestBroker::start().await;
    let (s, _, body) = b
        .broker
        .handle(
            "POST",
            "/api/v1/push",
            json!({"items": [{"queue": "inproc", "partition": "p", "payload": 1}]})
                .to_string()
                .into(),
        )
        .await;
    assert_eq!(s, 201, "{}", String::from_utf8_lossy(&body));
    let (s, _, body) = b
        .broker
        .handle(
            "DELETE",
            "/api/v1/resources/queues/inproc",
            Default::default(),
        )
        .await;
    assert_eq!(s, 200, "{}", String::from_utf8_lossy(&body));
    b.stop().await;
}

#[tokio::test]
async fn the_broker_refuses_to_start_with_no_token_or_a_short_one() {
    for token in ["", "short"] {
        let r = queen_sqs_host::broker::start(queen_sqs_host::broker::BrokerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: temp_dir("notoken"),
            token: token.into(),
        })
        .await;
        assert!(r.is_err(), "started with token {token:?}");
    }
}

// --- the host binary (built with `serve`, the default) ---------------------------------------

#[cfg(feature = "serve")]
mod host_binary {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::SocketAddr;
    use std::process::{Child, Command, Stdio};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    fn host() -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_queen-sqs-host"));
        cmd.env_clear()
            .env("QUEEN_SQS_AUTH", "off")
            .env("QUEEN_SQS_HANDLE_SECRET", "0123456789abcdef0123");
        cmd
    }

    /// A started host: its stderr lines as they come, killed (by its own pid) when dropped.
    struct Running {
        child: Child,
        lines: mpsc::Receiver<String>,
        seen: Vec<String>,
    }

    impl Running {
        fn spawn(mut cmd: Command) -> Running {
            let mut child = cmd
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run host");
            let stderr = child.stderr.take().expect("stderr");
            let (tx, lines) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { return };
                    if tx.send(line).is_err() {
                        return;
                    }
                }
            });
            Running {
                child,
                lines,
                seen: Vec::new(),
            }
        }

        /// The first line containing `needle` (within 120 s; a debug host compiles the component).
        fn line(&mut self, needle: &str) -> String {
            if let Some(l) = self.seen.iter().find(|l| l.contains(needle)) {
                return l.clone();
            }
            let until = Instant::now() + Duration::from_secs(120);
            while let Some(left) = until.checked_duration_since(Instant::now()) {
                match self.lines.recv_timeout(left) {
                    Ok(l) => {
                        self.seen.push(l.clone());
                        if l.contains(needle) {
                            return l;
                        }
                    }
                    Err(_) => break,
                }
            }
            let status = self.child.try_wait();
            panic!(
                "no line with {needle:?} (exit {status:?}); stderr so far: {:#?}",
                self.seen
            );
        }

        /// The `http://ADDR` on the first line containing `needle`.
        fn addr(&mut self, needle: &str) -> SocketAddr {
            let l = self.line(needle);
            let rest = l.split("http://").nth(1).expect("an address");
            let end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
            rest[..end].parse().expect("an address")
        }
    }

    impl Drop for Running {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Runs the host expecting it to stop by itself: answers (exit code, stderr); a host still
    /// running after 60 s is killed and the test fails (it started when it should have refused).
    fn refused(mut cmd: Command, what: &str) -> (Option<i32>, String) {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run host");
        let mut stderr = child.stderr.take().expect("stderr");
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        let until = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > until {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{what}: the host started; stderr: {}",
                    reader.join().unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        (status.code(), reader.join().unwrap_or_default())
    }

    /// One HTTP/1.1 exchange, `Connection: close`; answers (status, body).
    fn exchange(
        addr: SocketAddr,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        let mut s = std::net::TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        s.write_all(req.as_bytes()).expect("send");
        let mut answer = String::new();
        s.read_to_string(&mut answer).expect("answer");
        let status = answer
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status in {answer:?}"));
        let body = answer
            .split_once("\r\n\r\n")
            .map_or("", |(_, b)| b)
            .to_string();
        (status, body)
    }

    #[test]
    fn a_non_loopback_broker_address_without_a_token_is_refused() {
        let dir = temp_dir("cli-refuse");
        let cases: [&[&str]; 4] = [
            &["broker", "--listen", "0.0.0.0:0"],
            &["broker", "--listen", "[::]:0"],
            &[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--broker-listen",
                "0.0.0.0:0",
            ],
            &[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--broker-listen",
                "192.0.2.1:0",
            ],
        ];
        for args in cases {
            let mut cmd = host();
            cmd.args(args).arg("--data-dir").arg(&dir);
            let (code, stderr) = refused(cmd, &format!("{args:?} without a token"));
            assert!(code.is_some_and(|c| c != 0), "{args:?} exited {code:?}");
            let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            assert_eq!(lines.len(), 1, "{args:?}: {stderr}");
            assert!(
                lines[0].contains("QUEEN_SQS_BROKER_TOKEN") && lines[0].contains("loopback"),
                "{args:?}: {stderr}"
            );
        }
        // Refused before anything was written.
        assert!(!dir.join("broker-token").exists());
        assert!(!dir.join("queen.sqlite3").exists());
        // A token that is set but too short is refused too, on any address.
        let mut cmd = host();
        cmd.args(["broker", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(&dir)
            .env("QUEEN_SQS_BROKER_TOKEN", "short");
        let (code, stderr) = refused(cmd, "a 5-character token");
        assert!(code.is_some_and(|c| c != 0), "exited {code:?}");
        assert!(stderr.contains("QUEEN_SQS_BROKER_TOKEN"), "{stderr}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_configured_token_opens_a_non_loopback_address() {
        let dir = temp_dir("cli-any");
        let token = "configured-token-0123456789abcdef";
        let mut cmd = host();
        cmd.args(["broker", "--listen", "0.0.0.0:0", "--data-dir"])
            .arg(&dir)
            .env("QUEEN_SQS_BROKER_TOKEN", token);
        let mut running = Running::spawn(cmd);
        let line = running.line("broker listening on");
        assert!(line.contains("QUEEN_SQS_BROKER_TOKEN"), "{line}");
        assert!(
            !line.contains(token),
            "the start line shows the token: {line}"
        );
        let port = running.addr("broker listening on").port();
        let at: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let auth = format!("Bearer {token}");
        assert_eq!(
            exchange(at, "GET", "/api/v1/resources/queues", &[], "").0,
            401
        );
        let (status, body) = exchange(
            at,
            "GET",
            "/api/v1/resources/queues",
            &[("Authorization", &auth)],
            "",
        );
        assert_eq!(status, 200, "{body}");
        assert!(
            !dir.join("broker-token").exists(),
            "a configured token was written to disk"
        );
        drop(running);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_generated_token_is_kept_owner_only_and_survives_a_restart() {
        let dir = temp_dir("cli-kept");
        let start = || {
            let mut cmd = host();
            cmd.args(["broker", "--listen", "127.0.0.1:0", "--data-dir"])
                .arg(&dir);
            let mut running = Running::spawn(cmd);
            let line = running.line("broker listening on");
            let addr = running.addr("broker listening on");
            (running, line, addr)
        };
        let (first, line, addr) = start();
        let path = dir.join("broker-token");
        let token = std::fs::read_to_string(&path).expect("a kept token");
        assert_eq!(token.len(), 64, "32 random bytes, hex: {token:?}");
        assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(
            line.contains(&path.display().to_string()),
            "the start line names the file: {line}"
        );
        assert!(
            !line.contains(&token),
            "the start line shows the token: {line}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(
                mode & 0o077,
                0,
                "the token file is readable by others: {mode:o}"
            );
        }
        let auth = format!("Bearer {token}");
        let push = r#"{"items":[{"queue":"kept","partition":"p","payload":1}]}"#;
        assert_eq!(exchange(addr, "POST", "/api/v1/push", &[], push).0, 401);
        let (status, body) = exchange(
            addr,
            "POST",
            "/api/v1/push",
            &[("Authorization", &auth)],
            push,
        );
        assert_eq!(status, 201, "{body}");
        drop(first);

        let (_second, _, addr) = start();
        assert_eq!(
            std::fs::read_to_string(&path).expect("a kept token"),
            token,
            "a restart generated a new token"
        );
        let (status, body) = exchange(
            addr,
            "GET",
            "/api/v1/pop/queue/kept?wait=false",
            &[("Authorization", &auth)],
            "",
        );
        assert_eq!(
            status, 200,
            "the kept token no longer opens the broker: {body}"
        );
        assert_eq!(
            exchange(addr, "GET", "/api/v1/pop/queue/kept?wait=false", &[], "").0,
            401
        );
        drop(_second);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `serve`: the component reaches its embedded broker in process without the token, while the
    /// broker's own port wants it.
    #[test]
    fn serve_keeps_the_component_in_process_and_the_port_guarded() {
        let dir = temp_dir("cli-serve");
        let token = "serve-token-0123456789abcdef";
        let mut cmd = host();
        cmd.args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--broker-listen",
            "127.0.0.1:0",
            "--data-dir",
        ])
        .arg(&dir)
        .env("QUEEN_SQS_BROKER_TOKEN", token);
        let mut running = Running::spawn(cmd);
        let line = running.line("embedded broker on");
        assert!(
            line.contains("bearer token from QUEEN_SQS_BROKER_TOKEN"),
            "{line}"
        );
        assert!(!line.contains(token), "{line}");
        let broker = running.addr("embedded broker on");
        let endpoint = running.addr("SQS/SNS endpoint on");

        let (status, body) = exchange(
            endpoint,
            "POST",
            "/",
            &[
                ("X-Amz-Target", "AmazonSQS.CreateQueue"),
                ("Content-Type", "application/x-amz-json-1.0"),
            ],
            r#"{"QueueName":"through-the-component"}"#,
        );
        assert_eq!(status, 200, "CreateQueue through the component: {body}");

        let (status, body) = exchange(broker, "GET", "/api/v1/resources/queues", &[], "");
        assert_eq!(status, 401, "{body}");
        let (status, body) = exchange(
            broker,
            "GET",
            "/api/v1/kv/qs/qs:q:through-the-component",
            &[("Authorization", &format!("Bearer {token}"))],
            "",
        );
        assert_eq!(status, 200, "{body}");
        assert!(
            body.contains("\"found\":true") || body.contains("\"value\""),
            "{body}"
        );
        assert!(!dir.join("broker-token").exists());
        drop(running);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
