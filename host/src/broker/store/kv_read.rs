//! The multi-key KV reads (`getMany`, `getPrefix`): run after every single-key op of the
//! call, in byte order, under the call's 4 MiB value budget (the row that crosses the
//! budget is still included; `truncated` says rows were left out).

use super::kv::{load, row_json, Row};
use super::SResult;
use rusqlite::{params, Connection};
use serde_json::{json, Value};

/// Rows by key; `missing` lists the absent keys in input order.
pub fn get_many(
    conn: &Connection,
    ns: &str,
    keys: &[String],
    now: i64,
    budget: &mut usize,
) -> SResult<Value> {
    let mut sorted: Vec<&String> = keys.iter().collect();
    sorted.sort();
    sorted.dedup();
    let mut found: Vec<(String, Row)> = Vec::new();
    for k in sorted {
        if let Some(r) = load(conn, ns, k, now)? {
            found.push((k.clone(), r));
        }
    }
    let mut rows = Vec::new();
    let mut truncated = false;
    for (k, r) in &found {
        if *budget == 0 {
            truncated = true;
            break;
        }
        *budget = budget.saturating_sub(r.value.len());
        rows.push(row_json(k, r, true));
    }
    let mut missing: Vec<&String> = Vec::new();
    for k in keys {
        if !found.iter().any(|(f, _)| f == k) && !missing.contains(&k) {
            missing.push(k);
        }
    }
    Ok(json!({"rows": rows, "missing": missing, "truncated": truncated}))
}

/// One keyset page of `prefix` after `after` (exclusive), at most `limit` rows.
#[allow(clippy::too_many_arguments)]
pub fn get_prefix(
    conn: &Connection,
    ns: &str,
    prefix: &str,
    after: Option<&str>,
    limit: i64,
    keys_only: bool,
    now: i64,
    budget: &mut usize,
) -> SResult<Value> {
    // Start the range scan at the later of the prefix and the cursor.
    let after = after.filter(|a| *a >= prefix);
    let start = after.unwrap_or(prefix);
    let mut st = conn.prepare_cached(
        "SELECT key, value, version, expires_at, updated_at FROM kv
          WHERE ns = ?1 AND key >= ?2 AND (expires_at IS NULL OR expires_at > ?3)
          ORDER BY key",
    )?;
    let mut q = st.query(params![ns, start, now])?;
    let mut rows = Vec::new();
    let mut truncated = false;
    let mut last: Option<String> = None;
    while let Some(r) = q.next()? {
        let k: String = r.get(0)?;
        if Some(k.as_str()) == after {
            continue;
        }
        if !k.starts_with(prefix) {
            break;
        }
        if rows.len() as i64 >= limit || (!keys_only && *budget == 0) {
            truncated = true;
            break;
        }
        let row = Row {
            value: r.get(1)?,
            version: r.get(2)?,
            expires_at: r.get(3)?,
            updated_at: r.get(4)?,
        };
        if !keys_only {
            *budget = budget.saturating_sub(row.value.len());
        }
        rows.push(row_json(&k, &row, !keys_only));
        last = Some(k);
    }
    let next = match (truncated, last) {
        (true, Some(k)) => Value::String(k),
        _ => Value::Null,
    };
    Ok(json!({"rows": rows, "truncated": truncated, "nextAfter": next}))
}
