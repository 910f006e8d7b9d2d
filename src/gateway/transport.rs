//! `Transport` over `proxy_http_call`: a broker call is dispatched to the gateway's
//! upstream cluster and its answer arrives in a later `on_http_call_response`.

use super::executor;
use crate::http::{OutRequest, Response, Transport, TransportError};
use proxy_wasm::hostcalls;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

pub struct GatewayTransport {
    /// The gateway's cluster (Envoy) that leads to Queen: where calls are dispatched.
    cluster: String,
    /// `:authority` and `:scheme` of the calls, and the path prefix, from `QUEEN_URL`.
    authority: String,
    scheme: &'static str,
    base_path: String,
}

impl GatewayTransport {
    pub fn new(queen_url: &str, cluster: &str) -> GatewayTransport {
        let (scheme, rest) = match queen_url.split_once("://") {
            Some(("https", rest)) => ("https", rest),
            Some((_, rest)) => ("http", rest),
            None => ("http", queen_url),
        };
        let (authority, base_path) = match rest.find('/') {
            Some(i) => (
                rest[..i].to_string(),
                rest[i..].trim_end_matches('/').to_string(),
            ),
            None => (rest.to_string(), String::new()),
        };
        GatewayTransport {
            cluster: cluster.to_string(),
            authority,
            scheme,
            base_path,
        }
    }

    /// Dispatches the call; its token, or why the host refused it (an unknown cluster).
    fn dispatch(&self, req: &OutRequest) -> Result<u32, TransportError> {
        let path = format!("{}{}", self.base_path, req.path_and_query);
        let bearer = req.bearer.as_ref().map(|t| format!("Bearer {t}"));
        let mut headers: Vec<(&str, &str)> = vec![
            (":method", req.method),
            (":path", &path),
            (":authority", &self.authority),
            (":scheme", self.scheme),
        ];
        if req.body.is_some() {
            headers.push(("content-type", "application/json"));
        }
        if let Some(b) = &bearer {
            headers.push(("authorization", b));
        }
        for (name, value) in &req.headers {
            headers.push((name, value));
        }
        // The call's timeout is the request's whole time limit: for a long poll the broker's
        // wait plus a margin (see `Queen::pop`), so the gateway never cuts a wait short.
        let timeout = Duration::from_millis(req.timeout_ms.clamp(1, u32::MAX as u64));
        hostcalls::dispatch_http_call(
            &self.cluster,
            headers,
            req.body.as_deref(),
            Vec::new(),
            timeout,
        )
        .map_err(|status| {
            TransportError::Unreachable(format!(
                "the gateway refused a call to cluster {:?}: {status:?}",
                self.cluster
            ))
        })
    }
}

/// Forgets a call whose future is dropped before its answer (a task ended early).
struct Pending(u32);

impl Drop for Pending {
    fn drop(&mut self) {
        executor::abandon_call(self.0);
    }
}

impl Transport for GatewayTransport {
    fn clock_ms(&self) -> Option<u64> {
        u64::try_from(executor::now_ms()).ok()
    }

    async fn send(&self, req: OutRequest) -> Result<Response, TransportError> {
        let token = self.dispatch(&req)?;
        executor::register_call(token, req.timeout_ms);
        let _forget_if_dropped = Pending(token);
        poll_fn(|cx| executor::poll_call(token, cx.waker())).await
    }

    /// A timer on the root context's tick (10 ms granularity): proxy-wasm has no
    /// per-stream timer, so the root's `on_tick` re-polls the paused task.
    fn pause(&self, ms: u64) -> impl Future<Output = ()> {
        Pause {
            deadline_ms: executor::now_ms().saturating_add(ms.min(i64::MAX as u64) as i64),
        }
    }
}

struct Pause {
    deadline_ms: i64,
}

impl Future for Pause {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if executor::now_ms() >= self.deadline_ms {
            return Poll::Ready(());
        }
        // Each early poll arms a timer with the waker of that poll; an extra one only
        // causes one more re-poll.
        executor::add_timer(self.deadline_ms, cx.waker());
        Poll::Pending
    }
}
