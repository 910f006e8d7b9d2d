//! The listener: HTTP/1.1 with keep-alive, one fresh store and instance per request.
//!
//! Hardened against clients that send little or nothing (issue 10):
//! - a request head must arrive within `header_timeout` (hyper closes the connection);
//! - a head hyper parses but that names no usable authority is a 400 (HTTP/1.0 without
//!   `Host` is served, addressed by the listener's own address);
//! - the body is read HERE, before any component instance is taken, within
//!   `body_timeout` (408 and the connection closed otherwise); a body that ends before its
//!   declared length, or a chunked body without its last chunk, is a 400 and never reaches
//!   the component;
//! - instances are budgeted by a semaphore no larger than the pool, so the pool is never
//!   exhausted: a request that finds no slot within `SLOT_WAIT` is answered as a retryable
//!   throttle in its own protocol (SQS JSON, SQS Query, SNS), never a 500. Receives (long
//!   polls) have slots of their own, ten thousand by default, so sends, deletes and
//!   publishes are served however many receivers wait.

use super::console;
use super::deliveries::DeliveryLoop;
use super::depths::DepthCache;
use super::engine::{
    arm_budget, Loaded, State, EPOCH_TICK, MAX_CONCURRENT_INSTANCES, MAX_LONG_POLLS,
};
use super::instances::Instances;
use super::metrics::Metrics;
use super::metrics_access::{MetricsAccess, Viewer};
use super::outgoing::Outgoing;
use super::request_log::{Entry, RequestLog};
use super::switches::Switches;
use anyhow::Result;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper_util::rt::TokioTimer;
use queen_sqs::service::{TELL_HOST_HEADER, TELL_HOST_VAR};
use queen_sqs::wire;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::component::ResourceTable;
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpView};

/// How long a request waits for an instance slot before it is throttled.
const SLOT_WAIT: Duration = Duration::from_millis(250);

/// The listener's limits, from `QUEEN_SQS_HEADER_TIMEOUT_MS`, `QUEEN_SQS_BODY_TIMEOUT_MS`,
/// `QUEEN_SQS_MAX_INFLIGHT`, `QUEEN_SQS_MAX_LONG_POLLS` and the rest below (host-only
/// variables; the component ignores them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From the connection's first byte (or the end of the previous request) to the end of
    /// the request head.
    pub header_timeout: Duration,
    /// From the end of the head to the end of the body.
    pub body_timeout: Duration,
    /// Requests other than receives inside the component at once (at most
    /// [`MAX_CONCURRENT_INSTANCES`]).
    pub max_inflight: u32,
    /// Receives inside the component at once, on slots of their own (at most
    /// [`MAX_LONG_POLLS`]): a waiting poll never takes a send's slot.
    pub max_long_polls: u32,
    /// Guest CPU one request may use (`QUEEN_SQS_GUEST_CPU_MS`; 0 stops every request at
    /// the first tick it runs through, which is for tests). Waiting costs none of it.
    pub guest_cpu: Duration,
    /// Connections served at once (`QUEEN_SQS_MAX_CONNECTIONS`); past it the listener
    /// stops accepting until one closes (new ones wait in the kernel's backlog).
    pub max_connections: u32,
    /// Bytes of request bodies held in memory at once, all requests together, past the
    /// first 16 KiB of each (`QUEEN_SQS_BODY_BUDGET_MB`): bodies are read before anything
    /// is authenticated, so this (with 16 KiB per connection) is what unauthenticated
    /// clients can make the host hold. A body that finds the budget spent waits for room
    /// within the body timeout (408 after it).
    pub body_budget_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_inflight: MAX_CONCURRENT_INSTANCES,
            max_long_polls: MAX_LONG_POLLS,
            guest_cpu: Duration::from_secs(30),
            // Every long poll a connection, and room for everyone else on top.
            max_connections: 16_000,
            body_budget_bytes: 256 << 20,
        }
    }
}

