//! The key/value store (API §6): versions, compare-and-set, prefix listing.

use super::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Digest;

/// The namespace every facade key lives in.
pub const NS: &str = "qs";

/// One KV operation. Builders below keep call sites short and the shapes right.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct KvOp {
    pub op: &'static str,
    pub ns: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forever: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_seconds: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
}

impl KvOp {
    fn new(op: &'static str) -> KvOp {
        KvOp {
            op,
            ns: NS,
            key: None,
            keys: None,
            prefix: None,
            after: None,
            limit: None,
            value: None,
            forever: None,
            ttl_seconds: None,
            expect: None,
            required: None,
            delta: None,
            max: None,
        }
    }
    pub fn get(key: impl Into<String>) -> KvOp {
        KvOp {
            key: Some(key.into()),
            ..KvOp::new("get")
        }
    }
    pub fn get_many(keys: Vec<String>) -> KvOp {
        KvOp {
            keys: Some(keys),
            ..KvOp::new("getMany")
        }
    }
    pub fn get_prefix(prefix: impl Into<String>, after: Option<String>, limit: u32) -> KvOp {
        KvOp {
            prefix: Some(prefix.into()),
            after,
            limit: Some(limit),
            ..KvOp::new("getPrefix")
        }
    }
    /// A write that lives for ever; `expect`: `None` upsert, `Some(0)` create only, `Some(v)` update version v.
    pub fn put(key: impl Into<String>, value: Value, expect: Option<i64>) -> KvOp {
        KvOp {
            key: Some(key.into()),
            value: Some(value),
            forever: Some(true),
            expect,
            ..KvOp::new("put")
        }
    }
    pub fn put_ttl(
        key: impl Into<String>,
        value: Value,
        ttl_seconds: u64,
        expect: Option<i64>,
    ) -> KvOp {
        KvOp {
            key: Some(key.into()),
            value: Some(value),
            ttl_seconds: Some(ttl_seconds.max(1)),
            expect,
            ..KvOp::new("put")
        }
    }
    pub fn delete(key: impl Into<String>, expect: Option<i64>) -> KvOp {
        KvOp {
            key: Some(key.into()),
            expect,
            ..KvOp::new("delete")
        }
    }
    pub fn incr(key: impl Into<String>, delta: i64, max: Option<i64>, ttl_seconds: u64) -> KvOp {
        KvOp {
            key: Some(key.into()),
            delta: Some(delta),
            max,
            ttl_seconds: Some(ttl_seconds.max(1)),
            ..KvOp::new("incr")
        }
    }
    /// A counter that lives for ever: `delta` added to it (created at `delta`).
    pub fn incr_forever(key: impl Into<String>, delta: i64) -> KvOp {
        KvOp {
            key: Some(key.into()),
            delta: Some(delta),
            forever: Some(true),
            ..KvOp::new("incr")
        }
    }
    /// Inside a transaction: a lost precondition aborts the whole bundle.
    pub fn required(mut self) -> KvOp {
        self.required = Some(true);
        self
    }
}

/// The path route of one key (`*key` is a catch-all tail: a `/` stays a slash).
pub fn kv_path(key: &str) -> String {
    let tail: Vec<String> = key.split('/').map(encode_segment).collect();
    format!("/api/v1/kv/{NS}/{}", tail.join("/"))
}

/// A cache invalidation names at most this many paths; a write that would need more
/// forgets the whole cache.
const MAX_INVALIDATED_PATHS: usize = 16;

