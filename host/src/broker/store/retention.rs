//! Retention (§2.9): with `retentionEnabled`, messages older than `retentionSeconds` go, and
//! consumed messages (at or below the slowest cursor) older than `completedRetentionSeconds`
//! go. `createdAt` is monotone per partition, so what goes is always a prefix of the log and
//! retention only moves `log_start`; offsets are never reused.

use super::options::QueueOpts;
use super::SResult;
use crate::broker::time::secs_us;
use rusqlite::{params, Connection};
use serde_json::{Map, Value};

/// One bounded sweep step; returns how many messages were deleted.
pub fn sweep(conn: &Connection, now: i64, max_deletes: i64) -> SResult<i64> {
    let queues: Vec<(i64, String)> = conn
        .prepare_cached("SELECT id, options FROM queues")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut budget = max_deletes;
    for (qid, text) in queues {
        let map: Map<String, Value> = match serde_json::from_str(&text) {
            Ok(Value::Object(m)) => m,
            _ => continue,
        };
        let o = QueueOpts::from_map(&map);
        if !o.retention_enabled || (o.retention_seconds <= 0 && o.completed_retention_seconds <= 0)
        {
            continue;
        }
        let parts: Vec<(i64, i64, i64)> = conn
            .prepare_cached(
                "SELECT id, log_start, last_offset FROM partitions WHERE queue_id = ?1",
            )?
            .query_map([qid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        for (pid, start, last) in parts {
            if budget <= 0 {
                return Ok(max_deletes - budget);
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
            if bound >= start {
                let n = conn
                    .prepare_cached(
                        "DELETE FROM messages WHERE partition_id = ?1 AND offset <= ?2",
                    )?
                    .execute(params![pid, bound])? as i64;
                budget -= n;
                let new_start = (bound + 1).min(last + 1);
                conn.prepare_cached("UPDATE partitions SET log_start = ?1 WHERE id = ?2")?
                    .execute(params![new_start, pid])?;
            }
        }
    }
    Ok(max_deletes - budget)
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
