//! Plain-data HTTP messages: what crosses the I/O boundary in both directions.

use std::future::Future;

/// An incoming request, its body already read (under the listener's cap).
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub method: String,
    /// Path plus `?query`, exactly as received (still percent-encoded).
    pub path_and_query: String,
    /// Header names lower-cased by the edge; values as received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// `http` or `https`, as the edge saw it; used to build queue URLs.
    pub scheme: String,
}

impl Request {
    /// First value of a header, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn path(&self) -> &str {
        self.path_and_query.split('?').next().unwrap_or("")
    }

    pub fn query(&self) -> &str {
        self.path_and_query
            .split_once('?')
            .map(|(_, q)| q)
            .unwrap_or("")
    }
}

/// A response, either ours to a client or the broker's to us.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16, content_type: &str, body: Vec<u8>) -> Response {
        Response {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A call to the broker: a route relative to the broker's base URL.
#[derive(Debug, Clone)]
pub struct OutRequest {
    pub method: &'static str,
    /// `/api/v1/...` plus query string, already percent-encoded.
    pub path_and_query: String,
    /// JSON body, sent with `Content-Type: application/json` when present.
    pub body: Option<Vec<u8>>,
    /// `Authorization: Bearer <token>` when present.
    pub bearer: Option<String>,
    /// How long the transport waits for the answer's head, beyond which it gives up.
    pub timeout_ms: u64,
    /// Extra request headers: the cache hints below, nothing the broker reads.
    pub headers: Vec<(&'static str, String)>,
}

/// On a GET: the answer may be served from a cache of the host's, if at most this many
/// milliseconds old. A host without a cache ignores it (the broker does too); one with a
/// cache strips it before the request leaves. The component keeps no state between
/// requests, so this is the only way a repeated read (a queue record) is saved.
pub const CACHE_TTL_HEADER: &str = "x-queen-sqs-cache-ttl-ms";
/// On a POST that only reads (a KV prefix walk, a `getMany`): with [`CACHE_TTL_HEADER`],
/// the path its answer is cached under, standing for the keys it reads: a write to a key
/// under that prefix forgets it (see `queen::kv::invalidations`).
pub const CACHE_AS_HEADER: &str = "x-queen-sqs-cache-as";
/// With [`CACHE_AS_HEADER`]: which of the reads kept under that path this one is (the host
/// keeps each apart; a forget of the path forgets them all).
pub const CACHE_VARIANT_HEADER: &str = "x-queen-sqs-cache-variant";
/// On any request: comma-separated paths whose cached answers must be forgotten now
/// (`*`: all of them), sent with the write that makes them stale.
pub const CACHE_INVALIDATE_HEADER: &str = "x-queen-sqs-cache-invalidate";

/// A call beyond the broker: an SNS delivery to a subscriber's HTTP/S endpoint. The URL is
/// absolute; the headers are all the request carries (no cache hints, no bearer token).
#[derive(Debug, Clone)]
pub struct OutsideRequest {
    pub method: &'static str,
    /// `http://` or `https://`, authority, path and query, already percent-encoded.
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// How long the transport waits for the answer's head, beyond which it gives up.
    pub timeout_ms: u64,
}

/// Why a broker call produced no HTTP answer at all.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportError {
    /// Connection refused, DNS failure, reset: the broker is not there.
    Unreachable(String),
    /// No answer within the request's timeout.
    Timeout,
}

/// The one way out of the core: send a request to the broker, get its answer.
///
/// Implementations need not be `Send`: the component is single-threaded, and
/// concurrency inside a request comes from polling several of these futures at once.
pub trait Transport {
    fn send(&self, req: OutRequest) -> impl Future<Output = Result<Response, TransportError>>;

    /// Waits `ms` milliseconds (a backoff before retrying a throttled broker call). A
    /// transport without a clock answers at once.
    fn pause(&self, ms: u64) -> impl Future<Output = ()> {
        let _ = ms;
        std::future::ready(())
    }

    /// Sends a request beyond the broker (an SNS HTTP/S delivery). A transport that can
    /// reach only its broker (the proxy-wasm gateway) answers `Unreachable`.
    fn call_outside(
        &self,
        req: OutsideRequest,
    ) -> impl Future<Output = Result<Response, TransportError>> {
        let _ = req;
        std::future::ready(Err(TransportError::Unreachable(
            "this runtime makes no calls beyond the broker".into(),
        )))
    }

    /// A monotonic clock in milliseconds, for work a request bounds by time (a move
    /// task's step). `None`: no clock, and such work is bounded by count alone.
    fn clock_ms(&self) -> Option<u64> {
        None
    }
}
