//! SQLite storage. One writer thread owns the write connection and group-commits: it takes
//! every job waiting in its channel, runs each inside its own savepoint of ONE transaction,
//! commits (synchronous=FULL, so the commit is on disk), and only then answers them all.
//! Reader threads own read-only connections for calls that change nothing. Tokio workers
//! never touch SQLite: they send a closure and await a oneshot.

pub mod ack;
pub mod depth;
pub mod kv;
pub mod kv_read;
pub mod messages;
pub mod options;
pub mod pop;
pub mod queues;
pub mod ready;
pub mod reclaim;
pub mod retention;
pub mod schema;
pub mod timers;
pub mod txn;

use rusqlite::Connection;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// What the WAL file is cut back to when it starts over after a checkpoint: about one
/// auto-checkpoint's worth (1,000 pages).
const WAL_LIMIT_BYTES: i64 = 4 << 20;

/// How long a connection waits for a lock another holds.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Most jobs folded into one commit.
const MAX_GROUP: usize = 512;
const READERS: usize = 2;

#[derive(Debug)]
pub enum StoreError {
    /// SQLite refused something; the text goes into a 500 body.
    Sql(String),
    /// The store is shut down or a worker thread died.
    Closed,
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Sql(s) => write!(f, "{s}"),
            StoreError::Closed => write!(f, "store closed"),
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sql(e.to_string())
    }
}

pub type SResult<T> = Result<T, StoreError>;

type Deliver = Box<dyn FnOnce(bool) + Send>;
type WriteJob = Box<dyn FnOnce(&Connection) -> Deliver + Send>;
type ReadJob = Box<dyn FnOnce(&Connection) + Send>;

enum WriterMsg {
    /// A job, and whether its commit must reach the disk before it is answered.
    Job(WriteJob, Durability),
    /// A passive WAL checkpoint, run between two commits (never inside a transaction).
    Checkpoint(oneshot::Sender<SResult<()>>),
    Stop,
}

/// What a write needs from its commit.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Durability {
    /// On disk before the answer (synchronous=FULL): anything a caller was told is kept.
    Synced,
    /// Only a lease: if a power cut loses it, the messages it held are claimable again,
    /// which is what an expired lease means anyway (at-least-once delivery). The next
    /// synced commit flushes it too, since the WAL is one file written in order. A claim is
    /// always followed by its synced ack or transaction, so this saves one flush per
    /// receive without weakening what an answered write promises.
    LeaseOnly,
}

struct Threads {
    writer: Option<JoinHandle<()>>,
    readers: Vec<JoinHandle<()>>,
}

/// Cheap to clone; every clone talks to the same threads.
#[derive(Clone)]
pub struct Store {
    writer: mpsc::Sender<WriterMsg>,
    readers: mpsc::Sender<Option<ReadJob>>,
    threads: Arc<Mutex<Threads>>,
}

pub fn db_path(data_dir: &Path) -> PathBuf {
    data_dir.join("queen.sqlite3")
}

/// `QUEEN_SQS_BROKER_FLUSH`: how the embedded broker's commits reach the disk.
pub const FLUSH_VAR: &str = "QUEEN_SQS_BROKER_FLUSH";

/// The flush policy: `full` (the default) flushes every answered write before its answer, so
/// nothing acknowledged is lost to a power cut; `normal` flushes the WAL only at checkpoints:
/// a killed process still loses nothing (the OS holds what was written), a power cut can
/// lose the last moments of writes. A development endpoint may not need the difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flush {
    Full,
    Normal,
}

impl Flush {
    pub fn from_value(v: Option<&str>) -> Result<Flush, String> {
        match v.map(str::trim) {
            None | Some("") | Some("full") => Ok(Flush::Full),
            Some("normal") => Ok(Flush::Normal),
            Some(other) => Err(format!("{FLUSH_VAR} must be full or normal, not {other:?}")),
        }
    }

    pub fn from_env() -> Result<Flush, String> {
        Flush::from_value(std::env::var(FLUSH_VAR).ok().as_deref())
    }
}

