//! Per-queue depths of the embedded broker in `/metrics`, read from its store at scrape
//! time (never counted on the hot path), at most once per interval.
//!
//! One read transaction on a broker reader thread: the first [`MAX_QUEUES`] queues by name,
//! each its partition and cursor rows (one pair per FIFO message group), plus one pass over
//! the timers table. So a read costs O(queues + FIFO groups + pending timers): about a
//! millisecond for a few hundred queues, but long with 100,000 timers, and the embedded
//! broker has two reader threads that also serve registry misses, tombstones, FIFO claim
//! records and SNS. [`DepthCache`] therefore keeps the last read for
//! `QUEEN_SQS_METRICS_DEPTH_MS` (5 s by default) and lets one scrape read at a time: any
//! number of scrapers cost one read per interval (issue 21, item 1). A read that does not
//! finish within [`READ_TIMEOUT`] leaves the depths out and says so in
//! `queen_sqs_queue_depth_ok`.
//!
//! The states are the facade's own arithmetic (`GetQueueAttributes`), so the numbers match
//! what an SDK reads: `ready` = ApproximateNumberOfMessages, `in_flight` (leased by a
//! receive, plus visibility timers) = ApproximateNumberOfMessagesNotVisible, `delayed` =
//! ApproximateNumberOfMessagesDelayed.

use crate::broker::store::depth::QueueCounts;
use crate::broker::RunningBroker;
use queen_sqs::sqs::attributes::DELAY_TIMER_PREFIX;
use queen_sqs::sqs::inflight::TIMER_PREFIX as VISIBILITY_TIMER_PREFIX;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// Queues listed per scrape; `queen_sqs_broker_queues` still counts them all.
pub const MAX_QUEUES: usize = 1000;
/// A scrape waits this long for the depths at most.
const READ_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a read is served to later scrapes unless `QUEEN_SQS_METRICS_DEPTH_MS` says.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);
/// The longest interval accepted: a scrape never sees depths older than this.
const MAX_INTERVAL_MS: u64 = 600_000;

/// The last depth read, shared by every scrape of one host.
pub struct DepthCache {
    interval: Duration,
    /// The rendered families and when their read started. Held across a read, so the
    /// scrapes that arrive meanwhile wait for it and then take it instead of reading again.
    last: Mutex<Option<(Instant, String)>>,
    reads: AtomicU64,
}

impl DepthCache {
    /// From `QUEEN_SQS_METRICS_DEPTH_MS` (0 reads on every scrape, one scrape at a time).
    pub fn from_env(env: &[(String, String)]) -> Result<DepthCache, String> {
        let interval = match env
            .iter()
            .rev()
            .find(|(k, v)| k == "QUEEN_SQS_METRICS_DEPTH_MS" && !v.trim().is_empty())
        {
            None => DEFAULT_INTERVAL,
            Some((_, v)) => match v.trim().parse::<u64>() {
                Ok(ms) if ms <= MAX_INTERVAL_MS => Duration::from_millis(ms),
                _ => {
                    return Err(format!(
                        "QUEEN_SQS_METRICS_DEPTH_MS must be an integer from 0 to {MAX_INTERVAL_MS}, got {v:?}"
                    ))
                }
            },
        };
        Ok(DepthCache::with_interval(interval))
    }

    pub fn with_interval(interval: Duration) -> DepthCache {
        DepthCache {
            interval,
            last: Mutex::new(None),
            reads: AtomicU64::new(0),
        }
    }

    /// Appends the depth families for `broker` to `out`: the last read while it is younger
    /// than the interval or started after this scrape arrived, otherwise a new read.
    pub async fn render(&self, out: &mut String, broker: &RunningBroker) {
        let arrived = Instant::now();
        let mut last = self.last.lock().await;
        let fresh = last
            .as_ref()
            .is_some_and(|(started, _)| *started >= arrived || started.elapsed() < self.interval);
        if !fresh {
            let started = Instant::now();
            let mut text = String::new();
            read_and_render(&mut text, broker).await;
            self.reads.fetch_add(1, Ordering::Relaxed);
            *last = Some((started, text));
        }
        let Some((started, text)) = last.as_ref() else {
            return;
        };
        out.push_str(text);
        out.push_str("# HELP queen_sqs_queue_depth_age_seconds Age of the depth read this scrape shows (reads are shared for QUEEN_SQS_METRICS_DEPTH_MS).\n");
        out.push_str("# TYPE queen_sqs_queue_depth_age_seconds gauge\n");
        let _ = writeln!(
            out,
            "queen_sqs_queue_depth_age_seconds {}",
            started.elapsed().as_secs_f64()
        );
        out.push_str("# HELP queen_sqs_queue_depth_reads_total Depth reads of the broker's store since the host started.\n");
        out.push_str("# TYPE queen_sqs_queue_depth_reads_total counter\n");
        let _ = writeln!(
            out,
            "queen_sqs_queue_depth_reads_total {}",
            self.reads.load(Ordering::Relaxed)
        );
    }
}

