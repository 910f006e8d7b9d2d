//! The SNS delivery loop: the POSTs to HTTP/S subscribers are made by the component's
//! delivery route (`queen_sqs::sns::webhook`), which works through the outbox once per
//! call; the component has no thread to call it, so the host does, from a few tasks, each
//! calling again at once while there is work and every [`IDLE`] otherwise. The route is
//! reached through the host's own listener, so a delivery call is served, limited and
//! counted like any request. Every replica runs its loop; they share the outbox as SQS
//! consumers share a queue.
//!
//! The route asks for the deployment's delivery token: `QUEEN_SQS_DELIVERY_TOKEN` when it is
//! set (a runtime without this loop calls the route with it), otherwise one made at start
//! and known to this host alone.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use queen_sqs::sns::webhook::{ROUTE, TOKEN_HEADER};
use std::net::SocketAddr;
use std::time::Duration;

pub const TOKEN_VAR: &str = "QUEEN_SQS_DELIVERY_TOKEN";
const WORKERS_VAR: &str = "QUEEN_SQS_SNS_DELIVERY_WORKERS";
/// Tasks calling the route unless `QUEEN_SQS_SNS_DELIVERY_WORKERS` says (0: none).
const DEFAULT_WORKERS: usize = 4;
const MAX_WORKERS: usize = 64;
/// The pause after a call that found nothing to do, or failed.
const IDLE: Duration = Duration::from_millis(250);
/// A call makes its POSTs with a 15 s limit each, at once: this bounds one call.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

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

    /// Starts the tasks, calling the route on the host's own listener at `listening`;
    /// they stop when the answer is dropped.
    pub fn spawn(&self, listening: SocketAddr) -> Running {
        let mut target = listening;
        if target.ip().is_unspecified() {
            target.set_ip(if target.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            });
        }
        let client: Client<HttpConnector, Full<Bytes>> =
            Client::builder(TokioExecutor::new()).build(HttpConnector::new());
        let mut tasks = Vec::new();
        for _ in 0..self.workers {
            let (client, token) = (client.clone(), self.token.clone());
            tasks.push(tokio::spawn(async move {
                loop {
                    let taken = call(&client, target, &token).await.unwrap_or(0);
                    if taken == 0 {
                        tokio::time::sleep(IDLE).await;
                    }
                }
            }));
        }
        Running(tasks)
    }
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

/// One call of the route: how many POSTs it took from the outbox.
async fn call(
    client: &Client<HttpConnector, Full<Bytes>>,
    target: SocketAddr,
    token: &str,
) -> Option<u64> {
    let req = http::Request::post(format!("http://{target}{ROUTE}"))
        .header(TOKEN_HEADER, token)
        .body(Full::new(Bytes::new()))
        .ok()?;
    let resp = tokio::time::timeout(CALL_TIMEOUT, client.request(req))
        .await
        .ok()?
        .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let body = resp.into_body().collect().await.ok()?.to_bytes();
    let worked: serde_json::Value = serde_json::from_slice(&body).ok()?;
    let taken = worked
        .as_object()?
        .values()
        .filter_map(serde_json::Value::as_u64)
        .sum();
    Some(taken)
}
