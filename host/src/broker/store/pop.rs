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
    /// The queue has a delay or window option: a message not claimable now can become so
    /// with time alone, which no event announces, so a parked pop must look again.
    pub ripens: bool,
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

/// Partitions of the queue that owe `group` work and hold no live lease, in random order
/// (consumer groups only: queue mode reads the ready index).
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

/// How many ready rows a wildcard pop reads at a time: a claim usually takes the first few.
const READY_PAGE: i64 = 16;

/// What one claim attempt on a partition needs besides the partition.
struct Attempt<'a> {
    req: &'a PopReq,
    opts: &'a super::options::QueueOpts,
    lease_id: &'a str,
    lease_s: i64,
    now: i64,
}

pub fn pop(conn: &Connection, req: &PopReq, now: i64) -> SResult<PopOut> {
    let lease_id = uuid_v7();
    let mut out = PopOut {
        queue: req.queue.clone(),
        lease_id: lease_id.clone(),
        claims: Vec::new(),
        ripens: false,
    };
    let (queue, pinned) = match &req.partition {
        // A wildcard pop of an unknown name creates the queue row so a group can subscribe.
        None => (ensure_queue(conn, &req.queue)?, None),
        Some(name) => {
            let Some(q) = find_queue(conn, &req.queue)? else {
                return Ok(out);
            };
            let Some(p) = find_partition(conn, q.id, name)? else {
                return Ok(out);
            };
            (q, Some(p))
        }
    };
    let opts = queue.opts();
    out.ripens = opts.delayed_processing > 0 || opts.window_buffer > 0;
    let lease_s = if req.lease_seconds > 0 {
        req.lease_seconds
    } else if opts.lease_time > 0 {
        opts.lease_time
    } else {
        60
    };
    let a = Attempt {
        req,
        opts: &opts,
        lease_id: &lease_id,
        lease_s,
        now,
    };
    let mut remaining = req.batch.max(1);
    let full = |out: &PopOut, remaining: i64| {
        remaining <= 0 || (req.max_partitions > 0 && out.claims.len() as i64 >= req.max_partitions)
    };
    match pinned {
        Some(p) => {
            if let Some(c) = claim_from(conn, &a, &p, remaining)? {
                out.claims.push(c);
            }
        }
        None if req.group == QUEUE_MODE => {
            let mut after = None;
            'pages: loop {
                let rows = super::ready::page(conn, queue.id, now, after, READY_PAGE)?;
                if rows.is_empty() {
                    break;
                }
                for (at, pid) in rows {
                    after = Some((at, pid));
                    if full(&out, remaining) {
                        break 'pages;
                    }
                    let Some(p) = partition_by_id(conn, pid)? else {
                        continue;
                    };
                    match claim_from(conn, &a, &p, remaining)? {
                        Some(c) => {
                            remaining -= c.messages.len() as i64;
                            out.claims.push(c);
                        }
                        // In line with nothing to take (a delay option holds it back, or
                        // the row is stale): put it where it belongs.
                        None => super::ready::refresh(conn, pid, now)?,
                    }
                }
            }
        }
        None => {
            // Consumer groups seed their cursors lazily, so the ready index (queue mode
            // only) cannot answer for them: scan the queue's partitions.
            for pid in candidates(conn, queue.id, &req.group, now)? {
                if full(&out, remaining) {
                    break;
                }
                let Some(p) = partition_by_id(conn, pid)? else {
                    continue;
                };
                if let Some(c) = claim_from(conn, &a, &p, remaining)? {
                    remaining -= c.messages.len() as i64;
                    out.claims.push(c);
                }
            }
        }
    }
    if req.auto_ack {
        out.lease_id = String::new();
    }
    Ok(out)
}

/// Claims up to `remaining` messages after the group's cursor in one partition, leasing the
/// span (or committing it for an auto-ack pop). `None` when there is nothing to claim.
fn claim_from(
    conn: &Connection,
    a: &Attempt<'_>,
    p: &PartitionRow,
    remaining: i64,
) -> SResult<Option<Claim>> {
    let (req, opts, now) = (a.req, a.opts, a.now);
    let cur = match load_cursor(conn, p.id, &req.group)? {
        Some(c) => c,
        None => seed_cursor(conn, p, &req.group, &req.seed)?,
    };
    if matches!(cur.lease_expires_at, Some(exp) if exp >= now) {
        return Ok(None);
    }
    if opts.window_buffer > 0 && now - p.last_push_at < secs_us(opts.window_buffer) {
        return Ok(None);
    }
    let start = (cur.committed + 1).max(p.log_start);
    if start > p.last_offset {
        return Ok(None);
    }
    let visible_before = now.saturating_sub(secs_us(opts.delayed_processing.max(0)));
    let mut take = conn.prepare_cached(
        "SELECT id, txn, trace_id, payload, created_at, offset FROM messages
          WHERE partition_id = ?1 AND offset >= ?2 ORDER BY offset LIMIT ?3",
    )?;
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
    let mut msgs = Vec::new();
    for m in rows {
        let m = m?;
        if opts.delayed_processing > 0 && m.created_at > visible_before {
            break;
        }
        msgs.push(m);
    }
    let (Some(first), Some(last)) = (msgs.first(), msgs.last()) else {
        return Ok(None);
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
            a.lease_id,
            now.saturating_add(secs_us(a.lease_s)),
            last,
            first,
            attempt,
            p.id,
            req.group
        ])?;
    }
    if req.group == QUEUE_MODE {
        super::ready::refresh(conn, p.id, now)?;
    }
    if req.auto_ack {
        // The claim is already read: what it consumed can go at once.
        super::reclaim::partition(conn, p.id, now)?;
    }
    Ok(Some(Claim {
        partition: p.name.clone(),
        partition_id: p.uuid.clone(),
        attempt,
        messages: msgs,
    }))
}
