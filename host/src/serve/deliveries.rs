//! The SNS delivery loop: the POSTs to HTTP/S subscribers are made by the component's
//! delivery route (`queen_sqs::sns::webhook`), which works through the outbox once per
//! call; the component has no thread to call it, so the host does. One task, the leader,
//! calls it as a one-second long poll, so an idle outbox costs one broker pop a second;
//! when a call finds work the other tasks are woken and call it with no wait, each until a
//! call finds nothing. The route is called in process: it takes an instance slot as a
//! request does, but it is not a client's request, so it is neither counted in the request
//! metrics nor written to the request log (its broker calls are counted as broker calls).
//! Every replica runs its loop; they share the outbox as SQS consumers share a queue.
//!
//! The route asks for the deployment's delivery token: `QUEEN_SQS_DELIVERY_TOKEN` when it is
//! set (a runtime without this loop calls the route with it), otherwise one made at start
//! and known to this host alone.

use super::server::Server;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

pub const TOKEN_VAR: &str = "QUEEN_SQS_DELIVERY_TOKEN";
const WORKERS_VAR: &str = "QUEEN_SQS_SNS_DELIVERY_WORKERS";
/// Tasks calling the route unless `QUEEN_SQS_SNS_DELIVERY_WORKERS` says (0: none).
const DEFAULT_WORKERS: usize = 4;
const MAX_WORKERS: usize = 64;
/// The pause after a call that failed.
const AFTER_FAILURE: Duration = Duration::from_millis(500);
/// The leader's long poll, in seconds.
const LEADER_WAIT_S: u64 = 1;

/// The loop's settings.
#[derive(Debug, Clone)]
pub struct DeliveryLoop {
    workers: usize,
    token: String,
}

impl DeliveryLoop {
    /// From the environment; makes a token (and adds it to `env`, which the component
    /// reads) when none is set.
    pub fn from_env(env: &mut Vec<(String, String)>) -> Result<DeliveryLoop, String> {
        let workers = match env
            .iter()
            .rev()
            .find(|(k, v)| k == WORKERS_VAR && !v.trim().is_empty())
        {
            None => DEFAULT_WORKERS,
            Some((_, v)) => match v.trim().parse::<usize>() {
                Ok(n) if n <= MAX_WORKERS => n,
                _ => {
                    return Err(format!(
                        "{WORKERS_VAR} must be an integer from 0 to {MAX_WORKERS}, got {v:?}"
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
        Ok(DeliveryLoop { workers, token })
    }

    /// Starts the tasks, calling the route of `server`; they stop when the answer is
    /// dropped.
    pub fn spawn(&self, server: Arc<Server>) -> Running {
        let work = Arc::new(Notify::new());
        let mut tasks = Vec::new();
        for i in 0..self.workers {
            let (server, token, work) = (server.clone(), self.token.clone(), work.clone());
            tasks.push(tokio::spawn(async move {
                loop {
                    if i > 0 {
                        work.notified().await;
                    }
                    let wait_s = if i == 0 { LEADER_WAIT_S } else { 0 };
                    loop {
                        let started = tokio::time::Instant::now();
                        match server.clone().call_delivery_route(&token, wait_s).await {
                            Some(0) if i == 0 => {
                                // An outbox the broker does not have yet answers at once:
                                // the leader still calls no more than once a poll.
                                let poll = Duration::from_secs(LEADER_WAIT_S);
                                tokio::time::sleep_until(started + poll).await;
                            }
                            Some(0) | None if i > 0 => break,
                            Some(_) => work.notify_waiters(),
                            None => tokio::time::sleep(AFTER_FAILURE).await,
                        }
                    }
                }
            }));
        }
        Running(tasks)
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
