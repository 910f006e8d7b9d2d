//! Retention (§2.9): with `retentionEnabled`, messages older than `retentionSeconds` go, and
//! consumed messages (at or below the slowest cursor) older than `completedRetentionSeconds`
//! go; on this broker consumed messages go sooner still, see `reclaim.rs`. `createdAt` is monotone per partition, so what goes is always a prefix of the log and
//! retention only moves `log_start`; offsets are never reused.

use super::options::QueueOpts;
use super::SResult;
use crate::broker::time::secs_us;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;
use std::collections::HashMap;

/// A whole pass over every partition; returns how many messages were deleted.
pub fn sweep(conn: &Connection, now: i64, max_deletes: i64) -> SResult<i64> {
    Ok(sweep_from(conn, now, max_deletes, 0, i64::MAX)?.0)
}

/// One bounded step: at most `max_parts` partitions with a non-empty log, in id order after
/// `from`, and at most `max_deletes` messages. Returns (deleted, where the next step starts:
/// 0 after the last partition). Bounding the partitions keeps one step short on the single
/// writer however many partitions exist (a FIFO queue has one per message group).
pub fn sweep_from(
    conn: &Connection,
    now: i64,
    max_deletes: i64,
    from: i64,
    max_parts: i64,
) -> SResult<(i64, i64)> {
    let parts: Vec<(i64, i64, i64, i64)> = conn
        .prepare_cached(
            "SELECT id, queue_id, log_start, last_offset FROM partitions
              WHERE id > ?1 AND last_offset >= log_start ORDER BY id LIMIT ?2",
        )?
        .query_map(params![from, max_parts], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<Result<_, _>>()?;
    let next = match parts.last() {
        Some(last) if (parts.len() as i64) >= max_parts => last.0,
        _ => 0,
    };
    let mut opts: HashMap<i64, Option<QueueOpts>> = HashMap::new();
    let mut budget = max_deletes;
    for (pid, qid, start, last) in parts {
        if budget <= 0 {
            return Ok((max_deletes - budget, pid - 1));
        }
        let o = match opts.get(&qid) {
            Some(o) => o.clone(),
            None => {
                let o = retention_opts(conn, qid)?;
                opts.insert(qid, o.clone());
                o
            }
        };
        let Some(o) = o else { continue };
        budget -= sweep_partition(conn, &o, now, pid, start, last, budget)?;
    }
    Ok((max_deletes - budget, next))
}

/// The queue's options when retention applies to it.
fn retention_opts(conn: &Connection, qid: i64) -> SResult<Option<QueueOpts>> {
    let text: Option<String> = conn
        .prepare_cached("SELECT options FROM queues WHERE id = ?1")?
        .query_row([qid], |r| r.get(0))
        .optional()?;
    let Some(Ok(Value::Object(map))) = text.map(|t| serde_json::from_str::<Value>(&t)) else {
        return Ok(None);
    };
    let o = QueueOpts::from_map(&map);
    // Both ages may be 0 and consumed messages still go (`reclaim.rs`).
    Ok(o.retention_enabled.then_some(o))
}

fn sweep_partition(
    conn: &Connection,
    o: &QueueOpts,
    now: i64,
    pid: i64,
    start: i64,
    last: i64,
    budget: i64,
) -> SResult<i64> {
    // Consumed messages first (a database from before reclaiming, or a partition whose
    // acks left more than one write reclaims): they go whatever their age.
    let (reclaimed, start) = super::reclaim::consumed(conn, o, pid, (start, last), now, budget)?;
    let budget = budget - reclaimed;
    if budget <= 0 || start > last {
        return Ok(reclaimed);
    }
    let mut bound = -1; // delete offsets <= bound
    if o.retention_seconds > 0 {
        bound = bound.max(prefix_older_than(
            conn,
            pid,
            start,
            now.saturating_sub(secs_us(o.retention_seconds)),
            i64::MAX,
            budget,
        )?);
    }
    if o.completed_retention_seconds > 0 {
        let slowest: Option<i64> = conn
            .prepare_cached("SELECT MIN(committed) FROM cursors WHERE partition_id = ?1")?
            .query_row([pid], |r| r.get(0))?;
        if let Some(c) = slowest {
            let cutoff = now.saturating_sub(secs_us(o.completed_retention_seconds));
            bound = bound.max(prefix_older_than(conn, pid, start, cutoff, c, budget)?);
        }
    }
    if bound < start {
        return Ok(reclaimed);
    }
    let n = conn
        .prepare_cached("DELETE FROM messages WHERE partition_id = ?1 AND offset <= ?2")?
        .execute(params![pid, bound])? as i64;
    let new_start = (bound + 1).min(last + 1);
    conn.prepare_cached("UPDATE partitions SET log_start = ?1 WHERE id = ?2")?
        .execute(params![new_start, pid])?;
    super::ready::refresh(conn, pid, now)?;
    Ok(reclaimed + n)
}

/// Highest offset `<= cap` of the prefix created before `cutoff` (at most `limit` rows looked at).
fn prefix_older_than(
    conn: &Connection,
    pid: i64,
    start: i64,
    cutoff: i64,
    cap: i64,
    limit: i64,
) -> SResult<i64> {
    let mut st = conn.prepare_cached(
        "SELECT offset, created_at FROM messages WHERE partition_id = ?1 AND offset >= ?2 AND offset <= ?3
          ORDER BY offset LIMIT ?4",
    )?;
    let mut q = st.query(params![pid, start, cap, limit])?;
    let mut bound = -1;
    while let Some(r) = q.next()? {
        let (off, at): (i64, i64) = (r.get(0)?, r.get(1)?);
        if at >= cutoff {
            break;
        }
        bound = off;
    }
    Ok(bound)
}
