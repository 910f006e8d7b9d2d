//! Push, pop, ack, lease extension (API §4).

use super::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PushItem {
    pub queue: String,
    pub partition: String,
    pub payload: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushStatus {
    Queued,
    /// Not written: the id and offset are the original's.
    Duplicate,
    /// Not written, a duplicate, but answered without the original's id (the nil UUID):
    /// seen from the released engine under load (checker, engine seeds 201 and 202).
    DuplicateUnnamed,
    /// Not in the log (`buffered`, `failed`, `error`, or anything unknown).
    NotStored(String),
}

#[derive(Debug, Clone)]
pub struct PushResult {
    pub status: PushStatus,
    pub message_id: String,
    pub transaction_id: Option<String>,
    pub offset: Option<i64>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct PopOptions {
    pub wait_ms: Option<u64>,
    pub lease_seconds: Option<u64>,
}

/// One message of a pop, with what it takes to settle it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoppedMessage {
    pub id: String,
    pub transaction_id: String,
    #[serde(default)]
    pub data: Value,
    #[serde(default)]
    pub created_at: Option<String>,
    pub partition_id: String,
    pub partition: String,
    #[serde(default)]
    pub lease_id: Option<String>,
    #[serde(default)]
    pub delivery_attempt: Option<u32>,
    #[serde(default)]
    pub offset: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Popped {
    #[serde(default)]
    pub lease_id: String,
    #[serde(default)]
    pub messages: Vec<PoppedMessage>,
    /// When the pop was asked, on the transport's monotonic clock (the facade's own note,
    /// never on the wire): the claim's lease started after it.
    #[serde(skip)]
    pub asked_at_ms: Option<u64>,
}

/// What an ack tells the broker about a message.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AckStatus {
    /// Done with: the lane's cursor moves past it (and past everything before it in the
    /// lease).
    Completed,
    /// Given back: the lease ends there and the message is visible again, its retry
    /// budget uncharged.
    Retry,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Ack {
    pub transaction_id: String,
    pub partition_id: String,
    pub status: AckStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_id: Option<String>,
}

impl Ack {
    /// The ack of message `txn` of partition `partition_id` under `lease_id`.
    pub fn new(txn: &str, partition_id: &str, lease_id: &str, status: AckStatus) -> Ack {
        Ack {
            transaction_id: txn.to_string(),
            partition_id: partition_id.to_string(),
            status,
            lease_id: Some(lease_id.to_string()),
        }
    }

    /// The ack of a popped message under `lease_id`.
    pub fn of(m: &PoppedMessage, lease_id: &str, status: AckStatus) -> Ack {
        Ack::new(&m.transaction_id, &m.partition_id, lease_id, status)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AckResult {
    #[serde(default)]
    pub success: bool,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub noop: bool,
    #[serde(default)]
    pub lease_released: bool,
}

impl AckResult {
    /// The ack failed because the lease it named is gone (expired, released, or another's).
    pub fn lease_gone(&self) -> bool {
        let e = self.error.as_deref().unwrap_or("");
        e.starts_with("invalid or expired lease") || e.starts_with("consumer not found")
    }

    /// What the ack did, read off the broker's words (the only place that reads them).
    pub fn verdict(&self) -> AckVerdict {
        // The broker's failures that mean "nothing of this lease or message is left to
        // settle" (shared/queen-api.md §2.6), as opposed to a broker in trouble.
        const LEASE_GONE: &str = "invalid or expired lease";
        const STALE: &[&str] = &[
            "consumer not found",
            "already committed",
            "unresolvable",
            "unresolved",
            "no leased batch",
            "position beyond leased batch",
        ];
        let err = self.error.as_deref().unwrap_or("");
        if self.success {
            AckVerdict::Applied
        } else if err.starts_with(LEASE_GONE) {
            AckVerdict::LeaseGone
        } else if STALE.iter().any(|p| err.starts_with(p)) {
            AckVerdict::Stale
        } else {
            AckVerdict::Failed
        }
    }
}

/// What an ack did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckVerdict {
    /// Applied (or already below the cursor).
    Applied,
    /// The lease named ran out (or was never the message's): the message was not acked.
    LeaseGone,
    /// The message it named is settled already, or its consumer is gone.
    Stale,
    /// A broker failure: worth a retry.
    Failed,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Extended {
    #[serde(default)]
    pub success: bool,
    #[serde(default)]
    pub renewed: u64,
}

impl<T: Transport> Queen<'_, T> {
    pub async fn push(&self, items: &[PushItem]) -> Result<Vec<PushResult>> {
        #[derive(Serialize)]
        struct Body<'a> {
            items: &'a [PushItem],
        }
        #[derive(Deserialize)]
        struct Item {
            index: Option<usize>,
            status: String,
            message_id: String,
            #[serde(default)]
            transaction_id: Option<String>,
            #[serde(default)]
            offset: Option<i64>,
        }
        let answer: Vec<Item> = self
            .json("POST", "/api/v1/push".into(), Some(&Body { items }))
            .await?;
        if answer.len() != items.len() {
            return Err(QueenError::BadAnswer(format!(
                "push of {} items answered {}",
                items.len(),
                answer.len()
            )));
        }
        let mut out: Vec<Option<PushResult>> = vec![None; items.len()];
        for (pos, item) in answer.into_iter().enumerate() {
            let i = item.index.unwrap_or(pos);
            let slot = out
                .get_mut(i)
                .ok_or_else(|| QueenError::BadAnswer(format!("push index {i}")))?;
            let status = match item.status.as_str() {
                "queued" => PushStatus::Queued,
                "duplicate" if is_nil_uuid(&item.message_id) => PushStatus::DuplicateUnnamed,
                "duplicate" => PushStatus::Duplicate,
                other => PushStatus::NotStored(other.to_string()),
            };
            *slot = Some(PushResult {
                status,
                message_id: item.message_id,
                transaction_id: item.transaction_id,
                offset: item.offset,
            });
        }
        out.into_iter()
            .map(|r| r.ok_or_else(|| QueenError::BadAnswer("push result missing".into())))
            .collect()
    }

    /// Claims at most one message (claim width one is what makes every SQS verb exact).
    /// `partition` pins the pop; `None` pops from any lane.
    pub async fn pop_one(
        &self,
        queue: &str,
        partition: Option<&str>,
        opts: PopOptions,
    ) -> Result<Option<Popped>> {
        self.pop_run(queue, partition, opts, 1).await
    }

    /// Claims a run of up to `batch` messages of ONE lane (`partitions=1`), all under one
    /// lease: a FIFO claim. `batch` 0 is read as 1.
    pub async fn pop_run(
        &self,
        queue: &str,
        partition: Option<&str>,
        opts: PopOptions,
        batch: u32,
    ) -> Result<Option<Popped>> {
        self.pop_lanes(queue, partition, opts, batch, 1).await
    }

    /// Claims up to `batch` messages in all, from up to `lanes` lanes, in ONE call: every
    /// message under the call's lease, each with its own lane's partition id.
    pub async fn pop_wide(
        &self,
        queue: &str,
        opts: PopOptions,
        batch: u32,
        lanes: u32,
    ) -> Result<Option<Popped>> {
        self.pop_lanes(queue, None, opts, batch, lanes).await
    }

    async fn pop_lanes(
        &self,
        queue: &str,
        partition: Option<&str>,
        opts: PopOptions,
        batch: u32,
        lanes: u32,
    ) -> Result<Option<Popped>> {
        let mut path = format!("/api/v1/pop/queue/{}", encode_segment(queue));
        if let Some(p) = partition {
            path.push_str("/partition/");
            path.push_str(&encode_segment(p));
        }
        path.push_str(&format!(
            "?batch={}&partitions={}",
            batch.max(1),
            lanes.max(1)
        ));
        let mut timeout = CALL_TIMEOUT_MS;
        match opts.wait_ms {
            Some(ms) if ms > 0 => {
                path.push_str(&format!("&wait=true&timeout={ms}"));
                timeout = ms + CALL_TIMEOUT_MS;
            }
            _ => path.push_str("&wait=false"),
        }
        if let Some(s) = opts.lease_seconds {
            path.push_str(&format!("&leaseSeconds={}", s.max(1)));
        }
        let asked_at_ms = self.transport.clock_ms();
        let resp = self.call("GET", path, None, timeout).await?;
        if resp.status == 204 || resp.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let mut popped: Popped = parse(&resp.body)?;
        popped.asked_at_ms = asked_at_ms;
        if popped.messages.is_empty() {
            return Ok(None);
        }
        Ok(Some(popped))
    }

    pub async fn ack(&self, ack: &Ack) -> Result<AckResult> {
        let answer: Value = self.json("POST", "/api/v1/ack".into(), Some(ack)).await?;
        // The single route answers one object or a one-element array, depending on the broker.
        let item = match answer {
            Value::Array(mut items) if !items.is_empty() => items.swap_remove(0),
            other => other,
        };
        serde_json::from_value(item).map_err(|e| QueenError::BadAnswer(e.to_string()))
    }

    pub async fn ack_batch(&self, acks: &[Ack]) -> Result<Vec<AckResult>> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            consumer_group: &'static str,
            acknowledgments: &'a [Ack],
        }
        let out: Vec<AckResult> = self
            .json(
                "POST",
                "/api/v1/ack/batch".into(),
                Some(&Body {
                    consumer_group: QUEUE_MODE,
                    acknowledgments: acks,
                }),
            )
            .await?;
        if out.len() != acks.len() {
            return Err(QueenError::BadAnswer(format!(
                "ack of {} answered {}",
                acks.len(),
                out.len()
            )));
        }
        Ok(out)
    }

    /// Extends a live lease; never shortens one and never revives an expired one.
    pub async fn extend(&self, lease_id: &str, seconds: u64) -> Result<Extended> {
        #[derive(Serialize)]
        struct Body {
            seconds: u64,
        }
        let path = format!("/api/v1/lease/{}/extend", encode_segment(lease_id));
        self.json(
            "POST",
            path,
            Some(&Body {
                seconds: seconds.max(1),
            }),
        )
        .await
    }
}

/// `00000000-0000-0000-0000-000000000000` (or an empty id): no message named.
fn is_nil_uuid(id: &str) -> bool {
    id.chars().all(|c| c == '0' || c == '-')
}
