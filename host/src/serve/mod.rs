//! Serving the component: one pre-instantiated component, instances reused across requests
//! (see `instances`).

mod cache;
mod console;
mod deliveries;
mod depths;
mod engine;
mod files;
mod instances;
mod metrics;
mod metrics_access;
mod outgoing;
mod request_log;
mod server;
mod switches;
mod tls;

pub use deliveries::DeliveryLoop;
pub use engine::{load, Loaded};
pub use files::raise_open_files_limit;
pub use outgoing::Outgoing;
pub use server::{serve, Limits, Server};
pub use switches::Switches;

/// The queen-sqs component, built for wasm32-wasip2 by build.rs and embedded here.
pub static COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/queen_sqs.wasm"));
