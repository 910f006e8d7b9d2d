//! The 17 SNS actions and filter policies. (Stub.)

pub mod filter;
