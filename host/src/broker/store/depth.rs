//! Depth (§3.4): pure offset arithmetic over partition and cursor rows, never the log.

use super::queues::QUEUE_MODE;
use super::SResult;
use rusqlite::Connection;

pub struct PartDepth {
    pub name: String,
    pub pending: i64,
    pub processing: i64,
}

pub struct Depth {
    pub pending: i64,
    pub processing: i64,
    pub parts: Vec<PartDepth>,
}

/// §3.4: pure offset arithmetic over partition and cursor rows.
pub fn depth(conn: &Connection, queue_id: i64, group: Option<&str>, now: i64) -> SResult<Depth> {
    let mut st = conn.prepare_cached(
        "SELECT id, name, last_offset, log_start FROM partitions WHERE queue_id = ?1 ORDER BY name",
    )?;
    let parts: Vec<(i64, String, i64, i64)> = st
        .query_map([queue_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut cur = conn.prepare_cached(
        "SELECT grp, committed, lease_expires_at, batch_end FROM cursors WHERE partition_id = ?1",
    )?;
    let mut d = Depth {
        pending: 0,
        processing: 0,
        parts: Vec::new(),
    };
    for (pid, name, last, start) in parts {
        let cursors: Vec<(String, i64, Option<i64>, Option<i64>)> = cur
            .query_map([pid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<Result<_, _>>()?;
        let live = |c: &(String, i64, Option<i64>, Option<i64>)| -> i64 {
            match (c.2, c.3) {
                (Some(exp), Some(end)) if exp >= now => (end - c.1).max(0),
                _ => 0,
            }
        };
        let (c, leased) = match group {
            Some(g) => match cursors.iter().find(|c| c.0 == g) {
                Some(c) => (c.1, live(c)),
                None => (-1, 0),
            },
            None => {
                let named = cursors
                    .iter()
                    .filter(|c| c.0 != QUEUE_MODE)
                    .map(|c| c.1)
                    .min();
                let qm = cursors.iter().find(|c| c.0 == QUEUE_MODE).map(|c| c.1);
                (named.or(qm).unwrap_or(-1), cursors.iter().map(live).sum())
            }
        };
        let pending = (last - c.max(start - 1)).max(0);
        let processing = pending.min(leased);
        d.pending += pending;
        d.processing += processing;
        d.parts.push(PartDepth {
            name,
            pending,
            processing,
        });
    }
    Ok(d)
}

/// One queue's counts for the host's `/metrics`, read at scrape time.
pub struct QueueCounts {
    pub name: String,
    /// As the queue detail route counts them (every consumer group, leases included).
    pub depth: Depth,
    /// Pending timers by kind: the key up to and including its first `.` (`""` if none).
    pub timers: Vec<(String, i64)>,
}

/// The first `max` queues by name with their depths and pending timers, in one snapshot,
/// and how many queues there are in all. Cost: the listed queues' partition and cursor
/// rows (one pair per FIFO message group), plus one pass over the timers table.
pub fn all_queues(conn: &Connection, now: i64, max: usize) -> SResult<(Vec<QueueCounts>, i64)> {
    let total: i64 = conn.query_row("SELECT COUNT(*) FROM queues", [], |r| r.get(0))?;
    let mut st = conn.prepare_cached("SELECT id, name FROM queues ORDER BY name LIMIT ?1")?;
    let queues: Vec<(i64, String)> = st
        .query_map([max as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut st = conn.prepare_cached(
        "SELECT queue, substr(timer_key, 1, instr(timer_key, '.')), COUNT(*)
           FROM timers GROUP BY 1, 2",
    )?;
    let mut timers: std::collections::HashMap<String, Vec<(String, i64)>> = Default::default();
    for row in st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))? {
        let (queue, kind, n): (String, String, i64) = row?;
        timers.entry(queue).or_default().push((kind, n));
    }
    let mut out = Vec::with_capacity(queues.len());
    for (id, name) in queues {
        out.push(QueueCounts {
            depth: depth(conn, id, None, now)?,
            timers: timers.remove(&name).unwrap_or_default(),
            name,
        });
    }
    Ok((out, total))
}
