//! The HTTP edge under hostile input (issue 10): malformed heads are 4xx never 5xx, a body
//! cut off is never acted on, `UNSIGNED-PAYLOAD` is refused, a client that dawdles is cut
//! off without holding a component instance, and an exhausted instance budget is a
//! retryable throttle in the caller's own protocol.

mod support;

use serde_json::json;
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use support::Endpoint;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One parsed answer off a raw socket.
#[derive(Debug)]
struct Answer {
    status: u16,
    /// Read only through `Debug`, when a failed assertion prints the answer.
    #[allow(dead_code)]
    head: String,
    body: String,
}

/// Reads one response (head and a Content-Length body); None when the server closed the
/// connection (or went silent for `wait`) without answering.
async fn read_answer(stream: &mut TcpStream, wait: Duration) -> Option<Answer> {
    let deadline = Instant::now() + wait;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let status = head.split_whitespace().nth(1)?.parse().ok()?;
            let len = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.trim()
                        .eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                let left = deadline.saturating_duration_since(Instant::now());
                match tokio::time::timeout(left, stream.read(&mut chunk)).await {
                    Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                    _ => break,
                }
            }
            let body_end = buf.len().min(end + 4 + len);
            let body = String::from_utf8_lossy(&buf[end + 4..body_end]).into_owned();
            return Some(Answer { status, head, body });
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => return None,
        }
    }
}

/// Writes `bytes` on a fresh connection (half-closing it after when `half_close`) and reads
/// the answer.
async fn exchange(addr: SocketAddr, bytes: &[u8], half_close: bool) -> Option<Answer> {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(bytes).await.expect("write");
    if half_close {
        let _ = s.shutdown().await;
    }
    read_answer(&mut s, Duration::from_secs(10)).await
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn hmac(key: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let ipad: Vec<u8> = k.iter().map(|b| b ^ 0x36).collect();
    let opad: Vec<u8> = k.iter().map(|b| b ^ 0x5c).collect();
    let inner = Sha256::digest([ipad.as_slice(), msg].concat());
    Sha256::digest([opad.as_slice(), inner.as_slice()].concat()).to_vec()
}

/// A SigV4-signed raw request (`test`/`test`, us-east-1). `payload_hash` None signs the
/// body's SHA-256 (and sends no x-amz-content-sha256); Some sends and signs that value.
fn signed(
    host: &str,
    service: &str,
    headers: &[(&str, &str)],
    body: &str,
    payload_hash: Option<&str>,
) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let amz_date = queen_sqs::auth::format_amz_date(now);
    let date = &amz_date[..8];
    let mut hs: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect();
    hs.push(("host".into(), host.into()));
    hs.push(("x-amz-date".into(), amz_date.clone()));
    if let Some(p) = payload_hash {
        hs.push(("x-amz-content-sha256".into(), p.into()));
    }
    hs.sort();
    let signed_headers: Vec<&str> = hs.iter().map(|(k, _)| k.as_str()).collect();
    let signed_headers = signed_headers.join(";");
    let canonical_headers: String = hs.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let hash = payload_hash
        .map(str::to_string)
        .unwrap_or_else(|| hex(&Sha256::digest(body.as_bytes())));
    let canonical = format!("POST\n/\n\n{canonical_headers}\n{signed_headers}\n{hash}");
    let scope = format!("{date}/us-east-1/{service}/aws4_request");
    let sts = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let k = hmac(b"AWS4test", date.as_bytes());
    let k = hmac(&k, b"us-east-1");
    let k = hmac(&k, service.as_bytes());
    let k = hmac(&k, b"aws4_request");
    let sig = hex(&hmac(&k, sts.as_bytes()));
    let mut out = "POST / HTTP/1.1\r\n".to_string();
    for (k, v) in &hs {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!(
        "authorization: AWS4-HMAC-SHA256 Credential=test/{scope}, SignedHeaders={signed_headers}, Signature={sig}\r\n"
    ));
    out.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    out
}

fn form(params: &[(&str, &str)]) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{}={}", support::form_encode(k), support::form_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

