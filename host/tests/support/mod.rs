//! A real endpoint for integration tests: a fresh broker, the component served by the
//! host on a loopback port, and a small HTTP client speaking both SQS wire protocols to
//! it. The component is compiled once per test binary.
//!
//! Two lanes. By default the broker is the embedded one on a fresh SQLite database,
//! reached in process. With `QUEEN_SQS_TEST_ENGINE_BIN` set (the released Queen engine's
//! binary; `QUEEN_SQS_TEST_PG_PORT` the throwaway PostgreSQL it runs on, required: no
//! default port, which any other PostgreSQL could answer),
//! every [`TestBroker`] is its own engine process over its own fresh database, reached
//! over loopback TCP, killed (and its database dropped) when the broker is dropped —
//! panicking tests included. `scripts/test.sh` runs both lanes.
#![allow(dead_code)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use queen_sqs_host::broker::{self, BrokerConfig, RunningBroker};
use queen_sqs_host::serve::{self, Loaded, Outgoing, Server};
use serde_json::Value;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

static LOADED: OnceLock<Loaded> = OnceLock::new();

pub fn loaded() -> Loaded {
    LOADED
        .get_or_init(|| serve::load(serve::COMPONENT).expect("load component"))
        .clone()
}

pub const HANDLE_SECRET: &str = "integration-test-handle-secret";

/// The bearer token of every embedded test broker's HTTP listener. Calls in process
/// ([`TestBroker::handle`], an endpoint made with [`Endpoint::serve`]) need none; an endpoint
/// reaching it over TCP ([`Endpoint::serve_remote`]) is given it as `QUEEN_TOKEN`.
pub const BROKER_TOKEN: &str = "integration-test-broker-token";

/// The engine binary of the real-Queen lane, if this run is on it.
fn engine_bin() -> Option<PathBuf> {
    std::env::var_os("QUEEN_SQS_TEST_ENGINE_BIN")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// True on the real-Queen lane (the released engine on PostgreSQL), false on the
/// embedded broker.
pub fn on_engine() -> bool {
    engine_bin().is_some()
}

pub struct Endpoint {
    pub url: String,
    pub addr: SocketAddr,
    pub broker: Arc<TestBroker>,
    pub data_dir: PathBuf,
    client: Client<HttpConnector, Full<Bytes>>,
    server: tokio::task::JoinHandle<()>,
}

/// A fresh, unique data directory under the system temp dir.
pub fn fresh_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("queen-sqs-test-{tag}-{}", random_hex(8)));
    std::fs::create_dir_all(&dir).expect("create data dir");
    dir
}

fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("random");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The broker under test: the embedded one, or (on the engine lane) a Queen engine
/// process of its own. Either answers native Queen calls through [`TestBroker::handle`].
pub struct TestBroker {
    /// Where the broker listens (loopback).
    pub addr: SocketAddr,
    pub data_dir: PathBuf,
    kind: Kind,
}

enum Kind {
    /// Behind a lock only so [`TestBroker::restart`] can swap it.
    Embedded(Mutex<Arc<RunningBroker>>),
    Engine(Engine),
}

impl TestBroker {
    /// A fresh broker of this run's lane, with its data (the SQLite file, or the engine's
    /// log and file buffer) in `data_dir`.
    pub async fn start(data_dir: PathBuf) -> Arc<TestBroker> {
        TestBroker::start_with(data_dir, &[]).await
    }

