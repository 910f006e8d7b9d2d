//! Prometheus metrics, served by the host at `GET /metrics` (text exposition format 0.0.4).
//!
//! - `queen_sqs_requests_total{service,action,status,error}` and
//!   `queen_sqs_request_seconds{service,action}` (a histogram): what the component answered,
//!   as it tells the host in its `x-queen-sqs-said` header (the host knows no SQS).
//! - `queen_sqs_broker_calls_total{route,outcome}` and `queen_sqs_broker_call_seconds{route}`:
//!   every call the component made to Queen, by route (`push`, `pop`, `ack`, `transaction`,
//!   `kv`, `timers`, …) and outcome (`2xx`, `4xx`, `throttled`, `5xx`, `timeout`,
//!   `unreachable`, `cached`).
//! - `queen_sqs_sns_http_posts_total{type,outcome}` and `queen_sqs_sns_http_post_seconds`:
//!   the POSTs made to SNS `http`/`https` subscribers, by message type (`Notification`,
//!   `SubscriptionConfirmation`) and outcome (`2xx`, `3xx`, `4xx`, `5xx`, `timeout`,
//!   `unreachable`); never by subscriber, so they name nothing.
//! - `queen_sqs_requests_in_component` and `queen_sqs_long_polls_waiting`: the slots in use.
//! - per-queue depths of the embedded broker, read at scrape time (see `depths`).
//!
//! Counting is a short mutex-guarded map update per request and per broker call. With
//! `QUEEN_SQS_METRICS=off` nothing is counted (one atomic load per request and broker call).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Upper bounds of the latency buckets, in seconds.
const BOUNDS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 25.0,
];

#[derive(Default, Clone)]
struct Histogram {
    counts: [u64; BOUNDS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, d: Duration) {
        let s = d.as_secs_f64();
        for (i, bound) in BOUNDS.iter().enumerate() {
            if s <= *bound {
                self.counts[i] += 1;
            }
        }
        self.count += 1;
        self.sum += s;
    }

    /// `labels` may be empty (a histogram of no labels).
    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let (lead, whole) = if labels.is_empty() {
            (String::new(), String::new())
        } else {
            (format!("{labels},"), format!("{{{labels}}}"))
        };
        for (bound, n) in BOUNDS.iter().zip(self.counts) {
            let _ = writeln!(out, "{name}_bucket{{{lead}le=\"{bound}\"}} {n}");
        }
        let _ = writeln!(out, "{name}_bucket{{{lead}le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum{whole} {}", self.sum);
        let _ = writeln!(out, "{name}_count{whole} {}", self.count);
    }
}

#[derive(Default)]
struct State {
    requests: BTreeMap<(String, String, u16, String), u64>,
    request_seconds: BTreeMap<(String, String), Histogram>,
    broker_calls: BTreeMap<(String, &'static str), u64>,
    broker_seconds: BTreeMap<String, Histogram>,
    sns_posts: BTreeMap<(&'static str, &'static str), u64>,
    sns_post_seconds: Histogram,
}

pub struct Metrics {
    state: Mutex<State>,
    /// Off with `QUEEN_SQS_METRICS=off`: nothing is counted.
    on: AtomicBool,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            state: Mutex::default(),
            on: AtomicBool::new(true),
        }
    }
}

/// What an outgoing call is counted as.
enum Metered {
    /// A call to the broker, at this path.
    Broker(String),
    /// A POST to an SNS subscriber, of this message type.
    SnsPost(&'static str),
}

/// One outgoing call being timed; does nothing when metrics are off.
pub struct Meter(Option<(Arc<Metrics>, Metered, Instant)>);

impl Meter {
    /// Counts the call with its outcome and the time since the meter was started.
    pub fn done(&self, outcome: &'static str) {
        match &self.0 {
            Some((metrics, Metered::Broker(path), started)) => {
                metrics.broker_call(path, outcome, started.elapsed())
            }
            Some((metrics, Metered::SnsPost(kind), started)) => {
                metrics.sns_post(kind, outcome, started.elapsed())
            }
            None => {}
        }
    }

    /// Counts an answered call by its status.
    pub fn answered(&self, status: u16) {
        let outcome = match &self.0 {
            Some((_, Metered::SnsPost(_), _)) => class_of(status),
            _ => outcome_of(status),
        };
        self.done(outcome);
    }
}

/// The SNS message types a POST is counted under (anything else: `other`).
const SNS_TYPES: [&str; 3] = [
    "Notification",
    "SubscriptionConfirmation",
    "UnsubscribeConfirmation",
];

impl Metrics {
    pub fn set_on(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
    }

    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Starts timing a broker call to `path` (no clock read, no copy when metrics are off).
    pub fn meter(self: &Arc<Self>, path: &str) -> Meter {
        Meter(self.is_on().then(|| {
            (
                self.clone(),
                Metered::Broker(path.to_string()),
                Instant::now(),
            )
        }))
    }