async fn messages_in(ep: &Endpoint, url: &str) -> Vec<String> {
    let v = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "MaxNumberOfMessages": 10, "VisibilityTimeout": 0}),
        )
        .await;
    v["Messages"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| m["Body"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

// ---- finding 4: no Host header, malformed heads ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_host_header_is_never_a_5xx() {
    let ep = Endpoint::start().await;
    // HTTP/1.1 requires Host: a client error.
    let a = exchange(ep.addr, b"GET /healthz HTTP/1.1\r\n\r\n", false)
        .await
        .expect("an answer");
    assert_eq!(a.status, 400, "{a:?}");
    // HTTP/1.0 has no Host requirement: served.
    let a = exchange(ep.addr, b"GET /healthz HTTP/1.0\r\n\r\n", false)
        .await
        .expect("an answer");
    assert_eq!(a.status, 200, "{a:?}");
    let q = form(&[("Action", "ListQueues"), ("Version", "2012-11-05")]);
    let req = format!(
        "POST / HTTP/1.0\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\r\n{q}",
        q.len()
    );
    let a = exchange(ep.addr, req.as_bytes(), false)
        .await
        .expect("an answer");
    assert_eq!(a.status, 200, "{a:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_request_lines_and_headers_are_4xx() {
    let ep = Endpoint::start().await;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "empty Host",
            b"GET /healthz HTTP/1.1\r\nHost: \r\n\r\n".to_vec(),
        ),
        (
            "Host with a space",
            b"GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n".to_vec(),
        ),
        (
            "Host not ASCII",
            b"GET /healthz HTTP/1.1\r\nHost: \xff\xfe\r\n\r\n".to_vec(),
        ),
        (
            "Host with a path",
            b"GET /healthz HTTP/1.1\r\nHost: a/b\r\n\r\n".to_vec(),
        ),
        (
            "Host with a bad port",
            b"GET /healthz HTTP/1.1\r\nHost: a:xyz\r\n\r\n".to_vec(),
        ),
        (
            "two Hosts",
            b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n".to_vec(),
        ),
        ("a request line of garbage", b"BLAH\r\n\r\n".to_vec()),
        ("no target", b"GET  HTTP/1.1\r\nHost: a\r\n\r\n".to_vec()),
        (
            "an unknown version",
            b"GET /healthz HTTP/9.9\r\nHost: a\r\n\r\n".to_vec(),
        ),
        (
            "a header without a colon",
            b"GET /healthz HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n".to_vec(),
        ),
        (
            "a bad header name",
            b"GET /healthz HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n".to_vec(),
        ),
        (
            "a NUL in a value",
            b"GET /healthz HTTP/1.1\r\nHost: a\r\nX-A: a\x00b\r\n\r\n".to_vec(),
        ),
        (
            "a non-numeric length",
            b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n".to_vec(),
        ),
        (
            "two lengths",
            b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"
                .to_vec(),
        ),
        (
            "an unknown coding",
            b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n".to_vec(),
        ),
        (
            "a bad path byte",
            b"GET /\xff HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(),
        ),
        (
            "a bad absolute URI",
            b"GET http://[::1/ HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(),
        ),
        (
            "an asterisk target",
            b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(),
        ),
        (
            "CONNECT",
            b"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n".to_vec(),
        ),
        (
            "an absolute URI with no host",
            b"GET http:///healthz HTTP/1.1\r\n\r\n".to_vec(),
        ),
        (
            "an oversized head",
            format!(
                "GET / HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\n\r\n",
                "a".repeat(200_000)
            )
            .into_bytes(),
        ),
    ];
    let mut wrong = Vec::new();
    for (what, bytes) in cases {
        match exchange(ep.addr, &bytes, false).await {
            None => wrong.push(format!("{what}: closed without an answer")),
            Some(a) if !(400..500).contains(&a.status) => {
                wrong.push(format!("{what}: answered {} {}", a.status, a.body))
            }
            Some(_) => {}
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // And the endpoint still serves.
    let (status, _, _) = ep.raw("GET", "/healthz", &[], "").await;
    assert_eq!(status, 200);
}

// ---- finding 2: a body cut off is never acted on; UNSIGNED-PAYLOAD ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_cut_off_is_never_acted_on() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("edge-cut", json!({})).await;
    let body = form(&[
        ("Action", "SendMessage"),
        ("Version", "2012-11-05"),
        ("QueueUrl", &url),
        ("MessageBody", "transfer 1000 EUR to account 12345678"),
    ]);
    let cut = &body[..body.len() - 7];

    // Shorter than its Content-Length, then the client half-closes.
    let req = format!(
        "POST / HTTP/1.1\r\nHost: {}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\r\n{cut}",
        ep.addr,
        body.len()
    );
    let a = exchange(ep.addr, req.as_bytes(), true).await;
    assert!(
        a.as_ref().is_none_or(|a| (400..500).contains(&a.status)),
        "{a:?}"
    );

    // A chunked body that ends without its last (zero-length) chunk.
    let req = format!(
        "POST / HTTP/1.1\r\nHost: {}\r\ncontent-type: application/x-www-form-urlencoded\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{cut}\r\n",
        ep.addr,
        cut.len()
    );
    let a = exchange(ep.addr, req.as_bytes(), true).await;
    assert!(
        a.as_ref().is_none_or(|a| (400..500).contains(&a.status)),
        "{a:?}"
    );
    assert_eq!(messages_in(&ep, &url).await, Vec::<String>::new());

    // The same chunked request, complete, is served: the refusals above were about the cut.
    let req = format!(
        "POST / HTTP/1.1\r\nHost: {}\r\ncontent-type: application/x-www-form-urlencoded\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        ep.addr,
        body.len()
    );
    let a = exchange(ep.addr, req.as_bytes(), false)
        .await
        .expect("an answer");
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        messages_in(&ep, &url).await,
        vec!["transfer 1000 EUR to account 12345678".to_string()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsigned_payload_is_refused() {
    let ep = Endpoint::with_env(&[("QUEEN_SQS_CREDENTIALS", "test:test:")]).await;
    let host = ep.addr.to_string();
    let body = form(&[("Action", "ListQueues"), ("Version", "2012-11-05")]);
    let ct = [("content-type", "application/x-www-form-urlencoded")];
    let a = exchange(
        ep.addr,
        signed(&host, "sqs", &ct, &body, None).as_bytes(),
        false,
    )
    .await
    .expect("an answer");
    assert_eq!(a.status, 200, "{a:?}");
    let req = signed(&host, "sqs", &ct, &body, Some("UNSIGNED-PAYLOAD"));
    let a = exchange(ep.addr, req.as_bytes(), false)
        .await
        .expect("an answer");
    assert_eq!(a.status, 403, "{a:?}");
    assert!(
        a.body.contains("<Code>SignatureDoesNotMatch</Code>")
            && a.body.contains("UNSIGNED-PAYLOAD"),
        "{a:?}"
    );
}

// ---- finding 1: clients that dawdle; an exhausted instance budget ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_clients_are_cut_off_and_hold_no_instance() {
    const STALLED: usize = 300;
    let ep = Endpoint::with_env(&[
        ("QUEEN_SQS_CREDENTIALS", "test:test:"),
        ("QUEEN_SQS_BODY_TIMEOUT_MS", "4000"),
        ("QUEEN_SQS_HEADER_TIMEOUT_MS", "4000"),
        // Fewer slots than stalled clients: a stalled body must not hold one.
        ("QUEEN_SQS_MAX_INFLIGHT", "100"),
    ])
    .await;
    let started = Instant::now();
    let mut stalled = Vec::new();
    for i in 0..STALLED {
        let mut s = TcpStream::connect(ep.addr).await.expect("connect");
        // Most promise a body and send none; some never finish their head.
        let head: &[u8] = if i % 10 == 0 {
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Le"
        } else {
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n"
        };
        s.write_all(head).await.expect("write");
        stalled.push(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    // While they are held, health and a signed request are served.
    let a = exchange(ep.addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", false)
        .await
        .expect("an answer");
    assert_eq!(a.status, 200, "{a:?}");
    let host = ep.addr.to_string();
    let body = form(&[("Action", "ListQueues"), ("Version", "2012-11-05")]);
    let req = signed(
        &host,
        "sqs",
        &[("content-type", "application/x-www-form-urlencoded")],
        &body,
        None,
    );
    let a = exchange(ep.addr, req.as_bytes(), false)
        .await
        .expect("an answer");
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "too slow to prove anything"
    );

    // And each of them is cut off (408, or closed) soon after its deadline.
    let mut cut = 0;
    for mut s in stalled {
        let left = Duration::from_secs(12).saturating_sub(started.elapsed());
        match read_answer(&mut s, left).await {
            Some(a) => {
                assert_eq!(a.status, 408, "{a:?}");
                cut += 1;
            }
            None => {
                // Closed (EOF) rather than left hanging: a read now answers at once.
                let mut b = [0u8; 1];
                let r = tokio::time::timeout(Duration::from_millis(100), s.read(&mut b)).await;
                assert!(
                    matches!(r, Ok(Ok(0)) | Ok(Err(_))),
                    "a stalled client was not cut off"
                );
                cut += 1;
            }
        }
    }
    assert_eq!(cut, STALLED);
    assert!(started.elapsed() < Duration::from_secs(12));
}

/// A request that finds every slot of its kind taken within 250 ms is throttled in its own
/// protocol. The one slot for requests other than receives is held by a send whose broker
/// push a proxy keeps for 3 s; a receive, on slots of its own, is served meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_budget_is_a_throttle_in_the_callers_protocol() {
    let base = Endpoint::with_env(&[("QUEEN_SQS_AUTH", "off")]).await;
    let url = base.create_queue("edge-throttle", json!({})).await;
    let hold_push: support::Hook = std::sync::Arc::new(|seen: &support::Seen| {
        if seen.path_and_query.starts_with("/api/v1/push")
            && String::from_utf8_lossy(seen.body).contains("held")
        {
            std::thread::sleep(Duration::from_secs(3));
        }
        None
    });
    let proxy = support::proxy(base.broker.url(), hold_push).await;
    let env = vec![
        ("QUEEN_URL".to_string(), format!("http://{proxy}")),
        (
            "QUEEN_SQS_HANDLE_SECRET".into(),
            support::HANDLE_SECRET.into(),
        ),
        ("QUEEN_SQS_AUTH".into(), "off".into()),
        ("QUEEN_SQS_MAX_INFLIGHT".into(), "1".into()),
    ];
    let ep = std::sync::Arc::new(
        Endpoint::serve_remote(env, base.broker.clone(), base.data_dir.clone()).await,
    );
    let held = {
        let (ep, url) = (ep.clone(), url.clone());
        tokio::spawn(async move {
            ep.sqs(
                "SendMessage",
                json!({"QueueUrl": url, "MessageBody": "held"}),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(700)).await;

    // A receive waits on a slot of its own: served while the send holds the other.
    let (status, body) = ep
        .sqs(
            "ReceiveMessage",
            json!({"QueueUrl": url, "WaitTimeSeconds": 0}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = ep
        .sqs("SendMessage", json!({"QueueUrl": url, "MessageBody": "x"}))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["__type"]
            .as_str()
            .unwrap_or("")
            .ends_with("#RequestThrottled"),
        "{body}"
    );
    let (status, xml) = ep
        .query(
            "/",
            &[
                ("Action", "SendMessage"),
                ("Version", "2012-11-05"),
                ("QueueUrl", &url),
                ("MessageBody", "x"),
            ],
        )
        .await;
    assert_eq!(status, 400, "{xml}");
    assert!(xml.contains("<Code>RequestThrottled</Code>"), "{xml}");
    let (status, xml) = ep
        .query("/", &[("Action", "ListTopics"), ("Version", "2010-03-31")])
        .await;
    assert_eq!(status, 429, "{xml}");
    assert!(
        xml.contains("<Code>Throttled</Code>") && xml.contains("sns.amazonaws.com"),
        "{xml}"
    );

    let (status, body) = held.await.unwrap();
    assert_eq!(status, 200, "{body}");
    ep.sqs_ok("SendMessage", json!({"QueueUrl": url, "MessageBody": "x"}))
        .await;
}

/// Issue 21, item 4: receives wait on slots of their own. With one slot for everything
/// else and four for receives, five long polls leave the sends alone (all served while
/// they wait) and only the fifth poll is throttled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_polls_wait_on_slots_of_their_own() {
    let ep = std::sync::Arc::new(
        Endpoint::with_env(&[
            ("QUEEN_SQS_AUTH", "off"),
            ("QUEEN_SQS_MAX_INFLIGHT", "1"),
            ("QUEEN_SQS_MAX_LONG_POLLS", "4"),
        ])
        .await,
    );
    let url = ep.create_queue("edge-room", json!({})).await;
    let other = ep.create_queue("edge-room-other", json!({})).await;
    let mut polls = Vec::new();
    for _ in 0..5 {
        let (ep, url) = (ep.clone(), url.clone());
        polls.push(tokio::spawn(async move {
            ep.sqs(
                "ReceiveMessage",
                json!({"QueueUrl": url, "WaitTimeSeconds": 3}),
            )
            .await
        }));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    for i in 0..3 {
        ep.sqs_ok(
            "SendMessage",
            json!({"QueueUrl": other, "MessageBody": format!("m{i}")}),
        )
        .await;
    }
    let mut throttled = 0;
    for p in polls {
        let (status, body) = p.await.unwrap();
        if status == 400 {
            assert!(body["__type"]
                .as_str()
                .unwrap_or("")
                .ends_with("#RequestThrottled"));
            throttled += 1;
        } else {
            assert_eq!(status, 200, "{body}");
        }
    }
    assert_eq!(throttled, 1);
}
