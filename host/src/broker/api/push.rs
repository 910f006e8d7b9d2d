//! `POST /api/v1/push` (§4.1). Payloads are kept as the exact JSON text the producer sent.

use super::reply::{store_failed, Reply};
use super::Ctx;
use crate::broker::store::messages::{append, Mode, PushItem, PushStatus};
use crate::broker::time::{is_uuid, now_us};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

#[derive(Deserialize)]
pub struct RawItem<'a> {
    #[serde(default)]
    queue: Option<String>,
    #[serde(default)]
    partition: Option<String>,
    #[serde(default, borrow)]
    payload: Option<&'a RawValue>,
    #[serde(default, borrow)]
    data: Option<&'a RawValue>,
    #[serde(default, rename = "transactionId")]
    transaction_id: Option<String>,
    #[serde(default, rename = "traceId")]
    trace_id: Option<Value>,
}

#[derive(Deserialize)]
struct PushBody<'a> {
    #[serde(borrow)]
    items: Vec<RawItem<'a>>,
}

/// Validates one item; `keep_trace` keeps a UUID trace id (the transaction path does).
pub fn to_item(i: usize, r: &RawItem<'_>, keep_trace: bool) -> Result<PushItem, String> {
    let queue = match &r.queue {
        Some(q) => q.clone(),
        None => return Err(format!("item {i}: queue is required")),
    };
    let partition = match &r.partition {
        Some(p) if !p.is_empty() => p.clone(),
        _ => "Default".to_string(),
    };
    if partition.chars().any(char::is_control) {
        return Err(format!("item {i}: partition contains control characters"));
    }
    let txn = r.transaction_id.clone().filter(|t| !t.is_empty());
    if txn
        .as_deref()
        .is_some_and(|t| t.chars().any(char::is_control))
    {
        return Err(format!(
            "item {i}: transactionId contains control characters"
        ));
    }
    let payload = r
        .payload
        .or(r.data)
        .map(|p| p.get().to_string())
        .unwrap_or_else(|| "null".to_string());
    let trace_id = match (&r.trace_id, keep_trace) {
        (Some(Value::String(t)), true) if is_uuid(t) => Some(t.clone()),
        _ => None,
    };
    Ok(PushItem {
        queue,
        partition,
        payload,
        txn,
        trace_id,
        message_id: None,
    })
}

#[derive(Deserialize)]
struct ItemsOnly<'a> {
    #[serde(borrow)]
    items: Vec<RawItem<'a>>,
}

/// The items of one transaction push operation, from the operation's own JSON text: either
/// `{"items": [...]}` or the flat one-item form. Payloads stay byte-for-byte as sent.
pub fn parse_push_op(
    op_text: &str,
    has_items: bool,
    keep_trace: bool,
) -> Result<Vec<PushItem>, String> {
    let raws: Vec<RawItem<'_>> = if has_items {
        serde_json::from_str::<ItemsOnly<'_>>(op_text)
            .map_err(|e| e.to_string())?
            .items
    } else {
        vec![serde_json::from_str::<RawItem<'_>>(op_text).map_err(|e| e.to_string())?]
    };
    raws.iter()
        .enumerate()
        .map(|(i, r)| to_item(i, r, keep_trace))
        .collect()
}

pub async fn push(ctx: &Ctx, body: &[u8]) -> Reply {
    let parsed: PushBody<'_> = match serde_json::from_slice(body) {
        Ok(b) => b,
        Err(e) => return Reply::error(400, format!("bad body: {e}")),
    };
    let items: Vec<PushItem> = match parsed
        .items
        .iter()
        .enumerate()
        .map(|(i, r)| to_item(i, r, false))
        .collect()
    {
        Ok(v) => v,
        Err(e) => return Reply::error(400, format!("bad body: {e}")),
    };
    if items.is_empty() {
        return Reply::raw_json(201, "[]".into());
    }
    let res = ctx
        .store
        .write(move |conn| append(conn, &items, now_us(), Mode::Push))
        .await;
    let outs = match res {
        Ok(Ok(o)) => o,
        Ok(Err(_)) => return Reply::error(500, "push failed: unexpected abort"),
        Err(e) => return store_failed("push", e),
    };
    // Queues that received messages, with how many.
    let mut woken: Vec<(&str, usize)> = Vec::new();
    let rendered: Vec<Value> = outs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            if o.status == PushStatus::Queued {
                match woken.iter_mut().find(|w| w.0 == o.queue) {
                    Some(w) => w.1 += 1,
                    None => woken.push((&o.queue, 1)),
                }
            }
            let status = if o.status == PushStatus::Queued {
                "queued"
            } else {
                "duplicate"
            };
            json!({"index": i, "message_id": o.message_id, "transaction_id": o.txn,
                   "queueName": o.queue, "status": status, "offset": o.offset})
        })
        .collect();
    for (queue, n) in woken {
        ctx.notify.wake_some(queue, n);
    }
    Reply::json(201, &Value::Array(rendered))
}