impl Limits {
    /// Reads the limits from the configuration; an error names the variable to fix.
    pub fn from_env(env: &[(String, String)]) -> Result<Limits, String> {
        let mut limits = Limits::default();
        let get = |name: &str| {
            env.iter()
                .rev()
                .find(|(k, v)| k == name && !v.trim().is_empty())
                .map(|(_, v)| v.trim().to_string())
        };
        let ms = |name: &str, max: u64| -> Result<Option<Duration>, String> {
            match get(name) {
                None => Ok(None),
                Some(v) => match v.parse::<u64>() {
                    Ok(n) if (1..=max).contains(&n) => Ok(Some(Duration::from_millis(n))),
                    _ => Err(format!(
                        "{name} must be a whole number of milliseconds from 1 to {max}, got {v:?}"
                    )),
                },
            }
        };
        if let Some(d) = ms("QUEEN_SQS_HEADER_TIMEOUT_MS", 600_000)? {
            limits.header_timeout = d;
        }
        if let Some(d) = ms("QUEEN_SQS_BODY_TIMEOUT_MS", 600_000)? {
            limits.body_timeout = d;
        }
        if let Some(v) = get("QUEEN_SQS_GUEST_CPU_MS") {
            match v.parse::<u64>() {
                Ok(n) if n <= 3_600_000 => limits.guest_cpu = Duration::from_millis(n),
                _ => {
                    return Err(format!(
                        "QUEEN_SQS_GUEST_CPU_MS must be a whole number of milliseconds from 0 to 3600000, got {v:?}"
                    ))
                }
            }
        }
        if let Some(v) = get("QUEEN_SQS_MAX_CONNECTIONS") {
            match v.parse::<u32>() {
                Ok(n) if (1..=1_000_000).contains(&n) => limits.max_connections = n,
                _ => {
                    return Err(format!(
                        "QUEEN_SQS_MAX_CONNECTIONS must be an integer from 1 to 1000000, got {v:?}"
                    ))
                }
            }
        }
        // At least two of the largest bodies, so that one always fits.
        let min_mb = (2 * wire::MAX_BODY_BYTES) >> 20;
        if let Some(v) = get("QUEEN_SQS_BODY_BUDGET_MB") {
            match v.parse::<usize>() {
                Ok(n) if (min_mb..=1 << 20).contains(&n) => limits.body_budget_bytes = n << 20,
                _ => {
                    return Err(format!(
                        "QUEEN_SQS_BODY_BUDGET_MB must be a whole number of MiB from {min_mb} to 1048576, got {v:?}"
                    ))
                }
            }
        }
        if let Some(v) = get("QUEEN_SQS_MAX_INFLIGHT") {
            match v.parse::<u32>() {
                Ok(n) if (1..=MAX_CONCURRENT_INSTANCES).contains(&n) => limits.max_inflight = n,
                _ => {
                    return Err(format!(
                        "QUEEN_SQS_MAX_INFLIGHT must be an integer from 1 to {MAX_CONCURRENT_INSTANCES}, got {v:?}"
                    ))
                }
            }
        }
        if let Some(v) = get("QUEEN_SQS_MAX_LONG_POLLS") {
            match v.parse::<u32>() {
                Ok(n) if (1..=MAX_LONG_POLLS).contains(&n) => limits.max_long_polls = n,
                _ => {
                    return Err(format!(
                        "QUEEN_SQS_MAX_LONG_POLLS must be an integer from 1 to {MAX_LONG_POLLS}, got {v:?}"
                    ))
                }
            }
        }
        Ok(limits)
    }

    /// The guest CPU budget in epoch ticks.
    fn guest_ticks(&self) -> u64 {
        (self.guest_cpu.as_millis() / EPOCH_TICK.as_millis()) as u64
    }
}

