//! Timers (§7): messages not in the log yet. Firing deletes the row and appends the message
//! with the promised id in one step, so delivery is exactly once.

use super::messages::{append, Mode, PushItem};
use super::SResult;
use crate::broker::time::{iso_us, uuid_v7};
use base64::Engine;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{json, Value};

/// Largest payload a timer may deliver (`QUEEN_TIMERS_MAX_PAYLOAD_BYTES`).
pub const MAX_DECODED: usize = 1024 * 1024;

#[derive(Clone, Debug)]
pub struct Schedule {
    pub op: String,
    pub queue: String,
    pub key: String,
    pub partition: String,
    pub delay_ms: i64,
    pub txn: String,
    /// Decoded payload bytes.
    pub payload: Vec<u8>,
    pub zstd: bool,
    pub encrypted: bool,
}

#[derive(Clone, Debug)]
pub enum TimerOp {
    Schedule(Schedule),
    Cancel {
        queue: String,
        key: String,
        txn: Option<String>,
    },
}

pub fn apply(conn: &Connection, ops: &[TimerOp], now: i64) -> SResult<Vec<Value>> {
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        out.push(match op {
            TimerOp::Schedule(s) => schedule(conn, s, now)?,
            TimerOp::Cancel { queue, key, txn } => cancel(conn, queue, key, txn.as_deref())?,
        });
    }
    Ok(out)
}

fn schedule(conn: &Connection, s: &Schedule, now: i64) -> SResult<Value> {
    let deliver_at = now.saturating_add(s.delay_ms.saturating_mul(1000));
    let message_id = uuid_v7();
    let existed: bool = conn
        .prepare_cached("SELECT 1 FROM timers WHERE queue = ?1 AND timer_key = ?2")?
        .query_row(params![s.queue, s.key], |_| Ok(()))
        .optional()?
        .is_some();
    conn.prepare_cached(
        "INSERT INTO timers (queue, timer_key, partition, deliver_at, txn, message_id, payload,
                             payload_zstd, encrypted, attempts, last_error, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, NULL, ?10, ?10)
         ON CONFLICT (queue, timer_key) DO UPDATE SET partition = excluded.partition,
                deliver_at = excluded.deliver_at, txn = excluded.txn, message_id = excluded.message_id,
                payload = excluded.payload, payload_zstd = excluded.payload_zstd,
                encrypted = excluded.encrypted, attempts = 0, last_error = NULL,
                updated_at = excluded.updated_at",
    )?
    .execute(params![
        s.queue,
        s.key,
        s.partition,
        deliver_at,
        s.txn,
        message_id,
        s.payload,
        s.zstd,
        s.encrypted,
        now
    ])?;
    Ok(
        json!({"ok": true, "status": if existed { "rescheduled" } else { "scheduled" },
              "queue": s.queue, "timerKey": s.key, "txn": s.txn, "messageId": message_id,
              "deliverAt": iso_us(deliver_at)}),
    )
}

pub fn cancel(conn: &Connection, queue: &str, key: &str, txn: Option<&str>) -> SResult<Value> {
    let stored: Option<String> = conn
        .prepare_cached("DELETE FROM timers WHERE queue = ?1 AND timer_key = ?2 RETURNING txn")?
        .query_row(params![queue, key], |r| r.get(0))
        .optional()?;
    Ok(match stored {
        Some(t) => {
            json!({"ok": true, "status": "cancelled", "queue": queue, "timerKey": key, "txn": t})
        }
        None => {
            json!({"ok": false, "status": "absent", "queue": queue, "timerKey": key, "txn": txn})
        }
    })
}

/// Decompresses a `payloadZstd` payload, refusing anything that inflates past `max` bytes.
pub fn unzstd(bytes: &[u8], max: usize) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let dec = ruzstd::decoding::StreamingDecoder::new(bytes).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    dec.take(max as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    if out.len() > max {
        return Err(format!("decompressed payload is larger than {max} bytes"));
    }
    Ok(out)
}

/// The delivered payload must be one JSON document: bytes that are not become a JSON string.
fn payload_text(bytes: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if serde_json::from_str::<serde::de::IgnoredAny>(s).is_ok() {
            return s.to_string();
        }
        return Value::String(s.to_string()).to_string();
    }
    Value::String(base64::engine::general_purpose::STANDARD.encode(bytes)).to_string()
}