    /// [`TestBroker::start`], with engine settings on top of the lane's (ignored by the
    /// embedded broker, which has none of them).
    pub async fn start_with(data_dir: PathBuf, engine_env: &[(&str, &str)]) -> Arc<TestBroker> {
        if let Some(bin) = engine_bin() {
            let extra = engine_env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let engine = Engine::start(bin, &data_dir, extra).await;
            return Arc::new(TestBroker {
                addr: engine.addr,
                data_dir,
                kind: Kind::Engine(engine),
            });
        }
        let running = broker::start(BrokerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: data_dir.clone(),
            token: BROKER_TOKEN.into(),
        })
        .await
        .expect("start broker");
        Arc::new(TestBroker {
            addr: running.addr,
            data_dir,
            kind: Kind::Embedded(Mutex::new(Arc::new(running))),
        })
    }

    /// The base URL a component reaches the broker by (`QUEEN_URL`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The embedded broker (None on the engine lane).
    pub fn embedded(&self) -> Option<Arc<RunningBroker>> {
        match &self.kind {
            Kind::Embedded(b) => Some(lock(b).clone()),
            Kind::Engine(_) => None,
        }
    }

    /// The engine process (None on the embedded lane).
    pub fn engine(&self) -> Option<&Engine> {
        match &self.kind {
            Kind::Embedded(_) => None,
            Kind::Engine(e) => Some(e),
        }
    }

    /// One native Queen call; answers (status, headers, body).
    pub async fn handle(
        &self,
        method: &str,
        path_and_query: &str,
        body: Bytes,
    ) -> (u16, Vec<(String, String)>, Vec<u8>) {
        match &self.kind {
            Kind::Embedded(b) => {
                let running = lock(b).clone();
                let (status, headers, body) = running.handle(method, path_and_query, body).await;
                (status, headers, body.to_vec())
            }
            Kind::Engine(e) => e.call(method, path_and_query, body).await,
        }
    }

    /// The broker goes away: the embedded one shuts down, the engine is SIGKILLed.
    pub async fn stop(&self) {
        match &self.kind {
            Kind::Embedded(b) => {
                let running = (**lock(b)).clone();
                running.shutdown().await;
            }
            Kind::Engine(e) => e.kill(),
        }
    }

    /// The broker comes back on the same address and the same data. (An endpoint made with
    /// [`Endpoint::serve`] keeps reaching the embedded broker it was given in process: front
    /// a broker that restarts with [`Endpoint::serve_remote`].)
    pub async fn restart(&self) {
        match &self.kind {
            Kind::Embedded(b) => {
                let running = broker::start(BrokerConfig {
                    listen: self.addr,
                    data_dir: self.data_dir.clone(),
                    token: BROKER_TOKEN.into(),
                })
                .await
                .expect("restart broker");
                *lock(b) = Arc::new(running);
            }
            Kind::Engine(e) => e.restart().await,
        }
    }
}

/// Test-side reads of broker state whose native route differs between the embedded broker
/// and the released engine (1.3.0): the same question, asked the way each answers it.
impl TestBroker {
    /// The option bag the broker holds for `queue` (camelCase, as `/configure` answers
    /// it), read without changing it; `Value::Null` if there is no such queue. (On the
    /// engine a `/configure` without options resets the row to the defaults, so the row
    /// is read from its database.)
    pub async fn queue_options(&self, queue: &str) -> Value {
        match &self.kind {
            Kind::Embedded(_) => {
                let body = serde_json::json!({ "queue": queue }).to_string();
                let (status, _, body) = self.handle("POST", "/api/v1/configure", body.into()).await;
                assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
                let row: Value = serde_json::from_slice(&body).expect("configure JSON");
                row["options"].clone()
            }
            Kind::Engine(e) => {
                let sql = format!(
                    "SELECT json_build_object(\
                       'leaseTime', lease_time, 'retryLimit', retry_limit, \
                       'retryDelay', retry_delay, 'ttl', ttl, 'priority', priority, \
                       'deadLetterQueue', dead_letter_queue, \
                       'dlqAfterMaxRetries', dlq_after_max_retries, \
                       'delayedProcessing', delayed_processing, 'windowBuffer', window_buffer, \
                       'retentionSeconds', retention_seconds, \
                       'completedRetentionSeconds', completed_retention_seconds, \
                       'retentionEnabled', retention_enabled, \
                       'encryptionEnabled', encryption_enabled, \
                       'maxWaitTimeSeconds', max_wait_time_seconds, 'maxSize', max_queue_size, \
                       'minPopWaitTime', min_pop_wait_time, \
                       'dedupWindowSeconds', dedup_window_seconds) \
                     FROM queen.queues WHERE name = '{}'",
                    queue.replace('\'', "''")
                );
                let db = e.database.clone();
                let out = tokio::task::spawn_blocking(move || psql_in(&db, &sql))
                    .await
                    .expect("psql task")
                    .unwrap_or_else(|err| panic!("reading queue {queue}'s row: {err}"));
                let out = out.trim();
                if out.is_empty() {
                    Value::Null
                } else {
                    serde_json::from_str(out).expect("the row as JSON")
                }
            }
        }
    }

