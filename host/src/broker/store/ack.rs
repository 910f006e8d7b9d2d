//! The ack algorithm of §2.6 (`log_ack_by_hash_v1`) and lease extension (§4.4).

use super::queues::{find_queue_by_id, partition_by_uuid, QUEUE_MODE};
use super::SResult;
use crate::broker::time::secs_us;
use rusqlite::{params, Connection, OptionalExtension};

pub const E_LEASE: &str = "invalid or expired lease";
pub const E_CONSUMER: &str = "consumer not found";
pub const E_COMMITTED: &str =
    "already committed: the cursor moved past this message before this ack";
pub const E_UNRESOLVED: &str =
    "unresolvable: transaction not in the ack window (hash purged or never pushed); if leased, the message redelivers";
pub const E_BEYOND: &str = "position beyond leased batch";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckStatus {
    Completed,
    Retry,
    Failed,
    Dlq,
}

impl AckStatus {
    /// `normalize_ack_status`: absent/completed/success/acked/ok → completed; anything else unknown → failed.
    pub fn parse(s: Option<&str>) -> AckStatus {
        match s {
            None | Some("completed") | Some("success") | Some("acked") | Some("ok") => {
                AckStatus::Completed
            }
            Some("retry") => AckStatus::Retry,
            Some("dlq") => AckStatus::Dlq,
            Some(_) => AckStatus::Failed,
        }
    }
    /// Precedence at one offset: dlq beats failed beats retry.
    fn rank(self) -> u8 {
        match self {
            AckStatus::Dlq => 3,
            AckStatus::Failed => 2,
            AckStatus::Retry => 1,
            AckStatus::Completed => 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct AckItem {
    pub txn: String,
    pub partition_id: String,
    pub status: AckStatus,
    pub lease_id: Option<String>,
    pub group: String,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct AckResult {
    pub success: bool,
    pub error: Option<String>,
    pub lease_released: bool,
    pub dlq: bool,
    pub noop: bool,
}

fn fail(e: &str) -> AckResult {
    AckResult {
        error: Some(e.to_string()),
        ..Default::default()
    }
}

struct Cur {
    committed: i64,
    lease_id: Option<String>,
    lease_expires_at: Option<i64>,
    batch_end: Option<i64>,
    retry_count: i64,
}

enum Where {
    InSpan(i64),
    Below,
    Beyond,
    Nowhere,
}

/// Applies the acks; results come back in input order. Also returns the names of queues
/// where a lease was released (poppers of those queues should look again).
pub fn ack(
    conn: &Connection,
    items: &[AckItem],
    now: i64,
) -> SResult<(Vec<AckResult>, Vec<String>)> {
    let mut results: Vec<Option<AckResult>> = vec![None; items.len()];
    let mut woken = Vec::new();
    // Group by (partition, lease, group), in order of first appearance.
    let mut groups: Vec<(String, Option<String>, String, Vec<usize>)> = Vec::new();
    for (i, it) in items.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|g| g.0 == it.partition_id && g.1 == it.lease_id && g.2 == it.group)
        {
            Some(g) => g.3.push(i),
            None => groups.push((
                it.partition_id.clone(),
                it.lease_id.clone(),
                it.group.clone(),
                vec![i],
            )),
        }
    }
    for (puuid, lease, group, idxs) in groups {
        let released = ack_group(
            conn,
            items,
            &puuid,
            lease.as_deref(),
            &group,
            &idxs,
            now,
            &mut results,
        )?;

        if let Some(name) = released {
            if !woken.contains(&name) {
                woken.push(name);
            }
        }
    }
    let out = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| fail("pool")))
        .collect();
    Ok((out, woken))
}

