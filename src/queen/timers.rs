//! Timers: scheduled messages (API §7), used for per-message `DelaySeconds` and for the
//! visibility of received messages on standard queues (`sqs::inflight`).

use super::*;
use serde::{Deserialize, Serialize};

/// How many timers a count walks at most where the broker cannot count them itself.
pub const MAX_COUNTED_TIMERS: u64 = 100_000;

/// Whether a schedule makes a new timer or replaces a pending one (a reschedule of a
/// timer that fired already makes a new one: `TimerVerdict::Scheduled`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ScheduleOp {
    Schedule,
    Reschedule,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TimerSchedule {
    pub op: ScheduleOp,
    pub queue: String,
    pub timer_key: String,
    pub partition: String,
    pub delay_ms: u64,
    pub txn: String,
    /// base64 of the payload's JSON text.
    pub payload: String,
}

/// A timer that no longer should fire: `{"op":"cancel","queue","timerKey"}`.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TimerCancel {
    pub op: &'static str,
    pub queue: String,
    pub timer_key: String,
}

impl TimerCancel {
    pub fn new(queue: &str, timer_key: &str) -> TimerCancel {
        TimerCancel {
            op: "cancel",
            queue: queue.to_string(),
            timer_key: timer_key.to_string(),
        }
    }
}

/// One operation of a timers call or of a transaction's timers rider.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum TimerOp {
    Schedule(TimerSchedule),
    Cancel(TimerCancel),
}

/// What a timer verdict says, as a closed set (unknown statuses are kept, not failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerVerdict {
    /// A new timer was created (for a reschedule: the old one had fired already).
    Scheduled,
    /// A pending timer was replaced.
    Rescheduled,
    Cancelled,
    /// No pending timer: it fired, or never existed.
    Absent,
    /// It is being fired right now.
    TooLate,
    Unknown,
}

impl TimerVerdict {
    pub fn of(status: &str) -> TimerVerdict {
        match status {
            "scheduled" => TimerVerdict::Scheduled,
            "rescheduled" => TimerVerdict::Rescheduled,
            "cancelled" => TimerVerdict::Cancelled,
            "absent" => TimerVerdict::Absent,
            "too_late" => TimerVerdict::TooLate,
            _ => TimerVerdict::Unknown,
        }
    }
}

/// A pending timer, read back whole (`GET /api/v1/timers/{queue}/{key}`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimerPeek {
    #[serde(default)]
    pub found: bool,
    #[serde(default)]
    pub partition: String,
    #[serde(default)]
    pub txn: String,
    /// base64, as stored.
    #[serde(default)]
    pub payload: String,
    /// The broker id the timer's fire will give the message it pushes.
    #[serde(default)]
    pub message_id: Option<String>,
    /// When it is due, by the broker's clock (ISO 8601).
    #[serde(default)]
    pub deliver_at: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimerResult {
    #[serde(default)]
    pub ok: bool,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub message_id: Option<String>,
    #[serde(default)]
    pub txn: Option<String>,
}

