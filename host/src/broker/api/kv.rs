//! `POST /api/v1/kv` and the single-key path routes (§6): validation with the error taxonomy
//! of §6.4, then the store applies. Read-only batches go to a reader connection.

use super::kv_parse::parse_ops;
use super::reply::Reply;
use super::{Ctx, Query};
use crate::broker::store::kv::{self, KvAbort, KvOp};
use crate::broker::time::now_us;
use serde_json::{json, Map, Value};

fn abort_body(a: &KvAbort) -> Value {
    json!({"ok": false, "reason": "kv_precondition", "failedIndex": a.index,
           "kvReason": a.kv_reason, "version": a.version, "value": a.value})
}

/// Runs a validated batch: results, or the `ok:false` precondition body (nothing written).
async fn execute(ctx: &Ctx, ops: Vec<KvOp>) -> Result<Result<Vec<Value>, KvAbort>, Reply> {
    let res = if ops.iter().all(KvOp::is_read_only) {
        ctx.store
            .read(move |conn| kv::apply(conn, &ops, now_us()))
            .await
    } else {
        ctx.store
            .write(move |conn| {
                conn.execute_batch("SAVEPOINT kv")?;
                let r = kv::apply(conn, &ops, now_us())?;
                if r.is_err() {
                    conn.execute_batch("ROLLBACK TO kv")?;
                }
                conn.execute_batch("RELEASE kv")?;
                Ok(r)
            })
            .await
    };
    res.map_err(|e| Reply::coded(500, "kv_error", "kv_error", e.to_string()))
}

pub async fn batch(ctx: &Ctx, body: &[u8]) -> Reply {
    let bad_body = || {
        Reply::coded(
            400,
            "kv_bad_request",
            "kv_bad_body",
            "body must be an array of operations or {\"operations\": [...]}",
        )
    };
    let v: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => return bad_body(),
    };
    let list = match &v {
        Value::Array(a) => a.clone(),
        Value::Object(o) => match o.get("operations") {
            Some(Value::Array(a)) => a.clone(),
            _ => return bad_body(),
        },
        _ => return bad_body(),
    };
    if list.is_empty() {
        return Reply::json(200, &json!({"results": []}));
    }
    let ops = match parse_ops(&list, false) {
        Ok(o) => o,
        Err(e) => return e.reply(),
    };
    match execute(ctx, ops).await {
        Ok(Ok(results)) => Reply::json(200, &json!({"results": results})),
        Ok(Err(a)) => Reply::json(200, &abort_body(&a)),
        Err(r) => r,
    }
}

/// `GET|PUT|DELETE /api/v1/kv/:ns/*key`.
pub async fn path_route(
    ctx: &Ctx,
    method: &str,
    ns: &str,
    key: &str,
    q: &Query,
    body: &[u8],
) -> Reply {
    if !q.is_empty() {
        return Reply::coded(
            400,
            "kv_bad_request",
            "kv_no_query_string",
            "a key must never travel in a query string",
        );
    }
    let mut op = match method {
        "GET" => Map::new(),
        _ if body.iter().all(u8::is_ascii_whitespace) => Map::new(),
        _ => match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Reply::coded(
                    400,
                    "kv_bad_request",
                    "kv_bad_body",
                    "body must be a JSON object",
                )
            }
        },
    };
    if ["op", "ns", "namespace", "key"]
        .iter()
        .any(|k| op.contains_key(*k))
    {
        return Reply::coded(
            400,
            "kv_bad_request",
            "kv_field_in_path",
            "op, ns and key come from the path",
        );
    }
    let name = match method {
        "GET" => "get",
        "PUT" => "put",
        _ => "delete",
    };
    op.insert("op".into(), json!(name));
    op.insert("ns".into(), json!(ns));
    op.insert("key".into(), json!(key));
    let ops = match parse_ops(&[Value::Object(op)], false) {
        Ok(o) => o,
        Err(e) => return e.reply(),
    };
    match execute(ctx, ops).await {
        Ok(Ok(mut results)) => {
            let r = results.pop().unwrap_or(Value::Null);
            let etag = match (&r["found"], &r["version"]) {
                (Value::Bool(true), Value::Number(v)) => Some(format!("\"{v}\"")),
                _ => None,
            };
            let reply = Reply::json(200, &r);
            match etag {
                Some(t) => reply.with_header("etag", t),
                None => reply,
            }
        }
        Ok(Err(a)) => Reply::json(200, &abort_body(&a)),
        Err(r) => r,
    }
}
