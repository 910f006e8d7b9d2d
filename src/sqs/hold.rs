//! How a delivered message is held until its visibility ends, read off its receipt
//! handle: the one branch every verb on a delivery takes (delete, change of visibility,
//! and their batches). A new way of holding a message is a new variant here, and the
//! compiler then names every verb that has to learn it.
//!
//! - `Timer` (standard queues): the receive took the message out of its lane and a
//!   visibility timer carries its copy back (`visibility`).
//! - `Lease` (standard queues): the message is held by its lane's broker lease: a message
//!   too large for a timer in a lane of its own, or a handle minted before timers.
//! - `Claim` (FIFO queues): a run of one group under one lease, settled through the
//!   group's record (`claims`).

use super::registry::QueueRecord;
use crate::model::ReceiptHandle;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    Timer = 0,
    Lease = 1,
    Claim = 2,
}

impl Hold {
    /// Every kind, in the order of their discriminants (an index per kind).
    pub const ALL: [Hold; 3] = [Hold::Timer, Hold::Lease, Hold::Claim];

    pub fn of(q: &QueueRecord, h: &ReceiptHandle) -> Hold {
        if q.fifo {
            Hold::Claim
        } else if h.timer_key.is_some() {
            Hold::Timer
        } else {
            Hold::Lease
        }
    }
}
