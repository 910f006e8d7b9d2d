//! The 23 SQS actions. (Stub.)
