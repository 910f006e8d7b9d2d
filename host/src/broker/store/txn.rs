//! `POST /api/v1/transaction` (§5): KV rider, timers rider, pushes, acks — in that order —
//! inside one savepoint that is rolled back whole on any verdict.

use super::ack::{self, AckItem, E_UNRESOLVED};
use super::kv::{self, KvOp};
use super::messages::{append, Mode, PushItem, PushStatus};
use super::queues::partition_by_uuid;
use super::timers::{self, TimerOp};
use super::SResult;
use crate::broker::time::uuid_v7;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{json, Map, Value};

#[derive(Clone, Debug)]
pub enum TxnOp {
    Push(Vec<PushItem>),
    Ack(AckItem),
}

#[derive(Clone, Debug)]
pub struct TxnReq {
    pub ops: Vec<TxnOp>,
    pub kv: Vec<KvOp>,
    pub timers: Vec<TimerOp>,
    pub required_leases: Vec<String>,
}

pub struct TxnOut {
    pub body: Value,
    /// Queues that received messages or had a lease released.
    pub woken: Vec<String>,
    pub timers_changed: bool,
}

fn rollback(
    conn: &Connection,
    id: &str,
    reason: &str,
    error: String,
    extra: Map<String, Value>,
) -> SResult<TxnOut> {
    conn.execute_batch("ROLLBACK TO txn; RELEASE txn")?;
    let mut body = json!({"transactionId": id, "success": false, "reason": reason, "error": error, "results": []});
    if let Value::Object(m) = &mut body {
        m.extend(extra);
    }
    Ok(TxnOut {
        body,
        woken: Vec::new(),
        timers_changed: false,
    })
}

/// The lease an ack op is judged under (§5.1).
fn lease_for(conn: &Connection, req: &TxnReq, a: &AckItem) -> SResult<Option<String>> {
    if a.lease_id.is_some() {
        return Ok(a.lease_id.clone());
    }
    let any_lease = !req.required_leases.is_empty()
        || req
            .ops
            .iter()
            .any(|o| matches!(o, TxnOp::Ack(x) if x.lease_id.is_some()));
    if !any_lease {
        return Ok(None);
    }
    let Some(p) = partition_by_uuid(conn, &a.partition_id)? else {
        return Ok(None);
    };
    let holder: Option<Option<String>> = conn
        .prepare_cached("SELECT lease_id FROM cursors WHERE partition_id = ?1 AND grp = ?2")?
        .query_row(params![p.id, a.group], |r| r.get(0))
        .optional()?;
    let mut distinct = req.required_leases.clone();
    distinct.dedup();
    Ok(match holder.flatten() {
        Some(h) => Some(h),
        None if distinct.len() == 1 => distinct.first().cloned(),
        None => None,
    })
}

pub fn run(conn: &Connection, req: &TxnReq, now: i64) -> SResult<TxnOut> {
    let id = uuid_v7();
    super::exec_cached(conn, "SAVEPOINT txn")?;
    let flat_ops: usize = req
        .ops
        .iter()
        .map(|o| match o {
            TxnOp::Push(items) => items.len(),
            TxnOp::Ack(_) => 1,
        })
        .sum();
    // 1. KV rider.
    let kv_results = match kv::apply(conn, &req.kv, now)? {
        Ok(r) => r,
        Err(a) => {
            let mut extra = Map::new();
            extra.insert("ok".into(), json!(false));
            extra.insert("failedIndex".into(), json!(flat_ops + a.index));
            extra.insert("kvReason".into(), json!(a.kv_reason));
            extra.insert("version".into(), json!(a.version));
            extra.insert("value".into(), a.value);
            return rollback(
                conn,
                &id,
                "kv_precondition",
                "QKV precondition".into(),
                extra,
            );
        }
    };
    // 2. Timers rider.
    let timer_results = timers::apply(conn, &req.timers, now)?;
    // 3. Pushes, in request order (one call: one segment time).
    let mut woken: Vec<String> = Vec::new();
    let mut results: Vec<Value> = Vec::with_capacity(flat_ops + req.kv.len() + req.timers.len());
    let all_items: Vec<PushItem> = req
        .ops
        .iter()
        .filter_map(|o| match o {
            TxnOp::Push(items) => Some(items.clone()),
            TxnOp::Ack(_) => None,
        })
        .flatten()
        .collect();
    let pushed = match append(conn, &all_items, now, Mode::Transaction)? {
        Ok(p) => p,
        Err(d) => {
            let err = format!(
                "QDUP duplicate messages in queue {:?} partition {:?}; transaction rolled back",
                d.queue, d.partition
            );
            return rollback(conn, &id, "duplicate", err, Map::new());
        }
    };
    let mut pushed = pushed.into_iter();
    // 4. Acks, and the flat result list in request order.
    for op in &req.ops {
        match op {
            TxnOp::Push(items) => {
                for _ in items {
                    let Some(p) = pushed.next() else { continue };
                    let mut r = json!({"index": results.len(), "type": "push", "success": true,
                        "transactionId": p.txn, "messageId": p.message_id, "queueName": p.queue});
                    if p.status == PushStatus::InBundleRepeat {
                        r["duplicate"] = json!(true);
                    } else if !woken.contains(&p.queue) {
                        woken.push(p.queue.clone());
                    }
                    results.push(r);
                }
            }
            TxnOp::Ack(a) => {
                let mut item = a.clone();
                item.lease_id = lease_for(conn, req, a)?;
                let (res, released) = ack::ack(conn, std::slice::from_ref(&item), now)?;
                let r = res.into_iter().next().unwrap_or_default();
                if !r.success {
                    let e = r.error.unwrap_or_default();
                    let err = if e == E_UNRESOLVED {
                        "QTXN ack references unknown transactionId; transaction rolled back"
                            .to_string()
                    } else {
                        format!(
                            "QTXN ack failed for partition {} group {:?}: {e}; transaction rolled back",
                            a.partition_id, a.group
                        )
                    };
                    return rollback(conn, &id, "ack_rejected", err, Map::new());
                }
                for q in released {
                    if !woken.contains(&q) {
                        woken.push(q);
                    }
                }
                results.push(
                    json!({"index": results.len(), "type": "ack", "success": true,
                    "transactionId": a.txn, "error": null, "dlq": r.dlq}),
                );
            }
        }
    }
    for (i, mut r) in kv_results.into_iter().enumerate() {
        if let Value::Object(m) = &mut r {
            let mut out = Map::new();
            out.insert("index".into(), json!(results.len()));
            out.insert("opIndex".into(), json!(i));
            out.insert("type".into(), json!("kv"));
            for (k, v) in std::mem::take(m) {
                if k != "index" {
                    out.insert(k, v);
                }
            }
            *m = out;
        }
        results.push(r);
    }
    for (i, r) in timer_results.into_iter().enumerate() {
        let mut out = Map::new();
        out.insert("index".into(), json!(results.len()));
        out.insert("opIndex".into(), json!(i));
        out.insert("type".into(), json!("timer"));
        if let Value::Object(m) = r {
            out.extend(m);
        }
        results.push(Value::Object(out));
    }
    // After every ack of the call: each resolved against the log as the call found it.
    let acked = req.ops.iter().filter_map(|o| match o {
        TxnOp::Ack(a) => Some(a.partition_id.as_str()),
        TxnOp::Push(_) => None,
    });
    super::reclaim::after_acks(conn, acked, now)?;
    super::exec_cached(conn, "RELEASE txn")?;
    Ok(TxnOut {
        body: json!({"transactionId": id, "success": true, "results": results}),
        woken,
        timers_changed: !req.timers.is_empty(),
    })
}
