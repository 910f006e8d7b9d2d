//! Timer routes (§7): schedule/reschedule/cancel batches, list and count, peek, cancel.

use super::reply::Reply;
use super::{Ctx, Query};
use crate::broker::store::timers::{self, Schedule, TimerOp};
use crate::broker::time::now_us;
use base64::Engine;
use serde_json::{json, Value};
use std::collections::HashSet;

pub const MAX_OPS: usize = 256;
pub const MAX_PAYLOAD: usize = 1024 * 1024;
pub const HORIZON_MS: i64 = 7_776_000 * 1000;

const SERVER_OWNED: &[&str] = &[
    "producerSub",
    "producer_sub",
    "messageId",
    "message_id",
    "tenant",
    "tenantId",
    "tenant_id",
    "deliverAt",
    "deliver_at",
    "delaySeconds",
    "delay_seconds",
    "attempts",
    "claimToken",
    "claim_token",
    "claimedUntil",
    "claimed_until",
];

#[derive(Debug)]
pub struct TimerError {
    pub status: u16,
    pub code: &'static str,
    pub reason: &'static str,
    pub detail: String,
}

impl TimerError {
    fn bad(reason: &'static str, detail: String) -> TimerError {
        TimerError {
            status: 400,
            code: "timers_bad_request",
            reason,
            detail,
        }
    }
    pub fn reply(&self) -> Reply {
        Reply::coded(self.status, self.code, self.reason, self.detail.clone())
    }
}

fn text(o: &serde_json::Map<String, Value>, k: &str) -> Option<String> {
    o.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

pub fn parse_ops(list: &[Value]) -> Result<Vec<TimerOp>, TimerError> {
    if list.len() > MAX_OPS {
        return Err(TimerError::bad(
            "timers_too_many_ops",
            format!("at most {MAX_OPS} operations per call"),
        ));
    }
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let at = |m: &str| format!("op at index {i}: {m}");
        let Some(o) = v.as_object() else {
            return Err(TimerError::bad("timers_bad_op", at("must be an object")));
        };
        if let Some(f) = o
            .keys()
            .find(|k| k.starts_with('_') || SERVER_OWNED.contains(&k.as_str()))
        {
            return Err(TimerError::bad(
                "timers_server_owned_field",
                at(&format!("`{f}` is server-owned")),
            ));
        }
        let op = o.get("op").and_then(Value::as_str).unwrap_or("");
        if !matches!(op, "schedule" | "reschedule" | "cancel") {
            return Err(TimerError::bad(
                "timers_bad_op",
                at(&format!("unknown op {op:?}")),
            ));
        }
        let Some(queue) = text(o, "queue") else {
            return Err(TimerError::bad(
                "timers_queue_required",
                at("queue must be a non-empty string"),
            ));
        };
        let Some(key) = text(o, "timerKey") else {
            return Err(TimerError::bad(
                "timers_bad_request",
                at("QTIMER timerKey must be a non-empty string"),
            ));
        };
        if !seen.insert((queue.clone(), key.clone())) {
            return Err(TimerError::bad(
                "timers_bad_request",
                at("QTIMER a (queue, timerKey) may appear once per call"),
            ));
        }
        if op == "cancel" {
            out.push(TimerOp::Cancel {
                queue,
                key,
                txn: text(o, "txn"),
            });
            continue;
        }
        let partition = match o.get("partition") {
            None | Some(Value::Null) => "Default".to_string(),
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(_) => {
                return Err(TimerError::bad(
                    "timers_bad_request",
                    at("QTIMER partition must be a non-empty string"),
                ))
            }
        };
        let delay_ms = match o.get("delayMs").and_then(Value::as_f64) {
            Some(d) if d.is_finite() => d as i64,
            _ => {
                return Err(TimerError::bad(
                    "timers_delay_required",
                    at("delayMs must be a number"),
                ))
            }
        };
        if delay_ms > HORIZON_MS {
            return Err(TimerError {
                status: 403,
                code: "timer_horizon_exceeded",
                reason: "timers_horizon",
                detail: at("delayMs is beyond the 90-day horizon"),
            });
        }
        let Some(txn) = text(o, "txn") else {
            return Err(TimerError::bad(
                "timers_bad_request",
                at("QTIMER txn must be a non-empty string"),
            ));
        };
        let Some(p64) = o.get("payload").and_then(Value::as_str) else {
            return Err(TimerError::bad(
                "timers_payload_required",
                at("payload (base64) is required"),
            ));
        };
        let payload = match base64::engine::general_purpose::STANDARD.decode(p64.trim()) {
            Ok(b) => b,
            Err(_) => {
                return Err(TimerError::bad(
                    "timers_payload_not_base64",
                    at("payload is not base64"),
                ))
            }
        };
        if payload.len() > MAX_PAYLOAD {
            return Err(TimerError {
                status: 413,
                code: "payload_too_large",
                reason: "timers_payload_too_large",
                detail: at("payload is larger than 1 MiB"),
            });
        }
        let flag = |k: &str| matches!(o.get(k), Some(Value::Bool(true)));
        if flag("payloadZstd") {
            match timers::unzstd(&payload, MAX_PAYLOAD) {
                Ok(_) => {}
                Err(e) if e.starts_with("decompressed payload is larger") => {
                    return Err(TimerError {
                        status: 413,
                        code: "payload_too_large",
                        reason: "timers_payload_too_large",
                        detail: at(&e),
                    })
                }
                Err(e) => {
                    return Err(TimerError::bad(
                        "timers_bad_request",
                        at(&format!(
                            "QTIMER payloadZstd is set but the payload is not zstd: {e}"
                        )),
                    ))
                }
            }
        }
        out.push(TimerOp::Schedule(Schedule {
            op: op.to_string(),
            queue,
            key,
            partition,
            delay_ms,
            txn,
            payload,
            zstd: flag("payloadZstd"),
            encrypted: flag("encrypted"),
        }));
    }
    Ok(out)
}

