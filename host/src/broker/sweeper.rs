//! Background work: firing due timers, waking pops when leases expire, retention and KV
//! pruning. Each loop stops when the broker closes.

use super::api::Ctx;
use super::store::{kv, reclaim, retention, timers};
use super::time::now_us;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

const TIMER_IDLE: Duration = Duration::from_millis(1000);
const LEASE_TICK: Duration = Duration::from_millis(100);
const RETENTION_TICK: Duration = Duration::from_millis(1000);
const FIRE_BATCH: i64 = 256;

pub fn spawn_all(ctx: Arc<Ctx>) -> Vec<JoinHandle<()>> {
    vec![
        tokio::spawn(timer_loop(ctx.clone())),
        tokio::spawn(lease_loop(ctx.clone())),
        tokio::spawn(retention_loop(ctx)),
    ]
}

async fn timer_loop(ctx: Arc<Ctx>) {
    loop {
        let res = ctx
            .store
            .write(|conn| {
                let now = now_us();
                let fired = timers::fire_due(conn, now, FIRE_BATCH)?;
                Ok((fired, timers::next_due(conn)?))
            })
            .await;
        let nap = match res {
            Ok((fired, next)) => {
                ctx.notify.wake_all(&fired);
                match next {
                    Some(at) => {
                        let wait = at.saturating_sub(now_us()).max(0) as u64;
                        Duration::from_micros(wait).min(TIMER_IDLE)
                    }
                    None => TIMER_IDLE,
                }
            }
            Err(super::store::StoreError::Closed) => return,
            Err(_) => TIMER_IDLE,
        };
        if nap.is_zero() {
            tokio::task::yield_now().await;
            continue;
        }
        tokio::select! {
            _ = tokio::time::sleep(nap) => {}
            _ = ctx.notify.timers.notified() => {}
            _ = ctx.notify.closing.notified() => return,
        }
    }
}

/// Wakes the pops parked on queues whose leases ran out since the last tick.
async fn lease_loop(ctx: Arc<Ctx>) {
    let mut since = now_us();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(LEASE_TICK) => {}
            _ = ctx.notify.closing.notified() => return,
        }
        let until = now_us();
        let res = ctx
            .store
            .read(move |conn| {
                let mut st = conn.prepare_cached(
                    "SELECT DISTINCT q.name FROM cursors c
                       JOIN partitions p ON p.id = c.partition_id
                       JOIN queues q ON q.id = p.queue_id
                      WHERE c.lease_expires_at >= ?1 AND c.lease_expires_at < ?2",
                )?;
                let names = st
                    .query_map(rusqlite::params![since, until], |r| r.get::<_, String>(0))?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(names)
            })
            .await;
        match res {
            Ok(names) => ctx.notify.wake_all(&names),
            Err(super::store::StoreError::Closed) => return,
            Err(_) => {}
        }
        since = until;
    }
}

/// Partitions one retention step visits: the pass resumes where the last step stopped.
const RETENTION_PARTS: i64 = 2_000;

async fn retention_loop(ctx: Arc<Ctx>) {
    let mut from = 0i64;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(RETENTION_TICK) => {}
            _ = ctx.notify.closing.notified() => return,
        }
        let res = ctx
            .store
            .write(move |conn| {
                let now = now_us();
                let (_, next) = retention::sweep_from(conn, now, 10_000, from, RETENTION_PARTS)?;
                reclaim::expire(conn, now, 10_000)?;
                kv::prune(conn, now)?;
                let released = reclaim::vacuum_step(conn)?;
                Ok((next, released))
            })
            .await;
        match res {
            Ok((next, released)) => {
                from = next;
                if released > 0 {
                    // The file shrinks when the WAL holding its new size is copied back.
                    let _ = ctx.store.checkpoint().await;
                }
            }
            Err(super::store::StoreError::Closed) => return,
            Err(_) => {}
        }
    }
}
