//! The ready index: for queue-mode consumption, one row per partition that has messages past
//! its cursor, keyed by the instant it may next be claimed. A wildcard pop reads the oldest
//! rows instead of scanning every partition of the queue, so its cost does not grow with the
//! number of partitions (a FIFO queue gains one per message group and never loses one).
//!
//! `ready_at` is when the partition became claimable (it keeps its place in line until it is
//! claimed), or one microsecond past its lease's expiry while a lease holds it. Every write
//! that moves a partition's log bounds or its queue-mode cursor calls [`refresh`] (or
//! [`pushed`]), inside the same transaction.

use super::queues::QUEUE_MODE;
use super::SResult;
use rusqlite::{params, Connection, OptionalExtension};

/// The row a partition should have now: `None` when nothing is past its cursor.
fn wanted(
    conn: &Connection,
    pid: i64,
    now: i64,
    current: Option<i64>,
) -> SResult<Option<(i64, i64)>> {
    let row: Option<(i64, i64, i64, Option<i64>, Option<i64>)> = conn
        .prepare_cached(
            "SELECT p.queue_id, p.last_offset, p.log_start, c.committed, c.lease_expires_at
               FROM partitions p LEFT JOIN cursors c ON c.partition_id = p.id AND c.grp = ?2
              WHERE p.id = ?1",
        )?
        .query_row(params![pid, QUEUE_MODE], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional()?;
    let Some((queue_id, last, start, committed, lease)) = row else {
        return Ok(None);
    };
    let committed = committed.unwrap_or(start - 1);
    if last < start || last <= committed {
        return Ok(None);
    }
    let at = match lease {
        Some(expires) if expires >= now => expires.saturating_add(1),
        // Already waiting since `at`: it keeps its place.
        _ => match current {
            Some(at) if at <= now => at,
            _ => now,
        },
    };
    Ok(Some((queue_id, at)))
}

fn current(conn: &Connection, pid: i64) -> SResult<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT ready_at FROM ready WHERE partition_id = ?1")?
        .query_row([pid], |r| r.get(0))
        .optional()?)
}

/// Recomputes one partition's row from its partition and queue-mode cursor rows.
pub fn refresh(conn: &Connection, pid: i64, now: i64) -> SResult<()> {
    let have = current(conn, pid)?;
    let want = wanted(conn, pid, now, have)?;
    if want.map(|w| w.1) == have {
        return Ok(());
    }
    if have.is_some() {
        conn.prepare_cached("DELETE FROM ready WHERE partition_id = ?1")?
            .execute([pid])?;
    }
    if let Some((queue_id, at)) = want {
        conn.prepare_cached(
            "INSERT INTO ready (queue_id, ready_at, partition_id) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![queue_id, at, pid])?;
    }
    Ok(())
}

/// After a push: a partition already in line stays where it is.
pub fn pushed(conn: &Connection, pid: i64, now: i64) -> SResult<()> {
    if current(conn, pid)?.is_some() {
        return Ok(());
    }
    refresh(conn, pid, now)
}

/// Up to `limit` partitions of the queue claimable at `now`, oldest first, after `after`
/// (the last row of the previous page).
pub fn page(
    conn: &Connection,
    queue_id: i64,
    now: i64,
    after: Option<(i64, i64)>,
    limit: i64,
) -> SResult<Vec<(i64, i64)>> {
    let (at, pid) = after.unwrap_or((i64::MIN, i64::MIN));
    let mut st = conn.prepare_cached(
        "SELECT ready_at, partition_id FROM ready
          WHERE queue_id = ?1 AND ready_at <= ?2 AND (ready_at, partition_id) > (?3, ?4)
          ORDER BY ready_at, partition_id LIMIT ?5",
    )?;
    let rows = st
        .query_map(params![queue_id, now, at, pid, limit], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<Result<Vec<(i64, i64)>, _>>()?;
    Ok(rows)
}

/// The partitions holding a lease: their rows move with its expiry.
pub fn refresh_lease(conn: &Connection, lease_id: &str, now: i64) -> SResult<()> {
    let pids: Vec<i64> = conn
        .prepare_cached("SELECT partition_id FROM cursors WHERE lease_id = ?1 AND grp = ?2")?
        .query_map(params![lease_id, QUEUE_MODE], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for pid in pids {
        refresh(conn, pid, now)?;
    }
    Ok(())
}

/// Builds the index from the partition and cursor rows (a database from before it existed).
pub fn rebuild(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM ready", [])?;
    conn.execute(
        "INSERT INTO ready (queue_id, ready_at, partition_id)
         SELECT p.queue_id, COALESCE(c.lease_expires_at + 1, 0), p.id
           FROM partitions p LEFT JOIN cursors c ON c.partition_id = p.id AND c.grp = ?1
          WHERE p.last_offset >= p.log_start AND p.last_offset > COALESCE(c.committed, p.log_start - 1)",
        [QUEUE_MODE],
    )?;
    Ok(())
}