fn open(path: &Path, write: bool) -> SResult<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    if write {
        // Only takes effect while the database has no table yet (a new data dir): lets the
        // retention sweep give reclaimed pages back to the file system
        // (`reclaim::vacuum_step`). An older database keeps its mode and reuses its pages.
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
    }
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // A WAL is reused, not shrunk, after a checkpoint: without a limit it keeps the size of
    // its busiest moment (a burst, a checkpoint held back by a long read) for good.
    conn.pragma_update(None, "journal_size_limit", WAL_LIMIT_BYTES)?;
    // FULL: the WAL is fsynced at every commit, so an answered write survives a power cut.
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "OFF")?;
    conn.pragma_update(None, "cache_size", -65536)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    if write {
        schema::create(&conn)?;
    } else {
        conn.pragma_update(None, "query_only", "ON")?;
    }
    Ok(conn)
}

impl Store {
    /// Opens (creating) the database and starts the writer and reader threads.
    pub fn open(path: &Path) -> SResult<Store> {
        let flush = Flush::from_env().map_err(StoreError::Sql)?;
        let wconn = open(path, true)?;
        let (wtx, wrx) = mpsc::channel::<WriterMsg>();
        let writer = std::thread::Builder::new()
            .name("broker-writer".into())
            .spawn(move || writer_loop(wconn, wrx, flush))
            .map_err(|e| StoreError::Sql(e.to_string()))?;
        let (rtx, rrx) = mpsc::channel::<Option<ReadJob>>();
        let rrx = Arc::new(Mutex::new(rrx));
        let mut readers = Vec::new();
        for i in 0..READERS {
            let conn = open(path, false)?;
            let rx = rrx.clone();
            let h = std::thread::Builder::new()
                .name(format!("broker-reader-{i}"))
                .spawn(move || reader_loop(conn, rx))
                .map_err(|e| StoreError::Sql(e.to_string()))?;
            readers.push(h);
        }
        Ok(Store {
            writer: wtx,
            readers: rtx,
            threads: Arc::new(Mutex::new(Threads {
                writer: Some(writer),
                readers,
            })),
        })
    }

    /// Runs `f` inside the next group commit; resolves after the commit is durable.
    /// `Err` from `f` rolls back only `f`'s own savepoint.
    pub async fn write<R, F>(&self, f: F) -> SResult<R>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> SResult<R> + Send + 'static,
    {
        self.write_with(Durability::Synced, f).await
    }

    /// [`Store::write`] for a job that only takes or renews leases (see [`Durability`]).
    pub async fn write_lease<R, F>(&self, f: F) -> SResult<R>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> SResult<R> + Send + 'static,
    {
        self.write_with(Durability::LeaseOnly, f).await
    }

    async fn write_with<R, F>(&self, durability: Durability, f: F) -> SResult<R>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> SResult<R> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel::<SResult<R>>();
        let job: WriteJob = Box::new(move |conn: &Connection| {
            let out = run_in_savepoint(conn, f);
            Box::new(move |committed: bool| {
                let out = if committed {
                    out
                } else {
                    out.and(Err(StoreError::Sql("commit failed".into())))
                };
                let _ = tx.send(out);
            }) as Deliver
        });
        self.writer
            .send(WriterMsg::Job(job, durability))
            .map_err(|_| StoreError::Closed)?;
        rx.await.unwrap_or(Err(StoreError::Closed))
    }

    /// Runs `f` on a read-only connection inside one read transaction (one snapshot).
    pub async fn read<R, F>(&self, f: F) -> SResult<R>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> SResult<R> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel::<SResult<R>>();
        let job: ReadJob = Box::new(move |conn: &Connection| {
            let out = (|| {
                exec_cached(conn, "BEGIN")?;
                let r = catch_unwind(AssertUnwindSafe(|| f(conn)));
                let _ = exec_cached(conn, "COMMIT");
                r.unwrap_or_else(|_| Err(StoreError::Sql("read job panicked".into())))
            })();
            let _ = tx.send(out);
        });
        self.readers
            .send(Some(job))
            .map_err(|_| StoreError::Closed)?;
        rx.await.unwrap_or(Err(StoreError::Closed))
    }

    /// Copies the WAL into the database file now (passive: it waits for no reader). Pages a
    /// vacuum gave back leave the file only here: until then the WAL holds its new size.
    pub async fn checkpoint(&self) -> SResult<()> {
        let (tx, rx) = oneshot::channel::<SResult<()>>();
        self.writer
            .send(WriterMsg::Checkpoint(tx))
            .map_err(|_| StoreError::Closed)?;
        rx.await.unwrap_or(Err(StoreError::Closed))
    }

    /// Finishes the queued writes, checkpoints the WAL and closes every connection.
    pub fn close_blocking(&self) {
        let _ = self.writer.send(WriterMsg::Stop);
        for _ in 0..READERS {
            let _ = self.readers.send(None);
        }
        let mut t = match self.threads.lock() {
            Ok(t) => t,
            Err(p) => p.into_inner(),
        };
        if let Some(w) = t.writer.take() {
            let _ = w.join();
        }
        for r in t.readers.drain(..) {
            let _ = r.join();
        }
    }
}

