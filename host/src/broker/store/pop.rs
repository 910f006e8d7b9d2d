//! The claim (§2.5, §4.2): pick partitions that owe the group work and hold no live lease,
//! take the next messages after the cursor and lease the span to one lease id.

use super::queues::{
    ensure_queue, find_partition, find_queue, partition_by_id, PartitionRow, QUEUE_MODE,
};
use super::SResult;
use crate::broker::time::{secs_us, uuid_v7};
use rusqlite::{params, Connection, OptionalExtension};

#[derive(Clone, Debug)]
pub enum Seed {
    /// Deliver the retained backlog (`all`, the default).
    All,
    /// Skip what is already there (`new`, or `subscriptionFrom=now`).
    New,
    /// Start at the first message created at or after this instant (µs).
    From(i64),
}

#[derive(Clone, Debug)]
pub struct PopReq {
    pub queue: String,
    pub partition: Option<String>,
    pub group: String,
    pub batch: i64,
    /// Max partitions of a wildcard pop; ≤ 0 means no cap.
    pub max_partitions: i64,
    pub lease_seconds: i64,
    pub auto_ack: bool,
    pub seed: Seed,
}

#[derive(Clone, Debug)]
pub struct Popped {
    pub id: String,
    pub txn: String,
    pub trace_id: Option<String>,
    pub payload: String,
    pub created_at: i64,
    pub offset: i64,
}

#[derive(Clone, Debug)]
pub struct Claim {
    pub partition: String,
    pub partition_id: String,
    pub attempt: i64,
    pub messages: Vec<Popped>,
}

#[derive(Clone, Debug)]
pub struct PopOut {
    pub queue: String,
    pub lease_id: String,
    pub claims: Vec<Claim>,
}

struct Cursor {
    committed: i64,
    lease_expires_at: Option<i64>,
    claim_start: Option<i64>,
    attempt: i64,
}

fn load_cursor(conn: &Connection, pid: i64, group: &str) -> SResult<Option<Cursor>> {
    let mut st = conn.prepare_cached(
        "SELECT committed, lease_expires_at, claim_start, attempt FROM cursors
          WHERE partition_id = ?1 AND grp = ?2",
    )?;
    Ok(st
        .query_row(params![pid, group], |r| {
            Ok(Cursor {
                committed: r.get(0)?,
                lease_expires_at: r.get(1)?,
                claim_start: r.get(2)?,
                attempt: r.get(3)?,
            })
        })
        .optional()?)
}

fn seed_cursor(conn: &Connection, p: &PartitionRow, group: &str, seed: &Seed) -> SResult<Cursor> {
    let committed = match (group == QUEUE_MODE, seed) {
        (true, _) | (false, Seed::All) => p.log_start - 1,
        (false, Seed::New) => p.last_offset,
        (false, Seed::From(ts)) => {
            let first: Option<i64> = conn
                .prepare_cached(
                    "SELECT MIN(offset) FROM messages WHERE partition_id = ?1 AND created_at >= ?2",
                )?
                .query_row(params![p.id, ts], |r| r.get(0))?;
            match first {
                Some(o) => o - 1,
                None => p.last_offset,
            }
        }
    };
    conn.prepare_cached("INSERT INTO cursors (partition_id, grp, committed) VALUES (?1, ?2, ?3)")?
        .execute(params![p.id, group, committed])?;
    Ok(Cursor {
        committed,
        lease_expires_at: None,
        claim_start: None,
        attempt: 0,
    })
}

/// Partitions of the queue that owe `group` work and hold no live lease, in random order.
fn candidates(conn: &Connection, queue_id: i64, group: &str, now: i64) -> SResult<Vec<i64>> {
    let mut st = conn.prepare_cached(
        "SELECT p.id FROM partitions p
           LEFT JOIN cursors c ON c.partition_id = p.id AND c.grp = ?2
          WHERE p.queue_id = ?1 AND p.last_offset >= p.log_start
            AND (c.partition_id IS NULL
                 OR (p.last_offset > c.committed
                     AND (c.lease_expires_at IS NULL OR c.lease_expires_at < ?3)))
          ORDER BY random()",
    )?;
    let ids = st
        .query_map(params![queue_id, group, now], |r| r.get(0))?
        .collect::<Result<Vec<i64>, _>>()?;
    Ok(ids)
}

/// The partitions a pop may claim from: ids still to read (wildcard) or the one row (pinned).
enum Candidates<P> {
    Ids(Vec<i64>),
    Rows(Vec<P>),
}

