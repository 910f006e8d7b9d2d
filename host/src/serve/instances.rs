//! Component instances kept for reuse.
//!
//! A fresh instance per request costs about 124 µs of host CPU (the profile in
//! `bench/results/profile-20261130.md`), a fifth of a whole SendMessage. An instance that
//! answered a request cleanly is kept and handed the next one. The component holds nothing
//! between requests that a fresh instance would not rebuild, and it stays correct when a
//! runtime gives it a fresh instance per request (`wasmtime serve`, Spin).
//!
//! - Only an instance whose call returned `Ok` and whose resource table is empty again goes
//!   back; a trap, an error or anything left behind drops it.
//! - An instance is retired after [`MAX_USES`] requests, so nothing it holds can grow for ever.
//! - At most [`IDLE`] instances wait; the pooling allocator has room for them on top of the
//!   requests in flight.
//! - `QUEEN_SQS_REUSE_INSTANCES=0` turns reuse off (a fresh instance per request).

use super::engine::{Loaded, State};
use anyhow::Result;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime::Store;
use wasmtime_wasi_http::p2::bindings::Proxy;
use wasmtime_wasi_http::RequestOptions;

/// Idle instances kept at most.
pub const IDLE: u32 = 64;
/// Requests one instance serves before it is retired.
pub const MAX_USES: u32 = 10_000;
/// The guest CPU an instantiation may take, in epoch ticks (10 s).
const INSTANTIATION_TICKS: u64 = 1000;

/// One instantiated component and its store.
pub struct Instance {
    pub store: Store<State>,
    pub proxy: Proxy,
    uses: u32,
}

pub struct Instances {
    idle: Mutex<Vec<Instance>>,
    enabled: bool,
    created: AtomicU64,
}

impl Instances {
    pub fn new(enabled: bool) -> Instances {
        Instances {
            idle: Mutex::new(Vec::new()),
            enabled,
            created: AtomicU64::new(0),
        }
    }

    /// Reuse is on unless `QUEEN_SQS_REUSE_INSTANCES` is `0`, `false` or `off`.
    pub fn from_env(env: &[(String, String)]) -> Instances {
        let off = env
            .iter()
            .rev()
            .find(|(k, _)| k == "QUEEN_SQS_REUSE_INSTANCES")
            .is_some_and(|(_, v)| matches!(v.trim(), "0" | "false" | "off"));
        Instances::new(!off)
    }

    /// An idle instance, or a new one whose store holds `state()`.
    pub async fn take(&self, loaded: &Loaded, state: impl FnOnce() -> State) -> Result<Instance> {
        if let Some(instance) = self.lock().pop() {
            return Ok(instance);
        }
        let mut store = Store::new(&loaded.engine, state());
        // Instantiating runs guest code too; each request re-arms its own budget.
        super::engine::arm_budget(&mut store, INSTANTIATION_TICKS);
        let proxy = loaded.pre.instantiate_async(&mut store).await?;
        self.created.fetch_add(1, Ordering::Relaxed);
        Ok(Instance {
            store,
            proxy,
            uses: 0,
        })
    }

    /// Takes back an instance after a call that returned `Ok`.
    pub fn give_back(&self, mut instance: Instance) {
        instance.uses += 1;
        drop_leaked_request_options(&mut instance.store.data_mut().table);
        if !self.enabled || instance.uses >= MAX_USES || !instance.store.data().table.is_empty() {
            return;
        }
        let mut idle = self.lock();
        if idle.len() < IDLE as usize {
            idle.push(instance);
        }
    }

    /// Instances made so far.
    pub fn created(&self) -> u64 {
        self.created.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Instance>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// wasmtime-wasi-http 48's outgoing `handle` reads a request's options and never deletes
/// them, although the guest gave up ownership: one table entry per broker call. A fresh
/// store per request never noticed; a reused one must drop them.
fn drop_leaked_request_options(table: &mut ResourceTable) {
    let mut left = table
        .iter_mut()
        .filter(|e| e.is::<RequestOptions>())
        .count();
    let mut rep = 0u32;
    while left > 0 && rep < 1 << 16 {
        let options = Resource::<RequestOptions>::new_own(rep);
        if table.get(&options).is_ok() {
            let _ = table.delete(options);
            left -= 1;
        }
        rep += 1;
    }
}
