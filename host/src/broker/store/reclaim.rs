//! Reclaiming consumed messages. On a queue with `retentionEnabled`, a message that every
//! consumer group of its partition has acknowledged is deleted as soon as the acknowledging
//! write ends, instead of after `completedRetentionSeconds` (which the SQS facade sets to
//! the whole retention period, 4 days by default): the store then holds what is queued or in
//! flight, not throughput × retention (issue 19, defect 11).
//!
//! What a deletion must not take away:
//! * anything a group still owes: only offsets at or below the slowest cursor go, so every
//!   depth, cursor and ready row stays what it was; `log_start` moves past them exactly as
//!   retention moves it, and offsets are never reused (`last_offset` is kept);
//! * the span of a live lease, from its first offset: an ack under that lease may still name
//!   a message its batch already passed (an out-of-order ack, a retried DeleteMessage), and
//!   must resolve it by transaction id as it did before (a no-op success, not a rollback of
//!   the transaction carrying it);
//! * the dedup window: a message pushed with its own transaction id inside the queue's
//!   `dedupWindowSeconds` leaves a row in `spent` (ids and offset, no payload) until the
//!   window closes, so a later push with that id is still a duplicate answered with the
//!   original id and offset, and an ack of it still resolves below the cursor.
//!
//! Groups that have no cursor yet hold nothing back (as with completed retention): a named
//! group seeded later from `all` starts at the first message still stored.

use super::options::QueueOpts;
use super::queues::{find_queue_by_id, partition_by_id, partition_by_uuid, PartitionRow};
use super::SResult;
use crate::broker::time::secs_us;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;

/// Most messages one acknowledging write deletes per partition: a database written before
/// reclaiming existed may hold days of consumed messages, and the retention sweep takes the
/// rest in bounded steps rather than stalling the single writer on one ack.
pub const INLINE_LIMIT: i64 = 4_096;

/// The highest offset no group needs any more, `None` when the partition has no cursor.
/// A live lease protects its whole claim (`claim_start` onwards), acked part included.
fn consumed_bound(conn: &Connection, pid: i64, now: i64) -> SResult<Option<i64>> {
    Ok(conn
        .prepare_cached(
            "SELECT MIN(CASE WHEN lease_expires_at >= ?2 AND claim_start IS NOT NULL
                             THEN MIN(committed, claim_start - 1) ELSE committed END)
               FROM cursors WHERE partition_id = ?1",
        )?
        .query_row(params![pid, now], |r| r.get(0))?)
}

/// Deletes up to `limit` consumed messages from the head of one partition's log (`start`
/// is its `log_start`, `last` its `last_offset`); returns how many went and the new start.
pub fn consumed(
    conn: &Connection,
    o: &QueueOpts,
    pid: i64,
    (start, last): (i64, i64),
    now: i64,
    limit: i64,
) -> SResult<(i64, i64)> {
    if !o.retention_enabled || limit <= 0 {
        return Ok((0, start));
    }
    let Some(bound) = consumed_bound(conn, pid, now)? else {
        return Ok((0, start));
    };
    let end = bound.min(last).min(start.saturating_add(limit - 1));
    if end < start {
        return Ok((0, start));
    }
    if o.dedup_window > 0 {
        keep_dedup_ids(conn, pid, (start, end), o.dedup_window, now)?;
    }
    let n = conn
        .prepare_cached(
            "DELETE FROM messages WHERE partition_id = ?1 AND offset >= ?2 AND offset <= ?3",
        )?
        .execute(params![pid, start, end])? as i64;
    conn.prepare_cached("UPDATE partitions SET log_start = ?1 WHERE id = ?2")?
        .execute(params![end + 1, pid])?;
    super::ready::refresh(conn, pid, now)?;
    Ok((n, end + 1))
}

/// Copies the ids of messages in `[from, to]` that the dedup window can still match. A
/// message pushed without a transaction id has its own id as one (`txn = id`): no producer
/// names it, so it needs no row (the default window is an hour, and most native pushes and
/// every SQS standard send carry none).
fn keep_dedup_ids(
    conn: &Connection,
    pid: i64,
    (from, to): (i64, i64),
    window_s: i64,
    now: i64,
) -> SResult<()> {
    let window = secs_us(window_s);
    conn.prepare_cached(
        "INSERT OR IGNORE INTO spent (expires_at, partition_id, offset, txn, id, created_at)
         SELECT created_at + ?4, partition_id, offset, txn, id, created_at FROM messages
          WHERE partition_id = ?1 AND offset >= ?2 AND offset <= ?3
            AND created_at >= ?5 AND txn <> id",
    )?
    .execute(params![pid, from, to, window, now.saturating_sub(window)])?;
    Ok(())
}

