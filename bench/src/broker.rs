//! The embedded broker alone, through its HTTP port (`broker` scenario): pushes of 10 and
//! pop(10) + batch ack at `clients` callers, at several backlog sizes and lane (FIFO group)
//! counts, so a cost that grows with either shows as a falling rate.

use crate::load::{self, Limit};
use crate::scenarios::{Env, Named};
use crate::stats::RunResult;
use anyhow::Result;
use std::sync::Arc;
use std::time::Instant;

/// (lanes, backlog levels measured in order on one queue).
const GRID: &[(u64, &[u64])] = &[
    (256, &[1_000, 10_000, 100_000, 1_000_000]),
    (10, &[100_000]),
    (1_000, &[100_000]),
    (100_000, &[100_000]),
];

async fn fill(env: &Env, q: &str, lanes: u64, first: u64, count: u64) -> Result<f64> {
    let t = Instant::now();
    let mut n = first;
    while n < first + count {
        let k = 10_000.min(first + count - n);
        env.queen.push_spread(q, lanes, n, k).await?;
        n += k;
    }
    Ok(t.elapsed().as_secs_f64())
}

/// Pushes for `secs` or until `cap` messages, whichever first (the cap keeps a small
/// backlog small).
async fn push_run(env: &Env, q: &Arc<String>, lanes: u64, base: u64, cap: u64) -> RunResult {
    let (queen, q) = (env.queen.clone(), q.clone());
    let clients = env.clients as u64;
    let limit = Limit {
        secs: env.secs,
        items: Some(cap),
    };
    load::run(env.clients, limit, u32::MAX, move |w, i| {
        let (queen, q) = (queen.clone(), q.clone());
        async move {
            let first = base + (i * clients + w as u64) * 10;
            queen.push_spread(&q, lanes, first, 10).await
        }
    })
    .await
}

async fn popack_run(env: &Env, q: &Arc<String>, budget: u64) -> RunResult {
    let (queen, q) = (env.queen.clone(), q.clone());
    let limit = Limit {
        secs: env.secs,
        items: Some(budget),
    };
    load::run(env.clients, limit, 20, move |_, _| {
        let (queen, q) = (queen.clone(), q.clone());
        async move {
            match queen.pop_batch(&q, 10).await? {
                Some(c) => queen.ack_batch(&c).await,
                None => Ok(0),
            }
        }
    })
    .await
}

/// The grid, or `BENCH_BROKER_GRID="lanes:level,level;lanes:level"` to measure part of it
/// (e.g. under a profiler).
fn grid() -> Vec<(u64, Vec<u64>)> {
    let parse = |spec: &str| -> Option<Vec<(u64, Vec<u64>)>> {
        spec.split(';')
            .map(|row| {
                let (lanes, levels) = row.split_once(':')?;
                let levels = levels
                    .split(',')
                    .map(|l| l.trim().parse().ok())
                    .collect::<Option<Vec<u64>>>()?;
                Some((lanes.trim().parse().ok()?, levels))
            })
            .collect()
    };
    match std::env::var("BENCH_BROKER_GRID")
        .ok()
        .and_then(|s| parse(&s))
    {
        Some(g) => g,
        None => GRID.iter().map(|(l, v)| (*l, v.to_vec())).collect(),
    }
}

pub async fn broker(env: &Env, run: usize) -> Result<Named> {
    let mut out = Vec::new();
    let mut next = 0u64;
    for (lanes, levels) in &grid() {
        let q = Arc::new(format!("bench-{}-broker-{lanes}-{run}", env.tag));
        let mut stored = 0u64;
        for &level in levels {
            if stored < level {
                let secs = fill(env, &q, *lanes, next, level - stored).await?;
                eprintln!("filled {q} to {level} in {secs:.1} s");
                next += level - stored;
                stored = level;
            }
            // Pop + ack first, taking at most half the level, then put back what it took.
            let r = popack_run(env, &q, (level / 2).max(1)).await;
            let taken = r.items;
            out.push((
                format!(
                    "{lanes} lanes @{level}: pop(10) + ack batch x{}",
                    env.clients
                ),
                r,
            ));
            fill(env, &q, *lanes, next, taken).await?;
            next += taken;
            let p = push_run(env, &q, *lanes, next, level.max(20_000)).await;
            next += (p.calls + env.clients as u64) * 10;
            stored += p.items;
            out.push((
                format!("{lanes} lanes @{level}: push of 10 x{}", env.clients),
                p,
            ));
        }
        let _ = env.queen.delete_queue(&q).await;
    }
    Ok(out)
}
