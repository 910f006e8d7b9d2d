//! Who may read which part of `GET /metrics` (issue 21, item 1).
//!
//! Anyone may read what names nothing: requests by action and outcome, broker calls by
//! route, slots and long polls. The per-queue series name queues and cost a broker read,
//! so they are for a holder of one of the endpoint's key pairs, sent as HTTP Basic
//! credentials (`access key id` as the user, the secret as the password), which is what
//! Prometheus' `basic_auth` scrape setting sends. With `QUEEN_SQS_AUTH=off` every request
//! is already trusted, so every scrape sees everything.

use base64::Engine as _;
use queen_sqs::config::parse_credentials;

/// What a scrape gets to see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewer {
    /// No credentials: the families that name nothing.
    Anonymous,
    /// A configured key pair (or auth is off): everything, per-queue series included.
    KeyHolder,
    /// Credentials that match no key pair: answered 401, so a misconfigured scraper is
    /// told rather than silently shown less.
    Refused,
}

/// The key pairs a scrape may present; None when auth is off.
#[derive(Debug, Clone)]
pub struct MetricsAccess {
    keys: Option<Vec<(String, String)>>,
}

impl MetricsAccess {
    /// From the component's own variables, so the pairs are exactly the ones SigV4 accepts
    /// (a value the component would refuse leaves no pair here, and the per-queue series
    /// closed).
    pub fn from_env(env: &[(String, String)]) -> MetricsAccess {
        let last = |name: &str| {
            env.iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.trim().to_string())
        };
        if last("QUEEN_SQS_AUTH").as_deref() == Some("off") {
            return MetricsAccess { keys: None };
        }
        let keys = last("QUEEN_SQS_CREDENTIALS")
            .and_then(|s| parse_credentials(&s).ok())
            .unwrap_or_default()
            .into_iter()
            .map(|c| (c.access_key_id, c.secret_access_key))
            .collect();
        MetricsAccess { keys: Some(keys) }
    }

    /// Judges a scrape by its `Authorization` header.
    pub fn judge(&self, headers: &http::HeaderMap) -> Viewer {
        let Some(keys) = &self.keys else {
            return Viewer::KeyHolder;
        };
        let Some(value) = headers.get(http::header::AUTHORIZATION) else {
            return Viewer::Anonymous;
        };
        let Some((user, password)) = basic_credentials(value.as_bytes()) else {
            return Viewer::Refused;
        };
        // Every pair is compared in full, so the time taken says nothing about which
        // bytes matched.
        let matched = keys.iter().fold(false, |found, (akid, secret)| {
            let both = same_bytes(akid.as_bytes(), user.as_bytes())
                & same_bytes(secret.as_bytes(), password.as_bytes());
            found | both
        });
        if matched {
            Viewer::KeyHolder
        } else {
            Viewer::Refused
        }
    }
}

/// `Basic base64(user:password)` → (user, password).
fn basic_credentials(value: &[u8]) -> Option<(String, String)> {
    let value = std::str::from_utf8(value).ok()?.trim();
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (user, password) = decoded.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

/// Equal lengths and bytes, looking at every byte whatever the first difference.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn with_auth(value: &str) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        h.insert(http::header::AUTHORIZATION, value.parse().unwrap());
        h
    }

    fn basic(user_password: &str) -> String {
        let encoded = base64::engine::general_purpose::STANDARD.encode(user_password);
        format!("Basic {encoded}")
    }

    #[test]
    fn only_a_configured_pair_sees_the_queues() {
        let access = MetricsAccess::from_env(&env(&[(
            "QUEEN_SQS_CREDENTIALS",
            "AK1:secret-one:,AK2:secret-two:tok",
        )]));
        assert_eq!(access.judge(&http::HeaderMap::new()), Viewer::Anonymous);
        assert_eq!(
            access.judge(&with_auth(&basic("AK2:secret-two"))),
            Viewer::KeyHolder
        );
        assert_eq!(
            access.judge(&with_auth(&basic("AK1:secret-one"))),
            Viewer::KeyHolder
        );
        for refused in [
            basic("AK1:secret-two"),
            basic("AK1:secret-on"),
            basic("AK1"),
            "Basic not-base64!".into(),
            "Bearer AK1:secret-one".into(),
            basic("AK1:secret-one:"),
        ] {
            assert_eq!(
                access.judge(&with_auth(&refused)),
                Viewer::Refused,
                "{refused}"
            );
        }
    }

    #[test]
    fn auth_off_opens_everything_and_no_pairs_open_nothing() {
        let off = MetricsAccess::from_env(&env(&[("QUEEN_SQS_AUTH", "off")]));
        assert_eq!(off.judge(&http::HeaderMap::new()), Viewer::KeyHolder);
        let none = MetricsAccess::from_env(&[]);
        assert_eq!(none.judge(&http::HeaderMap::new()), Viewer::Anonymous);
        assert_eq!(none.judge(&with_auth(&basic("a:b"))), Viewer::Refused);
    }
}
