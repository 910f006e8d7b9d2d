//! Queue and partition rows: implicit creation, configure, delete, list.

use super::depth::depth;
use super::options::{apply_bag, default_options, OptionError, QueueOpts};
use super::SResult;
use crate::broker::time::{iso_ms, now_us, uuid_v4};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{json, Map, Value};

pub const QUEUE_MODE: &str = "__QUEUE_MODE__";

#[derive(Clone, Debug)]
pub struct QueueRow {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    pub namespace: String,
    pub task: String,
    pub options: Map<String, Value>,
    pub created_at: i64,
}

impl QueueRow {
    pub fn opts(&self) -> QueueOpts {
        QueueOpts::from_map(&self.options)
    }
}

fn row_to_queue(r: &rusqlite::Row<'_>) -> rusqlite::Result<QueueRow> {
    let opts: String = r.get(5)?;
    let options = match serde_json::from_str::<Value>(&opts) {
        Ok(Value::Object(m)) => m,
        _ => default_options(),
    };
    Ok(QueueRow {
        id: r.get(0)?,
        uuid: r.get(1)?,
        name: r.get(2)?,
        namespace: r.get(3)?,
        task: r.get(4)?,
        options,
        created_at: r.get(6)?,
    })
}

const QUEUE_COLS: &str = "id, uuid, name, namespace, task, options, created_at";

pub fn find_queue(conn: &Connection, name: &str) -> SResult<Option<QueueRow>> {
    let mut st =
        conn.prepare_cached(&format!("SELECT {QUEUE_COLS} FROM queues WHERE name = ?1"))?;
    Ok(st.query_row([name], row_to_queue).optional()?)
}

pub fn find_queue_by_id(conn: &Connection, id: i64) -> SResult<Option<QueueRow>> {
    let mut st = conn.prepare_cached(&format!("SELECT {QUEUE_COLS} FROM queues WHERE id = ?1"))?;
    Ok(st.query_row([id], row_to_queue).optional()?)
}

fn insert_queue(
    conn: &Connection,
    name: &str,
    namespace: &str,
    task: &str,
    options: &Map<String, Value>,
) -> SResult<QueueRow> {
    let uuid = uuid_v4();
    let now = now_us();
    let text = Value::Object(options.clone()).to_string();
    conn.prepare_cached(
        "INSERT INTO queues (uuid, name, namespace, task, options, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![uuid, name, namespace, task, text, now])?;
    Ok(QueueRow {
        id: conn.last_insert_rowid(),
        uuid,
        name: name.to_string(),
        namespace: namespace.to_string(),
        task: task.to_string(),
        options: options.clone(),
        created_at: now,
    })
}

/// The queue row, created with default options if missing (push, timer fire, wildcard pop).
pub fn ensure_queue(conn: &Connection, name: &str) -> SResult<QueueRow> {
    if let Some(q) = find_queue(conn, name)? {
        return Ok(q);
    }
    let (ns, task) = match name.split_once('.') {
        Some((a, b)) => (a, b),
        None => (name, ""),
    };
    insert_queue(conn, name, ns, task, &default_options())
}

#[derive(Clone, Debug)]
pub struct PartitionRow {
    pub id: i64,
    pub queue_id: i64,
    pub uuid: String,
    pub name: String,
    pub last_offset: i64,
    pub log_start: i64,
    pub last_push_at: i64,
}

const PART_COLS: &str = "id, queue_id, uuid, name, last_offset, log_start, last_push_at";

fn row_to_partition(r: &rusqlite::Row<'_>) -> rusqlite::Result<PartitionRow> {
    Ok(PartitionRow {
        id: r.get(0)?,
        queue_id: r.get(1)?,
        uuid: r.get(2)?,
        name: r.get(3)?,
        last_offset: r.get(4)?,
        log_start: r.get(5)?,
        last_push_at: r.get(6)?,
    })
}

pub fn find_partition(
    conn: &Connection,
    queue_id: i64,
    name: &str,
) -> SResult<Option<PartitionRow>> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {PART_COLS} FROM partitions WHERE queue_id = ?1 AND name = ?2"
    ))?;
    Ok(st
        .query_row(params![queue_id, name], row_to_partition)
        .optional()?)
}

pub fn partition_by_uuid(conn: &Connection, uuid: &str) -> SResult<Option<PartitionRow>> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {PART_COLS} FROM partitions WHERE uuid = ?1"
    ))?;
    Ok(st.query_row([uuid], row_to_partition).optional()?)
}

pub fn partition_by_id(conn: &Connection, id: i64) -> SResult<Option<PartitionRow>> {
    let mut st =
        conn.prepare_cached(&format!("SELECT {PART_COLS} FROM partitions WHERE id = ?1"))?;
    Ok(st.query_row([id], row_to_partition).optional()?)
}

