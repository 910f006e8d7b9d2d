//! The wasmtime engine, the pooling allocator, and the pre-instantiated component.

use super::outgoing::Outgoing;
use anyhow::{Context, Result};
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// How many requests can be inside the component at once (each holds one instance slot).
pub const MAX_CONCURRENT_INSTANCES: u32 = 1000;

/// The per-request store's data.
pub struct State {
    pub(crate) wasi: WasiCtx,
    pub(crate) http: WasiHttpCtx,
    pub(crate) table: ResourceTable,
    pub(crate) outgoing: Outgoing,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for State {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.outgoing,
        }
    }
}

/// A compiled, linked, pre-instantiated component.
#[derive(Clone)]
pub struct Loaded {
    pub engine: Engine,
    pub pre: ProxyPre<State>,
}

fn engine() -> Result<Engine> {
    let mut pool = PoolingAllocationConfig::default();
    // Room for every request in flight plus the idle instances kept for reuse.
    let slots = MAX_CONCURRENT_INSTANCES + super::instances::IDLE;
    pool.total_component_instances(slots);
    pool.total_core_instances(slots * 4);
    pool.total_memories(slots);
    pool.total_tables(slots * 2);
    // A request body is at most 4 MiB; a handful of copies of it fit comfortably.
    pool.max_memory_size(128 << 20);
    let mut config = Config::new();
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    // Reserve less address space per memory than the 4 GiB default: slots are many, memories small.
    config.memory_reservation(256 << 20);
    config.memory_guard_size(64 << 10);
    Ok(Engine::new(&config)?)
}

/// Compiles the component once and links it against WASI 0.2 and wasi:http.
pub fn load(wasm: &[u8]) -> Result<Loaded> {
    let engine = engine()?;
    let component = Component::new(&engine, wasm)
        .map_err(anyhow::Error::from)
        .context("compiling the queen-sqs component")?;
    let mut linker: Linker<State> = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    let pre = ProxyPre::new(linker.instantiate_pre(&component)?)?;
    Ok(Loaded { engine, pre })
}
