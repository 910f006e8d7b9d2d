//! `Transport` over `wasi:http/outgoing-handler`: how the component reaches Queen.

use super::executor::wait_on;
use crate::http::{OutRequest, OutsideRequest, Response, Transport, TransportError};
use std::future::poll_fn;
use std::task::Poll;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    Fields, FutureIncomingResponse, IncomingBody, Method, OutgoingBody, OutgoingRequest,
    RequestOptions, Scheme,
};
use wasip2::io::streams::StreamError;

pub struct WasiTransport {
    scheme: Scheme,
    authority: String,
    base_path: String,
}

impl WasiTransport {
    pub fn new(base_url: &str) -> WasiTransport {
        let (scheme, rest) = match base_url.split_once("://") {
            Some(("https", rest)) => (Scheme::Https, rest),
            Some((_, rest)) => (Scheme::Http, rest),
            None => (Scheme::Http, base_url),
        };
        let (authority, base_path) = match rest.find('/') {
            Some(i) => (
                rest[..i].to_string(),
                rest[i..].trim_end_matches('/').to_string(),
            ),
            None => (rest.to_string(), String::new()),
        };
        WasiTransport {
            scheme,
            authority,
            base_path,
        }
    }

    fn start(&self, req: &OutRequest) -> Result<FutureIncomingResponse, TransportError> {
        let mut headers: Vec<(&str, &[u8])> = Vec::new();
        if req.body.is_some() {
            headers.push(("content-type", b"application/json"));
        }
        let bearer = req.bearer.as_ref().map(|t| format!("Bearer {t}"));
        if let Some(b) = &bearer {
            headers.push(("authorization", b.as_bytes()));
        }
        for (name, value) in &req.headers {
            headers.push((name, value.as_bytes()));
        }
        let target = Target {
            scheme: &self.scheme,
            authority: &self.authority,
            path_and_query: format!("{}{}", self.base_path, req.path_and_query),
        };
        let body = req.body.as_deref().unwrap_or(&[]);
        start(req.method, &target, &headers, body, req.timeout_ms)
    }
}

/// Where a request goes.
struct Target<'a> {
    scheme: &'a Scheme,
    authority: &'a str,
    path_and_query: String,
}

/// Sends the head and the whole body; the answer is awaited by the caller.
fn start(
    method: &str,
    target: &Target<'_>,
    headers: &[(&str, &[u8])],
    body_bytes: &[u8],
    timeout_ms: u64,
) -> Result<FutureIncomingResponse, TransportError> {
    let unreachable = |e: String| TransportError::Unreachable(e);
    let fields = Fields::new();
    for (name, value) in headers {
        let _ = fields.append(name, value);
    }
    let _ = fields.append("content-length", body_bytes.len().to_string().as_bytes());
    let outgoing = OutgoingRequest::new(fields);
    let method = match method {
        "GET" => Method::Get,
        "DELETE" => Method::Delete,
        "PUT" => Method::Put,
        _ => Method::Post,
    };
    let _ = outgoing.set_method(&method);
    let _ = outgoing.set_scheme(Some(target.scheme));
    let _ = outgoing.set_authority(Some(target.authority));
    let _ = outgoing.set_path_with_query(Some(&target.path_and_query));
    let body = outgoing
        .body()
        .map_err(|_| unreachable("request body unavailable".into()))?;
    let future = outgoing_handler::handle(outgoing, Some(request_options(timeout_ms)))
        .map_err(|e| unreachable(format!("{e:?}")))?;
    if !body_bytes.is_empty() {
        let stream = body
            .write()
            .map_err(|_| unreachable("request stream".into()))?;
        for chunk in body_bytes.chunks(4096) {
            stream
                .blocking_write_and_flush(chunk)
                .map_err(|e| unreachable(format!("writing request: {e:?}")))?;
        }
    }
    OutgoingBody::finish(body, None).map_err(|e| unreachable(format!("{e:?}")))?;
    Ok(future)
}