    /// The queue-mode depth of `queue`: (pending, processing, ready), where pending counts
    /// every unconsumed message, in flight or not. (The engine's depth route answers
    /// `pending` alone, counting leased messages too; its queue detail has both totals.)
    pub async fn depth(&self, queue: &str) -> (u64, u64, u64) {
        if self.engine().is_none() {
            let path = format!("/api/v1/resources/queues/{queue}/depth?group=__QUEUE_MODE__");
            let (status, _, body) = self.handle("GET", &path, Bytes::new()).await;
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
            let v: Value = serde_json::from_slice(&body).expect("depth JSON");
            let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
            return (n("pending"), n("processing"), n("ready"));
        }
        let path = format!("/api/v1/resources/queues/{queue}");
        let (status, _, body) = self.handle("GET", &path, Bytes::new()).await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        let v: Value = serde_json::from_slice(&body).expect("queue detail JSON");
        let n = |k: &str| {
            v["totals"][k]
                .as_u64()
                .unwrap_or_else(|| panic!("totals.{k} in {v}"))
        };
        let (pending, processing) = (n("pending"), n("processing"));
        (pending, processing, pending.saturating_sub(processing))
    }

    /// How many timers of `queue` have a key starting with `prefix` (pending ones: a
    /// fired timer is gone).
    pub async fn timer_count(&self, queue: &str, prefix: &str) -> u64 {
        if self.engine().is_none() {
            let path = format!(
                "/api/v1/timers/{queue}?mode=count&prefix={}",
                form_encode(prefix)
            );
            let (status, _, body) = self.handle("GET", &path, Bytes::new()).await;
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
            let v: Value = serde_json::from_slice(&body).expect("timer count JSON");
            return v["count"].as_u64().expect("a count");
        }
        // The engine answers the list shape only (no `mode=count`, no `prefix`): page it.
        let mut count = 0;
        let mut after: Option<String> = None;
        loop {
            let mut path = format!("/api/v1/timers/{queue}?limit=1000");
            if let Some(a) = &after {
                path.push_str(&format!("&after={}", form_encode(a)));
            }
            let (status, _, body) = self.handle("GET", &path, Bytes::new()).await;
            if status == 404 {
                return count;
            }
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
            let v: Value = serde_json::from_slice(&body).expect("timer list JSON");
            let rows = v["rows"].as_array().cloned().unwrap_or_default();
            count += rows
                .iter()
                .filter(|r| {
                    r["timerKey"]
                        .as_str()
                        .is_some_and(|k| k.starts_with(prefix))
                })
                .count() as u64;
            let next = v["nextAfter"].as_str().map(String::from).or_else(|| {
                rows.last()
                    .and_then(|r| r["timerKey"].as_str())
                    .map(String::from)
            });
            if v["truncated"] != true || rows.is_empty() || next == after {
                return count;
            }
            after = next;
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The engine's settings shared with `scripts/queen-engine.sh` (one list for both).
const ENGINE_ENV: &str = include_str!("../../../scripts/queen-engine.env");

fn engine_settings() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = ENGINE_ENV
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    // As the script: QUEEN_ENGINE_EXTRA_ENV adds more, space-separated NAME=VALUE.
    if let Ok(extra) = std::env::var("QUEEN_ENGINE_EXTRA_ENV") {
        for (k, v) in extra.split_whitespace().filter_map(|w| w.split_once('=')) {
            out.retain(|(n, _)| n != k);
            out.push((k.to_string(), v.to_string()));
        }
    }
    out
}

fn pg_port() -> u16 {
    std::env::var("QUEEN_SQS_TEST_PG_PORT")
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| v.parse().expect("QUEEN_SQS_TEST_PG_PORT is a port"))
        .expect(
            "QUEEN_SQS_TEST_PG_PORT must name the lane's PostgreSQL port (scripts/test.sh sets it)",
        )
}

/// One SQL statement against the lane's PostgreSQL, as the superuser.
fn psql(sql: &str) -> Result<(), String> {
    psql_in("postgres", sql).map(drop)
}

/// One SQL statement in `database`; answers its unaligned, tuples-only output.
pub fn psql_in(database: &str, sql: &str) -> Result<String, String> {
    let out = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &pg_port().to_string(),
            "-U",
            "postgres",
        ])
        .args(["-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql, database])
        .env("PGCONNECT_TIMEOUT", "5")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("psql: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// One released Queen engine process over its own fresh database. Killed (SIGKILL) and
/// its database dropped on drop; as a backstop, started under `setpriv --pdeathsig KILL`
/// when available, so it dies with the test process even if that is killed outright.
pub struct Engine {
    pub addr: SocketAddr,
    pub database: String,
    bin: PathBuf,
    dir: PathBuf,
    mesh_port: u16,
    /// Settings on top of the lane's.
    extra: Vec<(String, String)>,
    child: Mutex<Option<Child>>,
    client: Client<HttpConnector, Full<Bytes>>,
}

impl Engine {
    async fn start(bin: PathBuf, dir: &Path, extra: Vec<(String, String)>) -> Engine {
        let database = format!("qs_test_{}", random_hex(8));
        let create = format!("CREATE DATABASE \"{database}\"");
        tokio::task::spawn_blocking(move || psql(&create))
            .await
            .expect("psql task")
            .unwrap_or_else(|e| {
                panic!(
                    "creating the engine's database on 127.0.0.1:{}: {e}",
                    pg_port()
                )
            });
        let mut engine = Engine {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            database,
            bin,
            dir: dir.to_path_buf(),
            mesh_port: 0,
            extra,
            child: Mutex::new(None),
            client: Client::builder(TokioExecutor::new()).build(HttpConnector::new()),
        };
        // A port found free can be taken by a parallel test before the engine binds it:
        // try again on other ports.
        let mut last = String::new();
        for _ in 0..4 {
            engine.addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
            engine.mesh_port = free_port();
            match engine.spawn().await {
                Ok(()) => return engine,
                Err(e) => last = e,
            }
        }
        panic!("the Queen engine did not start: {last}");
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("engine.log")
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// Starts the process on `self.addr` and waits for `/health`.
    async fn spawn(&self) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .map_err(|e| format!("engine log: {e}"))?;
        let buffers = self.dir.join("engine-buffers");
        std::fs::create_dir_all(&buffers).map_err(|e| format!("buffer dir: {e}"))?;
        let setpriv = Path::new("/usr/bin/setpriv");
        let mut cmd = if setpriv.exists() {
            let mut c = Command::new(setpriv);
            c.args(["--pdeathsig", "KILL", "--"]).arg(&self.bin);
            c
        } else {
            Command::new(&self.bin)
        };
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(engine_settings())
            .envs(self.extra.iter().cloned())
            .env("PG_PORT", pg_port().to_string())
            .env("PG_DATABASE", &self.database)
            .env("PORT", self.addr.port().to_string())
            .env("QUEEN_MESH_PORT", self.mesh_port.to_string())
            .env("FILE_BUFFER_DIR", &buffers)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log);
        let child = cmd
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", self.bin.display()))?;
        *lock(&self.child) = Some(child);

        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let exited = {
                let mut child = lock(&self.child);
                let status = child.as_mut().and_then(|c| c.try_wait().ok().flatten());
                if status.is_some() {
                    child.take();
                }
                status
            };
            if let Some(status) = exited {
                return Err(format!(
                    "engine on {} exited ({status}):\n{}",
                    self.addr,
                    self.log_tail()
                ));
            }
            if let Ok((200, _, _)) = self.try_call("GET", "/health", Bytes::new()).await {
                return Ok(());
            }
            if Instant::now() > deadline {
                self.kill();
                return Err(format!(
                    "engine on {} not healthy after 60 s:\n{}",
                    self.addr,
                    self.log_tail()
                ));
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// SIGKILL, and reap.
    pub fn kill(&self) {
        if let Some(mut child) = lock(&self.child).take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// A new process on the same port, database and file buffer.
    pub async fn restart(&self) {
        self.kill();
        // The port was the engine's: nothing else was handed it, so it is free again.
        let mut last = String::new();
        for _ in 0..20 {
            match self.spawn().await {
                Ok(()) => return,
                Err(e) => last = e,
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!("the Queen engine did not restart: {last}");
    }

    async fn try_call(
        &self,
        method: &str,
        path_and_query: &str,
        body: Bytes,
    ) -> Result<(u16, Vec<(String, String)>, Vec<u8>), String> {
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(format!("http://{}{}", self.addr, path_and_query));
        if !body.is_empty() {
            req = req.header("content-type", "application/json");
        }
        let req = req.body(Full::new(body)).map_err(|e| e.to_string())?;
        let resp = tokio::time::timeout(Duration::from_secs(120), self.client.request(req))
            .await
            .map_err(|_| "timed out".to_string())?
            .map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes()
            .to_vec();
        Ok((status, headers, body))
    }

    async fn call(
        &self,
        method: &str,
        path_and_query: &str,
        body: Bytes,
    ) -> (u16, Vec<(String, String)>, Vec<u8>) {
        self.try_call(method, path_and_query, body)
            .await
            .unwrap_or_else(|e| panic!("engine {method} {path_and_query}: {e}"))
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.kill();
        // Cheap (fsync is off), and keeps the throwaway cluster small over a whole run.
        let _ = psql(&format!(
            "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
            self.database
        ));
        // The log is kept for a test that failed; otherwise the engine's files go, and the
        // directory too if nothing else is in it.
        if !std::thread::panicking() {
            let _ = std::fs::remove_file(self.log_path());
            let _ = std::fs::remove_dir_all(self.dir.join("engine-buffers"));
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

impl Endpoint {
    /// An endpoint with SigV4 off and the given extra `QUEEN_*` variables.
    pub async fn start() -> Endpoint {
        Endpoint::with_env(&[("QUEEN_SQS_AUTH", "off")]).await
    }

    pub async fn with_env(extra: &[(&str, &str)]) -> Endpoint {
        let data_dir = fresh_dir("endpoint");
        let broker = TestBroker::start(data_dir.clone()).await;
        let mut env: Vec<(String, String)> = vec![
            ("QUEEN_URL".into(), broker.url()),
            ("QUEEN_SQS_HANDLE_SECRET".into(), HANDLE_SECRET.into()),
        ];
        for (k, v) in extra {
            env.retain(|(n, _)| n != k);
            env.push((k.to_string(), v.to_string()));
        }
        Endpoint::serve(env, broker, data_dir).await
    }

    /// Serves the component with exactly `env`, in front of `broker` (reached in process
    /// when it is the embedded one, over loopback TCP when it is an engine).
    pub async fn serve(
        env: Vec<(String, String)>,
        broker: Arc<TestBroker>,
        data_dir: PathBuf,
    ) -> Endpoint {
        let ca_file = env
            .iter()
            .find(|(k, _)| k == "QUEEN_SQS_TLS_CA_FILE")
            .map(|(_, v)| v.clone());
        let outgoing = Outgoing::new(broker.embedded())
            .with_tls_ca(ca_file.as_deref())
            .expect("QUEEN_SQS_TLS_CA_FILE");
        Endpoint::serve_with(env, outgoing, broker, data_dir).await
    }

    /// Serves the component with exactly `env`, reaching the broker only through
    /// `QUEEN_URL` over loopback TCP, as a second replica would; `broker` is kept for
    /// the test's own native calls. An embedded broker's listener wants its token: unless
    /// `env` names a `QUEEN_TOKEN`, it is added (the bearer token with `QUEEN_SQS_AUTH=off`).
    pub async fn serve_remote(
        mut env: Vec<(String, String)>,
        broker: Arc<TestBroker>,
        data_dir: PathBuf,
    ) -> Endpoint {
        if broker.embedded().is_some() && !env.iter().any(|(k, _)| k == "QUEEN_TOKEN") {
            env.push(("QUEEN_TOKEN".into(), BROKER_TOKEN.into()));
        }
        Endpoint::serve_with(env, Outgoing::new(None), broker, data_dir).await
    }

    /// A second replica over this endpoint's broker, reached over loopback TCP: auth off,
    /// the same handle secret, and `extra` on top (a cache lifetime, the SNS loop, ...).
    pub async fn replica(&self, extra: &[(&str, &str)]) -> Endpoint {
        self.replica_at(self.broker.url(), extra).await
    }

    /// A second replica over this endpoint's broker whose broker calls pass a [`proxy`]
    /// with `hook` (faults for that replica only); auth off, the same handle secret.
    pub async fn replica_behind(&self, hook: Hook) -> Endpoint {
        let proxy = proxy(self.broker.url(), hook).await;
        self.replica_at(format!("http://{proxy}"), &[]).await
    }

    async fn replica_at(&self, broker_url: String, extra: &[(&str, &str)]) -> Endpoint {
        let mut env: Vec<(String, String)> = vec![
            ("QUEEN_URL".into(), broker_url),
            ("QUEEN_SQS_HANDLE_SECRET".into(), HANDLE_SECRET.into()),
            ("QUEEN_SQS_AUTH".into(), "off".into()),
        ];
        env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        Endpoint::serve_remote(env, self.broker.clone(), self.data_dir.clone()).await
    }

    async fn serve_with(
        mut env: Vec<(String, String)>,
        outgoing: Outgoing,
        broker: Arc<TestBroker>,
        data_dir: PathBuf,
    ) -> Endpoint {
        // The SNS delivery loop polls the outbox once a second: a broker call no test of
        // broker calls expects. Only the tests that name it run it (`sns_http`); the
        // binary runs it by default, and the real-client lanes exercise it there.
        if !env
            .iter()
            .any(|(k, _)| k == "QUEEN_SQS_SNS_POSTS_IN_FLIGHT")
        {
            env.push(("QUEEN_SQS_SNS_POSTS_IN_FLIGHT".into(), "0".into()));
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().unwrap();
        let server = Server::new(loaded(), env, outgoing);
        let server = tokio::spawn(async move {
            let _ = serve::serve(listener, server).await;
        });
        let client = Client::builder(TokioExecutor::new()).build(HttpConnector::new());
        Endpoint {
            url: format!("http://{addr}"),
            addr,
            broker,
            data_dir,
            client,
            server,
        }
    }

    /// Sends a raw request; answers (status, headers, body).
    pub async fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> (u16, Vec<(String, String)>, Vec<u8>) {
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(format!("{}{}", self.url, path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req.body(Full::new(body.into())).expect("request");
        let resp = self.client.request(req).await.expect("send");
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = resp
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes()
            .to_vec();
        (status, headers, body)
    }

    /// An SQS action over AWS JSON 1.0; answers (status, body as JSON).
    pub async fn sqs(&self, action: &str, input: Value) -> (u16, Value) {
        let target = format!("AmazonSQS.{action}");
        let (status, _, body) = self
            .raw(
                "POST",
                "/",
                &[
                    ("x-amz-target", &target),
                    ("content-type", "application/x-amz-json-1.0"),
                ],
                input.to_string(),
            )
            .await;
        let v = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into()))
        };
        (status, v)
    }

    /// Like [`Endpoint::sqs`] but panics unless the answer is 200.
    pub async fn sqs_ok(&self, action: &str, input: Value) -> Value {
        let (status, body) = self.sqs(action, input).await;
        assert_eq!(status, 200, "{action} failed: {body}");
        body
    }

    /// The `__type` suffix of an error answer (after `#`).
    pub async fn sqs_err(&self, action: &str, input: Value) -> (u16, String) {
        let (status, body) = self.sqs(action, input).await;
        assert_ne!(status, 200, "{action} unexpectedly succeeded: {body}");
        let ty = body["__type"]
            .as_str()
            .unwrap_or("")
            .rsplit('#')
            .next()
            .unwrap_or("")
            .to_string();
        (status, ty)
    }

    /// A Query request (SQS or SNS form); answers (status, XML text).
    pub async fn query(&self, path: &str, params: &[(&str, &str)]) -> (u16, String) {
        let body: String = params
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let (status, _, body) = self
            .raw(
                "POST",
                path,
                &[("content-type", "application/x-www-form-urlencoded")],
                body,
            )
            .await;
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// Creates a queue and answers its URL.
    pub async fn create_queue(&self, name: &str, attributes: Value) -> String {
        let v = self
            .sqs_ok(
                "CreateQueue",
                serde_json::json!({"QueueName": name, "Attributes": attributes}),
            )
            .await;
        v["QueueUrl"].as_str().expect("QueueUrl").to_string()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Runs `tasks` concurrently on the current task, to completion.
pub async fn join_all<F: std::future::Future<Output = ()>>(tasks: impl IntoIterator<Item = F>) {
    let mut pinned: Vec<std::pin::Pin<Box<F>>> = tasks.into_iter().map(Box::pin).collect();
    std::future::poll_fn(|cx| {
        pinned.retain_mut(|f| f.as_mut().poll(cx).is_pending());
        if pinned.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await
}

pub fn form_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What a [`proxy`] hook sees of a request: method, path and query, body.
pub struct Seen<'a> {
    pub method: &'a hyper::Method,
    pub path_and_query: &'a str,
    pub body: &'a [u8],
}

/// A hook of a [`proxy`]: `Some((status, body))` answers the request in the broker's place
/// (a fault), `None` forwards it.
pub type Hook = Arc<dyn Fn(&Seen) -> Option<(u16, Vec<u8>)> + Send + Sync>;

/// A [`proxy`] in front of `broker` that counts the KV reads it forwards into `reads`: a
/// path-route GET, or a batch carrying a read op.
pub async fn kv_read_counting_proxy(
    broker: String,
    reads: Arc<std::sync::atomic::AtomicUsize>,
) -> SocketAddr {
    let hook: Hook = Arc::new(move |seen: &Seen| {
        let text = String::from_utf8_lossy(seen.body);
        let read_op = ["\"get\"", "\"getMany\"", "\"getPrefix\""]
            .iter()
            .any(|op| text.contains(&format!("\"op\":{op}")));
        if seen.path_and_query.starts_with("/api/v1/kv")
            && (*seen.method == hyper::Method::GET || read_op)
        {
            reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        None
    });
    proxy(broker, hook).await
}

/// A pass-through HTTP proxy in front of `broker` (a base URL) whose `hook` sees every
/// request and may answer it instead: counts calls, injects faults. Answers its address.
pub async fn proxy(broker: String, hook: Hook) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build(HttpConnector::new());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (client, broker, hook) = (client.clone(), broker.clone(), hook.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let (client, broker, hook) = (client.clone(), broker.clone(), hook.clone());
                        async move {
                            let (parts, body) = req.into_parts();
                            let pq = parts.uri.path_and_query().map_or("/", |p| p.as_str());
                            let body = body.collect().await.unwrap().to_bytes();
                            let seen = Seen {
                                method: &parts.method,
                                path_and_query: pq,
                                body: &body,
                            };
                            // A hook may sleep to hold a call back: off the async
                            // workers, so it never stalls the endpoints sharing them.
                            let flavor = tokio::runtime::Handle::current().runtime_flavor();
                            let verdict = if flavor == tokio::runtime::RuntimeFlavor::MultiThread {
                                tokio::task::block_in_place(|| hook(&seen))
                            } else {
                                hook(&seen)
                            };
                            if let Some((status, answer)) = verdict {
                                let resp = hyper::Response::builder()
                                    .status(status)
                                    .header("content-type", "application/json")
                                    .body(Full::new(Bytes::from(answer)))
                                    .unwrap();
                                return Ok::<_, std::convert::Infallible>(resp);
                            }
                            let mut out = hyper::Request::builder()
                                .method(parts.method.clone())
                                .uri(format!("{broker}{pq}"));
                            for (k, v) in &parts.headers {
                                if k != hyper::header::HOST {
                                    out = out.header(k, v);
                                }
                            }
                            let resp =
                                match client.request(out.body(Full::new(body)).unwrap()).await {
                                    Ok(r) => {
                                        let (p, b) = r.into_parts();
                                        let b = b.collect().await.unwrap().to_bytes();
                                        hyper::Response::from_parts(p, Full::new(b))
                                    }
                                    Err(_) => hyper::Response::builder()
                                        .status(502)
                                        .body(Full::new(Bytes::new()))
                                        .unwrap(),
                                };
                            Ok(resp)
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}
