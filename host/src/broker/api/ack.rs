//! `POST /api/v1/ack`, `POST /api/v1/ack/batch` (§4.3) and `POST /api/v1/lease/:id/extend` (§4.4).

use super::reply::{store_failed, Reply};
use super::{opt_str, parse_body, Ctx};
use crate::broker::store::ack::{self, AckItem, AckResult, AckStatus};
use crate::broker::store::queues::QUEUE_MODE;
use crate::broker::store::reclaim;
use crate::broker::time::{iso_us, now_us};
use serde_json::{json, Value};

/// One ack object; `group` is the call's consumer group.
pub fn item(v: &Value, group: &str) -> AckItem {
    AckItem {
        txn: opt_str(v, "transactionId").unwrap_or_default(),
        partition_id: opt_str(v, "partitionId").unwrap_or_default(),
        status: AckStatus::parse(v.get("status").and_then(Value::as_str)),
        lease_id: opt_str(v, "leaseId").filter(|l| !l.is_empty()),
        group: group.to_string(),
        error: opt_str(v, "error"),
    }
}

pub fn group_of(v: &Value) -> String {
    opt_str(v, "consumerGroup")
        .filter(|g| !g.is_empty())
        .unwrap_or_else(|| QUEUE_MODE.to_string())
}

async fn run(ctx: &Ctx, items: Vec<AckItem>) -> Reply {
    let txns: Vec<String> = items.iter().map(|i| i.txn.clone()).collect();
    let res = ctx
        .store
        .write(move |conn| {
            let now = now_us();
            let out = ack::ack(conn, &items, now)?;
            reclaim::after_acks(conn, items.iter().map(|i| i.partition_id.as_str()), now)?;
            Ok(out)
        })
        .await;
    let (results, woken) = match res {
        Ok(r) => r,
        Err(e) => return store_failed("ack", e),
    };
    ctx.notify.wake_all(&woken);
    let out: Vec<Value> = results
        .iter()
        .zip(txns)
        .enumerate()
        .map(|(i, (r, t)): (usize, (&AckResult, String))| {
            json!({"index": i, "transactionId": t, "success": r.success, "error": r.error,
                   "leaseReleased": r.lease_released, "dlq": r.dlq, "noop": r.noop})
        })
        .collect();
    Reply::json(200, &Value::Array(out))
}

pub async fn single(ctx: &Ctx, body: &[u8]) -> Reply {
    let v = match parse_body(body) {
        Ok(v) if v.is_object() => v,
        Ok(_) => return Reply::error(400, "bad body: expected a JSON object"),
        Err(r) => return r,
    };
    let g = group_of(&v);
    run(ctx, vec![item(&v, &g)]).await
}

pub async fn batch(ctx: &Ctx, body: &[u8]) -> Reply {
    let v = match parse_body(body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let Some(list) = v.get("acknowledgments").and_then(Value::as_array) else {
        return Reply::error(400, "bad body: acknowledgments must be an array");
    };
    if list.iter().any(|a| !a.is_object()) {
        return Reply::error(400, "bad body: every acknowledgment must be an object");
    }
    let g = group_of(&v);
    run(ctx, list.iter().map(|a| item(a, &g)).collect()).await
}

pub async fn extend(ctx: &Ctx, lease_id: &str, body: &[u8]) -> Reply {
    // An empty or unparsable body means 60 seconds.
    let seconds = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("seconds").and_then(Value::as_f64))
        .map(|s| s as i64)
        .unwrap_or(60);
    let id = lease_id.to_string();
    let res = ctx
        .store
        .write(move |conn| ack::extend(conn, &id, seconds, now_us()))
        .await;
    match res {
        Ok((n, exp)) => {
            let at = exp.map(iso_us);
            Reply::json(
                200,
                &json!({"leaseId": lease_id, "success": n > 0, "renewed": n,
                        "newExpiresAt": at, "expiresAt": at, "lease_expires_at": at}),
            )
        }
        Err(e) => store_failed("renew", e),
    }
}
