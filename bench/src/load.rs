//! The concurrent load loop: N workers repeat one operation until a deadline or until a
//! shared message budget is used up, timing every call.

use crate::stats::{micros, RunResult};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Stop rule: whichever comes first.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub secs: f64,
    /// Stop once this many items are done (None: time only).
    pub items: Option<u64>,
}

/// What one call did: items completed (0 = nothing to do, e.g. an empty receive).
pub type Step = anyhow::Result<u64>;

/// Runs `workers` loops of `op(worker, iteration)`. Errors are counted, and a worker that
/// fails 20 times in a row stops (so a broken endpoint cannot spin for the whole run).
/// A worker also stops after `empty_limit` consecutive calls that completed nothing.
pub async fn run<F, Fut>(workers: usize, limit: Limit, empty_limit: u32, op: F) -> RunResult
where
    F: Fn(usize, u64) -> Fut + Send + Sync + Clone + 'static,
    Fut: Future<Output = Step> + Send,
{
    let items = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let cpu = crate::cpu::snapshot();
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(limit.secs);
    let last_done = Arc::new(std::sync::Mutex::new(started));
    let mut tasks = Vec::new();
    for w in 0..workers {
        let (op, items, stop, last_done) =
            (op.clone(), items.clone(), stop.clone(), last_done.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let (mut calls, mut errors, mut fails, mut empties) = (0u64, 0u64, 0u32, 0u32);
            let mut empty_calls = 0u64;
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                let t = Instant::now();
                let r = op(w, i).await;
                let d = t.elapsed();
                i += 1;
                calls += 1;
                match r {
                    Ok(n) => {
                        fails = 0;
                        lat.push(micros(d));
                        if n == 0 {
                            empties += 1;
                            empty_calls += 1;
                            if empties >= empty_limit {
                                break;
                            }
                            continue;
                        }
                        empties = 0;
                        let total = items.fetch_add(n, Ordering::Relaxed) + n;
                        if let Ok(mut l) = last_done.lock() {
                            *l = Instant::now();
                        }
                        if limit.items.is_some_and(|cap| total >= cap) {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    Err(e) => {
                        errors += 1;
                        fails += 1;
                        if errors <= 3 {
                            eprintln!("worker {w}: {e:#}");
                        }
                        if fails >= 20 {
                            break;
                        }
                    }
                }
            }
            (lat, calls, errors, empty_calls)
        }));
    }
    let mut out = RunResult::default();
    for t in tasks {
        if let Ok((lat, calls, errors, empty_calls)) = t.await {
            out.lat_us.extend(lat);
            out.calls += calls;
            out.errors += errors;
            out.empty_calls += empty_calls;
        }
    }
    // A budgeted run ends at its last completed item; a timed run when every worker is back
    // (each counts the call it had in flight at the deadline).
    let end = match limit.items {
        Some(_) => last_done
            .lock()
            .map(|l| *l)
            .unwrap_or_else(|_| Instant::now()),
        None => Instant::now(),
    };
    out.secs = end.duration_since(started).as_secs_f64().max(1e-9);
    (out.client_cpu, out.host_cpu) = crate::cpu::since(cpu);
    out.items = items.load(Ordering::Relaxed);
    out.lat_us.sort_unstable();
    out
}
