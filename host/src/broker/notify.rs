//! Wakes long-polling pops: one `Notify` per queue name, poked after a commit that made
//! messages claimable there (push, transaction push, timer fire, lease release or expiry).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// More wake-ups than this for one push is more parked pops than any caller runs.
const WAKE_CAP: usize = 256;

#[derive(Default)]
pub struct Notifier {
    queues: Mutex<HashMap<String, Arc<Notify>>>,
    /// Poked when timers change, so the timer sweeper can re-plan its sleep.
    pub timers: Notify,
    /// Poked at shutdown: every waiter returns.
    pub closing: Notify,
}

impl Notifier {
    pub fn queue(&self, name: &str) -> Arc<Notify> {
        let mut m = match self.queues.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        m.entry(name.to_string()).or_default().clone()
    }

    /// Wakes every pop parked on the queue (a lease released or expired, timers fired).
    pub fn wake(&self, name: &str) {
        if let Some(n) = self.find(name) {
            n.notify_waiters();
        }
    }

    /// Wakes at most `n` of the pops parked on the queue, one per message pushed: a pop takes
    /// at least one message, so waking every waiter for one message only makes the rest
    /// claim nothing and park again (each claim a write on the single writer thread). A
    /// woken pop that is gone passes its wake-up on (tokio's `Notified` does that on drop).
    pub fn wake_some(&self, name: &str, n: usize) {
        let Some(notify) = self.find(name) else {
            return;
        };
        for _ in 0..n.min(WAKE_CAP) {
            notify.notify_one();
        }
    }

    fn find(&self, name: &str) -> Option<Arc<Notify>> {
        let m = match self.queues.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        m.get(name).cloned()
    }

    pub fn wake_all<S: AsRef<str>>(&self, names: &[S]) {
        for n in names {
            self.wake(n.as_ref());
        }
    }
}