#[allow(clippy::too_many_arguments)]
fn ack_group(
    conn: &Connection,
    items: &[AckItem],
    puuid: &str,
    lease: Option<&str>,
    group: &str,
    idxs: &[usize],
    now: i64,
    results: &mut [Option<AckResult>],
) -> SResult<Option<String>> {
    let set_all = |results: &mut [Option<AckResult>], e: &str| {
        for &i in idxs {
            results[i] = Some(fail(e));
        }
    };
    // 1. Cursor lookup.
    let Some(part) = partition_by_uuid(conn, puuid)? else {
        set_all(results, E_CONSUMER);
        return Ok(None);
    };
    let cur: Option<Cur> = conn
        .prepare_cached(
            "SELECT committed, lease_id, lease_expires_at, batch_end, retry_count FROM cursors
              WHERE partition_id = ?1 AND grp = ?2",
        )?
        .query_row(params![part.id, group], |r| {
            Ok(Cur {
                committed: r.get(0)?,
                lease_id: r.get(1)?,
                lease_expires_at: r.get(2)?,
                batch_end: r.get(3)?,
                retry_count: r.get(4)?,
            })
        })
        .optional()?;
    let Some(cur) = cur else {
        set_all(results, E_CONSUMER);
        return Ok(None);
    };
    // 2. Lease check, only when a lease id is given.
    if let Some(l) = lease {
        let live = cur.lease_id.as_deref() == Some(l)
            && matches!(cur.lease_expires_at, Some(e) if e >= now);
        if !live {
            set_all(results, E_LEASE);
            return Ok(None);
        }
    }
    let leased_end = if lease.is_some() { cur.batch_end } else { None };
    // 3. Resolve every item to an offset.
    let mut in_span = conn.prepare_cached(
        "SELECT offset FROM messages WHERE partition_id = ?1 AND txn = ?2 AND offset > ?3 AND offset <= ?4
          ORDER BY offset LIMIT 1",
    )?;
    let mut below = conn.prepare_cached(
        "SELECT offset FROM messages WHERE partition_id = ?1 AND txn = ?2 AND offset <= ?3 LIMIT 1",
    )?;
    let upper = leased_end.unwrap_or(i64::MAX);
    let mut resolved: Vec<(usize, Where)> = Vec::with_capacity(idxs.len());
    for &i in idxs {
        let txn = &items[i].txn;
        let hit: Option<i64> = in_span
            .query_row(params![part.id, txn, cur.committed, upper], |r| r.get(0))
            .optional()?;
        let w = match hit {
            Some(o) => Where::InSpan(o),
            None => {
                let b: Option<i64> = below
                    .query_row(params![part.id, txn, cur.committed], |r| r.get(0))
                    .optional()?;
                if b.is_some() || super::reclaim::spent_below(conn, part.id, txn, cur.committed)? {
                    Where::Below
                } else if leased_end.is_some()
                    && in_span
                        .query_row(params![part.id, txn, upper, i64::MAX], |r| {
                            r.get::<_, i64>(0)
                        })
                        .optional()?
                        .is_some()
                {
                    Where::Beyond
                } else {
                    Where::Nowhere
                }
            }
        };
        resolved.push((i, w));
    }
    // 4. Items outside the span.
    for (i, w) in &resolved {
        match w {
            Where::Below if items[*i].status == AckStatus::Completed => {
                results[*i] = Some(AckResult {
                    success: true,
                    noop: true,
                    ..Default::default()
                })
            }
            Where::Below => results[*i] = Some(fail(E_COMMITTED)),
            Where::Beyond => results[*i] = Some(fail(E_BEYOND)),
            Where::Nowhere => results[*i] = Some(fail(E_UNRESOLVED)),
            Where::InSpan(_) => {}
        }
    }
    let span: Vec<(usize, i64)> = resolved
        .iter()
        .filter_map(|(i, w)| match w {
            Where::InSpan(o) => Some((*i, *o)),
            _ => None,
        })
        .collect();
    if span.is_empty() {
        return Ok(None);
    }
    // 5. The signal: lowest nacked offset; at one offset dlq > failed > retry.
    let mut signal: Option<(i64, AckStatus, usize)> = None;
    for &(i, o) in &span {
        let st = items[i].status;
        if st == AckStatus::Completed {
            continue;
        }
        signal = match signal {
            None => Some((o, st, i)),
            Some((so, sst, si)) => {
                if o < so || (o == so && st.rank() > sst.rank()) {
                    Some((o, st, i))
                } else {
                    Some((so, sst, si))
                }
            }
        };
    }
    // 6. Completed prefix below the signal.
    let limit = signal.map(|s| s.0).unwrap_or(i64::MAX);
    let new = span
        .iter()
        .filter(|(i, o)| items[*i].status == AckStatus::Completed && *o < limit)
        .map(|(_, o)| *o)
        .max()
        .unwrap_or(cur.committed)
        .max(cur.committed);
    let opts = find_queue_by_id(conn, part.queue_id)?;
    let queue_name = opts.as_ref().map(|q| q.name.clone());
    let opts = opts.map(|q| q.opts());
    let mut released = false;
    let mut dlq_at: Option<usize> = None;
    // 7. Lease effects.
    match (leased_end, signal) {
        (Some(_), Some((so, st, si))) => {
            let retry_limit = opts.as_ref().map(|o| o.retry_limit).unwrap_or(3);
            let dlq_enabled = opts.as_ref().map(|o| o.dlq_enabled).unwrap_or(true);
            let to_dlq = st == AckStatus::Dlq
                || (st == AckStatus::Failed && cur.retry_count >= retry_limit && dlq_enabled);
            if to_dlq {
                let err = items[si]
                    .error
                    .clone()
                    .unwrap_or_else(|| "Retries exhausted".to_string());
                file_dlq(conn, part.queue_id, part.id, group, so, &err, now)?;
                finish(conn, part.id, group, so)?;
                dlq_at = Some(si);
            } else if st == AckStatus::Failed && cur.retry_count < retry_limit {
                release(conn, part.id, group, new, cur.retry_count + 1)?;
            } else if st == AckStatus::Failed {
                // Budget spent, no DLQ: the poison message is dropped.
                finish(conn, part.id, group, so)?;
            } else {
                release(conn, part.id, group, new, cur.retry_count)?;
            }
            released = true;
        }
        (Some(end), None) => {
            if new >= end {
                finish(conn, part.id, group, new)?;
                released = true;
            } else {
                conn.prepare_cached(
                    "UPDATE cursors SET committed = ?1 WHERE partition_id = ?2 AND grp = ?3",
                )?
                .execute(params![new, part.id, group])?;
            }
        }
        (None, _) => {
            // Lease-less: only the cursor moves. A lease left wholly below it is over.
            if matches!(cur.batch_end, Some(end) if new >= end) {
                finish(conn, part.id, group, new)?;
                released = true;
            } else {
                conn.prepare_cached(
                    "UPDATE cursors SET committed = ?1 WHERE partition_id = ?2 AND grp = ?3",
                )?
                .execute(params![new, part.id, group])?;
            }
        }
    }
    if group == QUEUE_MODE {
        super::ready::refresh(conn, part.id, now)?;
    }
    // 8. In-span items succeed.
    for &(i, _) in &span {
        results[i] = Some(AckResult {
            success: true,
            error: None,
            lease_released: released,
            dlq: dlq_at == Some(i),
            noop: false,
        });
    }
    for (i, w) in &resolved {
        if matches!(w, Where::Below) {
            if let Some(r) = results[*i].as_mut() {
                if r.success {
                    r.lease_released = released;
                }
            }
        }
    }
    Ok(if released { queue_name } else { None })
}