/// Runs a statement kept in the connection's cache: the transaction-control statements run
/// for every job, and parsing them afresh each time showed in profiles of the writer.
pub(crate) fn exec_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([])?;
    Ok(())
}

fn run_in_savepoint<R>(conn: &Connection, f: impl FnOnce(&Connection) -> SResult<R>) -> SResult<R> {
    exec_cached(conn, "SAVEPOINT job")?;
    let r = catch_unwind(AssertUnwindSafe(|| f(conn)))
        .unwrap_or_else(|_| Err(StoreError::Sql("write job panicked".into())));
    if r.is_ok() {
        exec_cached(conn, "RELEASE job")?;
    } else {
        conn.execute_batch("ROLLBACK TO job; RELEASE job")?;
    }
    r
}

/// Sets the connection's flush mode for the next commit, when it changes.
fn sync_mode(conn: &Connection, current: &mut Durability, want: Durability) {
    if *current == want {
        return;
    }
    let mode = match want {
        Durability::Synced => "FULL",
        Durability::LeaseOnly => "NORMAL",
    };
    if conn.pragma_update(None, "synchronous", mode).is_ok() {
        *current = want;
    }
}

/// What one turn of the writer took from its channel: the jobs of one group commit and the
/// checkpoints asked for meanwhile (run after that commit).
struct Turn {
    batch: Vec<WriteJob>,
    durability: Durability,
    checkpoints: Vec<oneshot::Sender<SResult<()>>>,
    stopping: bool,
}

/// Waits for the first message (at most `idle` when given: `None` back if none came), then
/// takes whatever else is already waiting.
fn gather(rx: &mpsc::Receiver<WriterMsg>, idle: Option<Duration>) -> Option<Turn> {
    let mut t = Turn {
        batch: Vec::new(),
        durability: Durability::LeaseOnly,
        checkpoints: Vec::new(),
        stopping: false,
    };
    let mut next = match idle {
        None => rx.recv().ok(),
        Some(d) => match rx.recv_timeout(d) {
            Ok(m) => Some(m),
            Err(mpsc::RecvTimeoutError::Timeout) => return None,
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
        },
    };
    while let Some(msg) = next {
        match msg {
            WriterMsg::Job(j, d) => {
                if d == Durability::Synced {
                    t.durability = Durability::Synced;
                }
                t.batch.push(j);
            }
            WriterMsg::Checkpoint(tx) => t.checkpoints.push(tx),
            WriterMsg::Stop => {
                t.stopping = true;
                break;
            }
        }
        if t.batch.len() >= MAX_GROUP {
            break;
        }
        next = rx.try_recv().ok();
    }
    if t.batch.is_empty() && t.checkpoints.is_empty() {
        // The channel closed with nothing in it.
        t.stopping = true;
    }
    Some(t)
}

/// How long the writer waits without a job before it empties the WAL.
const IDLE_CHECKPOINT: Duration = Duration::from_secs(1);

/// Copies the whole WAL back and cuts it to nothing, waiting at most a moment for readers
/// (a reader on an older snapshot makes it give up; the next idle second tries again).
/// Returns whether it got through. Only when idle: under load the WAL is reused instead.
fn truncate_wal(conn: &Connection) -> bool {
    let _ = conn.busy_timeout(Duration::from_millis(50));
    let busy: rusqlite::Result<i64> =
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0));
    let _ = conn.busy_timeout(BUSY_TIMEOUT);
    matches!(busy, Ok(0))
}