/// Fires up to `max` due timers in due order; returns the queues that received messages.
pub fn fire_due(conn: &Connection, now: i64, max: i64) -> SResult<Vec<String>> {
    type Due = (String, String, String, String, String, Vec<u8>, bool);
    let due: Vec<Due> = conn
        .prepare_cached(
            "SELECT queue, timer_key, partition, txn, message_id, payload, payload_zstd FROM timers
              WHERE deliver_at <= ?1 ORDER BY deliver_at, queue, timer_key LIMIT ?2",
        )?
        .query_map(params![now, max], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })?
        .collect::<Result<_, _>>()?;
    let mut queues = Vec::new();
    for (queue, key, partition, txn, message_id, mut payload, zstd) in due {
        if zstd {
            // Validated at schedule time; should it still fail, the stored bytes are delivered.
            if let Ok(plain) = unzstd(&payload, MAX_DECODED) {
                payload = plain;
            }
        }
        conn.prepare_cached("DELETE FROM timers WHERE queue = ?1 AND timer_key = ?2")?
            .execute(params![queue, key])?;
        let item = PushItem {
            queue: queue.clone(),
            partition,
            payload: payload_text(&payload),
            txn: Some(txn),
            trace_id: None,
            message_id: Some(message_id),
        };
        // Mode::Fire never reports a duplicate, so the inner result is always Ok.
        let _ = append(conn, &[item], now, Mode::Fire)?;
        if !queues.contains(&queue) {
            queues.push(queue);
        }
    }
    Ok(queues)
}

/// Earliest pending deliverAt, if any.
pub fn next_due(conn: &Connection) -> SResult<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT MIN(deliver_at) FROM timers")?
        .query_row([], |r| r.get(0))?)
}

/// Exact number of the queue's pending timers whose key starts with `prefix` (literal bytes).
pub fn count(conn: &Connection, queue: &str, prefix: &str) -> SResult<i64> {
    let mut st = conn.prepare_cached(
        "SELECT timer_key FROM timers WHERE queue = ?1 AND timer_key >= ?2 ORDER BY timer_key",
    )?;
    let mut q = st.query(params![queue, prefix])?;
    let mut n = 0;
    while let Some(r) = q.next()? {
        let k: String = r.get(0)?;
        if !k.starts_with(prefix) {
            break;
        }
        n += 1;
    }
    Ok(n)
}

fn row_json(r: &rusqlite::Row<'_>, with_payload: bool) -> rusqlite::Result<Value> {
    let payload: Vec<u8> = r.get(6)?;
    let mut v = json!({
        "queue": r.get::<_, String>(0)?, "timerKey": r.get::<_, String>(1)?,
        "partition": r.get::<_, String>(2)?, "deliverAt": iso_us(r.get(3)?),
        "txn": r.get::<_, String>(4)?, "messageId": r.get::<_, String>(5)?,
        "payloadZstd": r.get::<_, bool>(7)?, "encrypted": r.get::<_, bool>(8)?,
        "producerSub": null, "attempts": r.get::<_, i64>(9)?,
        "lastError": r.get::<_, Option<String>>(10)?, "claimed": false,
        "createdAt": iso_us(r.get(11)?), "updatedAt": iso_us(r.get(12)?)});
    if with_payload {
        v["payload"] = json!(base64::engine::general_purpose::STANDARD.encode(payload));
    }
    Ok(v)
}

const COLS: &str =
    "queue, timer_key, partition, deliver_at, txn, message_id, payload, payload_zstd,
                    encrypted, attempts, last_error, created_at, updated_at";

/// Keyset page of one queue's timers after `after` (exclusive).
pub fn list(conn: &Connection, queue: &str, after: &str, limit: i64) -> SResult<Value> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {COLS} FROM timers WHERE queue = ?1 AND timer_key > ?2 ORDER BY timer_key LIMIT ?3"
    ))?;
    let mut rows: Vec<Value> = st
        .query_map(params![queue, after, limit + 1], |r| row_json(r, false))?
        .collect::<Result<_, _>>()?;
    let truncated = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next = if truncated {
        rows.last()
            .map(|r| r["timerKey"].clone())
            .unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    Ok(json!({"rows": rows, "truncated": truncated, "nextAfter": next}))
}

pub fn peek(conn: &Connection, queue: &str, key: &str) -> SResult<Value> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {COLS} FROM timers WHERE queue = ?1 AND timer_key = ?2"
    ))?;
    let row = st
        .query_row(params![queue, key], |r| row_json(r, true))
        .optional()?;
    Ok(match row {
        Some(mut v) => {
            v["found"] = json!(true);
            v
        }
        None => json!({"found": false, "queue": queue, "timerKey": key}),
    })
}
