//! `DeduplicationScope=queue` (a FIFO queue's default): a deduplication id is unique
//! across the whole queue, where the broker deduplicates per partition, which on a FIFO
//! queue is one message group.
//!
//! Each deduplication id is claimed in the KV store for the queue's deduplication window
//! (`qs:dd:<queue>:<created>.<purged>:<id>` = `{"g": <group>}`, created only if absent), in ONE call for a
//! whole send, before the push. A send whose id is already claimed by another group is
//! pushed into THAT group with the same id: the broker's own per-group deduplication then
//! writes nothing and answers the original's MessageId, as SQS does. The broker's window
//! starts after the claim's, so it is still open while the claim lives.
//!
//! Only a message that has landed may be answered that way: two concurrent sends of one id
//! in two groups can see the claim won by one and the other's push arrive first, and a
//! push routed into a lane where the holder's message is not yet stores one group's
//! message in another group's lane (checker engine seed 462). A claim says when it was
//! made, and a send routed to another group waits until the claim is `LANDING_GRACE_MS`
//! old: the holder's push, sent right after its claim, has landed by then (or failed). A
//! holder's push stalled longer than that still loses the race; the message is then
//! delivered in the holder's group, never lost (`docs/divergences.md`).
//!
//! A `PurgeQueue` while a send waits on a claim takes the holder's message and the
//! broker's memory of its id, and a routed push would then be stored, as a message of its
//! own, in the holder's lane of the purged incarnation (checker engine seed 530). So a send
//! about to be routed reads the queue's record afresh, and when a purge began since the
//! record it claimed under (a purge names its new incarnation first), it starts again under
//! the new one. Should a purge begin after that read, the routed push carries the group it
//! was sent in (`carried::GROUP_ID`), and the receive that meets the lane named before the
//! purge moves it into that group (`redrive::relane`; a receive whose record is older than
//! the purge, up to the registry cache, still answers it in the holder's group).
//!
//! Cost: one KV write call per FIFO send on a queue-scoped queue.

use super::lanes;
use super::registry::{self, QueueRecord};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{carried, Envelope};
use crate::queen::{KvOp, PushItem};
use crate::wire::ApiError;
use serde_json::{json, Value};

/// How old a claim is before a send of its id in another group is routed to the claim's:
/// the holder's push, sent right after the claim, has landed by then.
const LANDING_GRACE_MS: i64 = 2_000;

/// A deduplication id's claim, scoped to the queue's incarnation: a purge, or a delete and
/// create under the same name, starts afresh, so an id used before names no group after.
pub fn key(q: &QueueRecord, dedup_id: &str) -> String {
    format!("qs:dd:{}:{}.{}:{dedup_id}", q.name, q.created, q.purged)
}

/// Whether deduplication spans the whole queue (FIFO, unless `messageGroup` was set when
/// the queue was made: SQS keeps the scope it was created with).
pub fn queue_scoped(q: &QueueRecord) -> bool {
    q.fifo
        && q.queue_dedup
            .unwrap_or_else(|| q.attr("DeduplicationScope") != Some("messageGroup"))
}

/// Routes FIFO pushes whose deduplication id another group holds into that group. Answers
/// the queue's record read afresh when the send must start again under it: a purge began
/// (or the queue was made again) since `q`, under which the claims were read.
pub async fn route<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    pushes: &mut [PushItem],
) -> Result<Option<QueueRecord>, ApiError> {
    // The first group to claim each id, in send order (one op per id: a key may be
    // written once per call).
    let mut claims: Vec<(String, String)> = Vec::new();
    for p in pushes.iter() {
        if let Some(id) = &p.transaction_id {
            if !claims.iter().any(|(d, _)| d == id) {
                claims.push((id.clone(), p.partition.clone()));
            }
        }
    }
    if claims.is_empty() {
        return Ok(None);
    }
    let ttl = q.dedup_window_seconds();
    let claim = |group: &str| json!({ "g": group, "at": ctx.now_ms });
    let ops = claims
        .iter()
        .map(|(id, group)| KvOp::put_ttl(key(q, id), claim(group), ttl, Some(0)))
        .collect();
    let results = ctx.queen.kv_results(ops).await?;
    let mut waited = 0;
    let mut routed = false;
    for ((_, group), r) in claims.iter_mut().zip(&results) {
        if r.applied() {
            continue;
        }
        let Some(holder) = r.value.get("g").and_then(Value::as_str) else {
            continue;
        };
        if holder != group.as_str() {
            let made = r.value.get("at").and_then(Value::as_i64).unwrap_or(0);
            let wait = (made + LANDING_GRACE_MS - ctx.now_ms).clamp(0, LANDING_GRACE_MS);
            waited = waited.max(wait);
            *group = holder.to_string();
            routed = true;
        }
    }
    if waited > 0 {
        ctx.queen.transport().pause(waited as u64).await;
    }
    if routed {
        if let Some(now) = registry::load(ctx, &q.name).await? {
            let r = now.record;
            if r.created != q.created || r.purged != q.purged {
                return Ok(Some(r));
            }
        }
    }
    for p in pushes.iter_mut() {
        let Some(id) = &p.transaction_id else {
            continue;
        };
        if let Some((_, lane)) = claims.iter().find(|(d, _)| d == id) {
            if *lane != p.partition {
                carry_own_group(p);
                p.partition = lane.clone();
            }
        }
    }
    Ok(None)
}

/// Stamps a push about to be routed into another group's lane with the group it was sent
/// in, where a move out of a purged lane takes it.
fn carry_own_group(p: &mut PushItem) {
    let mut e = Envelope::from_stored(&p.payload);
    carried::set_group(&mut e, lanes::group_of(&p.partition));
    p.payload = e.to_json();
}
