//! queen-sqs-host: serves the queen-sqs component, and embeds a Queen-compatible broker.
pub mod broker;