/// What every request's instance is given.
pub struct Server {
    loaded: Loaded,
    /// The configuration, passed to the component as environment variables.
    env: Vec<(String, String)>,
    outgoing: Outgoing,
    limits: Limits,
    /// One permit per instance a request other than a receive may hold.
    slots: Arc<Semaphore>,
    /// One permit per instance a receive may hold.
    waiting_slots: Arc<Semaphore>,
    /// One permit per connection served.
    connections: Arc<Semaphore>,
    /// One permit per KiB of request body held (`Limits::body_budget_bytes`).
    body_budget: Arc<Semaphore>,
    /// Instances that answered a request, kept for the next.
    instances: Instances,
    /// `QUEEN_SQS_REQUEST_LOG`: one JSON line per answered request.
    request_log: Option<RequestLog>,
    /// Served at `GET /metrics`; shared with `outgoing`, which counts broker calls.
    metrics: Arc<Metrics>,
    /// Who sees the per-queue series of `/metrics`.
    metrics_access: MetricsAccess,
    /// The per-queue series' last broker read, shared by every scrape.
    depths: DepthCache,
    /// `QUEEN_SQS_METRICS` and `QUEEN_SQS_CONSOLE`.
    switches: Switches,
    /// Who calls the SNS delivery route (`deliveries`); started by [`serve`].
    deliveries: Option<DeliveryLoop>,
}