/// One read of the depths, rendered.
async fn read_and_render(out: &mut String, broker: &RunningBroker) {
    let started = Instant::now();
    let read = tokio::time::timeout(READ_TIMEOUT, broker.queue_counts(MAX_QUEUES)).await;
    let took = started.elapsed().as_secs_f64();
    let ok = match read {
        Ok(Ok((queues, total))) => {
            render_counts(out, &queues, total);
            1
        }
        Ok(Err(e)) => {
            eprintln!("queen-sqs-host: /metrics could not read the queue depths: {e}");
            0
        }
        Err(_) => {
            eprintln!("queen-sqs-host: /metrics gave up reading the queue depths");
            0
        }
    };
    out.push_str("# HELP queen_sqs_queue_depth_ok 1 if this scrape read the queue depths.\n");
    out.push_str("# TYPE queen_sqs_queue_depth_ok gauge\n");
    let _ = writeln!(out, "queen_sqs_queue_depth_ok {ok}");
    out.push_str(
        "# HELP queen_sqs_queue_depth_read_seconds Time this scrape took to read the queue depths.\n",
    );
    out.push_str("# TYPE queen_sqs_queue_depth_read_seconds gauge\n");
    let _ = writeln!(out, "queen_sqs_queue_depth_read_seconds {took}");
}

fn render_counts(out: &mut String, queues: &[QueueCounts], total: i64) {
    out.push_str("# HELP queen_sqs_broker_queues Queues in the embedded broker (the first 1000 by name get depth series).\n");
    out.push_str("# TYPE queen_sqs_broker_queues gauge\n");
    let _ = writeln!(out, "queen_sqs_broker_queues {total}");
    out.push_str("# HELP queen_sqs_queue_messages Messages of a queue by state: ready (ApproximateNumberOfMessages), in_flight (ApproximateNumberOfMessagesNotVisible), delayed (ApproximateNumberOfMessagesDelayed).\n");
    out.push_str("# TYPE queen_sqs_queue_messages gauge\n");
    for q in queues {
        let name = label(&q.name);
        let timers = |prefix: &str| {
            q.timers
                .iter()
                .filter(|(kind, _)| kind == prefix)
                .map(|(_, n)| n)
                .sum::<i64>()
        };
        let leased = q.depth.processing;
        let states = [
            ("ready", q.depth.pending - leased),
            ("in_flight", leased + timers(VISIBILITY_TIMER_PREFIX)),
            ("delayed", timers(DELAY_TIMER_PREFIX)),
        ];
        for (state, n) in states {
            let _ = writeln!(
                out,
                "queen_sqs_queue_messages{{queue=\"{name}\",state=\"{state}\"}} {n}"
            );
        }
    }
    out.push_str("# HELP queen_sqs_queue_timers Pending broker timers of a queue by kind (the timer key's prefix: vis = visibility, sqs = delayed send).\n");
    out.push_str("# TYPE queen_sqs_queue_timers gauge\n");
    for q in queues {
        let name = label(&q.name);
        for (kind, n) in &q.timers {
            let kind = label(kind.trim_end_matches('.'));
            let kind = if kind.is_empty() {
                "other".into()
            } else {
                kind
            };
            let _ = writeln!(
                out,
                "queen_sqs_queue_timers{{queue=\"{name}\",kind=\"{kind}\"}} {n}"
            );
        }
    }
}

/// A label value in the exposition format: backslash, double quote and newline escaped.
fn label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_is_read_and_bounded() {
        let env = |v: &str| vec![("QUEEN_SQS_METRICS_DEPTH_MS".to_string(), v.to_string())];
        assert_eq!(
            DepthCache::from_env(&[]).unwrap().interval,
            DEFAULT_INTERVAL
        );
        assert_eq!(
            DepthCache::from_env(&env("0")).unwrap().interval,
            Duration::ZERO
        );
        assert_eq!(
            DepthCache::from_env(&env("1500")).unwrap().interval,
            Duration::from_millis(1500)
        );
        for bad in ["-1", "5s", "600001"] {
            let e = DepthCache::from_env(&env(bad)).err().unwrap();
            assert!(e.contains("QUEEN_SQS_METRICS_DEPTH_MS"), "{e}");
        }
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(label("orders.fifo"), "orders.fifo");
    }
}