pub fn pop(conn: &Connection, req: &PopReq, now: i64) -> SResult<PopOut> {
    let lease_id = uuid_v7();
    let mut out = PopOut {
        queue: req.queue.clone(),
        lease_id: lease_id.clone(),
        claims: Vec::new(),
    };
    let (queue, parts) = match &req.partition {
        None => {
            // A wildcard pop of an unknown name creates the queue row so a group can subscribe.
            let q = ensure_queue(conn, &req.queue)?;
            // Partition rows are read lazily below: a pop usually claims the first
            // candidate, and reading all of them made a wide queue's pop cost its width.
            let ids = candidates(conn, q.id, &req.group, now)?;
            (q, Candidates::Ids(ids))
        }
        Some(name) => {
            let Some(q) = find_queue(conn, &req.queue)? else {
                return Ok(out);
            };
            let Some(p) = find_partition(conn, q.id, name)? else {
                return Ok(out);
            };
            (q, Candidates::Rows(vec![p]))
        }
    };
    let opts = queue.opts();
    let lease_s = if req.lease_seconds > 0 {
        req.lease_seconds
    } else if opts.lease_time > 0 {
        opts.lease_time
    } else {
        60
    };
    let mut remaining = req.batch.max(1);
    let mut take = conn.prepare_cached(
        "SELECT id, txn, trace_id, payload, created_at, offset FROM messages
          WHERE partition_id = ?1 AND offset >= ?2 ORDER BY offset LIMIT ?3",
    )?;
    let parts: Box<dyn Iterator<Item = SResult<Option<_>>>> = match parts {
        Candidates::Rows(rows) => Box::new(rows.into_iter().map(|p| Ok(Some(p)))),
        Candidates::Ids(ids) => Box::new(ids.into_iter().map(|id| partition_by_id(conn, id))),
    };
    for p in parts {
        if remaining <= 0
            || (req.max_partitions > 0 && out.claims.len() as i64 >= req.max_partitions)
        {
            break;
        }
        let Some(p) = p? else { continue };
        let cur = match load_cursor(conn, p.id, &req.group)? {
            Some(c) => c,
            None => seed_cursor(conn, &p, &req.group, &req.seed)?,
        };
        if matches!(cur.lease_expires_at, Some(exp) if exp >= now) {
            continue;
        }
        if opts.window_buffer > 0 && now - p.last_push_at < secs_us(opts.window_buffer) {
            continue;
        }
        let start = (cur.committed + 1).max(p.log_start);
        if start > p.last_offset {
            continue;
        }
        let visible_before = now.saturating_sub(secs_us(opts.delayed_processing.max(0)));
        let mut msgs = Vec::new();
        let rows = take.query_map(params![p.id, start, remaining], |r| {
            Ok(Popped {
                id: r.get(0)?,
                txn: r.get(1)?,
                trace_id: r.get(2)?,
                payload: r.get(3)?,
                created_at: r.get(4)?,
                offset: r.get(5)?,
            })
        })?;
        for m in rows {
            let m = m?;
            if opts.delayed_processing > 0 && m.created_at > visible_before {
                break;
            }
            msgs.push(m);
        }
        let (Some(first), Some(last)) = (msgs.first(), msgs.last()) else {
            continue;
        };
        let (first, last) = (first.offset, last.offset);
        let attempt = if req.auto_ack {
            1
        } else if cur.claim_start == Some(first) {
            cur.attempt + 1
        } else {
            1
        };
        if req.auto_ack {
            conn.prepare_cached(
                "UPDATE cursors SET committed = ?1, lease_id = NULL, lease_expires_at = NULL,
                        batch_end = NULL, claim_start = NULL, attempt = 0
                  WHERE partition_id = ?2 AND grp = ?3",
            )?
            .execute(params![last, p.id, req.group])?;
        } else {
            conn.prepare_cached(
                "UPDATE cursors SET lease_id = ?1, lease_expires_at = ?2, batch_end = ?3,
                        claim_start = ?4, attempt = ?5
                  WHERE partition_id = ?6 AND grp = ?7",
            )?
            .execute(params![
                lease_id,
                now.saturating_add(secs_us(lease_s)),
                last,
                first,
                attempt,
                p.id,
                req.group
            ])?;
        }
        remaining -= msgs.len() as i64;
        out.claims.push(Claim {
            partition: p.name.clone(),
            partition_id: p.uuid.clone(),
            attempt,
            messages: msgs,
        });
    }
    if req.auto_ack {
        out.lease_id = String::new();
    }
    Ok(out)
}
