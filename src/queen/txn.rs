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
    /// Rolled back whole; `reason` is the broker's closed set (`duplicate`, `ack_rejected`, `kv_precondition`, …).
    RolledBack { reason: String, error: String },
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
        let a: Answer = self
            .json("POST", "/api/v1/transaction".into(), Some(&body))
            .await?;
        if !a.success {
            return Ok(TxnOutcome::RolledBack {
                reason: a.reason.unwrap_or_else(|| "unknown".into()),
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