/// After a write that acknowledged messages of these partitions (by uuid): reclaims what
/// became consumed. Runs once at the end of the write, never between two acks of one
/// transaction, so every ack of a call resolves against the log as the call found it.
pub fn after_acks<'a>(
    conn: &Connection,
    partitions: impl IntoIterator<Item = &'a str>,
    now: i64,
) -> SResult<()> {
    let mut done: Vec<i64> = Vec::new();
    // One option bag per queue per call: a batch ack spans many partitions of one queue.
    let mut opts: HashMap<i64, Option<QueueOpts>> = HashMap::new();
    for uuid in partitions {
        let Some(p) = partition_by_uuid(conn, uuid)? else {
            continue;
        };
        if done.contains(&p.id) {
            continue;
        }
        done.push(p.id);
        head(conn, &p, &mut opts, now)?;
    }
    Ok(())
}

/// Reclaims the consumed head of one partition (by id), at most [`INLINE_LIMIT`] messages.
pub fn partition(conn: &Connection, pid: i64, now: i64) -> SResult<i64> {
    let Some(p) = partition_by_id(conn, pid)? else {
        return Ok(0);
    };
    head(conn, &p, &mut HashMap::new(), now)
}

fn head(
    conn: &Connection,
    p: &PartitionRow,
    opts: &mut HashMap<i64, Option<QueueOpts>>,
    now: i64,
) -> SResult<i64> {
    let o = match opts.get(&p.queue_id) {
        Some(o) => o.clone(),
        None => {
            let o = find_queue_by_id(conn, p.queue_id)?.map(|q| q.opts());
            opts.insert(p.queue_id, o.clone());
            o
        }
    };
    let Some(o) = o else { return Ok(0) };
    let span = (p.log_start, p.last_offset);
    Ok(consumed(conn, &o, p.id, span, now, INLINE_LIMIT)?.0)
}

/// The dedup probe's second half: a reclaimed message with this transaction id pushed at or
/// after `since` (µs). Reclaimed offsets lie below every stored one, so a hit here is the
/// lowest offset carrying the id.
pub fn spent_dedup(
    conn: &Connection,
    pid: i64,
    txn: &str,
    since: i64,
) -> SResult<Option<(String, i64)>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, offset FROM spent WHERE partition_id = ?1 AND txn = ?2 AND created_at >= ?3
              ORDER BY offset LIMIT 1",
        )?
        .query_row(params![pid, txn, since], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

/// Whether a reclaimed message at or below `committed` carries this transaction id (an
/// ack of it is "below the cursor", not unresolvable).
pub fn spent_below(conn: &Connection, pid: i64, txn: &str, committed: i64) -> SResult<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM spent WHERE partition_id = ?1 AND txn = ?2 AND offset <= ?3 LIMIT 1",
        )?
        .query_row(params![pid, txn, committed], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Drops up to about `max` dedup rows whose window has closed; returns how many went.
pub fn expire(conn: &Connection, now: i64, max: i64) -> SResult<i64> {
    // DELETE … LIMIT is not compiled into the bundled SQLite: bound the step by the expiry
    // of the `max`-th oldest row instead (rows sharing that instant may add a few).
    let cut: Option<i64> = conn
        .prepare_cached(
            "SELECT expires_at FROM spent WHERE expires_at < ?1 ORDER BY expires_at
              LIMIT 1 OFFSET ?2",
        )?
        .query_row(params![now, max.max(1)], |r| r.get(0))
        .optional()?;
    let until = cut.unwrap_or(now);
    Ok(conn
        .prepare_cached("DELETE FROM spent WHERE expires_at < ?1")?
        .execute([until])? as i64)
}

/// Free pages kept for reuse before the file is shrunk (1 MiB at the default page size):
/// a queue whose backlog breathes would otherwise pay for shrinking and regrowing.
const FREE_FLOOR_PAGES: i64 = 256;
/// Most pages one step gives back (16 MiB): moving pages is writing them.
const VACUUM_STEP_PAGES: i64 = 4_096;

/// Gives free pages back to the file system when more than a quarter of the file is free
/// (only a database created with `auto_vacuum=INCREMENTAL` can; on others this is a
/// no-op and freed pages are reused by later writes, so the file stops growing).
/// Returns the pages released.
pub fn vacuum_step(conn: &Connection) -> SResult<i64> {
    let mode: i64 = conn.query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
    if mode != 2 {
        return Ok(0);
    }
    let free: i64 = conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
    let total: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    if free <= FREE_FLOOR_PAGES || free * 4 <= total {
        return Ok(0);
    }
    let n = (free - FREE_FLOOR_PAGES).min(VACUUM_STEP_PAGES);
    // One page per step of the statement: it must be stepped to its end.
    let mut st = conn.prepare(&format!("PRAGMA incremental_vacuum({n})"))?;
    let mut rows = st.query([])?;
    while rows.next()?.is_some() {}
    Ok(n)
}
