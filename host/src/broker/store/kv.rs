//! The key/value store (§6): versions from one global sequence, compare-and-set
//! preconditions, TTLs (an expired row is invisible before it is pruned), byte-ordered
//! prefix pages. Ops arrive validated (see `api::kv`); this file only applies them.

use super::kv_read::{get_many, get_prefix};
use super::SResult;
use crate::broker::time::iso_us;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{json, Map, Number, Value};

pub const READ_BUDGET: usize = 4 * 1024 * 1024;

#[derive(Clone, Debug)]
pub enum Expiry {
    Ttl(i64),
    Forever,
}

#[derive(Clone, Debug)]
pub enum KvOp {
    Get {
        ns: String,
        key: String,
    },
    GetMany {
        ns: String,
        keys: Vec<String>,
    },
    GetPrefix {
        ns: String,
        prefix: String,
        after: Option<String>,
        limit: i64,
        keys_only: bool,
    },
    Put {
        ns: String,
        key: String,
        value: String,
        expiry: Expiry,
        expect: Option<i64>,
        required: bool,
        name: String,
    },
    Delete {
        ns: String,
        key: String,
        expect: Option<i64>,
        required: bool,
    },
    Incr {
        ns: String,
        key: String,
        delta: Number,
        min: Option<f64>,
        max: Option<f64>,
        expiry: Expiry,
        required: bool,
    },
    Check {
        ns: String,
        key: String,
        expect: i64,
        required: bool,
    },
}

impl KvOp {
    pub fn is_read_only(&self) -> bool {
        matches!(
            self,
            KvOp::Get { .. } | KvOp::GetMany { .. } | KvOp::GetPrefix { .. } | KvOp::Check { .. }
        )
    }
    fn is_multi(&self) -> bool {
        matches!(self, KvOp::GetMany { .. } | KvOp::GetPrefix { .. })
    }
    fn sort_key(&self) -> (&str, &str) {
        match self {
            KvOp::Get { ns, key }
            | KvOp::Put { ns, key, .. }
            | KvOp::Delete { ns, key, .. }
            | KvOp::Incr { ns, key, .. }
            | KvOp::Check { ns, key, .. } => (ns, key),
            KvOp::GetMany { ns, .. } | KvOp::GetPrefix { ns, .. } => (ns, ""),
        }
    }
}

/// A lost `required` precondition: the whole call (or transaction) must roll back.
#[derive(Clone, Debug)]
pub struct KvAbort {
    pub index: usize,
    pub kv_reason: String,
    pub version: i64,
    pub value: Value,
}

pub(super) struct Row {
    pub(super) value: String,
    pub(super) version: i64,
    pub(super) expires_at: Option<i64>,
    pub(super) updated_at: i64,
}

pub(super) fn load(conn: &Connection, ns: &str, key: &str, now: i64) -> SResult<Option<Row>> {
    let mut st = conn.prepare_cached(
        "SELECT value, version, expires_at, updated_at FROM kv
          WHERE ns = ?1 AND key = ?2 AND (expires_at IS NULL OR expires_at > ?3)",
    )?;
    Ok(st
        .query_row(params![ns, key, now], |r| {
            Ok(Row {
                value: r.get(0)?,
                version: r.get(1)?,
                expires_at: r.get(2)?,
                updated_at: r.get(3)?,
            })
        })
        .optional()?)
}

pub(super) fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

fn next_version(conn: &Connection) -> SResult<i64> {
    let v: i64 = conn
        .prepare_cached("UPDATE meta SET v = v + 1 WHERE k = 'kv_version' RETURNING v")?
        .query_row([], |r| r.get(0))?;
    Ok(v)
}

fn write(
    conn: &Connection,
    ns: &str,
    key: &str,
    value: &str,
    expires_at: Option<i64>,
    now: i64,
) -> SResult<i64> {
    let version = next_version(conn)?;
    conn.prepare_cached(
        "INSERT INTO kv (ns, key, value, version, expires_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, version = excluded.version,
                expires_at = excluded.expires_at, updated_at = excluded.updated_at",
    )?
    .execute(params![ns, key, value, version, expires_at, now])?;
    Ok(version)
}

fn remove(conn: &Connection, ns: &str, key: &str) -> SResult<()> {
    conn.prepare_cached("DELETE FROM kv WHERE ns = ?1 AND key = ?2")?
        .execute(params![ns, key])?;
    Ok(())
}

