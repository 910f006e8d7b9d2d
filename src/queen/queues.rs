//! Queue administration: configure, list, delete, depth (API §3).

use super::*;
use serde::{Deserialize, Serialize};

/// The full option bag the facade sends; `/configure` is a whole-row upsert.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct QueueOptions {
    pub lease_time: u64,
    pub retry_limit: u32,
    pub dead_letter_queue: bool,
    pub dlq_after_max_retries: bool,
    pub delayed_processing: u64,
    pub retention_enabled: bool,
    pub retention_seconds: u64,
    pub dedup_window_seconds: u64,
    /// How long the broker keeps what it needs to ack a message by its transaction id (the
    /// released engine: at least 900 s, then a transactional ack of it is rejected), and
    /// when it deletes consumed messages. The facade sets it to the queue's retention.
    pub completed_retention_seconds: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct QueueInfo {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub partitions: u64,
    /// ISO 8601, as both brokers list it.
    #[serde(default, rename = "createdAt")]
    pub created_at: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Depth {
    #[serde(default)]
    pub pending: u64,
    #[serde(default)]
    pub processing: u64,
    #[serde(default)]
    pub ready: u64,
}

impl<T: Transport> Queen<'_, T> {
    pub async fn configure(&self, queue: &str, options: &QueueOptions) -> Result<()> {
        #[derive(Serialize)]
        struct Body<'a> {
            queue: &'a str,
            mode: &'static str,
            options: &'a QueueOptions,
        }
        #[derive(Deserialize)]
        struct Answer {
            #[serde(default)]
            configured: bool,
            #[serde(default)]
            error: Option<serde_json::Value>,
        }
        let a: Answer = self
            .json(
                "POST",
                "/api/v1/configure".into(),
                Some(&Body {
                    queue,
                    mode: "replace",
                    options,
                }),
            )
            .await?;
        match (a.configured, a.error) {
            (true, None) | (true, Some(serde_json::Value::Null)) => Ok(()),
            (_, e) => Err(QueenError::BadAnswer(format!("configure refused: {e:?}"))),
        }
    }

    /// The broker's own health route, answered within `timeout_ms`: `Ok` only on a 2xx.
    pub async fn health(&self, timeout_ms: u64) -> Result<()> {
        self.call("GET", "/health".into(), None, timeout_ms)
            .await
            .map(|_| ())
    }

    pub async fn list_queues(&self) -> Result<Vec<QueueInfo>> {
        #[derive(Deserialize)]
        struct Answer {
            queues: Vec<QueueInfo>,
        }
        let a: Answer = self
            .json::<(), _>("GET", "/api/v1/resources/queues".into(), None)
            .await?;
        Ok(a.queues)
    }

    /// Deletes a queue; `true` when it existed. A delete is idempotent, so one the broker
    /// failed with a 5xx of its database is asked again after 50 ms, then 200 ms: the
    /// released engine's queue delete loses to concurrent pops and acks of that queue now
    /// and then (checker engine seed 808: `500 delete failed: db error` under no fault, and
    /// the purge answered 503).
    pub async fn delete_queue(&self, queue: &str) -> Result<bool> {
        #[derive(Deserialize)]
        struct Answer {
            #[serde(default)]
            deleted: bool,
        }
        let path = format!("/api/v1/resources/queues/{}", encode_segment(queue));
        let mut pause_ms = 50;
        loop {
            match self.json::<(), Answer>("DELETE", path.clone(), None).await {
                Err(QueenError::Failed { status, .. }) if status >= 500 && pause_ms <= 200 => {
                    self.transport().pause(pause_ms).await;
                    pause_ms *= 4;
                }
                answer => return Ok(answer?.deleted),
            }
        }
    }

    /// The queue-mode depth; `None` when the broker has no such queue.
    ///
    /// Read from the queue's resource view (`totals.pending` / `totals.processing`), the
    /// one route where the released engine (1.3.0) reports in-flight messages: its depth
    /// route answers `pending` only, which counts leased messages as waiting.
    pub async fn depth(&self, queue: &str) -> Result<Option<Depth>> {
        #[derive(Deserialize)]
        struct Totals {
            #[serde(default)]
            pending: u64,
            #[serde(default)]
            processing: u64,
        }
        #[derive(Deserialize)]
        struct Answer {
            totals: Totals,
        }
        let path = format!("/api/v1/resources/queues/{}", encode_segment(queue));
        match self.json::<(), Answer>("GET", path, None).await {
            Ok(a) => {
                let processing = a.totals.processing.min(a.totals.pending);
                Ok(Some(Depth {
                    pending: a.totals.pending,
                    processing,
                    ready: a.totals.pending - processing,
                }))
            }
            Err(QueenError::Failed { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}
