//! The embedded Queen-compatible broker. (Stub.)