/// The cache-invalidation header for the keys a batch writes (none for a pure read). A
/// host forgets a path that ends a key prefix (with `:`) together with every key under it,
/// and the reads kept under it ([`Queen::kv_prefix_cached`], [`Queen::kv_get_many_cached`]).
/// So each written key's parent prefix (up to its last `:`) is named, and the key itself
/// only when it is its prefix's one written key: a receive's ten count keys are one path.
pub(super) fn invalidations(ops: &[KvOp]) -> Option<(&'static str, String)> {
    let written: Vec<&str> = ops
        .iter()
        .filter(|o| !matches!(o.op, "get" | "getMany" | "getPrefix"))
        .filter_map(|o| o.key.as_deref())
        .collect();
    if written.is_empty() {
        return None;
    }
    let mut paths: Vec<String> = Vec::new();
    for key in &written {
        let parent = parent_prefix(key);
        let siblings = written
            .iter()
            .filter(|k| parent_prefix(k) == parent)
            .count();
        if parent.is_none() || siblings == 1 {
            paths.push(kv_path(key));
        }
        paths.extend(parent.map(kv_path));
    }
    paths.sort();
    paths.dedup();
    let value = if paths.len() > MAX_INVALIDATED_PATHS {
        "*".to_string()
    } else {
        paths.join(",")
    };
    Some((crate::http::CACHE_INVALIDATE_HEADER, value))
}

/// A prefix walk's page: its rows and the cursor of the next page (none at the end).
fn page_of(page: KvResult) -> (Vec<KvRow>, Option<String>) {
    let next = if page.truncated {
        page.next_after
            .or_else(|| page.rows.last().map(|r| r.key.clone()))
    } else {
        None
    };
    (page.rows, next)
}

/// A key's parent prefix: the key up to and including its last `:` (none without one).
fn parent_prefix(key: &str) -> Option<&str> {
    key.rfind(':').map(|i| &key[..=i])
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct KvRow {
    pub key: String,
    #[serde(default)]
    pub value: Value,
    #[serde(default)]
    pub version: i64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KvResult {
    #[serde(default)]
    pub index: usize,
    #[serde(default)]
    pub op: String,
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default)]
    pub found: Option<bool>,
    #[serde(default)]
    pub applied: Option<bool>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub value: Value,
    #[serde(default)]
    pub version: i64,
    #[serde(default)]
    pub rows: Vec<KvRow>,
    #[serde(default)]
    pub missing: Vec<String>,
    #[serde(default)]
    pub truncated: bool,
    #[serde(default)]
    pub next_after: Option<String>,
}

impl KvResult {
    /// A `get` hit as a row.
    pub fn row(&self) -> Option<KvRow> {
        if self.found == Some(true) {
            Some(KvRow {
                key: self.key.clone().unwrap_or_default(),
                value: self.value.clone(),
                version: self.version,
            })
        } else {
            None
        }
    }
    pub fn applied(&self) -> bool {
        self.applied == Some(true)
    }
}

/// A `required` precondition lost: nothing in the call was written.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct KvConflict {
    #[serde(default)]
    pub failed_index: Option<usize>,
    #[serde(default)]
    pub kv_reason: Option<String>,
    #[serde(default)]
    pub version: i64,
    #[serde(default)]
    pub value: Value,
}

#[derive(Debug, Clone)]
pub enum KvOutcome {
    Done(Vec<KvResult>),
    Conflict(KvConflict),
}

