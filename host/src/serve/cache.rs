//! A short-lived cache of the component's broker GETs, shared by every request this host
//! serves. The component asks for it per request with a header saying how old an answer
//! may be (`x-queen-sqs-cache-ttl-ms`) and names what its writes make stale
//! (`x-queen-sqs-cache-invalidate`); the host knows nothing of what it caches. Both
//! headers are stripped before a request leaves, so the broker never sees them.
//!
//! It exists because the component keeps no state between requests and would otherwise
//! read its queue record from the broker's KV store on every message (the released engine
//! rate-limits KV reads at 200/s by default).

use bytes::Bytes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const TTL_HEADER: &str = "x-queen-sqs-cache-ttl-ms";
pub const INVALIDATE_HEADER: &str = "x-queen-sqs-cache-invalidate";
/// On a POST that only reads: the path its answer is kept under (with the TTL header).
pub const AS_HEADER: &str = "x-queen-sqs-cache-as";
/// With it: which of the reads kept under that path this one is.
pub const VARIANT_HEADER: &str = "x-queen-sqs-cache-variant";

/// Entries kept at most; past it the cache starts again empty (every entry is short-lived).
const MAX_ENTRIES: usize = 10_000;
/// No hint may keep an answer longer than this.
const MAX_TTL: Duration = Duration::from_secs(60);

/// A cached answer: status, headers and body.
#[derive(Clone)]
pub struct Cached {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

struct Entry {
    stored: Instant,
    answer: Cached,
}

#[derive(Clone, Default)]
pub struct ResponseCache {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    /// Bumped by every forget. An answer read before a forget of its path is not kept
    /// after it: a GET that began before a write and answered after the write's forget
    /// would otherwise bring the old value back for its whole TTL.
    generation: u64,
    /// The generation of each path's last forget (reset, with `all_forgotten`, past
    /// `MAX_ENTRIES` paths).
    forgotten: HashMap<String, u64>,
    /// The generation of the last forget of everything.
    all_forgotten: u64,
}

/// How a forgotten path ending a KV key prefix ends (an encoded `:`): such a path forgets
/// every entry under it as well as itself.
const PREFIX_END: &str = "%3A";

/// Whether forgetting `forgotten` forgets the entry at `path`: the path ends with it (the
/// broker's URL may have a base path before it), or it is a key prefix found in the path.
fn covers(forgotten: &str, path: &str) -> bool {
    path.ends_with(forgotten) || (forgotten.ends_with(PREFIX_END) && path.contains(forgotten))
}

impl Inner {
    /// Whether `key`'s path was forgotten after generation `since` (see [`covers`]: each
    /// suffix of the path starting at a `/`, and each of those suffixes' key prefixes).
    fn forgotten_since(&self, key: &str, since: u64) -> bool {
        if self.all_forgotten > since {
            return true;
        }
        let path = key.rsplit('\u{0}').next().unwrap_or("");
        let newer = |p: &str| self.forgotten.get(p).is_some_and(|&g| g > since);
        path.match_indices('/').any(|(i, _)| {
            let tail = &path[i..];
            newer(tail)
                || tail
                    .match_indices(PREFIX_END)
                    .any(|(j, m)| newer(&tail[..j + m.len()]))
        })
    }
}

/// When a GET began, in forgets: what [`ResponseCache::put`] checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Since(u64);

/// What a request's hint headers ask of the cache.
#[derive(Debug, Default, PartialEq)]
pub struct Hints {
    /// A read that may be answered from the cache if at most this old.
    pub max_age: Option<Duration>,
    /// A reading POST's stand-in path, its cache key's path (a GET's is its own).
    pub cache_as: Option<String>,
    /// Which read under that path (kept apart, forgotten together).
    pub variant: String,
    /// Paths to forget now; `None` in the list means "everything".
    pub forget: Vec<Option<String>>,
}

impl Hints {
    /// Reads (and removes) the hint headers of an outgoing request.
    pub fn take(method: &http::Method, headers: &mut http::HeaderMap) -> Hints {
        let mut hints = Hints::default();
        let cache_as = headers
            .remove(AS_HEADER)
            .and_then(|v| v.to_str().ok().map(str::to_string))
            .filter(|p| p.starts_with('/'));
        let variant = headers
            .remove(VARIANT_HEADER)
            .and_then(|v| v.to_str().ok().map(str::to_string))
            .unwrap_or_default();
        if let Some(v) = headers.remove(TTL_HEADER) {
            let ms = v.to_str().ok().and_then(|s| s.trim().parse::<u64>().ok());
            let cacheable = match (method, &cache_as) {
                (&http::Method::GET, None) => true,
                (&http::Method::POST, Some(_)) => true,
                _ => false,
            };
            if let (Some(ms), true) = (ms, cacheable) {
                hints.max_age = Some(Duration::from_millis(ms).min(MAX_TTL));
                if cache_as.is_some() {
                    hints.variant = variant;
                }
                hints.cache_as = cache_as;
            }
        }
        if let Some(v) = headers.remove(INVALIDATE_HEADER) {
            for path in v.to_str().unwrap_or("*").split(',') {
                let path = path.trim();
                hints
                    .forget
                    .push((path != "*" && !path.is_empty()).then(|| path.to_string()));
            }
        }
        hints
    }
}

/// The cache key: who asks (the bearer token), where, which read under the path (a reading
/// POST's variant; empty for a GET), and the path, last (what a forget matches).
pub fn key(
    authority: &str,
    authorization: Option<&str>,
    variant: &str,
    path_and_query: &str,
) -> String {
    format!(
        "{}\u{0}{}\u{0}{}\u{0}{}",
        authorization.unwrap_or(""),
        authority,
        variant,
        path_and_query
    )
}

impl ResponseCache {
    pub fn get(&self, key: &str, max_age: Duration) -> Option<Cached> {
        let inner = self.inner.lock().ok()?;
        let e = inner.entries.get(key)?;
        (e.stored.elapsed() <= max_age).then(|| e.answer.clone())
    }