/// What a request holds while it is inside the component: its slot, of either kind.
struct Permits {
    _slot: OwnedSemaphorePermit,
    /// A delivery call's signal to the delivery loop (`deliveries`): dropped with the slot,
    /// when the call's instance is done with its POSTs.
    _delivery: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Server {
    /// A server whose limits come from `env` (a bad value falls back to the default with a
    /// line on stderr; the command line refuses it before it gets here).
    pub fn new(loaded: Loaded, env: Vec<(String, String)>, outgoing: Outgoing) -> Arc<Server> {
        let limits = Limits::from_env(&env).unwrap_or_else(|e| {
            eprintln!("queen-sqs-host: {e}; using the default");
            Limits::default()
        });
        Server::with_limits(loaded, env, outgoing, limits)
    }

    pub fn with_limits(
        loaded: Loaded,
        env: Vec<(String, String)>,
        outgoing: Outgoing,
        limits: Limits,
    ) -> Arc<Server> {
        let instances = Instances::from_env(&env);
        let request_log = RequestLog::from_env(&env).unwrap_or_else(|e| {
            eprintln!("queen-sqs-host: {e}; no request log");
            None
        });
        let switches = Switches::from_env(&env).unwrap_or_else(|e| {
            eprintln!("queen-sqs-host: {e}; using the default");
            Switches::default()
        });
        let depths = DepthCache::from_env(&env).unwrap_or_else(|e| {
            eprintln!("queen-sqs-host: {e}; using the default");
            DepthCache::from_env(&[]).expect("the default interval")
        });
        let metrics_access = MetricsAccess::from_env(&env);
        let mut env = env;
        let deliveries = DeliveryLoop::from_env(&mut env)
            .map(Some)
            .unwrap_or_else(|e| {
                eprintln!("queen-sqs-host: {e}; SNS deliveries to HTTP/S subscribers are off");
                None
            });
        // The component tells the host what each request was, in a header removed here;
        // asked only when something reads it.
        if switches.metrics || request_log.is_some() {
            env.push((TELL_HOST_VAR.to_string(), "1".to_string()));
        }
        let metrics = outgoing.metrics();
        metrics.set_on(switches.metrics);
        Arc::new(Server {
            loaded,
            request_log,
            metrics,
            metrics_access,
            depths,
            switches,
            deliveries,
            env,
            outgoing,
            slots: Arc::new(Semaphore::new(limits.max_inflight as usize)),
            waiting_slots: Arc::new(Semaphore::new(limits.max_long_polls as usize)),
            connections: Arc::new(Semaphore::new(limits.max_connections as usize)),
            body_budget: Arc::new(Semaphore::new(limits.body_budget_bytes / KIB)),
            limits,
            instances,
        })
    }

    async fn metrics_page(&self, headers: &http::HeaderMap) -> hyper::Response<HyperOutgoingBody> {
        let viewer = self.metrics_access.judge(headers);
        if viewer == Viewer::Refused {
            let mut resp = plain(
                401,
                "these credentials match no key pair of this endpoint",
                false,
            );
            resp.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Basic realm=\"queen-sqs metrics\""),
            );
            return resp;
        }
        let long_polls =
            self.limits.max_long_polls as usize - self.waiting_slots.available_permits();
        let in_component =
            self.limits.max_inflight as usize - self.slots.available_permits() + long_polls;
        let mut text = self.metrics.render(in_component, long_polls);
        // Queue names and a broker read only for a key holder (issue 21, item 1).
        if let Some(broker) = self
            .outgoing
            .embedded_broker()
            .filter(|_| viewer == Viewer::KeyHolder)
        {
            self.depths.render(&mut text, &broker).await;
        }
        let body = Full::new(Bytes::from(text))
            .map_err(|never| match never {})
            .boxed_unsync();
        let mut resp = hyper::Response::new(body);
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/plain; version=0.0.4"),
        );
        resp
    }

    /// True when the component is asked to tell the host what each request was (the
    /// metrics or the request log read it); false costs the component nothing per request.
    pub fn tells_host(&self) -> bool {
        self.env.iter().any(|(k, _)| k == TELL_HOST_VAR)
    }

    /// The host's own routes, answered without the component: `GET /metrics` and the
    /// console under `/console/` (no account is named either, so no queue URL is shadowed).
    /// Each answers 404 when switched off.
    async fn own_route(
        &self,
        parts: &http::request::Parts,
    ) -> Option<hyper::Response<HyperOutgoingBody>> {
        let path = parts.uri.path();
        if parts.method == http::Method::GET && path == "/metrics" {
            if !self.switches.metrics {
                return Some(plain(404, "metrics are off (QUEEN_SQS_METRICS=off)", false));
            }
            return Some(self.metrics_page(&parts.headers).await);
        }
        if console::is_console_path(path) {
            return Some(console::answer(&parts.method, path, self.switches.console));
        }
        None
    }

    /// Component instances made so far (with reuse, far fewer than requests served).
    pub fn instances_created(&self) -> u64 {
        self.instances.created()
    }

    fn fresh_state(&self) -> State {
        let mut wasi = WasiCtx::builder();
        wasi.envs(&self.env).inherit_stderr();
        State {
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            outgoing: self.outgoing.clone(),
            ticks_run: 0,
        }
    }

    /// A slot for a request (a long-poll slot for one that may wait), or None when none
    /// frees up within `SLOT_WAIT`.
    async fn take_slot(&self, may_wait: bool) -> Option<Permits> {
        let kind = if may_wait {
            &self.waiting_slots
        } else {
            &self.slots
        };
        let take = async {
            let slot = kind.clone().acquire_owned().await.ok()?;
            Some(Permits {
                _slot: slot,
                _delivery: None,
            })
        };
        tokio::time::timeout(SLOT_WAIT, take).await.ok().flatten()
    }

    async fn handle(
        self: Arc<Self>,
        req: hyper::Request<hyper::body::Incoming>,
        local: SocketAddr,
    ) -> hyper::Response<HyperOutgoingBody> {
        let started = std::time::Instant::now();
        let (mut parts, body) = req.into_parts();
        if let Err(why) = check_authority(&mut parts, local) {
            return plain(400, why, true);
        }
        if let Some(resp) = self.own_route(&parts).await {
            return resp;
        }
        let declared = parts
            .headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let too_large = |parts: &http::request::Parts| {
            let head = plain_request(parts, Vec::new());
            close(queen_sqs::service::body_too_large(&head, &request_id()).into_hyper())
        };
        if let Some(n) = declared.filter(|n| *n > wire::MAX_BODY_BYTES as u64) {
            // Refused unread; a body within the drain limit is read and thrown away first,
            // so the client reads the 413 rather than a broken pipe.
            if n <= DRAIN_LIMIT as u64 {
                let _ = tokio::time::timeout(self.limits.body_timeout, drain(body, 0)).await;
            }
            return too_large(&parts);
        }
        let read = read_capped(body, &self.body_budget);
        let (bytes, _held) = match tokio::time::timeout(self.limits.body_timeout, read).await {
            Err(_) => return plain(408, "the request body did not arrive in time", true),
            Ok(Err(BodyError::TooLarge)) => return too_large(&parts),
            Ok(Err(BodyError::Incomplete)) => {
                return plain(
                    400,
                    "the request body ended before its declared length; nothing was done",
                    true,
                )
            }
            Ok(Ok(read)) => read,
        };
        let caller = wire::caller(&plain_request(&parts, bytes.to_vec()));
        let Some(permits) = self.take_slot(caller.may_wait).await else {
            return wire::throttled(caller, &request_id()).into_hyper();
        };
        let bytes_in = bytes.len();
        let req = hyper::Request::from_parts(parts, Full::new(bytes));
        match self.clone().run(req, permits).await {
            Ok(mut resp) => {
                let said = resp.headers_mut().remove(TELL_HOST_HEADER);
                let said_text = said.as_ref().and_then(|v| v.to_str().ok());
                if self.switches.metrics {
                    self.metrics
                        .request(said_text, resp.status().as_u16(), started.elapsed());
                }
                if let Some(log) = &self.request_log {
                    let header =
                        |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok());
                    log.write(&Entry {
                        said: said_text,
                        request_id: header("x-amzn-requestid"),
                        status: resp.status().as_u16(),
                        latency: started.elapsed(),
                        bytes_in,
                        bytes_out: header("content-length").and_then(|v| v.parse().ok()),
                    });
                }
                resp
            }
            Err(e) => {
                eprintln!("queen-sqs-host: request failed: {e:#}");
                wire::internal_error(caller, &request_id()).into_hyper()
            }
        }
    }

    /// One call of the SNS delivery route, in process (`deliveries`), answered as soon as it
    /// has taken its POSTs (`early=1`): how many it took; `None` when no slot freed up or the
    /// call failed. The POSTs are made after the answer; `done` is dropped when they are.
    pub(super) async fn call_delivery_route(
        self: Arc<Self>,
        token: &str,
        wait_s: u64,
        step_move_tasks: bool,
        done: tokio::sync::oneshot::Sender<()>,
    ) -> Option<u64> {
        use queen_sqs::sns::webhook::{ROUTE, TOKEN_HEADER};
        let moves = if step_move_tasks { "&moves=1" } else { "" };
        let req = hyper::Request::post(format!(
            "http://127.0.0.1{ROUTE}?wait={wait_s}&early=1{moves}"
        ))
        .header(http::header::HOST, "127.0.0.1")
        .header(TOKEN_HEADER, token)
        .body(Full::new(Bytes::new()))
        .ok()?;
        let mut permits = self.take_slot(false).await?;
        permits._delivery = Some(done);
        let resp = self.run(req, permits).await.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        let body = resp.into_body().collect().await.ok()?.to_bytes();
        super::deliveries::taken(&body)
    }

    /// Runs the component on a request whose body is already in memory.
    async fn run(
        self: Arc<Self>,
        req: hyper::Request<Full<Bytes>>,
        permits: Permits,
    ) -> Result<hyper::Response<HyperOutgoingBody>> {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let server = self.clone();
        // The guest may go on writing the body after it has handed over the head. The slot is
        // given back only once the instance is back in the pool or gone.
        let task = tokio::task::spawn(async move {
            let result = async {
                let mut instance = server
                    .instances
                    .take(&server.loaded, || server.fresh_state())
                    .await?;
                arm_budget(&mut instance.store, server.limits.guest_ticks());
                let http = &mut instance.store.data_mut().http();
                let req = http.new_incoming_request(Scheme::Http, req)?;
                let out = http.new_response_outparam(sender)?;
                instance
                    .proxy
                    .wasi_http_incoming_handler()
                    .call_handle(&mut instance.store, req, out)
                    .await
                    .map_err(anyhow::Error::from)?;
                server.instances.give_back(instance);
                anyhow::Ok(())
            }
            .await;
            drop(permits);
            result
        });
        match receiver.await {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(e)) => Err(e.into()),
            Err(_) => {
                let why = match task.await {
                    Ok(Ok(())) => anyhow::anyhow!("the component set no response"),
                    Ok(Err(e)) => e.into(),
                    Err(e) => e.into(),
                };
                Err(why)
            }
        }
    }
}