/// Every time limit of a broker call is the call's own deadline (a long poll's is its wait
/// plus a margin). Runtimes read these options differently: wasmtime and Spin bound the TCP
/// connect by `connect-timeout` and the wait for the answer's head by `first-byte-timeout`,
/// while jco's Node shim makes `connect-timeout` the socket's inactivity timeout until the
/// head arrives. A short connect timeout therefore cut every long poll under jco short; the
/// deadline is right under both readings. (Our own host connects with its own 5 s limit and
/// reads only `first-byte-timeout`.) The cost: where a broker address swallows connection
/// attempts, wasmtime and Spin give up after the deadline rather than after 5 s.
fn request_options(deadline_ms: u64) -> RequestOptions {
    let deadline_ns = Some(deadline_ms.saturating_mul(1_000_000));
    let options = RequestOptions::new();
    let _ = options.set_connect_timeout(deadline_ns);
    let _ = options.set_first_byte_timeout(deadline_ns);
    let _ = options.set_between_bytes_timeout(deadline_ns);
    options
}

impl Transport for WasiTransport {
    fn clock_ms(&self) -> Option<u64> {
        Some(wasip2::clocks::monotonic_clock::now() / 1_000_000)
    }

    async fn pause(&self, ms: u64) {
        use wasip2::clocks::monotonic_clock::{now, subscribe_instant};
        let deadline = now().saturating_add(ms.saturating_mul(1_000_000));
        poll_fn(|cx| {
            if now() >= deadline {
                Poll::Ready(())
            } else {
                wait_on(subscribe_instant(deadline), cx.waker());
                Poll::Pending
            }
        })
        .await
    }

    async fn send(&self, req: OutRequest) -> Result<Response, TransportError> {
        let future = self.start(&req)?;
        answer(future, usize::MAX).await
    }

    async fn call_outside(&self, req: OutsideRequest) -> Result<Response, TransportError> {
        let (scheme, rest) = match req.url.split_once("://") {
            Some(("https", rest)) => (Scheme::Https, rest),
            Some(("http", rest)) => (Scheme::Http, rest),
            _ => return Err(TransportError::Unreachable("not an http(s) URL".into())),
        };
        let (authority, path_and_query) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        let target = Target {
            scheme: &scheme,
            authority,
            path_and_query,
        };
        let headers: Vec<(&str, &[u8])> = req
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_bytes()))
            .collect();
        let future = start(req.method, &target, &headers, &req.body, req.timeout_ms)?;
        // A subscriber's answer is judged by its status; its body is read only so far.
        answer(future, OUTSIDE_BODY_READ).await
    }
}

/// How much of a subscriber's answer is read.
const OUTSIDE_BODY_READ: usize = 64 * 1024;

/// Waits for the answer to a request [`start`]ed, and reads its body up to `max_body`.
async fn answer(
    future: FutureIncomingResponse,
    max_body: usize,
) -> Result<Response, TransportError> {
    let incoming = poll_fn(|cx| match future.get() {
        Some(result) => Poll::Ready(result),
        None => {
            wait_on(future.subscribe(), cx.waker());
            Poll::Pending
        }
    })
    .await;
    let incoming = match incoming {
        Ok(Ok(resp)) => resp,
        Ok(Err(code)) => {
            use wasip2::http::types::ErrorCode as E;
            return Err(match code {
                E::ConnectionReadTimeout | E::ConnectionTimeout | E::HttpResponseTimeout => {
                    TransportError::Timeout
                }
                other => TransportError::Unreachable(format!("{other:?}")),
            });
        }
        Err(()) => return Err(TransportError::Unreachable("response taken twice".into())),
    };
    let status = incoming.status();
    let headers = incoming
        .headers()
        .entries()
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_ascii_lowercase(),
                String::from_utf8_lossy(&v).into_owned(),
            )
        })
        .collect();
    let mut body = Vec::new();
    if let Ok(incoming_body) = incoming.consume() {
        if let Ok(stream) = incoming_body.stream() {
            while body.len() < max_body {
                match stream.blocking_read(64 * 1024) {
                    Ok(chunk) => body.extend_from_slice(&chunk),
                    Err(StreamError::Closed) => break,
                    Err(StreamError::LastOperationFailed(e)) => {
                        return Err(TransportError::Unreachable(e.to_debug_string()))
                    }
                }
            }
        }
        let _ = IncomingBody::finish(incoming_body);
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}
