//! The Queen client: the only code that knows broker routes (../shared/queen-api.md).
//! Typed calls over any [`Transport`]; every "200 but not a success" verdict of the
//! API's §8 is surfaced as data, every transport or server failure as [`QueenError`].

mod kv;
mod messages;
mod queues;
mod timers;
mod txn;

pub use kv::*;
pub use messages::*;
pub use queues::*;
pub use timers::*;
pub use txn::*;

use crate::http::{OutRequest, Response, Transport, TransportError};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The consumer group SQS uses: queue mode (competing consumers).
pub const QUEUE_MODE: &str = "__QUEUE_MODE__";
/// Broker calls other than long polls give up after this long.
const CALL_TIMEOUT_MS: u64 = 30_000;

/// A broker call that did not produce a usable answer.
#[derive(Debug, Clone, PartialEq)]
pub enum QueenError {
    /// 429: the broker asks us to slow down (SQS answers `RequestThrottled`).
    Throttled { retry_after_s: Option<u64> },
    /// Unreachable, timed out, or 503: nothing was applied that we know of.
    Unavailable(String),
    /// Any other non-success status, with the broker's error text.
    Failed { status: u16, error: String },
    /// A 2xx answer whose body is not the documented shape.
    BadAnswer(String),
}

impl std::fmt::Display for QueenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueenError::Throttled { .. } => write!(f, "broker throttled the call"),
            QueenError::Unavailable(s) => write!(f, "broker unavailable: {s}"),
            QueenError::Failed { status, error } => write!(f, "broker answered {status}: {error}"),
            QueenError::BadAnswer(s) => write!(f, "unexpected broker answer: {s}"),
        }
    }
}

pub type Result<T> = std::result::Result<T, QueenError>;

/// A Queen client bound to one transport and one bearer token.
pub struct Queen<'t, T> {
    transport: &'t T,
    token: Option<String>,
}

impl<'t, T: Transport> Queen<'t, T> {
    /// The transport the client calls through (for its clock: backoffs).
    pub fn transport(&self) -> &'t T {
        self.transport
    }

    pub fn new(transport: &'t T, token: Option<String>) -> Self {
        Queen {
            transport,
            token: token.filter(|t| !t.is_empty()),
        }
    }

    async fn call(
        &self,
        method: &'static str,
        path: String,
        body: Option<Vec<u8>>,
        timeout_ms: u64,
    ) -> Result<Response> {
        self.call_with(method, path, body, timeout_ms, Vec::new())
            .await
    }

    async fn call_with(
        &self,
        method: &'static str,
        path: String,
        body: Option<Vec<u8>>,
        timeout_ms: u64,
        headers: Vec<(&'static str, String)>,
    ) -> Result<Response> {
        let req = OutRequest {
            method,
            path_and_query: path,
            body,
            bearer: self.token.clone(),
            timeout_ms,
            headers,
        };
        let resp = self.transport.send(req).await.map_err(|e| match e {
            TransportError::Unreachable(s) => QueenError::Unavailable(s),
            TransportError::Timeout => QueenError::Unavailable("timed out".into()),
        })?;
        match resp.status {
            200..=299 => Ok(resp),
            429 => Err(QueenError::Throttled {
                retry_after_s: resp
                    .header("retry-after")
                    .and_then(|v| v.trim().parse().ok()),
            }),
            502..=504 => Err(QueenError::Unavailable(error_text(&resp))),
            status => Err(QueenError::Failed {
                status,
                error: error_text(&resp),
            }),
        }
    }

    async fn json<B: Serialize, R: DeserializeOwned>(
        &self,
        method: &'static str,
        path: String,
        body: Option<&B>,
    ) -> Result<R> {
        self.json_with(method, path, body, Vec::new()).await
    }

    async fn json_with<B: Serialize, R: DeserializeOwned>(
        &self,
        method: &'static str,
        path: String,
        body: Option<&B>,
        headers: Vec<(&'static str, String)>,
    ) -> Result<R> {
        let body = body.map(|b| serde_json::to_vec(b).unwrap_or_default());
        let resp = self
            .call_with(method, path, body, CALL_TIMEOUT_MS, headers)
            .await?;
        parse(&resp.body)
    }
}

fn parse<R: DeserializeOwned>(body: &[u8]) -> Result<R> {
    serde_json::from_slice(body).map_err(|e| QueenError::BadAnswer(e.to_string()))
}

fn error_text(resp: &Response) -> String {
    serde_json::from_slice::<serde_json::Value>(&resp.body)
        .ok()
        .and_then(|v| {
            let e = v.get("error")?.as_str()?.to_string();
            Some(match v.get("reason").and_then(|r| r.as_str()) {
                Some(r) => format!("{e}: {r}"),
                None => e,
            })
        })
        .unwrap_or_else(|| format!("status {}", resp.status))
}

/// Percent-encodes one path segment: every byte outside `A-Z a-z 0-9 - . _ ~`.
pub fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded_strictly() {
        assert_eq!(encode_segment("orders.fifo"), "orders.fifo");
        assert_eq!(encode_segment("a/b c%"), "a%2Fb%20c%25");
        assert_eq!(encode_segment("é"), "%C3%A9");
    }
}