impl<T: Transport> Queen<'_, T> {
    pub async fn schedule(&self, ops: &[TimerSchedule]) -> Result<Vec<TimerResult>> {
        let ops: Vec<TimerOp> = ops.iter().cloned().map(TimerOp::Schedule).collect();
        self.timer_ops(&ops).await
    }

    /// One `POST /api/v1/timers`: verdicts in request order.
    pub async fn timer_ops(&self, ops: &[TimerOp]) -> Result<Vec<TimerResult>> {
        #[derive(Serialize)]
        struct Body<'a> {
            operations: &'a [TimerOp],
        }
        #[derive(Deserialize)]
        struct Answer {
            results: Vec<TimerResult>,
        }
        let a: Answer = self
            .json(
                "POST",
                "/api/v1/timers".into(),
                Some(&Body { operations: ops }),
            )
            .await?;
        if a.results.len() != ops.len() {
            return Err(QueenError::BadAnswer(format!(
                "timers answered {} of {}",
                a.results.len(),
                ops.len()
            )));
        }
        Ok(a.results)
    }

    /// Pending timers of a queue whose key starts with each of `prefixes`.
    ///
    /// `mode=count` answers `{"count":N}` on the embedded broker; the released engine
    /// (1.3.0) ignores both `mode` and `prefix` and answers the list shape, so the counts
    /// are then taken over the listed keys, page by page, in one walk for all prefixes. A
    /// queue with more than [`MAX_COUNTED_TIMERS`] timers counts that many: the attributes
    /// are approximate.
    pub async fn timer_counts(&self, queue: &str, prefixes: &[&str]) -> Result<Vec<u64>> {
        let mut counts = Vec::with_capacity(prefixes.len());
        for prefix in prefixes {
            let path = format!(
                "/api/v1/timers/{}?mode=count&prefix={}",
                encode_segment(queue),
                encode_segment(prefix)
            );
            let answer: serde_json::Value = self.json::<(), _>("GET", path, None).await?;
            if let Some(n) = answer.get("count").and_then(serde_json::Value::as_u64) {
                counts.push(n);
                continue;
            }
            if answer.get("rows").is_none() {
                return Err(QueenError::BadAnswer(format!(
                    "timer count answered neither count nor rows: {answer}"
                )));
            }
            return self.timer_counts_by_listing(queue, prefixes).await;
        }
        Ok(counts)
    }

    async fn timer_counts_by_listing(&self, queue: &str, prefixes: &[&str]) -> Result<Vec<u64>> {
        let mut counts = vec![0u64; prefixes.len()];
        let mut listed = 0u64;
        let mut after: Option<String> = None;
        loop {
            let (keys, next) = self.timer_keys(queue, after.as_deref(), 1000).await?;
            listed += keys.len() as u64;
            for (count, prefix) in counts.iter_mut().zip(prefixes) {
                *count += keys.iter().filter(|k| k.starts_with(prefix)).count() as u64;
            }
            match next {
                Some(n) if listed < MAX_COUNTED_TIMERS => after = Some(n),
                _ => return Ok(counts),
            }
        }
    }

    /// Keys of a queue's pending timers in key order, one page of at most `limit` at a time.
    pub async fn timer_keys(
        &self,
        queue: &str,
        after: Option<&str>,
        limit: u32,
    ) -> Result<(Vec<String>, Option<String>)> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Row {
            timer_key: String,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Answer {
            rows: Vec<Row>,
            #[serde(default)]
            truncated: bool,
            #[serde(default)]
            next_after: Option<String>,
        }
        let mut path = format!("/api/v1/timers/{}?limit={limit}", encode_segment(queue));
        if let Some(a) = after {
            path.push_str(&format!("&after={}", encode_segment(a)));
        }
        let a: Answer = self.json::<(), _>("GET", path, None).await?;
        let keys: Vec<String> = a.rows.into_iter().map(|r| r.timer_key).collect();
        let next = if a.truncated {
            a.next_after.or_else(|| keys.last().cloned())
        } else {
            None
        };
        Ok((keys, next))
    }

    /// One pending timer with its payload; `found: false` once it fired or was cancelled.
    pub async fn timer_peek(&self, queue: &str, timer_key: &str) -> Result<TimerPeek> {
        let path = format!(
            "/api/v1/timers/{}/{}",
            encode_segment(queue),
            encode_segment(timer_key)
        );
        let mut peek: TimerPeek = self.json::<(), _>("GET", path, None).await?;
        // The released engine (1.3.0) answers the payload MIME-style, a line break every
        // 76 characters, and refuses it in that form when it is sent back.
        peek.payload.retain(|c| !c.is_ascii_whitespace());
        Ok(peek)
    }

    pub async fn timer_cancel(&self, queue: &str, timer_key: &str) -> Result<TimerResult> {
        let path = format!(
            "/api/v1/timers/{}/{}",
            encode_segment(queue),
            encode_segment(timer_key)
        );
        self.json::<(), _>("DELETE", path, None).await
    }
}
