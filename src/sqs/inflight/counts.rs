//! `ApproximateReceiveCount` where the broker does not count deliveries.
//!
//! The embedded broker puts `deliveryAttempt` on every popped message; the released
//! engine (queen-engine 1.3.0) counts attempts internally but never says. For those
//! messages the facade keeps its own count: one KV `incr` per delivered message, all of a
//! receive's in ONE call (the engine charges its KV write rate per call, not per key),
//! under `qs:rc:<queue>:<messageId>`, living as long as the queue keeps messages.
//!
//! Every delivery is counted, whether or not the receive asks for the attribute: a later
//! receive that asks, or a redrive policy set later, must see the deliveries before it. A
//! count call that fails (the engine throttled it) fails the receive: its claims are given
//! back and the client retries, so a message is never delivered uncounted (which would let
//! it pass `maxReceiveCount` and never be dead-lettered). Counted and then not delivered
//! (the receive failed after counting, or a claim's lease was lost on the way), a message
//! is uncounted again (`uncount`, best effort): otherwise slow or failed receives would
//! dead-letter messages nobody received `maxReceiveCount` times.
//!
//! The same call records each message's first receive, create-only, under
//! `qs:fr:<queue>:<messageId>` (the answer of a write that finds it there is its value), so
//! `ApproximateFirstReceiveTimestamp` is answered on every delivery, as SQS answers it. A
//! message counted and then not delivered keeps the time of that attempt.

use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{carried, Envelope};
use crate::queen::{KvOp, PoppedMessage, QueenError};
use crate::sqs::registry::QueueRecord;
use crate::wire::ApiError;
use serde_json::json;

/// The id a message's count is kept under: the MessageId it is answered under (a copy
/// moved into its group's current lane after a purge carries the first one), else its
/// broker id.
pub fn count_id(m: &PoppedMessage) -> String {
    carried::message_id(&Envelope::from_stored(&m.data)).unwrap_or_else(|| m.id.clone())
}

pub fn key(queue: &str, message_id: &str) -> String {
    format!("qs:rc:{queue}:{message_id}")
}

fn first_key(queue: &str, message_id: &str) -> String {
    format!("qs:fr:{queue}:{message_id}")
}

/// Fills `delivery_attempt` on the messages the broker left without one, and answers
/// each message's first receive (ms since the epoch; by position, `None` for a message that
/// had its count already).
pub async fn fill<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    messages: &mut [&mut PoppedMessage],
) -> Result<Vec<Option<i64>>, ApiError> {
    let ttl = q.retention_seconds().max(60);
    let mut firsts: Vec<Option<i64>> = vec![None; messages.len()];
    let missing: Vec<usize> = (0..messages.len())
        .filter(|&i| messages[i].delivery_attempt.is_none())
        .collect();
    if missing.is_empty() {
        return Ok(firsts);
    }
    let ops = missing
        .iter()
        .flat_map(|&i| {
            let id = count_id(messages[i]);
            [
                KvOp::incr(key(&q.name, &id), 1, None, ttl),
                KvOp::put_ttl(first_key(&q.name, &id), json!(ctx.now_ms), ttl, Some(0)),
            ]
        })
        .collect();
    let results = ctx.queen.kv_results(ops).await?;
    for (n, &i) in missing.iter().enumerate() {
        let (Some(count), Some(first)) = (results.get(2 * n), results.get(2 * n + 1)) else {
            return Err(QueenError::BadAnswer("a receive count".into()).into());
        };
        match count.value.as_u64().filter(|_| count.applied()) {
            Some(c) => messages[i].delivery_attempt = Some(u32::try_from(c).unwrap_or(u32::MAX)),
            None => return Err(QueenError::BadAnswer("a receive count".into()).into()),
        }
        // Written now, or the time an earlier receive wrote.
        firsts[i] = first.value.as_i64();
    }
    Ok(firsts)
}

/// Takes back the counts of messages counted by [`fill`] and then not delivered, by
/// [`count_id`]. Best effort: should it fail, those messages keep one count too many.
pub async fn uncount<T: Transport>(ctx: &Ctx<'_, T>, q: &QueueRecord, message_ids: &[String]) {
    if message_ids.is_empty() {
        return;
    }
    let ttl = q.retention_seconds().max(60);
    let ops = message_ids
        .iter()
        .map(|id| KvOp::incr(key(&q.name, id), -1, None, ttl))
        .collect();
    let _one_too_many_if_it_failed = ctx.queen.kv_results(ops).await;
}
