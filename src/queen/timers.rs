//! Timers: scheduled messages (API §7), used for per-message `DelaySeconds`.

use super::*;
use serde::{Deserialize, Serialize};

/// How many timers a count walks at most where the broker cannot count them itself.
pub const MAX_COUNTED_TIMERS: u64 = 100_000;

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TimerSchedule {
    pub op: &'static str,
    pub queue: String,
    pub timer_key: String,
    pub partition: String,
    pub delay_ms: u64,
    pub txn: String,
    /// base64 of the payload's JSON text.
    pub payload: String,
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
        #[derive(Serialize)]
        struct Body<'a> {
            operations: &'a [TimerSchedule],
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

    /// Pending timers of a queue whose key starts with `prefix`.
    ///
    /// `mode=count` answers `{"count":N}` on the embedded broker; the released engine
    /// (1.3.0) ignores both `mode` and `prefix` and answers the list shape, so the count
    /// is then taken over the listed keys, page by page. A queue with more than
    /// [`MAX_COUNTED_TIMERS`] timers answers that many: the attribute is approximate.
    pub async fn timer_count(&self, queue: &str, prefix: &str) -> Result<u64> {
        let path = format!(
            "/api/v1/timers/{}?mode=count&prefix={}",
            encode_segment(queue),
            encode_segment(prefix)
        );
        let answer: serde_json::Value = self.json::<(), _>("GET", path, None).await?;
        if let Some(n) = answer.get("count").and_then(serde_json::Value::as_u64) {
            return Ok(n);
        }
        if answer.get("rows").is_none() {
            return Err(QueenError::BadAnswer(format!(
                "timer count answered neither count nor rows: {answer}"
            )));
        }
        let mut counted = 0u64;
        let mut listed = 0u64;
        let mut after: Option<String> = None;
        loop {
            let (keys, next) = self.timer_keys(queue, after.as_deref()).await?;
            listed += keys.len() as u64;
            counted += keys.iter().filter(|k| k.starts_with(prefix)).count() as u64;
            match next {
                Some(n) if listed < MAX_COUNTED_TIMERS => after = Some(n),
                _ => return Ok(counted),
            }
        }
    }

    /// Keys of a queue's pending timers, one page at a time.
    pub async fn timer_keys(
        &self,
        queue: &str,
        after: Option<&str>,
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
        let mut path = format!("/api/v1/timers/{}?limit=1000", encode_segment(queue));
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

    pub async fn timer_cancel(&self, queue: &str, timer_key: &str) -> Result<TimerResult> {
        let path = format!(
            "/api/v1/timers/{}/{}",
            encode_segment(queue),
            encode_segment(timer_key)
        );
        self.json::<(), _>("DELETE", path, None).await
    }
}
