//! The embedded Queen-compatible broker: the Queen HTTP API subset of
//! `shared/queen-api.md` on a loopback port, stored in one SQLite file.
//!
//! Layout: `server` (hyper) → `api` (routing, parsing, rendering) → `store` (SQLite, one
//! group-committing writer thread, reader threads); `notify` wakes long polls; `sweeper`
//! fires timers, announces lease expiry and applies retention; `auth` is the listener's
//! bearer token.

pub mod api;
pub mod auth;
pub mod notify;
pub mod server;
pub mod store;
pub mod sweeper;
pub mod time;

use api::Ctx;
use bytes::Bytes;
use notify::Notifier;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use store::Store;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub struct BrokerConfig {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    /// The bearer token every call on the HTTP listener must carry (the health checks
    /// excepted). Not optional: the listener is never open. In-process calls
    /// ([`RunningBroker::handle`]) need none.
    pub token: String,
}

struct Tasks {
    server: Option<JoinHandle<()>>,
    sweepers: Vec<JoinHandle<()>>,
}

/// A started broker. Cheap to clone (an `Arc` inside); every clone serves the same broker.
#[derive(Clone)]
pub struct RunningBroker {
    pub addr: SocketAddr,
    ctx: Arc<Ctx>,
    stop: Arc<watch::Sender<bool>>,
    tasks: Arc<Mutex<Tasks>>,
}

impl RunningBroker {
    /// Answers one API call in process (the host's outgoing-HTTP hook uses this to skip loopback TCP).
    pub async fn handle(
        &self,
        method: &str,
        path_and_query: &str,
        body: Bytes,
    ) -> (u16, Vec<(String, String)>, Bytes) {
        if body.len() > server::MAX_BODY {
            let r = api::reply::Reply::error(413, "payload too large");
            return (r.status, r.headers, r.body);
        }
        let r = api::dispatch(&self.ctx, method, path_and_query, body).await;
        (r.status, r.headers, r.body)
    }

    /// Every queue's depth and pending timers (the first `max` by name) and the number of
    /// queues, read in one snapshot on a reader thread: the host's `/metrics`.
    pub async fn queue_counts(
        &self,
        max: usize,
    ) -> store::SResult<(Vec<store::depth::QueueCounts>, i64)> {
        self.ctx
            .store
            .read(move |conn| store::depth::all_queues(conn, time::now_us(), max))
            .await
    }

    /// Stops listening, drains the writer, closes the database.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        self.ctx.notify.closing.notify_waiters();
        let (server, sweepers) = {
            let mut t = match self.tasks.lock() {
                Ok(t) => t,
                Err(p) => p.into_inner(),
            };
            (t.server.take(), std::mem::take(&mut t.sweepers))
        };
        if let Some(s) = server {
            let _ = s.await;
        }
        for s in sweepers {
            s.abort();
            let _ = s.await;
        }
        let store = self.ctx.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.close_blocking()).await;
    }
}

/// Opens (creates) `<data_dir>/queen.sqlite3`, binds `listen` (port 0 = any free port; the
/// listener answers only calls carrying `cfg.token`), spawns
/// the server, the writer thread, the timer/lease/retention sweepers, and returns once it
/// accepts connections.
pub async fn start(cfg: BrokerConfig) -> anyhow::Result<RunningBroker> {
    if let Some(why) = auth::invalid(&cfg.token) {
        anyhow::bail!("{why}");
    }
    let gate = Arc::new(auth::Gate::new(&cfg.token));
    std::fs::create_dir_all(&cfg.data_dir)?;
    let path = store::db_path(&cfg.data_dir);
    let store = tokio::task::spawn_blocking(move || Store::open(&path))
        .await?
        .map_err(|e| anyhow::anyhow!("opening the broker database: {e}"))?;
    let listener = tokio::net::TcpListener::bind(cfg.listen).await?;
    let addr = listener.local_addr()?;
    let ctx = Arc::new(Ctx {
        store,
        notify: Arc::new(Notifier::default()),
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let server = tokio::spawn(server::serve(listener, ctx.clone(), gate, stop_rx));
    let sweepers = sweeper::spawn_all(ctx.clone());
    Ok(RunningBroker {
        addr,
        ctx,
        stop: Arc::new(stop_tx),
        tasks: Arc::new(Mutex::new(Tasks {
            server: Some(server),
            sweepers,
        })),
    })
}
