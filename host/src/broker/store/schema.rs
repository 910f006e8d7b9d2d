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
CREATE TABLE IF NOT EXISTS messages (
    partition_id INTEGER NOT NULL,
    offset       INTEGER NOT NULL,
    id           TEXT    NOT NULL,
    txn          TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    trace_id     TEXT,
    payload      TEXT    NOT NULL,
    PRIMARY KEY (partition_id, offset)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS messages_txn ON messages (partition_id, txn, offset);
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
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (queue, timer_key)
) WITHOUT ROWID;
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

pub fn create(conn: &Connection) -> rusqlite::Result<()> {
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
