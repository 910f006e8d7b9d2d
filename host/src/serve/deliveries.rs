//! The SNS delivery loop: the POSTs to HTTP/S subscribers are made by the component's
//! delivery route (`queen_sqs::sns::webhook`); the component has no thread to call it, so
//! the host does, in process. One task calls it: as a one-second long poll while the
//! outbox is empty (one broker pop a second when idle), at once again while calls find
//! work. Each call answers as soon as it has taken its POSTs (up to ten) and makes them
//! afterwards, in its own instance. The loop holds a permit per POST in flight
//! (`QUEEN_SQS_SNS_POSTS_IN_FLIGHT`) until the instance is done: a subscriber slow to
//! answer holds the permits of its own POSTs, and the others go on while permits remain.
//! A call takes an instance slot as a request does, but it is not a client's request, so it
//! is neither counted in the request metrics nor written to the request log (its broker
//! calls are counted as broker calls). Every replica runs its loop; they share the outbox
//! as SQS consumers share a queue.
//!
//! The same calls carry the component's clock-driven work: once a second a call also asks
//! the route to step every running message move task (`queen_sqs::sqs::movetasks`), which
//! on SQS runs without anyone listing it. With the loop off (`0` POSTs in flight) tasks
//! move only inside the requests that name them.
//!
//! The route asks for the deployment's delivery token: `QUEEN_SQS_DELIVERY_TOKEN` when it is
//! set (a runtime without this loop calls the route with it), otherwise one made at start
//! and known to this host alone.

use super::server::Server;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

pub const TOKEN_VAR: &str = "QUEEN_SQS_DELIVERY_TOKEN";
const IN_FLIGHT_VAR: &str = "QUEEN_SQS_SNS_POSTS_IN_FLIGHT";
/// POSTs in flight at once unless `QUEEN_SQS_SNS_POSTS_IN_FLIGHT` says (0: no loop).
const DEFAULT_IN_FLIGHT: usize = 160;
/// A call takes up to this many POSTs: the least a loop can have in flight.
const PER_CALL: usize = 10;
const MAX_IN_FLIGHT: usize = 5000;
/// The pause after a call that failed.
const AFTER_FAILURE: Duration = Duration::from_millis(500);
/// The long poll of a call while the outbox is empty, in seconds.
const WAIT_S: u64 = 1;
/// How often a call also steps the running move tasks.
const MOVE_TASKS_EVERY: Duration = Duration::from_secs(1);

/// The loop's settings.
#[derive(Debug, Clone)]
pub struct DeliveryLoop {
    in_flight: usize,
    token: String,
}

impl DeliveryLoop {
    /// From the environment; makes a token (and adds it to `env`, which the component
    /// reads) when none is set.
    pub fn from_env(env: &mut Vec<(String, String)>) -> Result<DeliveryLoop, String> {
        let in_flight = match env
            .iter()
            .rev()
            .find(|(k, v)| k == IN_FLIGHT_VAR && !v.trim().is_empty())
        {
            None => DEFAULT_IN_FLIGHT,
            Some((_, v)) => match v.trim().parse::<usize>() {
                Ok(n) if n == 0 || (PER_CALL..=MAX_IN_FLIGHT).contains(&n) => n,
                _ => {
                    return Err(format!(
                        "{IN_FLIGHT_VAR} must be 0 (no deliveries) or an integer from {PER_CALL} to {MAX_IN_FLIGHT}, got {v:?}"
                    ))
                }
            },
        };
        let set = env
            .iter()
            .rev()
            .find(|(k, v)| k == TOKEN_VAR && !v.trim().is_empty())
            .map(|(_, v)| v.trim().to_string());
        let token = match set {
            Some(t) => t,
            None => {
                let mut bytes = [0u8; 24];
                getrandom::fill(&mut bytes).map_err(|e| format!("no randomness: {e}"))?;
                let t: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                env.push((TOKEN_VAR.to_string(), t.clone()));
                t
            }
        };
        Ok(DeliveryLoop { in_flight, token })
    }

    /// Starts the loop, calling the route of `server`; it stops when the answer is dropped.
    pub fn spawn(&self, server: Arc<Server>) -> Running {
        if self.in_flight == 0 {
            return Running(Vec::new());
        }
        let permits = Arc::new(Semaphore::new(self.in_flight));
        let token = self.token.clone();
        let task = tokio::spawn(async move {
            let mut wait_s = WAIT_S;
            let mut moves_due = tokio::time::Instant::now();
            loop {
                let Ok(mut room) = permits.clone().acquire_many_owned(PER_CALL as u32).await else {
                    return;
                };
                let started = tokio::time::Instant::now();
                let step_moves = started >= moves_due;
                if step_moves {
                    moves_due = started + MOVE_TASKS_EVERY;
                }
                let (done, finished) = tokio::sync::oneshot::channel::<()>();
                match server
                    .clone()
                    .call_delivery_route(&token, wait_s, step_moves, done)
                    .await
                {
                    Some(n) if n > 0 => {
                        // The room of the POSTs taken is held until their instance is done.
                        if let Some(held) = room.split(n.min(PER_CALL as u64) as usize) {
                            tokio::spawn(async move {
                                let _ = finished.await;
                                drop(held);
                            });
                        }
                        wait_s = 0;
                    }
                    Some(_) => {
                        // An outbox the broker does not have yet answers at once: still no
                        // more than one call a poll.
                        if wait_s > 0 {
                            tokio::time::sleep_until(started + Duration::from_secs(wait_s)).await;
                        }
                        wait_s = WAIT_S;
                    }
                    None => tokio::time::sleep(AFTER_FAILURE).await,
                }
                drop(room);
            }
        });
        Running(vec![task])
    }
}

/// How many POSTs a call of the route took from the outbox, read from its answer.
pub fn taken(answer: &[u8]) -> Option<u64> {
    let worked: serde_json::Value = serde_json::from_slice(answer).ok()?;
    Some(
        worked
            .as_object()?
            .values()
            .filter_map(serde_json::Value::as_u64)
            .sum(),
    )
}

/// The loop's tasks, stopped when this is dropped (with the server that started them).
pub struct Running(Vec<tokio::task::JoinHandle<()>>);

impl Drop for Running {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}
