//! What an action sees of the request it serves: the configuration, the broker client,
//! the time the edge read and the address the client reached. Every action takes it; it
//! lives apart from the request path (`service`) so that the actions and the path that
//! calls them do not import each other.

use crate::config::Config;
use crate::http::Transport;
use crate::queen::Queen;

/// What an action sees of the request it serves.
pub struct Ctx<'a, T> {
    pub cfg: &'a Config,
    pub queen: Queen<'a, T>,
    /// Milliseconds since the Unix epoch, as the edge read the clock.
    pub now_ms: i64,
    /// The transport's monotonic clock when `now_ms` was read (None: it has none).
    pub started_clock_ms: Option<u64>,
    /// `scheme://host` as the client reached us: queue URLs are built from it.
    pub base_url: String,
    pub request_id: &'a str,
    /// The request's `X-Amzn-Trace-Id` header, which a sent message keeps as its
    /// `AWSTraceHeader` when it names none itself.
    pub trace_header: Option<String>,
    /// The request is a call a client made (signed, or any call with authentication off),
    /// not an unsigned link followed by a GET (a `SubscribeURL`, an `UnsubscribeURL`).
    pub signed: bool,
}

impl<T> Ctx<'_, T> {
    pub fn now_s(&self) -> i64 {
        self.now_ms.div_euclid(1000)
    }
}

impl<T: Transport> Ctx<'_, T> {
    /// Milliseconds since the Unix epoch now, not when the request began: a long poll
    /// runs for seconds.
    pub fn wall_ms(&self) -> i64 {
        match (self.started_clock_ms, self.queen.transport().clock_ms()) {
            (Some(start), Some(now)) => self.now_ms + now.saturating_sub(start) as i64,
            _ => self.now_ms,
        }
    }
}
