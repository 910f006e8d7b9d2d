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
use tokio::sync::oneshot;

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
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
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
    while !stopping {
        let (first, mut durability) = match rx.recv() {
            Ok(WriterMsg::Job(j, d)) => (j, d),
            Ok(WriterMsg::Stop) | Err(_) => break,
        };
        let mut batch = vec![first];
        while batch.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(WriterMsg::Job(j, d)) => {
                    if d == Durability::Synced {
                        durability = Durability::Synced;
                    }
                    batch.push(j);
                }
                Ok(WriterMsg::Stop) => {
                    stopping = true;
                    break;
                }
                Err(_) => break,
            }
        }
        sync_mode(&conn, &mut mode, relaxed(durability));
        if exec_cached(&conn, "BEGIN IMMEDIATE").is_err() {
            for job in batch {
                // Not inside a transaction: run nothing, answer failure.
                drop(job);
            }
            continue;
        }
        let delivers: Vec<Deliver> = batch.into_iter().map(|job| job(&conn)).collect();
        let committed = exec_cached(&conn, "COMMIT").is_ok();
        if !committed {
            let _ = conn.execute_batch("ROLLBACK");
        }
        for d in delivers {
            d(committed);
        }
    }
    // Jobs that raced the stop message still get an answer (they are written).
    sync_mode(&conn, &mut mode, relaxed(Durability::Synced));
    while let Ok(WriterMsg::Job(j, _)) = rx.try_recv() {
        if conn.execute_batch("BEGIN IMMEDIATE").is_ok() {
            let d = j(&conn);
            let ok = conn.execute_batch("COMMIT").is_ok();
            d(ok);
        }
    }
    let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
    drop(conn);
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
