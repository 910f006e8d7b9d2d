//! `POST /api/v1/transaction` (§5): parsing into one `TxnReq`; the store runs it atomically.

use super::ack::{group_of, item as ack_item};
use super::push::parse_push_op;
use super::reply::Reply;
use super::Ctx;
use crate::broker::store::txn::{self, TxnOp, TxnReq};
use crate::broker::time::{now_us, uuid_v7};
use serde_json::value::RawValue;
use serde_json::{json, Value};

fn refuse(status: u16, reason: &str, error: impl Into<String>) -> Reply {
    Reply::json(
        status,
        &json!({"transactionId": uuid_v7(), "success": false, "reason": reason,
                "error": error.into(), "results": []}),
    )
}

#[derive(serde::Deserialize)]
struct RawOps<'a> {
    #[serde(borrow, default)]
    operations: Vec<&'a RawValue>,
}

/// `v` is the parsed body; `body` the same bytes, re-read raw so push payloads stay verbatim.
fn parse(v: &Value, body: &[u8]) -> Result<TxnReq, Reply> {
    let Some(ops) = v.get("operations").and_then(Value::as_array) else {
        return Err(refuse(
            400,
            "bad_request",
            "transaction requires an operations array",
        ));
    };
    let raw: RawOps<'_> = serde_json::from_slice(body)
        .map_err(|e| refuse(400, "bad_request", format!("bad body: {e}")))?;
    let mut out = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        match op.get("type").and_then(Value::as_str) {
            Some("push") => {
                let text = raw.operations.get(i).map(|r| r.get()).unwrap_or("{}");
                let items = parse_push_op(text, op.get("items").is_some_and(Value::is_array), true)
                    .map_err(|e| {
                        refuse(400, "bad_request", format!("bad body: operation {i}: {e}"))
                    })?;
                out.push(TxnOp::Push(items));
            }
            Some("ack") => out.push(TxnOp::Ack(ack_item(op, &group_of(op)))),
            _ => {
                return Err(refuse(
                    400,
                    "bad_request",
                    "segments transaction supports only push and ack operations",
                ))
            }
        }
    }
    let required_leases = match v.get("requiredLeases") {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    let kv = match v.get("kv") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => super::kv_parse::parse_ops(a, true).map_err(|e| {
            let reason = if e.status == 413 {
                "payload_too_large"
            } else {
                "bad_request"
            };
            refuse(
                e.status,
                reason,
                format!("{}: {}: {}", e.code, e.reason, e.detail),
            )
        })?,
        Some(_) => return Err(refuse(400, "bad_request", "kv must be an array")),
    };
    let timers = match v.get("timers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => super::timers::parse_ops(a).map_err(|e| {
            let reason = match e.status {
                403 => "timer_horizon_exceeded",
                413 => "payload_too_large",
                _ => "bad_request",
            };
            refuse(
                e.status,
                reason,
                format!("{}: {}: {}", e.code, e.reason, e.detail),
            )
        })?,
        Some(_) => return Err(refuse(400, "bad_request", "timers must be an array")),
    };
    Ok(TxnReq {
        ops: out,
        kv,
        timers,
        required_leases,
    })
}

pub async fn transaction(ctx: &Ctx, body: &[u8]) -> Reply {
    let v: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return refuse(400, "bad_request", format!("bad body: {e}")),
    };
    let req = match parse(&v, body) {
        Ok(r) => r,
        Err(r) => return r,
    };
    match ctx
        .store
        .write(move |conn| txn::run(conn, &req, now_us()))
        .await
    {
        Ok(out) => {
            ctx.notify.wake_all(&out.woken);
            if out.timers_changed {
                ctx.notify.timers.notify_one();
            }
            Reply::json(200, &out.body)
        }
        Err(e) => refuse(500, "db_error", format!("transaction failed: {e}")),
    }
}
