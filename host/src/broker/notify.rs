//! Wakes long-polling pops: one `Notify` per queue name, poked after a commit that made
//! messages claimable there (push, transaction push, timer fire, lease release or expiry).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

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

    pub fn wake(&self, name: &str) {
        let n = {
            let m = match self.queues.lock() {
                Ok(m) => m,
                Err(p) => p.into_inner(),
            };
            m.get(name).cloned()
        };
        if let Some(n) = n {
            n.notify_waiters();
        }
    }

    pub fn wake_all<S: AsRef<str>>(&self, names: &[S]) {
        for n in names {
            self.wake(n.as_ref());
        }
    }
}