pub async fn post(ctx: &Ctx, body: &[u8]) -> Reply {
    let bad = || {
        Reply::coded(
            400,
            "timers_bad_request",
            "timers_bad_body",
            "body must be an array of operations or {\"operations\": [...]}",
        )
    };
    let list = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(a)) => a,
        Ok(Value::Object(o)) => match o.get("operations") {
            Some(Value::Array(a)) => a.clone(),
            _ => return bad(),
        },
        _ => return bad(),
    };
    let ops = match parse_ops(&list) {
        Ok(o) => o,
        Err(e) => return e.reply(),
    };
    match ctx
        .store
        .write(move |conn| timers::apply(conn, &ops, now_us()))
        .await
    {
        Ok(results) => {
            ctx.notify.timers.notify_one();
            Reply::json(200, &json!({"results": results}))
        }
        Err(e) => Reply::coded(500, "timers_error", "timers_error", e.to_string()),
    }
}

pub async fn read(ctx: &Ctx, queue: &str, q: &Query) -> Reply {
    let bad = |reason: &'static str, d: &str| {
        Reply::coded(400, "timers_bad_request", reason, d.to_string())
    };
    let queue = queue.to_string();
    let res = match q.get("mode") {
        Some("count") => {
            if q.has("after") || q.has("limit") {
                return bad(
                    "timers_count_page_parameters",
                    "after and limit are not allowed with mode=count",
                );
            }
            let prefix = match q.get("prefix") {
                Some(p) if !p.is_empty() => p.to_string(),
                _ => {
                    return bad(
                        "timers_count_prefix_required",
                        "mode=count needs a non-empty prefix",
                    )
                }
            };
            if prefix.len() > 128 {
                return bad(
                    "timers_count_prefix_too_long",
                    "prefix is longer than 128 bytes",
                );
            }
            if prefix.contains('\0') {
                return bad("timers_count_prefix_invalid", "prefix contains NUL");
            }
            ctx.store
                .read(move |conn| Ok(json!({"count": timers::count(conn, &queue, &prefix)?})))
                .await
        }
        None | Some("list") | Some("") => {
            let limit = q
                .get("limit")
                .and_then(|l| l.trim().parse::<i64>().ok())
                .unwrap_or(100)
                .clamp(1, 1000);
            let after = q.get("after").unwrap_or("").to_string();
            ctx.store
                .read(move |conn| timers::list(conn, &queue, &after, limit))
                .await
        }
        Some(_) => return bad("timers_read_mode_unknown", "mode must be list or count"),
    };
    match res {
        Ok(v) => Reply::json(200, &v),
        Err(e) => Reply::coded(500, "timers_error", "timers_error", e.to_string()),
    }
}

pub async fn peek(ctx: &Ctx, queue: &str, key: &str) -> Reply {
    let (q, k) = (queue.to_string(), key.to_string());
    match ctx.store.read(move |conn| timers::peek(conn, &q, &k)).await {
        Ok(v) => Reply::json(200, &v),
        Err(e) => Reply::coded(500, "timers_error", "timers_error", e.to_string()),
    }
}

pub async fn cancel(ctx: &Ctx, queue: &str, key: &str, txn: Option<&str>) -> Reply {
    let (q, k, t) = (queue.to_string(), key.to_string(), txn.map(str::to_string));
    match ctx
        .store
        .write(move |conn| timers::cancel(conn, &q, &k, t.as_deref()))
        .await
    {
        Ok(v) => {
            ctx.notify.timers.notify_one();
            Reply::json(200, &v)
        }
        Err(e) => Reply::coded(500, "timers_error", "timers_error", e.to_string()),
    }
}
