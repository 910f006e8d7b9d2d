//! Appending to partition logs: offsets, the dedup window, implicit queue/partition creation.

use super::queues::{ensure_partition, ensure_queue, PartitionRow, QueueRow};
use super::SResult;
use crate::broker::time::{secs_us, uuid_v7};
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;

/// One item to append, already validated.
#[derive(Clone, Debug)]
pub struct PushItem {
    pub queue: String,
    pub partition: String,
    /// The payload's JSON text, exactly as the producer sent it.
    pub payload: String,
    pub txn: Option<String>,
    pub trace_id: Option<String>,
    /// A pre-minted id (timer fires deliver the id promised at schedule time).
    pub message_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PushStatus {
    Queued,
    /// Same transaction id already in the partition inside the window (or earlier in the call).
    Duplicate,
    /// A repeat inside one transaction bundle (echoed, not written).
    InBundleRepeat,
}

#[derive(Clone, Debug)]
pub struct PushOutcome {
    pub message_id: String,
    pub txn: String,
    pub queue: String,
    pub status: PushStatus,
    pub offset: i64,
}

/// A duplicate of history inside a transaction: the whole bundle must roll back.
#[derive(Debug)]
pub struct DuplicateAbort {
    pub queue: String,
    pub partition: String,
}

pub enum Mode {
    /// Plain push: history duplicates are answered, not written.
    Push,
    /// Transaction: a history duplicate aborts.
    Transaction,
    /// Timer fire: the window is never consulted.
    Fire,
}

/// Writes the items in order; `now` is the segment time shared by the whole call.
pub fn append(
    conn: &Connection,
    items: &[PushItem],
    now: i64,
    mode: Mode,
) -> SResult<Result<Vec<PushOutcome>, DuplicateAbort>> {
    let mut queues: HashMap<String, QueueRow> = HashMap::new();
    let mut parts: HashMap<(i64, String), PartitionRow> = HashMap::new();
    let mut seen: HashMap<(String, String, String), (String, i64)> = HashMap::new();
    let mut out = Vec::with_capacity(items.len());
    let mut insert = conn.prepare_cached(
        "INSERT INTO messages (partition_id, offset, id, txn, created_at, trace_id, payload)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    let mut probe = conn.prepare_cached(
        "SELECT id, offset FROM messages WHERE partition_id = ?1 AND txn = ?2 AND created_at >= ?3
          ORDER BY offset LIMIT 1",
    )?;
    for item in items {
        let q = match queues.get(&item.queue) {
            Some(q) => q.clone(),
            None => {
                let q = ensure_queue(conn, &item.queue)?;
                queues.insert(item.queue.clone(), q.clone());
                q
            }
        };
        let pkey = (q.id, item.partition.clone());
        if !parts.contains_key(&pkey) {
            let p = ensure_partition(conn, q.id, &item.partition)?;
            parts.insert(pkey.clone(), p);
        }
        let message_id = item.message_id.clone().unwrap_or_else(uuid_v7);
        let explicit_txn = item.txn.is_some();
        let txn = item.txn.clone().unwrap_or_else(|| message_id.clone());
        let skey = (item.queue.clone(), item.partition.clone(), txn.clone());
        if explicit_txn {
            if let Some((id, off)) = seen.get(&skey) {
                let status = match mode {
                    Mode::Transaction => PushStatus::InBundleRepeat,
                    _ => PushStatus::Duplicate,
                };
                out.push(PushOutcome {
                    message_id: id.clone(),
                    txn,
                    queue: q.name.clone(),
                    status,
                    offset: *off,
                });
                continue;
            }
        }
        let Some(p) = parts.get_mut(&pkey) else {
            continue;
        };
        let window = q.opts().dedup_window;
        if explicit_txn && window > 0 && !matches!(mode, Mode::Fire) {
            let since = now.saturating_sub(secs_us(window));
            let hit: Option<(String, i64)> =
                match super::reclaim::spent_dedup(conn, p.id, &txn, since)? {
                    Some(h) => Some(h),
                    None => probe
                        .query_row(params![p.id, txn, since], |r| Ok((r.get(0)?, r.get(1)?)))
                        .optional()?,
                };
            if let Some((id, off)) = hit {
                if matches!(mode, Mode::Transaction) {
                    return Ok(Err(DuplicateAbort {
                        queue: q.name.clone(),
                        partition: item.partition.clone(),
                    }));
                }
                seen.insert(skey, (id.clone(), off));
                out.push(PushOutcome {
                    message_id: id,
                    txn,
                    queue: q.name.clone(),
                    status: PushStatus::Duplicate,
                    offset: off,
                });
                continue;
            }
        }
        let offset = p.last_offset + 1;
        insert.execute(params![
            p.id,
            offset,
            message_id,
            txn,
            now,
            item.trace_id,
            item.payload
        ])?;
        p.last_offset = offset;
        p.last_push_at = now;
        if explicit_txn {
            seen.insert(skey, (message_id.clone(), offset));
        }
        out.push(PushOutcome {
            message_id,
            txn,
            queue: q.name.clone(),
            status: PushStatus::Queued,
            offset,
        });
    }
    let mut upd = conn.prepare_cached(
        "UPDATE partitions SET last_offset = ?1, last_push_at = ?2 WHERE id = ?3",
    )?;
    for p in parts.values() {
        if p.last_push_at == now {
            upd.execute(params![p.last_offset, now, p.id])?;
            super::ready::pushed(conn, p.id, now)?;
        }
    }
    Ok(Ok(out))
}
