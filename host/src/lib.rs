//! queen-sqs-host: serves the queen-sqs component, and embeds a Queen-compatible broker.

pub mod broker;
#[cfg(feature = "serve")]
pub mod cli;
#[cfg(feature = "serve")]
pub mod serve;
