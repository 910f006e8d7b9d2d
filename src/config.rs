//! Configuration, read from environment variables on every request (cheap) and
//! validated as a whole. A bad configuration is one line naming what to set.

use std::fmt;

/// One SigV4 keypair and the Queen bearer token its requests are forwarded with.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    pub access_key_id: String,
    pub secret_access_key: String,
    /// Empty when the broker runs without authentication.
    pub queen_token: String,
}

impl fmt::Debug for Credential {
    // Never print the secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Credential({})", self.access_key_id)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    SigV4,
    Off,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub queen_url: String,
    /// Bearer token for broker calls when `auth` is off (with SigV4 the credential's own).
    pub queen_token: Option<String>,
    pub auth: AuthMode,
    pub credentials: Vec<Credential>,
    pub handle_secret: Vec<u8>,
    pub default_partitions: u32,
    pub account_id: String,
    pub region: String,
    /// How stale a queue record read on the message path may be, in milliseconds
    /// (`QUEEN_SQS_REGISTRY_CACHE_MS`; 0 reads the registry on every request). Only a
    /// host that keeps a cache between requests honours it (see `http::CACHE_TTL_HEADER`).
    pub registry_cache_ms: u64,
    /// The hosts an SNS `http`/`https` subscription may name
    /// (`QUEEN_SQS_SNS_HTTP_ALLOWED_HOSTS`, comma-separated; `*` allows any): the endpoint
    /// POSTs to them, so it must not become a request forwarder to anything else.
    pub sns_http_allowed_hosts: Vec<String>,
    /// The token the SNS delivery route asks for (`QUEEN_SQS_DELIVERY_TOKEN`); without one
    /// the route answers 404 and nothing delivers to HTTP/S subscriptions.
    pub delivery_token: Option<String>,
}

/// Where SNS may POST unless `QUEEN_SQS_SNS_HTTP_ALLOWED_HOSTS` says: this machine only.
pub const DEFAULT_SNS_HTTP_ALLOWED_HOSTS: &[&str] = &["127.0.0.1", "localhost", "[::1]"];

/// The default bound on a cached queue record's staleness.
pub const DEFAULT_REGISTRY_CACHE_MS: u64 = 1_000;
/// The largest bound accepted: AWS itself lets attribute changes take up to 60 s.
pub const MAX_REGISTRY_CACHE_MS: u64 = 60_000;

/// What is wrong with the configuration, as one line naming the variable to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub const MAX_PARTITIONS: u32 = 100_000;
pub const MIN_HANDLE_SECRET_BYTES: usize = 16;

impl Config {
    /// Builds the configuration from `(name, value)` pairs, as `std::env::vars()` yields.
    pub fn from_env<I, K, V>(vars: I) -> Result<Config, ConfigError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut get = std::collections::HashMap::new();
        for (k, v) in vars {
            get.insert(k.as_ref().to_string(), v.as_ref().to_string());
        }
        let var = |name: &str| {
            get.get(name)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };

        let queen_url = var("QUEEN_URL").ok_or_else(|| {
            ConfigError(
                "set QUEEN_URL to the Queen broker's base URL, e.g. http://127.0.0.1:6632".into(),
            )
        })?;
        if !(queen_url.starts_with("http://") || queen_url.starts_with("https://")) {
            return Err(ConfigError(format!(
                "QUEEN_URL must start with http:// or https://, got {queen_url:?}"
            )));
        }
        let queen_url = queen_url.trim_end_matches('/').to_string();

        let auth = match var("QUEEN_SQS_AUTH").as_deref() {
            None | Some("sigv4") => AuthMode::SigV4,
            Some("off") => AuthMode::Off,
            Some(other) => {
                return Err(ConfigError(format!(
                    "QUEEN_SQS_AUTH must be sigv4 or off, got {other:?}"
                )))
            }
        };

        let credentials = match var("QUEEN_SQS_CREDENTIALS") {
            Some(s) => parse_credentials(&s)?,
            None => Vec::new(),
        };
        if auth == AuthMode::SigV4 && credentials.is_empty() {
            return Err(ConfigError(
                "set QUEEN_SQS_CREDENTIALS=akid:secret:queen_token[,...] (or QUEEN_SQS_AUTH=off)"
                    .into(),
            ));
        }

        let handle_secret = var("QUEEN_SQS_HANDLE_SECRET")
            .ok_or_else(|| ConfigError(format!(
                "set QUEEN_SQS_HANDLE_SECRET to a random string of at least {MIN_HANDLE_SECRET_BYTES} bytes"
            )))?
            .into_bytes();
        if handle_secret.len() < MIN_HANDLE_SECRET_BYTES {
            return Err(ConfigError(format!(
                "QUEEN_SQS_HANDLE_SECRET must be at least {MIN_HANDLE_SECRET_BYTES} bytes"
            )));
        }

        let default_partitions = match var("QUEEN_SQS_DEFAULT_PARTITIONS") {
            None => 64,
            Some(s) => match s.parse::<u32>() {
                Ok(n) if (1..=MAX_PARTITIONS).contains(&n) => n,
                _ => {
                    return Err(ConfigError(format!(
                        "QUEEN_SQS_DEFAULT_PARTITIONS must be an integer from 1 to {MAX_PARTITIONS}, got {s:?}"
                    )))
                }
            },
        };