/// Ends the lease, keeping the attempt bookkeeping so a redelivery counts.
fn release(
    conn: &Connection,
    pid: i64,
    group: &str,
    committed: i64,
    retry_count: i64,
) -> SResult<()> {
    conn.prepare_cached(
        "UPDATE cursors SET committed = ?1, retry_count = ?2, lease_id = NULL, lease_expires_at = NULL,
                batch_end = NULL WHERE partition_id = ?3 AND grp = ?4",
    )?
    .execute(params![committed, retry_count, pid, group])?;
    Ok(())
}

/// Ends the lease and the batch: attempt count and retry counter start over.
fn finish(conn: &Connection, pid: i64, group: &str, committed: i64) -> SResult<()> {
    conn.prepare_cached(
        "UPDATE cursors SET committed = ?1, retry_count = 0, attempt = 0, claim_start = NULL,
                lease_id = NULL, lease_expires_at = NULL, batch_end = NULL
          WHERE partition_id = ?2 AND grp = ?3",
    )?
    .execute(params![committed, pid, group])?;
    Ok(())
}

fn file_dlq(
    conn: &Connection,
    qid: i64,
    pid: i64,
    group: &str,
    offset: i64,
    err: &str,
    now: i64,
) -> SResult<()> {
    conn.prepare_cached(
        "INSERT INTO dlq (queue_id, partition_id, grp, offset, message_id, txn, payload, error, created_at)
         SELECT ?1, partition_id, ?3, offset, id, txn, payload, ?5, ?6 FROM messages
          WHERE partition_id = ?2 AND offset = ?4",
    )?
    .execute(params![qid, pid, group, offset, err, now])?;
    Ok(())
}

/// §4.4: every live lease of this id gets `max(expiry, now + max(seconds, 1))`.
/// Returns (renewed count, earliest new expiry).
pub fn extend(
    conn: &Connection,
    lease_id: &str,
    seconds: i64,
    now: i64,
) -> SResult<(i64, Option<i64>)> {
    let target = now.saturating_add(secs_us(seconds.max(1)));
    let n = conn
        .prepare_cached(
            "UPDATE cursors SET lease_expires_at = MAX(lease_expires_at, ?1)
              WHERE lease_id = ?2 AND lease_expires_at >= ?3",
        )?
        .execute(params![target, lease_id, now])?;
    if n == 0 {
        return Ok((0, None));
    }
    super::ready::refresh_lease(conn, lease_id, now)?;
    let min: Option<i64> = conn
        .prepare_cached("SELECT MIN(lease_expires_at) FROM cursors WHERE lease_id = ?1 AND lease_expires_at >= ?2")?
        .query_row(params![lease_id, target.min(now)], |r| r.get(0))?;
    Ok((n as i64, min))
}
