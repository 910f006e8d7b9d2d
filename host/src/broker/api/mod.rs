//! Request routing and the route handlers. `dispatch` is shared by the TCP server and the
//! in-process `RunningBroker::handle`.

pub mod ack;
pub mod kv;
pub mod kv_parse;
pub mod pop;
pub mod push;
pub mod queues;
pub mod reply;
pub mod timers;
pub mod txn;

use super::notify::Notifier;
use super::store::Store;
use bytes::Bytes;
use reply::Reply;
use serde_json::{json, Value};
use std::sync::Arc;

/// What every handler needs.
pub struct Ctx {
    pub store: Store,
    pub notify: Arc<Notifier>,
}

/// Decodes percent-escapes once (`+` stays `+`: paths do not use it for spaces).
pub fn percent_decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus_is_space => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Query string → decoded (name, value) pairs in order.
pub struct Query(pub Vec<(String, String)>);

impl Query {
    pub fn parse(q: &str) -> Query {
        Query(
            q.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| match p.split_once('=') {
                    Some((k, v)) => (percent_decode(k, true), percent_decode(v, true)),
                    None => (percent_decode(p, true), String::new()),
                })
                .collect(),
        )
    }
    pub fn get(&self, k: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }
    pub fn has(&self, k: &str) -> bool {
        self.0.iter().any(|(n, _)| n == k)
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Parses a JSON body; on failure the core routes answer `400 {"error":"bad body: ..."}`.
pub fn parse_body(body: &[u8]) -> Result<Value, Reply> {
    serde_json::from_slice(body).map_err(|e| Reply::error(400, format!("bad body: {e}")))
}

/// Text of a string field; `null` and absent read as None.
pub fn opt_str(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

fn not_found() -> Reply {
    Reply::json(
        404,
        &json!({"error": "no such route", "code": "no_such_route"}),
    )
}

pub async fn dispatch(ctx: &Ctx, method: &str, path_and_query: &str, body: Bytes) -> Reply {
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p, q),
        None => (path_and_query, ""),
    };
    let raw: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let seg: Vec<String> = raw.iter().map(|s| percent_decode(s, false)).collect();
    let s: Vec<&str> = seg.iter().map(String::as_str).collect();
    // Catch-all tail after `n` segments, decoded once (`%2F` is a slash inside the key).
    let tail = |n: usize| percent_decode(&raw[n..].join("/"), false);
    let q = Query::parse(query);
    let m = method.to_ascii_uppercase();
    match (m.as_str(), s.as_slice()) {
        ("GET", ["health"]) | ("GET", ["api", "v1", "health"]) => {
            Reply::json(200, &json!({"status": "healthy"}))
        }
        ("POST", ["api", "v1", "configure"]) => queues::configure(ctx, &body).await,
        ("GET", ["api", "v1", "resources", "queues"]) => queues::list(ctx).await,
        ("DELETE", ["api", "v1", "resources", "queues", name]) => queues::delete(ctx, name).await,
        ("GET", ["api", "v1", "resources", "queues", name]) => queues::detail(ctx, name).await,
        ("GET", ["api", "v1", "resources", "queues", name, "depth"]) => {
            queues::depth(ctx, name, q.get("group")).await
        }
        ("POST", ["api", "v1", "push"]) => push::push(ctx, &body).await,
        ("GET", ["api", "v1", "pop", "queue", name]) => pop::pop(ctx, name, None, &q).await,
        ("GET", ["api", "v1", "pop", "queue", name, "partition", p]) => {
            pop::pop(ctx, name, Some(p), &q).await
        }
        ("GET", ["api", "v1", "pop"]) => pop::discovery(ctx, &q).await,
        ("POST", ["api", "v1", "ack"]) => ack::single(ctx, &body).await,
        ("POST", ["api", "v1", "ack", "batch"]) => ack::batch(ctx, &body).await,
        ("POST", ["api", "v1", "lease", id, "extend"]) => ack::extend(ctx, id, &body).await,
        ("POST", ["api", "v1", "transaction"]) => txn::transaction(ctx, &body).await,
        ("POST", ["api", "v1", "kv"]) => kv::batch(ctx, &body).await,
        (m, ["api", "v1", "kv", ns, _, ..]) if matches!(m, "GET" | "PUT" | "DELETE") => {
            kv::path_route(ctx, m, ns, &tail(4), &q, &body).await
        }
        ("POST", ["api", "v1", "timers"]) => timers::post(ctx, &body).await,
        ("GET", ["api", "v1", "timers", name]) => timers::read(ctx, name, &q).await,
        ("GET", ["api", "v1", "timers", name, _, ..]) => timers::peek(ctx, name, &tail(4)).await,
        ("DELETE", ["api", "v1", "timers", name, _, ..]) => {
            timers::cancel(ctx, name, &tail(4), q.get("txn")).await
        }
        _ => not_found(),
    }
}