fn writer_loop(conn: Connection, rx: mpsc::Receiver<WriterMsg>, flush: Flush) {
    let mut stopping = false;
    let mut mode = Durability::Synced;
    if flush == Flush::Normal {
        // Every commit as a lease-only one; `sync_mode` below never asks for FULL again.
        sync_mode(&conn, &mut mode, Durability::LeaseOnly);
    }
    let relaxed = |d: Durability| {
        if flush == Flush::Normal {
            Durability::LeaseOnly
        } else {
            d
        }
    };
    // Since when the WAL holds frames it has not been emptied of. The sweepers' periodic
    // jobs usually change nothing, so only commits that changed rows (or a vacuum, which
    // asks for a checkpoint) count: otherwise the writer would never look idle.
    let mut dirty_since: Option<Instant> = None;
    while !stopping {
        let wait = dirty_since.map(|t| IDLE_CHECKPOINT.saturating_sub(t.elapsed()));
        let Some(turn) = gather(&rx, wait) else {
            dirty_since = (!truncate_wal(&conn)).then(Instant::now);
            continue;
        };
        stopping = turn.stopping;
        let changes = conn.total_changes();
        if !turn.batch.is_empty() {
            sync_mode(&conn, &mut mode, relaxed(turn.durability));
            commit_group(&conn, turn.batch);
        }
        if conn.total_changes() != changes || !turn.checkpoints.is_empty() {
            dirty_since = Some(Instant::now());
        }
        for tx in turn.checkpoints {
            let r = conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE)");
            let _ = tx.send(r.map_err(StoreError::from));
        }
    }
    // Jobs that raced the stop message still get an answer (they are written).
    sync_mode(&conn, &mut mode, relaxed(Durability::Synced));
    while let Ok(msg) = rx.try_recv() {
        match msg {
            WriterMsg::Job(j, _) => {
                if conn.execute_batch("BEGIN IMMEDIATE").is_ok() {
                    let d = j(&conn);
                    let ok = conn.execute_batch("COMMIT").is_ok();
                    d(ok);
                }
            }
            WriterMsg::Checkpoint(tx) => {
                let _ = tx.send(Err(StoreError::Closed));
            }
            WriterMsg::Stop => {}
        }
    }
    let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
    drop(conn);
}

/// Runs the jobs of one group commit, each in its own savepoint, and answers them all once
/// the commit is done (or failed).
fn commit_group(conn: &Connection, batch: Vec<WriteJob>) {
    if exec_cached(conn, "BEGIN IMMEDIATE").is_err() {
        // Not inside a transaction: run nothing, answer failure (dropping a job drops its
        // answer channel).
        drop(batch);
        return;
    }
    let delivers: Vec<Deliver> = batch.into_iter().map(|job| job(conn)).collect();
    let committed = exec_cached(conn, "COMMIT").is_ok();
    if !committed {
        let _ = conn.execute_batch("ROLLBACK");
    }
    for d in delivers {
        d(committed);
    }
}

fn reader_loop(conn: Connection, rx: Arc<Mutex<mpsc::Receiver<Option<ReadJob>>>>) {
    loop {
        let msg = {
            let guard = match rx.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            guard.recv()
        };
        match msg {
            Ok(Some(job)) => job(&conn),
            Ok(None) | Err(_) => break,
        }
    }
}

#[cfg(test)]
mod ready_tests;

#[cfg(test)]
mod flush_tests {
    use super::Flush;

    #[test]
    fn the_flush_policy_is_full_unless_normal_is_asked_for() {
        assert_eq!(Flush::from_value(None), Ok(Flush::Full));
        assert_eq!(Flush::from_value(Some(" full ")), Ok(Flush::Full));
        assert_eq!(Flush::from_value(Some("normal")), Ok(Flush::Normal));
        let e = Flush::from_value(Some("off")).expect_err("refused");
        assert!(e.contains("QUEEN_SQS_BROKER_FLUSH"), "{e}");
    }
}