fn expiry_at(e: &Expiry, now: i64) -> Option<i64> {
    match e {
        Expiry::Ttl(s) => Some(now.saturating_add(s.saturating_mul(1_000_000))),
        Expiry::Forever => None,
    }
}

pub(super) fn row_json(key: &str, r: &Row, with_value: bool) -> Value {
    let mut m = Map::new();
    m.insert("key".into(), json!(key));
    if with_value {
        m.insert("value".into(), parse(&r.value));
    }
    m.insert("version".into(), json!(r.version));
    m.insert(
        "expiresAt".into(),
        r.expires_at
            .map(iso_us)
            .map(Value::String)
            .unwrap_or(Value::Null),
    );
    m.insert("updatedAt".into(), json!(iso_us(r.updated_at)));
    Value::Object(m)
}

/// The CAS verdict of `expect` against the effective version: None = holds, Some(reason) = lost.
fn verdict(expect: Option<i64>, eff: i64) -> Option<&'static str> {
    match expect {
        None => None,
        Some(0) if eff == 0 => None,
        Some(0) => Some("exists"),
        Some(n) if eff == n => None,
        Some(_) if eff == 0 => Some("absent"),
        Some(_) => Some("version"),
    }
}

fn add(cur: &Number, delta: &Number) -> Option<Number> {
    if let (Some(a), Some(b)) = (cur.as_i64(), delta.as_i64()) {
        if let Some(s) = a.checked_add(b) {
            return Some(Number::from(s));
        }
    }
    let s = cur.as_f64()? + delta.as_f64()?;
    if s.fract() == 0.0 && s.abs() < 9.0e15 {
        return Some(Number::from(s as i64));
    }
    Number::from_f64(s)
}

