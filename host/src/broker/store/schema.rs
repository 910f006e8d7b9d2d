//! The database schema. Times are integer microseconds since the epoch (UTC).
//!
//! Hot paths never scan the log: messages are keyed by (partition, offset), the dedup/ack
//! lookup by (partition, txn, offset), and consumption state lives in one cursor row per
//! (partition, group), so a pop touches partition and cursor rows plus the few messages it
//! hands out.

use rusqlite::{Connection, OptionalExtension};

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS queues (
    id          INTEGER PRIMARY KEY,
    uuid        TEXT    NOT NULL,
    name        TEXT    NOT NULL UNIQUE,
    namespace   TEXT    NOT NULL DEFAULT '',
    task        TEXT    NOT NULL DEFAULT '',
    options     TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS partitions (
    id           INTEGER PRIMARY KEY,
    queue_id     INTEGER NOT NULL,
    uuid         TEXT    NOT NULL UNIQUE,
    name         TEXT    NOT NULL,
    last_offset  INTEGER NOT NULL DEFAULT -1,
    log_start    INTEGER NOT NULL DEFAULT 0,
    last_push_at INTEGER NOT NULL DEFAULT 0,
    UNIQUE (queue_id, name)
);
-- A rowid table, not WITHOUT ROWID: there a row over ~1,000 bytes spills its tail into an
-- overflow page of its own, so a 1 KiB message took two pages; here rows are stored inline
-- in insertion order (`seq`), several to a page, and a drained stretch of the log frees
-- whole pages.
CREATE TABLE IF NOT EXISTS messages (
    seq          INTEGER PRIMARY KEY,
    partition_id INTEGER NOT NULL,
    offset       INTEGER NOT NULL,
    id           TEXT    NOT NULL,
    txn          TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    trace_id     TEXT,
    payload      TEXT    NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS messages_pos ON messages (partition_id, offset);
-- Led by txn: the default id (a time-ordered UUIDv7) then lands at the index's right edge.
CREATE INDEX IF NOT EXISTS messages_by_txn ON messages (txn, partition_id, offset);
CREATE TABLE IF NOT EXISTS cursors (
    partition_id     INTEGER NOT NULL,
    grp              TEXT    NOT NULL,
    committed        INTEGER NOT NULL,
    lease_id         TEXT,
    lease_expires_at INTEGER,
    batch_end        INTEGER,
    claim_start      INTEGER,
    attempt          INTEGER NOT NULL DEFAULT 0,
    retry_count      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (partition_id, grp)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cursors_lease ON cursors (lease_id) WHERE lease_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS cursors_expiry ON cursors (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
-- Queue-mode partitions with messages past their cursor (store/ready.rs).
CREATE TABLE IF NOT EXISTS ready (
    queue_id     INTEGER NOT NULL,
    ready_at     INTEGER NOT NULL,
    partition_id INTEGER NOT NULL UNIQUE,
    PRIMARY KEY (queue_id, ready_at, partition_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dlq (
    id           INTEGER PRIMARY KEY,
    queue_id     INTEGER NOT NULL,
    partition_id INTEGER NOT NULL,
    grp          TEXT    NOT NULL,
    offset       INTEGER NOT NULL,
    message_id   TEXT    NOT NULL,
    txn          TEXT    NOT NULL,
    payload      TEXT    NOT NULL,
    error        TEXT    NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS dlq_queue ON dlq (queue_id);
CREATE TABLE IF NOT EXISTS kv (
    ns         TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    expires_at INTEGER,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (ns, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS kv_expiry ON kv (expires_at) WHERE expires_at IS NOT NULL;
-- A rowid table like `messages`: a visibility timer carries a whole message copy, and WITHOUT
-- ROWID would give each one over ~1,000 bytes an overflow page of its own.
CREATE TABLE IF NOT EXISTS timers (
    queue        TEXT    NOT NULL,
    timer_key    TEXT    NOT NULL,
    partition    TEXT    NOT NULL,
    deliver_at   INTEGER NOT NULL,
    txn          TEXT    NOT NULL,
    message_id   TEXT    NOT NULL,
    payload      BLOB    NOT NULL,
    payload_zstd INTEGER NOT NULL DEFAULT 0,
    encrypted    INTEGER NOT NULL DEFAULT 0,
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS timers_key ON timers (queue, timer_key);
CREATE INDEX IF NOT EXISTS timers_due ON timers (deliver_at);
-- Reclaimed messages whose transaction id the dedup window still needs (store/reclaim.rs):
-- no payload, gone at `expires_at` (push time + the queue's dedupWindowSeconds).
CREATE TABLE IF NOT EXISTS spent (
    expires_at   INTEGER NOT NULL,
    partition_id INTEGER NOT NULL,
    offset       INTEGER NOT NULL,
    txn          TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (expires_at, partition_id, offset)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS spent_txn ON spent (partition_id, txn, offset);
CREATE TABLE IF NOT EXISTS meta (
    k TEXT PRIMARY KEY,
    v INTEGER NOT NULL
);
INSERT OR IGNORE INTO meta (k, v) VALUES ('kv_version', 1000);
"#;

/// Whether `table` still has the first layout (WITHOUT ROWID, clustered on its key).
fn first_layout(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    let sql: Option<String> = conn
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )
        .optional()?;
    Ok(sql.is_some_and(|s| s.contains("WITHOUT ROWID")))
}

/// Rewrites the first layout's `messages` and `timers` tables as rowid tables, once, in one
/// transaction: each is renamed aside, created anew by the schema and refilled (messages in
/// push order, which `seq` then keeps).
fn migrate_layout(conn: &Connection) -> rusqlite::Result<()> {
    let messages = first_layout(conn, "messages")?;
    let timers = first_layout(conn, "timers")?;
    if !messages && !timers {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    if messages {
        conn.execute_batch(
            "ALTER TABLE messages RENAME TO messages_v1; DROP INDEX IF EXISTS messages_txn;",
        )?;
    }
    if timers {
        conn.execute_batch(
            "ALTER TABLE timers RENAME TO timers_v1; DROP INDEX IF EXISTS timers_due;",
        )?;
    }
    conn.execute_batch(SCHEMA)?;
    if messages {
        conn.execute_batch(
            "INSERT INTO messages (partition_id, offset, id, txn, created_at, trace_id, payload)
             SELECT partition_id, offset, id, txn, created_at, trace_id, payload FROM messages_v1
              ORDER BY created_at, partition_id, offset;
             DROP TABLE messages_v1;",
        )?;
    }
    if timers {
        conn.execute_batch(
            "INSERT INTO timers (queue, timer_key, partition, deliver_at, txn, message_id,
                                 payload, payload_zstd, encrypted, attempts, last_error,
                                 created_at, updated_at)
             SELECT queue, timer_key, partition, deliver_at, txn, message_id, payload,
                    payload_zstd, encrypted, attempts, last_error, created_at, updated_at
               FROM timers_v1;
             DROP TABLE timers_v1;",
        )?;
    }
    conn.execute_batch("COMMIT")
}

pub fn create(conn: &Connection) -> rusqlite::Result<()> {
    migrate_layout(conn)?;
    conn.execute_batch(SCHEMA)?;
    // A database written before the ready index existed gets it built once.
    let built: Option<i64> = conn
        .query_row("SELECT v FROM meta WHERE k = 'ready_index'", [], |r| {
            r.get(0)
        })
        .optional()?;
    if built.is_none() {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        super::ready::rebuild(conn)?;
        conn.execute("INSERT INTO meta (k, v) VALUES ('ready_index', 1)", [])?;
        conn.execute_batch("COMMIT")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    #[test]
    fn a_first_layout_store_keeps_its_messages_and_timers_in_the_rowid_layout() {
        let conn = Connection::open_in_memory().expect("db");
        conn.execute_batch(
            "CREATE TABLE messages (partition_id INTEGER NOT NULL, offset INTEGER NOT NULL,
                 id TEXT NOT NULL, txn TEXT NOT NULL, created_at INTEGER NOT NULL, trace_id TEXT,
                 payload TEXT NOT NULL, PRIMARY KEY (partition_id, offset)) WITHOUT ROWID;
             CREATE INDEX messages_txn ON messages (partition_id, txn, offset);
             INSERT INTO messages VALUES (7, 1, 'm1', 't1', 20, NULL, '\"b\"'),
                                         (7, 0, 'm0', 't0', 10, 'tr', '\"a\"');
             CREATE TABLE timers (queue TEXT NOT NULL, timer_key TEXT NOT NULL,
                 partition TEXT NOT NULL, deliver_at INTEGER NOT NULL, txn TEXT NOT NULL,
                 message_id TEXT NOT NULL, payload BLOB NOT NULL,
                 payload_zstd INTEGER NOT NULL DEFAULT 0, encrypted INTEGER NOT NULL DEFAULT 0,
                 attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT,
                 created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
                 PRIMARY KEY (queue, timer_key)) WITHOUT ROWID;
             CREATE INDEX timers_due ON timers (deliver_at);
             INSERT INTO timers VALUES ('q', 'sqs.k', 'p', 99, 'tx', 'mid', x'0102', 0, 0, 2,
                                        'boom', 5, 6);",
        )
        .expect("first layout");
        super::create(&conn).expect("migrates");
        assert!(!super::first_layout(&conn, "messages").expect("layout"));
        assert!(!super::first_layout(&conn, "timers").expect("layout"));
        let timer: (String, i64, Vec<u8>, i64, String) = conn
            .query_row(
                "SELECT timer_key, deliver_at, payload, attempts, last_error FROM timers",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .expect("timer kept");
        assert_eq!(timer, ("sqs.k".into(), 99, vec![1, 2], 2, "boom".into()));
        let rows: Vec<(i64, i64, String, String, Option<String>, String)> = conn
            .prepare("SELECT seq, offset, id, txn, trace_id, payload FROM messages ORDER BY seq")
            .expect("select")
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(
            rows,
            vec![
                (
                    1,
                    0,
                    "m0".into(),
                    "t0".into(),
                    Some("tr".into()),
                    "\"a\"".into()
                ),
                (2, 1, "m1".into(), "t1".into(), None, "\"b\"".into()),
            ]
        );
        let old: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_schema
                  WHERE name IN ('messages_v1', 'messages_txn', 'timers_v1')",
                [],
                |r| r.get(0),
            )
            .expect("count");
        assert_eq!(old, 0);
        // Idempotent: a second open changes nothing.
        super::create(&conn).expect("again");
    }
}