/// Makes sure the request names the authority it was sent to (wasi-http needs one; SigV4
/// signs it; queue URLs are built from it). HTTP/1.1 requires `Host` (RFC 9112 §3.2): a
/// missing, empty, repeated or unparsable one is refused. HTTP/1.0 may leave it out: the
/// listener's own address stands in.
fn check_authority(
    parts: &mut http::request::Parts,
    local: SocketAddr,
) -> Result<(), &'static str> {
    if parts.uri.authority().is_some() {
        // Absolute form: the URI's authority wins over Host (RFC 9112 §3.2.2).
        return Ok(());
    }
    let mut hosts = parts.headers.get_all(http::header::HOST).iter();
    match (hosts.next(), hosts.next()) {
        (Some(_), Some(_)) => Err("more than one Host header"),
        (Some(host), None) => {
            let ok = host
                .to_str()
                .ok()
                .filter(|h| !h.is_empty() && !h.contains('@'))
                .and_then(|h| h.parse::<http::uri::Authority>().ok())
                .is_some_and(|a| {
                    !a.host().is_empty()
                        && a.as_str().rsplit_once(':').is_none_or(|(_, port)| {
                            a.as_str().ends_with(']') || port.parse::<u16>().is_ok()
                        })
                });
            if ok {
                Ok(())
            } else {
                Err("the Host header is not a valid host[:port]")
            }
        }
        (None, _) if parts.version <= http::Version::HTTP_10 => {
            let value =
                http::HeaderValue::from_str(&local.to_string()).map_err(|_| "no Host header")?;
            parts.headers.insert(http::header::HOST, value);
            Ok(())
        }
        (None, _) => Err("an HTTP/1.1 request must carry a Host header"),
    }
}