        let account_id = var("QUEEN_SQS_ACCOUNT_ID").unwrap_or_else(|| "000000000000".into());
        if account_id.len() != 12 || !account_id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ConfigError(format!(
                "QUEEN_SQS_ACCOUNT_ID must be 12 digits, got {account_id:?}"
            )));
        }
        let region = var("QUEEN_SQS_REGION").unwrap_or_else(|| "us-east-1".into());
        if !region
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return Err(ConfigError(format!(
                "QUEEN_SQS_REGION must be a region name such as us-east-1, got {region:?}"
            )));
        }

        let registry_cache_ms = match var("QUEEN_SQS_REGISTRY_CACHE_MS") {
            None => DEFAULT_REGISTRY_CACHE_MS,
            Some(s) => match s.parse::<u64>() {
                Ok(n) if n <= MAX_REGISTRY_CACHE_MS => n,
                _ => {
                    return Err(ConfigError(format!(
                        "QUEEN_SQS_REGISTRY_CACHE_MS must be an integer from 0 to {MAX_REGISTRY_CACHE_MS}, got {s:?}"
                    )))
                }
            },
        };

        let sns_http_allowed_hosts = match var("QUEEN_SQS_SNS_HTTP_ALLOWED_HOSTS") {
            None => DEFAULT_SNS_HTTP_ALLOWED_HOSTS
                .iter()
                .map(|h| h.to_string())
                .collect(),
            Some(s) => s
                .split(',')
                .map(|h| h.trim().to_ascii_lowercase())
                .filter(|h| !h.is_empty())
                .collect(),
        };

        Ok(Config {
            queen_url,
            queen_token: var("QUEEN_TOKEN"),
            auth,
            credentials,
            handle_secret,
            default_partitions,
            account_id,
            region,
            registry_cache_ms,
            sns_http_allowed_hosts,
            delivery_token: var("QUEEN_SQS_DELIVERY_TOKEN"),
        })
    }
}

/// Parses `akid:secret:queen_token[,akid:secret:queen_token...]`; the token may be empty.
pub fn parse_credentials(s: &str) -> Result<Vec<Credential>, ConfigError> {
    let mut out: Vec<Credential> = Vec::new();
    for entry in s.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let mut parts = entry.splitn(3, ':');
        let akid = parts.next().unwrap_or("");
        let secret = parts.next().unwrap_or("");
        let token = parts.next().unwrap_or("");
        if akid.is_empty() || secret.is_empty() {
            return Err(ConfigError(
                "QUEEN_SQS_CREDENTIALS entries must be akid:secret:queen_token (the token may be empty)".into(),
            ));
        }
        if out.iter().any(|c| c.access_key_id == akid) {
            return Err(ConfigError(format!(
                "QUEEN_SQS_CREDENTIALS names access key {akid} twice"
            )));
        }
        out.push(Credential {
            access_key_id: akid.into(),
            secret_access_key: secret.into(),
            queen_token: token.into(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Vec<(&'static str, &'static str)> {
        vec![
            ("QUEEN_URL", "http://127.0.0.1:6632/"),
            ("QUEEN_SQS_CREDENTIALS", "AKID:SECRET:tok,K2:S2:"),
            ("QUEEN_SQS_HANDLE_SECRET", "0123456789abcdef0123"),
        ]
    }

    #[test]
    fn valid_configuration_with_defaults() {
        let c = Config::from_env(base()).unwrap();
        assert_eq!(c.queen_url, "http://127.0.0.1:6632");
        assert_eq!(c.auth, AuthMode::SigV4);
        assert_eq!(c.credentials.len(), 2);
        assert_eq!(c.credentials[0].queen_token, "tok");
        assert_eq!(c.credentials[1].queen_token, "");
        assert_eq!(c.default_partitions, 64);
        assert_eq!(c.account_id, "000000000000");
    }

    #[test]
    fn each_bad_variable_is_named() {
        let cases: Vec<(&str, &str, &str)> = vec![
            ("QUEEN_URL", "", "QUEEN_URL"),
            ("QUEEN_URL", "ftp://x", "QUEEN_URL"),
            ("QUEEN_SQS_AUTH", "maybe", "QUEEN_SQS_AUTH"),
            ("QUEEN_SQS_CREDENTIALS", "", "QUEEN_SQS_CREDENTIALS"),
            ("QUEEN_SQS_CREDENTIALS", "nosecret", "QUEEN_SQS_CREDENTIALS"),
            (
                "QUEEN_SQS_HANDLE_SECRET",
                "short",
                "QUEEN_SQS_HANDLE_SECRET",
            ),
            (
                "QUEEN_SQS_DEFAULT_PARTITIONS",
                "0",
                "QUEEN_SQS_DEFAULT_PARTITIONS",
            ),
            (
                "QUEEN_SQS_DEFAULT_PARTITIONS",
                "100001",
                "QUEEN_SQS_DEFAULT_PARTITIONS",
            ),
            ("QUEEN_SQS_ACCOUNT_ID", "12", "QUEEN_SQS_ACCOUNT_ID"),
        ];
        for (k, v, named) in cases {
            let mut vars: Vec<(&str, &str)> = base().into_iter().filter(|(n, _)| *n != k).collect();
            vars.push((k, v));
            let err = Config::from_env(vars).expect_err(k);
            assert!(err.0.contains(named), "{k}={v:?}: {err}");
            assert!(!err.0.contains('\n'));
        }
    }

    #[test]
    fn auth_off_needs_no_credentials() {
        let vars = vec![
            ("QUEEN_URL", "http://x:1"),
            ("QUEEN_SQS_AUTH", "off"),
            ("QUEEN_SQS_HANDLE_SECRET", "0123456789abcdef"),
        ];
        assert_eq!(Config::from_env(vars).unwrap().auth, AuthMode::Off);
    }
}
