//! A single-threaded executor driven by proxy-wasm callbacks: one task (the service future)
//! per HTTP context, polled when its request is complete and again whenever something it
//! waits on happens — a broker call's answer (`on_http_call_response`) or a pause's
//! deadline (`on_tick`). Nothing blocks: between callbacks the VM serves other streams.
//!
//! Leaf futures (a broker call, a pause) keep the waker they were polled with and wake it
//! when their event arrives, so combinators that re-poll only woken children (`join_all`
//! over many receives) see the progress; the task itself is then re-polled from the
//! callback that delivered the event.

use crate::http::{Response, TransportError};
use proxy_wasm::hostcalls;
use proxy_wasm::types::{BufferType, MapType};
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

pub type Task = Pin<Box<dyn Future<Output = Response>>>;

/// How often `on_tick` runs while a pause is pending; off otherwise.
const TICK_MS: u64 = 10;

/// One dispatched broker call, by its token.
struct Call {
    /// The HTTP context whose task waits for it.
    owner: u32,
    started_ms: i64,
    timeout_ms: u64,
    waker: Option<Waker>,
    answer: Option<Result<Response, TransportError>>,
}

struct Timer {
    deadline_ms: i64,
    owner: u32,
    waker: Waker,
}

#[derive(Default)]
struct Exec {
    /// HTTP context id → its task; absent while it is being polled.
    tasks: HashMap<u32, Task>,
    /// The context whose task is being polled: leaf futures register under it.
    polling: Option<u32>,
    calls: HashMap<u32, Call>,
    timers: Vec<Timer>,
}

thread_local! {
    static EXEC: RefCell<Exec> = RefCell::new(Exec::default());
}