enum BodyError {
    TooLarge,
    /// The body's stream failed: shorter than its Content-Length, or a chunked body that
    /// ended without its last chunk.
    Incomplete,
}

/// Reads the whole body, at most `MAX_BODY_BYTES` (a chunked body declares no length).
/// Reads a whole body, at most `MAX_BODY_BYTES`, taking room for it from `budget` (one
/// permit per KiB past [`FREE_BYTES`]) before each piece is kept; the permits come back
/// with the body and are held as long as it is.
async fn read_capped(
    mut body: hyper::body::Incoming,
    budget: &Arc<Semaphore>,
) -> Result<(Bytes, Option<OwnedSemaphorePermit>), BodyError> {
    let mut out = bytes::BytesMut::new();
    let mut held: Option<OwnedSemaphorePermit> = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| BodyError::Incomplete)?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > wire::MAX_BODY_BYTES {
                drop(held);
                drain(body, out.len() + data.len()).await;
                return Err(BodyError::TooLarge);
            }
            let kib = charged(out.len() + data.len()) - charged(out.len());
            if kib > 0 {
                let more = budget
                    .clone()
                    .acquire_many_owned(kib as u32)
                    .await
                    .map_err(|_| BodyError::Incomplete)?;
                match held.as_mut() {
                    Some(h) => h.merge(more),
                    None => held = Some(more),
                }
            }
            out.extend_from_slice(&data);
        }
    }
    Ok((out.freeze(), held))
}

const KIB: usize = 1024;
const CONNECTION_BUFFER: usize = 16 * KIB;
/// The head of every body that is read without taking budget: almost every SQS and SNS
/// request fits, so a budget spent by stalled clients holds up only large bodies (for at
/// most the body timeout), and the free part is bounded by the connection cap.
const FREE_BYTES: usize = 16 * KIB;

