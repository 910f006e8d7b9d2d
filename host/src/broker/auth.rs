//! The broker's bearer token (`shared/queen-api.md` §1.3): every call on the HTTP listener but
//! the health checks carries `Authorization: Bearer <token>` (a bare token is accepted too, as
//! the Queen engine does). The in-process path (`RunningBroker::handle`) is not checked: it is
//! reachable only from inside the process.

use super::api::reply::Reply;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The variable naming the token (`queen-sqs-host`, the `broker_only` example).
pub const TOKEN_VAR: &str = "QUEEN_SQS_BROKER_TOKEN";
/// The file in the data directory that keeps a generated token (owner-only).
pub const TOKEN_FILE: &str = "broker-token";
/// The shortest token accepted.
pub const MIN_TOKEN_CHARS: usize = 16;

/// What the listener compares callers' tokens with: the token's SHA-256, so the comparison
/// takes the same time whatever the caller sent (length included).
pub struct Gate {
    digest: [u8; 32],
}

impl Gate {
    pub fn new(token: &str) -> Gate {
        Gate {
            digest: Sha256::digest(token.as_bytes()).into(),
        }
    }

    /// The token's verdict on one `Authorization` header value: None when it may pass, else the
    /// 401 to answer (the engine's bodies).
    pub fn check(&self, authorization: Option<&[u8]>) -> Option<Reply> {
        let presented = authorization
            .and_then(|v| std::str::from_utf8(v).ok())
            .map(extract_bearer)
            .filter(|t| !t.is_empty());
        let Some(presented) = presented else {
            return Some(unauthorized("Authentication required"));
        };
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let diff = digest
            .iter()
            .zip(self.digest.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if std::hint::black_box(diff) == 0 {
            None
        } else {
            Some(unauthorized("Invalid token"))
        }
    }
}

fn unauthorized(text: &str) -> Reply {
    Reply::error(401, text).with_header("www-authenticate", "Bearer")
}

/// `Bearer <token>` (scheme in any case) or a bare token; `Bearer` alone is no token.
fn extract_bearer(v: &str) -> &str {
    let v = v.trim();
    match v.split_once(' ') {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim(),
        None if v.eq_ignore_ascii_case("bearer") => "",
        _ => v,
    }
}

/// The routes open without a token: the health checks, asked for literally (any other spelling
/// of them is checked like every other route).
pub fn is_open(method: &str, path_and_query: &str) -> bool {
    let path = path_and_query
        .split_once('?')
        .map_or(path_and_query, |(p, _)| p);
    method.eq_ignore_ascii_case("GET") && matches!(path, "/health" | "/api/v1/health")
}

/// Why a configured token is refused, if it is.
pub fn invalid(token: &str) -> Option<String> {
    if token.chars().count() < MIN_TOKEN_CHARS || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Some(format!(
            "{TOKEN_VAR} must be at least {MIN_TOKEN_CHARS} printable ASCII characters, without spaces"
        ));
    }
    None
}

/// 32 random bytes, hex.
pub fn generate() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `<data_dir>/broker-token`.
pub fn token_path(data_dir: &Path) -> PathBuf {
    data_dir.join(TOKEN_FILE)
}

/// The token kept in `<data_dir>/broker-token`, or a new one generated and kept there
/// (owner-only), so a restart keeps it. Answers the token and whether it was generated now.
pub fn kept_token(data_dir: &Path) -> anyhow::Result<(String, bool)> {
    keep_secret(
        &token_path(data_dir),
        |t| invalid(t).is_none(),
        "the broker token",
    )
}

/// A random secret kept in `path`: the one already there if `usable` accepts it, else a new
/// one (32 random bytes, hex) written owner-only. Answers it and whether it is new.
pub fn keep_secret(
    path: &Path,
    usable: impl Fn(&str) -> bool,
    what: &str,
) -> anyhow::Result<(String, bool)> {
    if let Ok(kept) = std::fs::read_to_string(path) {
        let kept = kept.trim().to_string();
        if usable(&kept) {
            return Ok((kept, false));
        }
    }
    let secret = generate()?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    }
    let cannot =
        |e: std::io::Error| anyhow::anyhow!("cannot keep {what} in {}: {e}", path.display());
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(cannot)?;
    #[cfg(unix)]
    {
        // An existing file keeps its mode through `open`: make it owner-only before writing.
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(cannot)?;
    }
    std::io::Write::write_all(&mut file, secret.as_bytes()).map_err(cannot)?;
    Ok((secret, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_token_passes() {
        let g = Gate::new("0123456789abcdef-token");
        assert!(g.check(Some(b"Bearer 0123456789abcdef-token")).is_none());
        assert!(g.check(Some(b"bearer 0123456789abcdef-token")).is_none());
        assert!(g.check(Some(b"0123456789abcdef-token")).is_none());
        for bad in [
            None,
            Some(&b""[..]),
            Some(b"Bearer "),
            Some(b"Bearer"),
            Some(b"Bearer 0123456789abcdef-toke"),
            Some(b"Bearer 0123456789abcdef-token2"),
            Some(b"Basic 0123456789abcdef-token"),
        ] {
            let r = g.check(bad).expect("refused");
            assert_eq!(r.status, 401);
        }
    }

    #[test]
    fn health_is_open_and_nothing_else() {
        assert!(is_open("GET", "/health"));
        assert!(is_open("GET", "/api/v1/health?x=1"));
        assert!(!is_open("POST", "/health"));
        assert!(!is_open("GET", "//health"));
        assert!(!is_open("GET", "/api/v1/resources/queues"));
    }
}