/// Milliseconds since the Unix epoch, from the host's clock.
pub fn now_ms() -> i64 {
    hostcalls::get_current_time()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

/// Starts `task` for HTTP context `id` and polls it once; its output answers the client.
pub fn spawn(id: u32, task: Task) {
    EXEC.with(|e| e.borrow_mut().tasks.insert(id, task));
    run(id);
}

/// The context is gone (the client left, or the stream ended): its task is dropped unpolled.
pub fn forget(id: u32) {
    let task = EXEC.with(|e| {
        let mut e = e.borrow_mut();
        e.timers.retain(|t| t.owner != id);
        e.calls.retain(|_, c| c.owner != id);
        e.tasks.remove(&id)
    });
    // Dropped outside the borrow: a future's own Drop may look at the executor.
    drop(task);
}

/// Polls the task of context `id`, if it still has one; sends its response when done.
fn run(id: u32) {
    let Some(mut task) = EXEC.with(|e| e.borrow_mut().tasks.remove(&id)) else {
        return;
    };
    // The callback that got here may be another context's (the root's tick): the local
    // response and any broker call must be the stream's.
    let _ = hostcalls::set_effective_context(id);
    EXEC.with(|e| e.borrow_mut().polling = Some(id));
    let polled = task.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    EXEC.with(|e| e.borrow_mut().polling = None);
    match polled {
        Poll::Ready(response) => {
            drop(task);
            super::respond(response);
        }
        Poll::Pending => {
            EXEC.with(|e| e.borrow_mut().tasks.insert(id, task));
        }
    }
}

/// Registers a dispatched call of the task being polled.
pub fn register_call(token: u32, timeout_ms: u64) {
    EXEC.with(|e| {
        let mut e = e.borrow_mut();
        let owner = e.polling.unwrap_or(0);
        e.calls.insert(
            token,
            Call {
                owner,
                started_ms: now_ms(),
                timeout_ms,
                waker: None,
                answer: None,
            },
        );
    });
}

/// The answer of call `token`, once arrived; until then the waker is kept.
pub fn poll_call(token: u32, waker: &Waker) -> Poll<Result<Response, TransportError>> {
    EXEC.with(|e| {
        let mut e = e.borrow_mut();
        let Some(call) = e.calls.get_mut(&token) else {
            return Poll::Ready(Err(TransportError::Unreachable("call forgotten".into())));
        };
        match call.answer.take() {
            Some(answer) => {
                e.calls.remove(&token);
                Poll::Ready(answer)
            }
            None => {
                call.waker = Some(waker.clone());
                Poll::Pending
            }
        }
    })
}

/// A call's future was dropped before its answer (its task finished or was forgotten).
pub fn abandon_call(token: u32) {
    EXEC.with(|e| {
        if let Ok(mut e) = e.try_borrow_mut() {
            e.calls.remove(&token);
        }
    });
}

/// `on_http_call_response`, from whichever context the host delivered it to: the answer
/// is read now (the host keeps it only during this callback) and the owner's task re-polled.
pub fn on_answer(token: u32, num_headers: usize, body_size: usize) {
    let Some((owner, started_ms, timeout_ms)) = EXEC.with(|e| {
        e.borrow()
            .calls
            .get(&token)
            .map(|c| (c.owner, c.started_ms, c.timeout_ms))
    }) else {
        return; // its task is gone
    };
    let answer = read_answer(num_headers, body_size, started_ms, timeout_ms);
    let waker = EXEC.with(|e| {
        let mut e = e.borrow_mut();
        let call = e.calls.get_mut(&token)?;
        call.answer = Some(answer);
        call.waker.take()
    });
    if let Some(w) = waker {
        w.wake();
    }
    run(owner);
}

/// A call the host could not complete comes back without headers (Envoy: a reset, no
/// healthy host, or the call's timeout); it timed out if its time had run out.
fn read_answer(
    num_headers: usize,
    body_size: usize,
    started_ms: i64,
    timeout_ms: u64,
) -> Result<Response, TransportError> {
    let headers = if num_headers == 0 {
        Vec::new()
    } else {
        hostcalls::get_map(MapType::HttpCallResponseHeaders).unwrap_or_default()
    };
    let status = headers
        .iter()
        .find(|(k, _)| k == ":status")
        .and_then(|(_, v)| v.trim().parse::<u16>().ok());
    let Some(status) = status else {
        let elapsed = now_ms().saturating_sub(started_ms);
        return Err(if elapsed >= timeout_ms as i64 {
            TransportError::Timeout
        } else {
            TransportError::Unreachable(
                "the gateway answered the broker call without a status".into(),
            )
        });
    };
    let body = if body_size == 0 {
        Vec::new()
    } else {
        hostcalls::get_buffer(BufferType::HttpCallResponseBody, 0, body_size)
            .ok()
            .flatten()
            .unwrap_or_default()
    };
    let headers = headers
        .into_iter()
        .filter(|(k, _)| !k.starts_with(':'))
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect();
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// A pause of the task being polled, until `deadline_ms`: ticks run while one is pending.
pub fn add_timer(deadline_ms: i64, waker: &Waker) {
    let first = EXEC.with(|e| {
        let mut e = e.borrow_mut();
        let owner = e.polling.unwrap_or(0);
        let first = e.timers.is_empty();
        e.timers.push(Timer {
            deadline_ms,
            owner,
            waker: waker.clone(),
        });
        first
    });
    if first {
        let _ = hostcalls::set_tick_period(Duration::from_millis(TICK_MS));
    }
}

/// `on_tick` (root context): wakes and re-polls the tasks whose pauses are over.
pub fn on_tick() {
    let now = now_ms();
    let (due, none_left) = EXEC.with(|e| {
        let mut e = e.borrow_mut();
        let (due, left): (Vec<Timer>, Vec<Timer>) =
            e.timers.drain(..).partition(|t| t.deadline_ms <= now);
        e.timers = left;
        (due, e.timers.is_empty())
    });
    if none_left {
        let _ = hostcalls::set_tick_period(Duration::ZERO);
    }
    let mut owners: Vec<u32> = Vec::new();
    for t in due {
        t.waker.wake();
        if !owners.contains(&t.owner) {
            owners.push(t.owner);
        }
    }
    for owner in owners {
        run(owner);
    }
}
