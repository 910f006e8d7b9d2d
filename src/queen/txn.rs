//! `POST /api/v1/transaction`: pushes, acks and KV writes that commit whole or not at all (API §5).

use super::*;
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Debug, Clone, Default)]
pub struct Transaction {
    pub pushes: Vec<PushItem>,
    pub acks: Vec<Ack>,
    pub kv: Vec<KvOp>,
    /// The timers rider. Its verdicts (`absent`, `too_late`) never roll the transaction
    /// back: callers read them from the results.
    pub timers: Vec<TimerOp>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TxnResult {
    #[serde(default)]
    pub index: usize,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub success: Option<bool>,
    #[serde(default)]
    pub message_id: Option<String>,
    #[serde(default)]
    pub duplicate: Option<bool>,
    #[serde(default)]
    pub applied: Option<bool>,
    #[serde(default)]
    pub version: i64,
    /// A timer entry's verdict (`scheduled`, `rescheduled`, `cancelled`, `absent`, `too_late`).
    #[serde(default)]
    pub status: Option<String>,
}

#[derive(Debug, Clone)]
pub enum TxnOutcome {
    /// Committed: one result per push item, per ack, per kv op, then per timer op (flat
    /// index space).
    Committed(Vec<TxnResult>),
    /// Rolled back whole, for `reason`.
    RolledBack {
        reason: RollbackReason,
        error: String,
    },
}

/// Why the broker rolled a transaction back: the reasons the facade acts on, by name, and
/// any other kept as the broker said it (shared/queen-api.md §5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RollbackReason {
    /// A push met its deduplication window.
    Duplicate,
    /// An ack was refused (its lease is gone, or the engine no longer resolves the message).
    AckRejected,
    /// A KV precondition failed.
    KvPrecondition,
    Other(String),
}

impl RollbackReason {
    pub fn of(reason: &str) -> RollbackReason {
        match reason {
            "duplicate" => RollbackReason::Duplicate,
            "ack_rejected" => RollbackReason::AckRejected,
            "kv_precondition" => RollbackReason::KvPrecondition,
            other => RollbackReason::Other(other.to_string()),
        }
    }
}

impl std::fmt::Display for RollbackReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RollbackReason::Duplicate => "duplicate",
            RollbackReason::AckRejected => "ack_rejected",
            RollbackReason::KvPrecondition => "kv_precondition",
            RollbackReason::Other(r) => r,
        })
    }
}

impl<T: Transport> Queen<'_, T> {
    pub async fn transaction(&self, txn: &Transaction) -> Result<TxnOutcome> {
        let mut operations: Vec<Value> = Vec::new();
        if !txn.pushes.is_empty() {
            operations.push(json!({"type": "push", "items": txn.pushes}));
        }
        let mut leases: Vec<String> = Vec::new();
        for ack in &txn.acks {
            let mut op = serde_json::to_value(ack).unwrap_or(Value::Null);
            op["type"] = json!("ack");
            if let Some(l) = &ack.lease_id {
                if !leases.contains(l) {
                    leases.push(l.clone());
                }
            }
            operations.push(op);
        }
        let mut body = json!({"operations": operations});
        if !leases.is_empty() {
            body["requiredLeases"] = json!(leases);
        }
        if !txn.kv.is_empty() {
            body["kv"] = serde_json::to_value(&txn.kv).unwrap_or(Value::Null);
        }
        if !txn.timers.is_empty() {
            body["timers"] = serde_json::to_value(&txn.timers).unwrap_or(Value::Null);
        }
        let expected = txn.pushes.len() + txn.acks.len() + txn.kv.len() + txn.timers.len();
        #[derive(Deserialize)]
        struct Answer {
            #[serde(default)]
            success: bool,
            #[serde(default)]
            reason: Option<String>,
            #[serde(default)]
            error: Option<String>,
            #[serde(default)]
            results: Vec<TxnResult>,
        }
        // Its key/value writes make the host forget what they change, as `kv`'s do, so this
        // replica reads them at once (a subscription restored, then a publish to it).
        let headers = super::kv::invalidations(&txn.kv).into_iter().collect();
        let a: Answer = self
            .json_with("POST", "/api/v1/transaction".into(), Some(&body), headers)
            .await?;
        if !a.success {
            return Ok(TxnOutcome::RolledBack {
                reason: RollbackReason::of(a.reason.as_deref().unwrap_or("unknown")),
                error: a.error.unwrap_or_default(),
            });
        }
        // A broker older than the riders drops the kv leg silently; missing entries mean that.
        if a.results.len() != expected {
            return Err(QueenError::BadAnswer(format!(
                "transaction answered {} of {expected} results",
                a.results.len()
            )));
        }
        let mut results = a.results;
        results.sort_by_key(|r| r.index);
        Ok(TxnOutcome::Committed(results))
    }
}