impl<T: Transport> Queen<'_, T> {
    pub async fn kv(&self, ops: Vec<KvOp>) -> Result<KvOutcome> {
        #[derive(Serialize)]
        struct Body {
            operations: Vec<KvOp>,
        }
        let n = ops.len();
        let headers = invalidations(&ops).into_iter().collect();
        let answer: Value = self
            .json_with(
                "POST",
                "/api/v1/kv".into(),
                Some(&Body { operations: ops }),
                headers,
            )
            .await?;
        if answer.get("ok") == Some(&Value::Bool(false)) {
            let conflict: KvConflict =
                serde_json::from_value(answer).map_err(|e| QueenError::BadAnswer(e.to_string()))?;
            return Ok(KvOutcome::Conflict(conflict));
        }
        let results: Vec<KvResult> =
            serde_json::from_value(answer.get("results").cloned().unwrap_or(Value::Null))
                .map_err(|e| QueenError::BadAnswer(format!("kv results: {e}")))?;
        let mut ordered: Vec<KvResult> = vec![KvResult::default(); n];
        let mut seen = 0;
        for r in results {
            if let Some(slot) = ordered.get_mut(r.index) {
                *slot = r;
                seen += 1;
            }
        }
        if seen != n {
            return Err(QueenError::BadAnswer(format!(
                "kv answered {seen} of {n} results"
            )));
        }
        Ok(KvOutcome::Done(ordered))
    }

    /// Runs operations that carry no `required` flag, so the answer is always per-op results.
    pub async fn kv_results(&self, ops: Vec<KvOp>) -> Result<Vec<KvResult>> {
        match self.kv(ops).await? {
            KvOutcome::Done(r) => Ok(r),
            KvOutcome::Conflict(c) => Err(QueenError::BadAnswer(format!(
                "unexpected kv conflict {c:?}"
            ))),
        }
    }

    /// A `get` through the path route, which a host with a cache may answer from it if
    /// the answer is at most `max_age_ms` old (0: always the broker). Writes through
    /// [`Queen::kv`] make the host forget the key at once, so this replica reads its own
    /// writes; another replica's writes are seen within `max_age_ms`.
    pub async fn kv_get_cached(&self, key: &str, max_age_ms: u64) -> Result<Option<KvRow>> {
        if max_age_ms == 0 {
            return self.kv_get(key).await;
        }
        let headers = vec![(crate::http::CACHE_TTL_HEADER, max_age_ms.to_string())];
        let r: KvResult = self
            .json_with::<(), _>("GET", kv_path(key), None, headers)
            .await?;
        Ok(r.row())
    }

    /// The first page (up to `limit` rows) of a prefix walk, which a host with a cache may
    /// answer from it if at most `max_age_ms` old. `prefix` must end with `:` (a key's
    /// parent prefix, see `invalidations`), so a write through [`Queen::kv`] to a key under
    /// it makes the host forget the walk at once.
    pub async fn kv_prefix_cached(
        &self,
        prefix: &str,
        limit: u32,
        max_age_ms: u64,
    ) -> Result<(Vec<KvRow>, Option<String>)> {
        if max_age_ms == 0 || !prefix.ends_with(':') {
            return self.kv_prefix(prefix, None, limit).await;
        }
        let op = KvOp::get_prefix(prefix, None, limit);
        Ok(page_of(self.kv_read_cached(op, prefix, max_age_ms).await?))
    }

    /// The rows of `keys` (those that exist), which a host with a cache may answer from it
    /// if at most `max_age_ms` old. Every key must have `parent` (ending with `:`) as its
    /// parent prefix, so a write through [`Queen::kv`] to any of them forgets the read.
    pub async fn kv_get_many_cached(
        &self,
        keys: Vec<String>,
        parent: &str,
        max_age_ms: u64,
    ) -> Result<Vec<KvRow>> {
        let grouped =
            parent.ends_with(':') && keys.iter().all(|k| parent_prefix(k) == Some(parent));
        if max_age_ms == 0 || !grouped {
            let r = self.kv_results(vec![KvOp::get_many(keys)]).await?;
            return Ok(r.into_iter().flat_map(|r| r.rows).collect());
        }
        Ok(self
            .kv_read_cached(KvOp::get_many(keys), parent, max_age_ms)
            .await?
            .rows)
    }

    /// One read op as a POST a host cache may keep under `parent`'s path, apart from the
    /// other reads under it by the op's digest.
    async fn kv_read_cached(&self, op: KvOp, parent: &str, max_age_ms: u64) -> Result<KvResult> {
        #[derive(Serialize)]
        struct Body {
            operations: Vec<KvOp>,
        }
        let body = Body {
            operations: vec![op],
        };
        let bytes = serde_json::to_vec(&body).unwrap_or_default();
        let variant: String = sha2::Sha256::digest(&bytes)[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let headers = vec![
            (crate::http::CACHE_TTL_HEADER, max_age_ms.to_string()),
            (crate::http::CACHE_AS_HEADER, kv_path(parent)),
            (crate::http::CACHE_VARIANT_HEADER, variant),
        ];
        let answer: Value = self
            .json_with("POST", "/api/v1/kv".into(), Some(&body), headers)
            .await?;
        let mut results: Vec<KvResult> =
            serde_json::from_value(answer.get("results").cloned().unwrap_or(Value::Null))
                .map_err(|e| QueenError::BadAnswer(format!("kv results: {e}")))?;
        results
            .pop()
            .ok_or_else(|| QueenError::BadAnswer("kv answered no result".into()))
    }

    pub async fn kv_get(&self, key: &str) -> Result<Option<KvRow>> {
        let r = self.kv_results(vec![KvOp::get(key)]).await?;
        Ok(r.first().and_then(KvResult::row))
    }

    /// One page of a prefix walk: the rows and the cursor for the next page (None at the end).
    pub async fn kv_prefix(
        &self,
        prefix: &str,
        after: Option<String>,
        limit: u32,
    ) -> Result<(Vec<KvRow>, Option<String>)> {
        let mut r = self
            .kv_results(vec![KvOp::get_prefix(prefix, after, limit)])
            .await?;
        Ok(page_of(r.pop().unwrap_or_default()))
    }

    /// Every row under a prefix, up to `cap` rows.
    pub async fn kv_prefix_all(&self, prefix: &str, cap: usize) -> Result<Vec<KvRow>> {
        let mut out = Vec::new();
        let mut after = None;
        loop {
            let (rows, next) = self.kv_prefix(prefix, after, 1000).await?;
            out.extend(rows);
            if out.len() >= cap {
                out.truncate(cap);
                return Ok(out);
            }
            match next {
                Some(n) => after = Some(n),
                None => return Ok(out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A write forgets its keys' parent prefixes (which forget every key under them and
    /// the reads kept there) and a key alone under its prefix by its own path too; a pure
    /// read forgets nothing.
    #[test]
    fn a_write_forgets_its_keys_parent_prefixes() {
        let ops = vec![
            KvOp::put("qs:s:orders:abc", Value::Null, None),
            KvOp::put("qs:s:orders:def", Value::Null, None),
            KvOp::put("qs:q:orders", Value::Null, None),
            KvOp::get("qs:t:orders"),
        ];
        let (name, value) = invalidations(&ops).expect("a write");
        assert_eq!(name, crate::http::CACHE_INVALIDATE_HEADER);
        let paths: Vec<&str> = value.split(',').collect();
        assert_eq!(
            paths,
            [
                kv_path("qs:q:"),
                kv_path("qs:q:orders"),
                kv_path("qs:s:orders:"),
            ]
        );
        assert!(paths
            .iter()
            .all(|p| p.ends_with("%3A") || p.ends_with("orders")));
        assert!(invalidations(&[KvOp::get("qs:q:a")]).is_none());
        // A receive's twenty count and state keys of one queue: two paths, not "*".
        let receive: Vec<KvOp> = (0..10)
            .flat_map(|i| {
                [
                    KvOp::put(format!("qs:rc:q:{i}"), Value::Null, None),
                    KvOp::put(format!("qs:rs:q:{i}"), Value::Null, None),
                ]
            })
            .collect();
        let (_, value) = invalidations(&receive).expect("a write");
        assert_eq!(
            value,
            format!("{},{}", kv_path("qs:rc:q:"), kv_path("qs:rs:q:"))
        );
        let many: Vec<KvOp> = (0..=MAX_INVALIDATED_PATHS)
            .map(|i| KvOp::put(format!("k{i}:x"), Value::Null, None))
            .collect();
        assert_eq!(invalidations(&many).map(|(_, v)| v).as_deref(), Some("*"));
    }
}
