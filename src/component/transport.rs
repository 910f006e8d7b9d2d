//! `Transport` over `wasi:http/outgoing-handler`: how the component reaches Queen.

use super::executor::wait_on;
use crate::http::{OutRequest, Response, Transport, TransportError};
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
        let unreachable = |e: String| TransportError::Unreachable(e);
        let headers = Fields::new();
        if req.body.is_some() {
            let _ = headers.append("content-type", b"application/json");
        }
        if let Some(token) = &req.bearer {
            let _ = headers.append("authorization", format!("Bearer {token}").as_bytes());
        }
        for (name, value) in &req.headers {
            let _ = headers.append(name, value.as_bytes());
        }
        let body_len = req.body.as_ref().map_or(0, Vec::len);
        let _ = headers.append("content-length", body_len.to_string().as_bytes());
        let outgoing = OutgoingRequest::new(headers);
        let method = match req.method {
            "GET" => Method::Get,
            "DELETE" => Method::Delete,
            "PUT" => Method::Put,
            _ => Method::Post,
        };
        let _ = outgoing.set_method(&method);
        let _ = outgoing.set_scheme(Some(&self.scheme));
        let _ = outgoing.set_authority(Some(&self.authority));
        let _ = outgoing
            .set_path_with_query(Some(&format!("{}{}", self.base_path, req.path_and_query)));
        let body = outgoing
            .body()
            .map_err(|_| unreachable("request body unavailable".into()))?;
        let future = outgoing_handler::handle(outgoing, Some(request_options(req.timeout_ms)))
            .map_err(|e| unreachable(format!("{e:?}")))?;
        if let Some(bytes) = &req.body {
            let stream = body
                .write()
                .map_err(|_| unreachable("request stream".into()))?;
            for chunk in bytes.chunks(4096) {
                stream
                    .blocking_write_and_flush(chunk)
                    .map_err(|e| unreachable(format!("writing request: {e:?}")))?;
            }
        }
        OutgoingBody::finish(body, None).map_err(|e| unreachable(format!("{e:?}")))?;
        Ok(future)
    }
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
                loop {
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
}