    /// Taken before a GET leaves, and handed to [`put`](Self::put) with its answer.
    pub fn since(&self) -> Since {
        Since(self.inner.lock().map_or(u64::MAX, |i| i.generation))
    }

    /// Keeps a successful answer, unless something was forgotten since its GET began;
    /// anything else is asked again next time.
    pub fn put(&self, key: String, answer: Cached, since: Since) {
        if !(200..300).contains(&answer.status) {
            return;
        }
        if let Ok(mut inner) = self.inner.lock() {
            if inner.forgotten_since(&key, since.0) {
                return;
            }
            if inner.entries.len() >= MAX_ENTRIES {
                inner.entries.clear();
            }
            inner.entries.insert(
                key,
                Entry {
                    stored: Instant::now(),
                    answer,
                },
            );
        }
    }

    /// Forgets the entries for `path` (any token, any authority, under any base path of
    /// the broker's URL), or everything. Done when a write leaves and again when it is
    /// answered, so a read between the two keeps nothing either.
    pub fn forget(&self, path: Option<&str>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.generation += 1;
        let now = inner.generation;
        match path {
            None => {
                inner.entries.clear();
                inner.forgotten.clear();
                inner.all_forgotten = now;
            }
            Some(p) => {
                inner
                    .entries
                    .retain(|k, _| !covers(p, k.rsplit('\u{0}').next().unwrap_or("")));
                if inner.forgotten.len() >= MAX_ENTRIES {
                    inner.forgotten.clear();
                    inner.all_forgotten = now;
                }
                inner.forgotten.insert(p.to_string(), now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, body: &'static str) -> Cached {
        Cached {
            status,
            headers: vec![],
            body: Bytes::from_static(body.as_bytes()),
        }
    }

    #[test]
    fn a_fresh_answer_is_served_and_a_stale_one_is_not() {
        let c = ResponseCache::default();
        let k = key("b:1", None, "", "/api/v1/kv/qs/a");
        c.put(k.clone(), answer(200, "x"), c.since());
        assert_eq!(c.get(&k, Duration::from_secs(5)).unwrap().body, "x");
        std::thread::sleep(Duration::from_millis(20));
        assert!(c.get(&k, Duration::from_millis(10)).is_none());
    }

    #[test]
    fn failures_are_not_kept() {
        let c = ResponseCache::default();
        let k = key("b:1", None, "", "/p");
        c.put(k.clone(), answer(429, "slow down"), c.since());
        assert!(c.get(&k, Duration::from_secs(5)).is_none());
    }

    #[test]
    fn forgetting_a_path_spares_the_others_and_star_forgets_all() {
        let c = ResponseCache::default();
        let a = key("b:1", Some("Bearer t"), "", "/api/v1/kv/qs/a");
        let b = key("b:1", None, "", "/api/v1/kv/qs/b");
        c.put(a.clone(), answer(200, "a"), c.since());
        c.put(b.clone(), answer(200, "b"), c.since());
        c.forget(Some("/api/v1/kv/qs/a"));
        assert!(c.get(&a, Duration::from_secs(5)).is_none());
        assert!(c.get(&b, Duration::from_secs(5)).is_some());
        c.forget(None);
        assert!(c.get(&b, Duration::from_secs(5)).is_none());
    }

    /// Found by the checker (seeds 203, 205): a read that began before a queue's
    /// `SetQueueAttributes` and was answered after the write's forget kept the old record
    /// for its whole TTL, and sends meanwhile used the old `DelaySeconds`.
    #[test]
    fn an_answer_read_before_a_forget_is_not_kept_after_it() {
        let c = ResponseCache::default();
        let k = key("b:1", None, "", "/api/v1/kv/qs/q");
        let before = c.since();
        c.forget(Some("/api/v1/kv/qs/q"));
        c.put(k.clone(), answer(200, "old"), before);
        assert!(c.get(&k, Duration::from_secs(5)).is_none());
        // A read begun after the forget is kept.
        c.put(k.clone(), answer(200, "new"), c.since());
        assert_eq!(c.get(&k, Duration::from_secs(5)).unwrap().body, "new");
        // A forget of another path spares a read in flight (writes of other keys are
        // constant under load; the cache must keep working through them).
        let other = key("b:1", None, "", "/base/api/v1/kv/qs/other");
        let before = c.since();
        c.forget(Some("/api/v1/kv/qs/q"));
        c.put(other.clone(), answer(200, "o"), before);
        assert!(c.get(&other, Duration::from_secs(5)).is_some());
        // Under a base path, the forgotten path still matches.
        let based = key("b:1", None, "", "/base/api/v1/kv/qs/q");
        let before = c.since();
        c.forget(Some("/api/v1/kv/qs/q"));
        c.put(based.clone(), answer(200, "old"), before);
        assert!(c.get(&based, Duration::from_secs(5)).is_none());
        // Forgetting everything spares nothing in flight.
        let before = c.since();
        c.forget(None);
        c.put(other.clone(), answer(200, "o"), before);
        assert!(c.get(&other, Duration::from_secs(5)).is_none());
    }

    #[test]
    fn hints_are_taken_off_the_request() {
        let mut h = http::HeaderMap::new();
        h.insert(TTL_HEADER, "1500".parse().unwrap());
        h.insert(INVALIDATE_HEADER, "/x,*".parse().unwrap());
        let hints = Hints::take(&http::Method::GET, &mut h);
        assert_eq!(hints.max_age, Some(Duration::from_millis(1500)));
        assert_eq!(hints.forget, vec![Some("/x".to_string()), None]);
        assert!(h.is_empty());
        // A TTL on anything but a GET is ignored: only reads are cached.
        let mut h = http::HeaderMap::new();
        h.insert(TTL_HEADER, "1500".parse().unwrap());
        assert_eq!(Hints::take(&http::Method::POST, &mut h).max_age, None);
    }

    /// A forgotten key prefix (a path ending with an encoded `:`) forgets every entry
    /// under it, also one read before the forget and answered after it; a key's own path
    /// forgets that key alone.
    #[test]
    fn a_forgotten_key_prefix_forgets_the_keys_under_it() {
        let c = ResponseCache::default();
        let a = key("b:1", None, "", "/base/api/v1/kv/qs/qs%3Aq%3Aa");
        let b = key("b:1", None, "", "/api/v1/kv/qs/qs%3Aq%3Ab");
        let topic = key("b:1", None, "", "/api/v1/kv/qs/qs%3At%3Aa");
        for k in [&a, &b, &topic] {
            c.put(k.clone(), answer(200, "x"), c.since());
        }
        c.forget(Some("/api/v1/kv/qs/qs%3Aq%3Aa"));
        assert!(c.get(&a, Duration::from_secs(5)).is_none());
        assert!(c.get(&b, Duration::from_secs(5)).is_some());
        c.forget(Some("/api/v1/kv/qs/qs%3Aq%3A"));
        assert!(c.get(&b, Duration::from_secs(5)).is_none());
        assert!(c.get(&topic, Duration::from_secs(5)).is_some());
        let before = c.since();
        c.forget(Some("/api/v1/kv/qs/qs%3Aq%3A"));
        c.put(b.clone(), answer(200, "old"), before);
        assert!(
            c.get(&b, Duration::from_secs(5)).is_none(),
            "kept across a prefix forget"
        );
        // A key's own path is not a prefix: a longer key stays.
        let long = key("b:1", None, "", "/api/v1/kv/qs/qs%3Aq%3Abb");
        c.put(long.clone(), answer(200, "x"), c.since());
        c.forget(Some("/api/v1/kv/qs/qs%3Aq%3Ab"));
        assert!(c.get(&long, Duration::from_secs(5)).is_some());
    }

    /// Two reads kept under one stand-in path are told apart by their variants, and one
    /// forget of the path forgets both.
    #[test]
    fn variants_under_one_path_are_kept_apart_and_forgotten_together() {
        let c = ResponseCache::default();
        let one = key("b:1", None, "v1", "/api/v1/kv/qs/qs:q:");
        let two = key("b:1", None, "v2", "/api/v1/kv/qs/qs:q:");
        c.put(one.clone(), answer(200, "one"), c.since());
        c.put(two.clone(), answer(200, "two"), c.since());
        assert_eq!(c.get(&one, Duration::from_secs(5)).unwrap().body, "one");
        assert_eq!(c.get(&two, Duration::from_secs(5)).unwrap().body, "two");
        c.forget(Some("/api/v1/kv/qs/qs:q:"));
        assert!(c.get(&one, Duration::from_secs(5)).is_none());
        assert!(c.get(&two, Duration::from_secs(5)).is_none());
    }

    /// A reading POST is cached only under the path it names, never under its own route
    /// (every KV call shares `/api/v1/kv`), and only a POST or a GET may name one.
    #[test]
    fn a_post_is_cacheable_only_with_a_stand_in_path() {
        let mut h = http::HeaderMap::new();
        h.insert(TTL_HEADER, "1000".parse().unwrap());
        h.insert(AS_HEADER, "/api/v1/kv/qs/qs:s:t:".parse().unwrap());
        let hints = Hints::take(&http::Method::POST, &mut h);
        assert_eq!(hints.max_age, Some(Duration::from_millis(1000)));
        assert_eq!(hints.cache_as.as_deref(), Some("/api/v1/kv/qs/qs:s:t:"));
        assert!(h.is_empty());
        for (method, as_path) in [
            (http::Method::GET, Some("/elsewhere")),
            (http::Method::PUT, Some("/p")),
            (http::Method::POST, Some("no-slash")),
        ] {
            let mut h = http::HeaderMap::new();
            h.insert(TTL_HEADER, "1000".parse().unwrap());
            if let Some(p) = as_path {
                h.insert(AS_HEADER, p.parse().unwrap());
            }
            let hints = Hints::take(&method, &mut h);
            assert_eq!(hints.max_age, None, "{method} {as_path:?}");
            assert!(h.is_empty());
        }
    }
}
