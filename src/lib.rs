//! queen-sqs: Amazon SQS + SNS, wire compatible, over the Queen broker.
//!
//! Everything here but `component` is plain Rust with no I/O: a request comes in as
//! [`http::Request`], leaves as [`http::Response`], and the broker is reached through
//! the [`http::Transport`] trait. The wasm component supplies that trait over
//! `wasi:http`; native tests supply it over loopback HTTP to the embedded broker.

pub mod auth;
pub mod calendar;
pub mod config;
pub mod ctx;
pub mod http;
pub mod model;
pub mod queen;
pub mod service;
pub mod sns;
pub mod sqs;
pub mod wire;

#[cfg(all(target_arch = "wasm32", target_env = "p2"))]
mod component;
#[cfg(all(target_arch = "wasm32", feature = "proxy-wasm"))]
mod gateway;
