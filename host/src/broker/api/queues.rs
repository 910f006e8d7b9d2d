//! Queue administration: configure (§3.1), list (§3.2), delete (§3.3), depth (§3.4).

use super::reply::{store_failed, Reply};
use super::{parse_body, Ctx};
use crate::broker::store::depth::depth as depth_of;
use crate::broker::store::options::render_configured;
use crate::broker::store::queues::{self, Configure, ConfigureOutcome};
use crate::broker::time::now_us;
use serde_json::{json, Map, Value};

pub async fn configure(ctx: &Ctx, body: &[u8]) -> Reply {
    let v = match parse_body(body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let Some(obj) = v.as_object() else {
        return Reply::error(400, "bad body: expected a JSON object");
    };
    let Some(queue) = obj.get("queue").and_then(Value::as_str).map(str::to_string) else {
        return Reply::error(400, "queue is required");
    };
    let replace = match obj.get("mode") {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) if s == "merge" => false,
        Some(Value::String(s)) if s == "replace" => true,
        Some(other) => {
            return Reply::error(
                400,
                format!("mode must be \"merge\" or \"replace\", got {other}"),
            )
        }
    };
    let bag: Map<String, Value> = match obj.get("options") {
        Some(Value::Object(m)) => m.clone(),
        Some(Value::Null) | None => obj
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "queue" | "options" | "mode"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        Some(_) => return Reply::error(400, "bad body: options must be an object"),
    };
    // namespace/task: the bag's, else the top level's when non-empty.
    let label = |k: &str| -> Option<String> {
        match bag.get(k) {
            Some(Value::String(s)) => Some(s.clone()),
            _ => match obj.get(k) {
                Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                _ => None,
            },
        }
    };
    let c = Configure {
        queue,
        replace,
        namespace: label("namespace"),
        task: label("task"),
        bag,
    };
    match ctx
        .store
        .write(move |conn| queues::configure(conn, c))
        .await
    {
        Ok(ConfigureOutcome::Done(q)) => Reply::json(200, &render_configured(&q)),
        Ok(ConfigureOutcome::Invalid((msg, opt))) => {
            Reply::json(400, &json!({"error": msg, "invalid": opt}))
        }
        Err(e) => store_failed("configure", e),
    }
}

pub async fn list(ctx: &Ctx) -> Reply {
    match ctx.store.read(queues::list_queues).await {
        Ok(v) => Reply::json(200, &v),
        Err(e) => store_failed("list", e),
    }
}

pub async fn delete(ctx: &Ctx, name: &str) -> Reply {
    let n = name.to_string();
    match ctx
        .store
        .write(move |conn| queues::delete_queue(conn, &n))
        .await
    {
        Ok(true) => {
            ctx.notify.wake(name);
            Reply::json(
                200,
                &json!({"deleted": true, "queue": name, "existed": true}),
            )
        }
        Ok(false) => Reply::json(
            200,
            &json!({"deleted": false, "queue": name, "existed": false,
                    "message": "Queue not found, nothing was deleted"}),
        ),
        Err(e) => store_failed("delete", e),
    }
}

/// The queue's resource view, in the released engine's shape: per-partition and total
/// `pending` (after the queue-mode cursor, leased included) and `processing` (leased).
/// The facade reads its in-flight count here because the engine's depth route has none.
pub async fn detail(ctx: &Ctx, name: &str) -> Reply {
    let n = name.to_string();
    let res = ctx
        .store
        .read(move |conn| {
            let Some(q) = queues::find_queue(conn, &n)? else {
                return Ok(None);
            };
            Ok(Some(depth_of(conn, q.id, None, now_us())?))
        })
        .await;
    let d = match res {
        Ok(Some(d)) => d,
        Ok(None) => return Reply::error(404, "Queue not found"),
        Err(e) => return store_failed("queue detail", e),
    };
    let parts: Vec<Value> = d
        .parts
        .iter()
        .map(|p| json!({"name": p.name, "stats": {"pending": p.pending, "processing": p.processing}}))
        .collect();
    Reply::json(
        200,
        &json!({"name": name, "partitions": parts,
                "totals": {"pending": d.pending, "processing": d.processing}}),
    )
}

pub async fn depth(ctx: &Ctx, name: &str, group: Option<&str>) -> Reply {
    let n = name.to_string();
    let g = group.map(str::to_string);
    let res = ctx
        .store
        .read(move |conn| {
            let Some(q) = queues::find_queue(conn, &n)? else {
                return Ok(None);
            };
            Ok(Some(depth_of(conn, q.id, g.as_deref(), now_us())?))
        })
        .await;
    let d = match res {
        Ok(Some(d)) => d,
        Ok(None) => return Reply::error(404, "Queue not found"),
        Err(e) => return store_failed("depth", e),
    };
    let parts: Vec<Value> = d
        .parts
        .iter()
        .map(|p| {
            json!({"partition": p.name, "pending": p.pending, "processing": p.processing,
                   "ready": p.pending - p.processing})
        })
        .collect();
    let ready = d.pending - d.processing;
    Reply::json(
        200,
        &json!({"queue": name, "group": group, "pending": d.pending, "processing": d.processing,
            "ready": ready,
            "partitionsPending": d.parts.iter().filter(|p| p.pending > 0).count(),
            "partitionsReady": d.parts.iter().filter(|p| p.pending - p.processing > 0).count(),
            "conflation": false, "effectivePending": d.pending, "effectiveReady": ready,
            "partitions": parts}),
    )
}