/// Budget permits (KiB) a body of `n` bytes holds.
fn charged(n: usize) -> usize {
    n.saturating_sub(FREE_BYTES).div_ceil(KIB)
}

/// Bytes of an oversized body read and thrown away before the 413, so that a client still
/// writing it reads the answer instead of a broken pipe; past this the connection is closed.
const DRAIN_LIMIT: usize = 4 * wire::MAX_BODY_BYTES;

/// Reads and discards the rest of a body (nothing kept), up to [`DRAIN_LIMIT`] in all.
async fn drain(mut body: hyper::body::Incoming, mut seen: usize) {
    while seen <= DRAIN_LIMIT {
        match body.frame().await {
            Some(Ok(frame)) => seen += frame.into_data().map_or(0, |d| d.len()),
            _ => return,
        }
    }
}

/// The request as the queen-sqs crate sees it, for the answers made here.
fn plain_request(parts: &http::request::Parts, body: Vec<u8>) -> queen_sqs::http::Request {
    queen_sqs::http::Request {
        method: parts.method.as_str().to_string(),
        path_and_query: parts
            .uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into()),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
        scheme: "http".into(),
    }
}

fn request_id() -> String {
    let mut b = [0u8; 16];
    let _ = getrandom::fill(&mut b);
    queen_sqs::service::format_request_id(&b)
}

trait IntoHyper {
    fn into_hyper(self) -> hyper::Response<HyperOutgoingBody>;
}

impl IntoHyper for queen_sqs::http::Response {
    fn into_hyper(self) -> hyper::Response<HyperOutgoingBody> {
        let body = Full::new(Bytes::from(self.body))
            .map_err(|never| match never {})
            .boxed_unsync();
        let mut resp = hyper::Response::new(body);
        *resp.status_mut() =
            hyper::StatusCode::from_u16(self.status).unwrap_or(hyper::StatusCode::BAD_REQUEST);
        for (k, v) in self.headers {
            if let (Ok(k), Ok(v)) = (
                http::HeaderName::from_bytes(k.as_bytes()),
                http::HeaderValue::from_str(&v),
            ) {
                resp.headers_mut().append(k, v);
            }
        }
        resp
    }
}

/// Asks hyper to close the connection after this answer (the rest of the request, if any,
/// is not worth reading).
fn close(mut resp: hyper::Response<HyperOutgoingBody>) -> hyper::Response<HyperOutgoingBody> {
    resp.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    resp
}

/// An HTTP-level refusal, before the request is known to be SQS or SNS.
fn plain(status: u16, why: &'static str, close_after: bool) -> hyper::Response<HyperOutgoingBody> {
    let body = Full::new(Bytes::from(format!("{why}\n")))
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut resp = hyper::Response::new(body);
    *resp.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_REQUEST);
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if close_after {
        resp = close(resp);
    }
    resp
}

/// Accepts connections on `listener` until the process ends.
pub async fn serve(listener: TcpListener, server: Arc<Server>) -> Result<()> {
    // Stopped when this future is dropped.
    let _deliveries = server.deliveries.as_ref().map(|d| d.spawn(server.clone()));
    loop {
        // Room for one more connection first: at the cap the listener stops accepting.
        let Ok(connection) = server.connections.clone().acquire_owned().await else {
            return Ok(());
        };
        let (stream, _peer): (_, SocketAddr) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                // EMFILE and friends: back off instead of spinning.
                eprintln!("queen-sqs-host: accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let local = stream
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)));
        let server = server.clone();
        tokio::task::spawn(async move {
            let _connection = connection;
            let header_timeout = server.limits.header_timeout;
            let service = hyper::service::service_fn(move |req| {
                let server = server.clone();
                async move { Ok::<_, std::convert::Infallible>(server.handle(req, local).await) }
            });
            let _ = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                // What one connection buffers (a request head must fit): kept small, since
                // the host serves thousands of them and bodies are budgeted separately.
                .max_buf_size(CONNECTION_BUFFER)
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