    /// Starts timing a POST to an SNS subscriber of message type `kind`.
    pub fn meter_sns_post(self: &Arc<Self>, kind: &str) -> Meter {
        let kind = SNS_TYPES
            .iter()
            .find(|t| **t == kind)
            .copied()
            .unwrap_or("other");
        Meter(
            self.is_on()
                .then(|| (self.clone(), Metered::SnsPost(kind), Instant::now())),
        )
    }

    fn sns_post(&self, kind: &'static str, outcome: &'static str, latency: Duration) {
        if !self.is_on() {
            return;
        }
        let mut s = self.lock();
        *s.sns_posts.entry((kind, outcome)).or_default() += 1;
        s.sns_post_seconds.observe(latency);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One answered request; `said` is the component's telemetry line (see `request_log`).
    pub fn request(&self, said: Option<&str>, status: u16, latency: Duration) {
        if !self.is_on() {
            return;
        }
        let mut f = said.unwrap_or("").split(' ');
        let mut next = || {
            f.next()
                .filter(|v| !v.is_empty() && *v != "-")
                .unwrap_or("")
                .to_string()
        };
        let (service, action) = (next(), next());
        let (_access_key, _target, error) = (next(), next(), next());
        let mut s = self.lock();
        *s.requests
            .entry((service.clone(), action.clone(), status, error))
            .or_default() += 1;
        s.request_seconds
            .entry((service, action))
            .or_default()
            .observe(latency);
    }

    /// One call to the broker: its path, its outcome and how long it took.
    pub fn broker_call(&self, path: &str, outcome: &'static str, latency: Duration) {
        if !self.is_on() {
            return;
        }
        let route = route_of(path);
        let mut s = self.lock();
        *s.broker_calls.entry((route.clone(), outcome)).or_default() += 1;
        s.broker_seconds.entry(route).or_default().observe(latency);
    }

    pub fn render(&self, in_component: usize, long_polls: usize) -> String {
        let s = self.lock();
        let mut out = String::new();
        out.push_str("# HELP queen_sqs_requests_total Requests the component answered.\n");
        out.push_str("# TYPE queen_sqs_requests_total counter\n");
        for ((service, action, status, error), n) in &s.requests {
            let _ = writeln!(
                out,
                "queen_sqs_requests_total{{service=\"{service}\",action=\"{action}\",status=\"{status}\",error=\"{error}\"}} {n}"
            );
        }
        out.push_str(
            "# HELP queen_sqs_request_seconds Time from the request's arrival to its answer.\n",
        );
        out.push_str("# TYPE queen_sqs_request_seconds histogram\n");
        for ((service, action), h) in &s.request_seconds {
            let labels = format!("service=\"{service}\",action=\"{action}\"");
            h.render(&mut out, "queen_sqs_request_seconds", &labels);
        }
        out.push_str(
            "# HELP queen_sqs_broker_calls_total Calls made to Queen, by route and outcome.\n",
        );
        out.push_str("# TYPE queen_sqs_broker_calls_total counter\n");
        for ((route, outcome), n) in &s.broker_calls {
            let _ = writeln!(
                out,
                "queen_sqs_broker_calls_total{{route=\"{route}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        out.push_str("# HELP queen_sqs_broker_call_seconds Latency of calls to Queen.\n");
        out.push_str("# TYPE queen_sqs_broker_call_seconds histogram\n");
        for (route, h) in &s.broker_seconds {
            h.render(
                &mut out,
                "queen_sqs_broker_call_seconds",
                &format!("route=\"{route}\""),
            );
        }
        out.push_str(
            "# HELP queen_sqs_sns_http_posts_total POSTs to SNS http/https subscribers, by message type and outcome.\n",
        );
        out.push_str("# TYPE queen_sqs_sns_http_posts_total counter\n");
        for ((kind, outcome), n) in &s.sns_posts {
            let _ = writeln!(
                out,
                "queen_sqs_sns_http_posts_total{{type=\"{kind}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        out.push_str(
            "# HELP queen_sqs_sns_http_post_seconds Latency of POSTs to SNS subscribers.\n",
        );
        out.push_str("# TYPE queen_sqs_sns_http_post_seconds histogram\n");
        if s.sns_post_seconds.count > 0 {
            s.sns_post_seconds
                .render(&mut out, "queen_sqs_sns_http_post_seconds", "");
        }
        out.push_str("# HELP queen_sqs_requests_in_component Requests holding a component slot.\n");
        out.push_str("# TYPE queen_sqs_requests_in_component gauge\n");
        let _ = writeln!(out, "queen_sqs_requests_in_component {in_component}");
        out.push_str("# HELP queen_sqs_long_polls_waiting Long polls holding a slot.\n");
        out.push_str("# TYPE queen_sqs_long_polls_waiting gauge\n");
        let _ = writeln!(out, "queen_sqs_long_polls_waiting {long_polls}");
        out
    }
}

/// The route of a broker path: the segment after `/api/v1/` (`push`, `pop`, `kv`, …), or
/// the first segment for anything else (`health`).
fn route_of(path: &str) -> String {
    let path = path.split('?').next().unwrap_or(path);
    let rest = path
        .strip_prefix("/api/v1/")
        .unwrap_or(path.trim_start_matches('/'));
    let route = rest.split('/').next().unwrap_or("");
    let clean: String = route
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(32)
        .collect();
    if clean.is_empty() {
        "other".into()
    } else {
        clean
    }
}

/// The outcome label of a subscriber's answer: its status class.
fn class_of(status: u16) -> &'static str {
    match status {
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

/// The outcome label of a broker answer's status.
pub fn outcome_of(status: u16) -> &'static str {
    match status {
        429 => "throttled",
        200..=299 => "2xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_the_first_segment_under_api_v1() {
        assert_eq!(route_of("/api/v1/pop/queue/q?batch=1"), "pop");
        assert_eq!(route_of("/api/v1/kv/qs/q:x"), "kv");
        assert_eq!(route_of("/health"), "health");
        assert_eq!(route_of("/"), "other");
        assert_eq!(route_of("/api/v1/\"evil\"{}"), "evil");
    }

    #[test]
    fn histograms_are_cumulative() {
        let m = Metrics::default();
        m.request(Some("sqs SendMessage - q -"), 200, Duration::from_millis(3));
        m.request(
            Some("sqs SendMessage - q -"),
            200,
            Duration::from_millis(30),
        );
        let text = m.render(1, 0);
        assert!(text.contains("queen_sqs_requests_total{service=\"sqs\",action=\"SendMessage\",status=\"200\",error=\"\"} 2"), "{text}");
        assert!(text.contains("queen_sqs_request_seconds_bucket{service=\"sqs\",action=\"SendMessage\",le=\"0.005\"} 1"));
        assert!(text.contains("queen_sqs_request_seconds_bucket{service=\"sqs\",action=\"SendMessage\",le=\"0.05\"} 2"));
        assert!(text
            .contains("queen_sqs_request_seconds_count{service=\"sqs\",action=\"SendMessage\"} 2"));
    }

    #[test]
    fn sns_posts_are_counted_by_type_and_class_never_by_subscriber() {
        let m = Arc::new(Metrics::default());
        m.meter_sns_post("Notification").answered(204);
        m.meter_sns_post("Notification").answered(302);
        m.meter_sns_post("SubscriptionConfirmation")
            .done("unreachable");
        m.meter_sns_post("https://evil.example/{\"x\"}")
            .answered(200);
        let text = m.render(0, 0);
        for line in [
            "queen_sqs_sns_http_posts_total{type=\"Notification\",outcome=\"2xx\"} 1",
            "queen_sqs_sns_http_posts_total{type=\"Notification\",outcome=\"3xx\"} 1",
            "queen_sqs_sns_http_posts_total{type=\"SubscriptionConfirmation\",outcome=\"unreachable\"} 1",
            "queen_sqs_sns_http_posts_total{type=\"other\",outcome=\"2xx\"} 1",
            "queen_sqs_sns_http_post_seconds_count 4",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert!(!text.contains("evil"), "{text}");
        assert!(!text.contains("queen_sqs_broker_calls_total{"), "{text}");
    }

    #[test]
    fn switched_off_counts_nothing() {
        let m = Arc::new(Metrics::default());
        m.set_on(false);
        m.request(Some("sqs SendMessage - q -"), 200, Duration::from_millis(3));
        m.meter("/api/v1/push").done("2xx");
        m.broker_call("/api/v1/pop/queue/q", "2xx", Duration::from_millis(1));
        let text = m.render(0, 0);
        let samples: Vec<&str> = text
            .lines()
            .filter(|l| {
                !l.starts_with('#') && !l.contains("in_component") && !l.contains("long_polls")
            })
            .collect();
        assert!(samples.is_empty(), "{text}");
        m.set_on(true);
        m.meter("/api/v1/push").done("2xx");
        let text = m.render(0, 0);
        assert!(
            text.contains("queen_sqs_broker_calls_total{route=\"push\",outcome=\"2xx\"} 1"),
            "{text}"
        );
    }
}
