//! A single-threaded executor over `wasi:io/poll`: concurrency inside one request
//! (ReceiveMessage's parallel pops, batch fan-outs) comes from waiting on several
//! outgoing-response pollables at once, never from threads.

use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use wasip2::io::poll::{poll, Pollable};

thread_local! {
    static WAITING: RefCell<Vec<(Pollable, Waker)>> = const { RefCell::new(Vec::new()) };
}

/// Called by a leaf future that is pending on `pollable`: wakes `waker` once it is ready.
pub fn wait_on(pollable: Pollable, waker: &Waker) {
    WAITING.with(|w| w.borrow_mut().push((pollable, waker.clone())));
}

pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            WAITING.with(|w| w.borrow_mut().clear());
            return out;
        }
        let waiting = WAITING.with(|w| std::mem::take(&mut *w.borrow_mut()));
        if waiting.is_empty() {
            // Pending with nothing to wait on would spin for ever; it is a bug in a leaf future.
            panic!("future pending without a registered pollable");
        }
        let refs: Vec<&Pollable> = waiting.iter().map(|(p, _)| p).collect();
        for ready in poll(&refs) {
            waiting[ready as usize].1.wake_by_ref();
        }
        // The pollables are dropped here, before the resources they watch.
    }
}
