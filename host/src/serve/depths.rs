//! Per-queue depths of the embedded broker in `/metrics`, read from its store at scrape
//! time (never counted on the hot path).
//!
//! One read transaction on a broker reader thread: the first [`MAX_QUEUES`] queues by name,
//! each its partition and cursor rows (one pair per FIFO message group), plus one pass over
//! the timers table. So a scrape costs O(queues + FIFO groups + pending timers), about a
//! millisecond for a few hundred queues, and never holds up the writer (WAL readers do not
//! block it). A scrape that cannot read them within [`READ_TIMEOUT`] leaves them out and
//! says so in `queen_sqs_queue_depth_ok`.
//!
//! The states are the facade's own arithmetic (`GetQueueAttributes`), so the numbers match
//! what an SDK reads: `ready` = ApproximateNumberOfMessages, `in_flight` (leased by a
//! receive, plus visibility timers) = ApproximateNumberOfMessagesNotVisible, `delayed` =
//! ApproximateNumberOfMessagesDelayed.

use crate::broker::store::depth::QueueCounts;
use crate::broker::RunningBroker;
use queen_sqs::sqs::attributes::DELAY_TIMER_PREFIX;
use queen_sqs::sqs::visibility::TIMER_PREFIX as VISIBILITY_TIMER_PREFIX;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// Queues listed per scrape; `queen_sqs_broker_queues` still counts them all.
pub const MAX_QUEUES: usize = 1000;
/// A scrape waits this long for the depths at most.
const READ_TIMEOUT: Duration = Duration::from_secs(2);

/// Appends the depth families for `broker` to `out`.
pub async fn render(out: &mut String, broker: &RunningBroker) {
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
    fn label_values_are_escaped() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(label("orders.fifo"), "orders.fifo");
    }
}