pub fn ensure_partition(conn: &Connection, queue_id: i64, name: &str) -> SResult<PartitionRow> {
    if let Some(p) = find_partition(conn, queue_id, name)? {
        return Ok(p);
    }
    let uuid = uuid_v4();
    conn.prepare_cached("INSERT INTO partitions (queue_id, uuid, name) VALUES (?1, ?2, ?3)")?
        .execute(params![queue_id, uuid, name])?;
    Ok(PartitionRow {
        id: conn.last_insert_rowid(),
        queue_id,
        uuid,
        name: name.to_string(),
        last_offset: -1,
        log_start: 0,
        last_push_at: 0,
    })
}

/// A configure request after parsing.
pub struct Configure {
    pub queue: String,
    pub replace: bool,
    pub bag: Map<String, Value>,
    pub namespace: Option<String>,
    pub task: Option<String>,
}

pub enum ConfigureOutcome {
    Done(QueueRow),
    Invalid(OptionError),
}

pub fn configure(conn: &Connection, c: Configure) -> SResult<ConfigureOutcome> {
    let existing = find_queue(conn, &c.queue)?;
    let whole_row = c.replace || existing.is_none();
    let mut options = match (&existing, whole_row) {
        (Some(q), false) => q.options.clone(),
        _ => default_options(),
    };
    if let Err(e) = apply_bag(&mut options, &c.bag) {
        return Ok(ConfigureOutcome::Invalid(e));
    }
    let pick = |given: &Option<String>, stored: Option<&str>| -> String {
        match given {
            Some(s) => s.clone(),
            None if !whole_row => stored.unwrap_or("").to_string(),
            None => String::new(),
        }
    };
    let namespace = pick(
        &c.namespace,
        existing.as_ref().map(|q| q.namespace.as_str()),
    );
    let task = pick(&c.task, existing.as_ref().map(|q| q.task.as_str()));
    match existing {
        Some(q) => {
            let text = Value::Object(options.clone()).to_string();
            conn.prepare_cached(
                "UPDATE queues SET options = ?1, namespace = ?2, task = ?3 WHERE id = ?4",
            )?
            .execute(params![text, namespace, task, q.id])?;
            Ok(ConfigureOutcome::Done(QueueRow {
                options,
                namespace,
                task,
                ..q
            }))
        }
        None => Ok(ConfigureOutcome::Done(insert_queue(
            conn, &c.queue, &namespace, &task, &options,
        )?)),
    }
}

/// Deletes the queue and everything in its partitions; timers and KV stay.
pub fn delete_queue(conn: &Connection, name: &str) -> SResult<bool> {
    let Some(q) = find_queue(conn, name)? else {
        return Ok(false);
    };
    conn.execute(
        "DELETE FROM messages WHERE partition_id IN (SELECT id FROM partitions WHERE queue_id = ?1)",
        [q.id],
    )?;
    // Partition ids can be handed out again: a re-created queue must not inherit dedup ids.
    conn.execute(
        "DELETE FROM spent WHERE partition_id IN (SELECT id FROM partitions WHERE queue_id = ?1)",
        [q.id],
    )?;
    conn.execute(
        "DELETE FROM cursors WHERE partition_id IN (SELECT id FROM partitions WHERE queue_id = ?1)",
        [q.id],
    )?;
    conn.execute("DELETE FROM dlq WHERE queue_id = ?1", [q.id])?;
    conn.execute("DELETE FROM ready WHERE queue_id = ?1", [q.id])?;
    conn.execute("DELETE FROM partitions WHERE queue_id = ?1", [q.id])?;
    conn.execute("DELETE FROM queues WHERE id = ?1", [q.id])?;
    Ok(true)
}

pub fn list_queues(conn: &Connection) -> SResult<Value> {
    let now = now_us();
    let mut st = conn.prepare_cached(
        "SELECT q.id, q.uuid, q.name, q.namespace, q.task, q.created_at,
                COUNT(p.id), COALESCE(SUM(MAX(p.last_offset - p.log_start + 1, 0)), 0)
           FROM queues q LEFT JOIN partitions p ON p.queue_id = q.id
          GROUP BY q.id ORDER BY q.created_at DESC, q.id DESC",
    )?;
    let rows = st.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, i64>(5)?,
            r.get::<_, i64>(6)?,
            r.get::<_, i64>(7)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, uuid, name, ns, task, created, parts, total) = row?;
        let d = depth(conn, id, Some(QUEUE_MODE), now)?;
        out.push(
            json!({"id": uuid, "name": name, "namespace": ns, "task": task,
            "createdAt": iso_ms(created), "partitions": parts, "retainedBytes": 0,
            "messages": {"total": total, "pending": d.pending, "processing": d.processing},
            "segments": {"segments": parts, "messages": total}}),
        );
    }
    let kv_rows: i64 = conn.query_row("SELECT COUNT(*) FROM kv", [], |r| r.get(0))?;
    let timer_rows: i64 = conn.query_row("SELECT COUNT(*) FROM timers", [], |r| r.get(0))?;
    Ok(json!({"queues": out, "kvRows": kv_rows, "timerRows": timer_rows}))
}