/// Applies the ops at one instant. Single-key ops run in (ns, key) byte order, multi-key
/// reads last; results are reported by input index. `Err(KvAbort)` means a required
/// precondition lost and the caller MUST roll back whatever this call wrote.
pub fn apply(conn: &Connection, ops: &[KvOp], now: i64) -> SResult<Result<Vec<Value>, KvAbort>> {
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by(|&a, &b| {
        let (ma, mb) = (ops[a].is_multi(), ops[b].is_multi());
        ma.cmp(&mb).then_with(|| {
            if ma {
                a.cmp(&b)
            } else {
                ops[a].sort_key().cmp(&ops[b].sort_key()).then(a.cmp(&b))
            }
        })
    });
    let mut results: Vec<Value> = vec![Value::Null; ops.len()];
    let mut budget = READ_BUDGET;
    for i in order {
        let r = match &ops[i] {
            KvOp::Get { ns, key } => match load(conn, ns, key, now)? {
                Some(row) => {
                    let mut v = row_json(key, &row, true);
                    v["found"] = json!(true);
                    v
                }
                None => json!({"key": key, "found": false}),
            },
            KvOp::Check {
                ns,
                key,
                expect,
                required,
            } => {
                let row = load(conn, ns, key, now)?;
                let eff = row.as_ref().map(|r| r.version).unwrap_or(0);
                let value = row.as_ref().map(|r| parse(&r.value)).unwrap_or(Value::Null);
                match verdict(Some(*expect), eff) {
                    None => json!({"applied": true, "key": key, "version": eff, "value": value}),
                    Some(reason) => {
                        if *required {
                            return Ok(Err(KvAbort {
                                index: i,
                                kv_reason: reason.into(),
                                version: eff,
                                value,
                            }));
                        }
                        json!({"applied": false, "reason": reason, "key": key, "version": eff, "value": value})
                    }
                }
            }
            KvOp::Put {
                ns,
                key,
                value,
                expiry,
                expect,
                required,
                ..
            } => {
                let row = load(conn, ns, key, now)?;
                let eff = row.as_ref().map(|r| r.version).unwrap_or(0);
                match verdict(*expect, eff) {
                    None => {
                        let v = write(conn, ns, key, value, expiry_at(expiry, now), now)?;
                        json!({"applied": true, "key": key, "value": parse(value), "version": v})
                    }
                    Some(reason) => {
                        let cur = row.as_ref().map(|r| parse(&r.value)).unwrap_or(Value::Null);
                        if *required {
                            return Ok(Err(KvAbort {
                                index: i,
                                kv_reason: reason.into(),
                                version: eff,
                                value: cur,
                            }));
                        }
                        json!({"applied": false, "reason": reason, "key": key, "value": cur, "version": eff})
                    }
                }
            }
            KvOp::Delete {
                ns,
                key,
                expect,
                required,
            } => {
                let row = load(conn, ns, key, now)?;
                let eff = row.as_ref().map(|r| r.version).unwrap_or(0);
                let cur = row.as_ref().map(|r| parse(&r.value)).unwrap_or(Value::Null);
                // A plain delete of nothing is "absent"; `expect: 0` of nothing applies.
                let lost = match expect {
                    None if eff == 0 => Some("absent"),
                    _ => verdict(*expect, eff),
                };
                match lost {
                    None => {
                        if eff != 0 {
                            remove(conn, ns, key)?;
                        }
                        json!({"applied": true, "key": key, "value": cur, "version": eff})
                    }
                    Some(reason) => {
                        if *required {
                            return Ok(Err(KvAbort {
                                index: i,
                                kv_reason: reason.into(),
                                version: eff,
                                value: cur,
                            }));
                        }
                        json!({"applied": false, "reason": reason, "key": key, "value": cur, "version": eff})
                    }
                }
            }
            KvOp::Incr {
                ns,
                key,
                delta,
                min,
                max,
                expiry,
                required,
            } => {
                let row = load(conn, ns, key, now)?;
                let eff = row.as_ref().map(|r| r.version).unwrap_or(0);
                let cur_val = row.as_ref().map(|r| parse(&r.value));
                let lost = |reason: &str, value: Value| -> Result<Value, KvAbort> {
                    if *required {
                        Err(KvAbort {
                            index: i,
                            kv_reason: reason.into(),
                            version: eff,
                            value,
                        })
                    } else {
                        Ok(
                            json!({"applied": false, "reason": reason, "key": key, "value": value, "version": eff}),
                        )
                    }
                };
                let cur_num = match &cur_val {
                    None => Some(Number::from(0)),
                    Some(Value::Number(n)) => Some(n.clone()),
                    Some(_) => None,
                };
                let res = match cur_num {
                    None => lost("type", cur_val.clone().unwrap_or(Value::Null)),
                    Some(c) => match add(&c, delta) {
                        None => lost("limit", Value::Number(c)),
                        Some(n) => {
                            let f = n.as_f64().unwrap_or(0.0);
                            if min.is_some_and(|m| f < m) || max.is_some_and(|m| f > m) {
                                lost("limit", Value::Number(c))
                            } else {
                                let exp = match &row {
                                    Some(r) => r.expires_at,
                                    None => expiry_at(expiry, now),
                                };
                                let text = n.to_string();
                                let v = write(conn, ns, key, &text, exp, now)?;
                                Ok(
                                    json!({"applied": true, "key": key, "value": Value::Number(n), "version": v}),
                                )
                            }
                        }
                    },
                };
                match res {
                    Ok(v) => v,
                    Err(a) => return Ok(Err(a)),
                }
            }
            KvOp::GetMany { ns, keys } => get_many(conn, ns, keys, now, &mut budget)?,
            KvOp::GetPrefix {
                ns,
                prefix,
                after,
                limit,
                keys_only,
            } => get_prefix(
                conn,
                ns,
                prefix,
                after.as_deref(),
                *limit,
                *keys_only,
                now,
                &mut budget,
            )?,
        };
        results[i] = r;
    }
    for (i, r) in results.iter_mut().enumerate() {
        if let Value::Object(m) = r {
            let mut out = Map::new();
            out.insert("index".into(), json!(i));
            out.insert("op".into(), json!(op_name(&ops[i])));
            out.append(m);
            *m = out;
        }
    }
    Ok(Ok(results))
}

pub fn op_name(op: &KvOp) -> &str {
    match op {
        KvOp::Get { .. } => "get",
        KvOp::GetMany { .. } => "getMany",
        KvOp::GetPrefix { .. } => "getPrefix",
        KvOp::Put { name, .. } => name,
        KvOp::Delete { .. } => "delete",
        KvOp::Incr { .. } => "incr",
        KvOp::Check { .. } => "check",
    }
}

/// Physically removes rows past their expiry (they are already invisible).
pub fn prune(conn: &Connection, now: i64) -> SResult<usize> {
    Ok(conn
        .prepare_cached("DELETE FROM kv WHERE expires_at IS NOT NULL AND expires_at <= ?1")?
        .execute([now])?)
}
