//! The wasmtime engine, the pooling allocator, and the pre-instantiated component.

use super::outgoing::Outgoing;
use anyhow::{Context, Result};
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// How many requests other than receives can be inside the component at once (each holds
/// one instance slot).
pub const MAX_CONCURRENT_INSTANCES: u32 = 1000;

/// How many receives (long polls) can be inside the component at once, on slots of their
/// own: a waiting poll holds an instance suspended on its broker call (no thread), so
/// thousands may wait while sends and deletes keep theirs (issue 21, item 4).
pub const MAX_LONG_POLLS: u32 = 10_000;

/// How often the engine's epoch advances: the grain of the guest's CPU budget.
pub const EPOCH_TICK: std::time::Duration = std::time::Duration::from_millis(10);

/// The per-request store's data.
pub struct State {
    pub(crate) wasi: WasiCtx,
    pub(crate) http: WasiHttpCtx,
    pub(crate) table: ResourceTable,
    pub(crate) outgoing: Outgoing,
    /// Epoch ticks the current request has run guest code through (see [`arm_budget`]).
    pub(crate) ticks_run: u64,
}

/// Bounds the guest's work on one request: the epoch advances every [`EPOCH_TICK`], and
/// each time it passes the store's deadline WHILE guest code runs, the callback counts a
/// tick and yields to the runtime (so a busy guest never holds a worker thread). A guest
/// that waits on the broker runs no code and is charged one tick when it resumes; a long
/// poll costs next to nothing. Past `ticks` the call traps: the request is answered 500,
/// its instance is dropped and its slot is freed, as for any trap.
pub fn arm_budget(store: &mut wasmtime::Store<State>, ticks: u64) {
    store.data_mut().ticks_run = 0;
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |mut ctx| {
        let run = &mut ctx.data_mut().ticks_run;
        *run += 1;
        if *run > ticks {
            return Err(wasmtime::Error::msg(format!(
                "the request ran guest code past its budget of {} ms",
                ticks * EPOCH_TICK.as_millis() as u64
            )));
        }
        Ok(wasmtime::UpdateDeadline::Yield(1))
    });
}

/// Advances the engine's epoch every [`EPOCH_TICK`] for as long as the engine lives.
fn tick_epochs(engine: &Engine) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("queen-sqs-epoch".into())
        .spawn(move || loop {
            std::thread::sleep(EPOCH_TICK);
            match weak.upgrade() {
                Some(engine) => engine.increment_epoch(),
                None => return,
            }
        })
        .expect("the epoch thread starts");
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

/// Address space per linear memory: (reservation, guard).
/// A 4 GiB reservation lets compiled guest code drop its bounds checks; a smaller one makes
/// every guest load and store check, and CPU-heavy guest work (an SNS signature, SigV4,
/// JSON) ~1.6x slower. It is address space only: the pool's 11,064 slots take ~45 TiB of
/// the 128 TiB a 64-bit Linux process may map, none of it memory until a request uses it.
const FAST_MEMORY: (u64, u64) = (4 << 30, 32 << 20);
/// Where that much address space cannot be had (a `ulimit -v`, a 39-bit address space):
/// small reservations, bounds-checked code.
const SMALL_MEMORY: (u64, u64) = (256 << 20, 64 << 10);

fn engine() -> Result<Engine> {
    let engine = match engine_with(FAST_MEMORY) {
        Ok(engine) => engine,
        Err(e) => {
            eprintln!(
                "queen-sqs-host: 4 GiB memory reservations are not available ({e:#}); \
                 running the component with bounds-checked memories (slower)"
            );
            engine_with(SMALL_MEMORY)?
        }
    };
    tick_epochs(&engine);
    Ok(engine)
}

fn engine_with((reservation, guard): (u64, u64)) -> Result<Engine> {
    let mut pool = PoolingAllocationConfig::default();
    // Room for every request in flight (long polls on their own slots) plus the idle
    // instances kept for reuse. Every slot only reserves address space until it is used.
    let slots = MAX_CONCURRENT_INSTANCES + MAX_LONG_POLLS + super::instances::IDLE;
    pool.total_component_instances(slots);
    // Each call into the guest runs on a fiber stack of the pool; a waiting poll keeps its.
    pool.total_stacks(slots);
    pool.total_core_instances(slots * 4);
    pool.total_memories(slots);
    pool.total_tables(slots * 2);
    // A request body is at most 4 MiB; a handful of copies of it fit comfortably.
    pool.max_memory_size(128 << 20);
    let mut config = Config::new();
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    config.memory_reservation(reservation);
    config.memory_guard_size(guard);
    // Guest code checks the epoch, so a request's CPU is bounded (`arm_budget`).
    config.epoch_interruption(true);
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
