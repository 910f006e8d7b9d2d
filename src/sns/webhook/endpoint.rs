//! Which URLs an `http`/`https` subscription may name: a well-formed URL of its protocol,
//! on a host the operator allows (`QUEEN_SQS_SNS_HTTP_ALLOWED_HOSTS`; this machine only
//! by default).

use crate::config::Config;
use crate::sns::errors::{invalid, invalid_because};
use crate::wire::ApiError;

/// The longest endpoint URL taken.
const MAX_URL: usize = 2048;

/// The host of `url`, lower-cased (an IPv6 literal in its brackets), when `url` is an
/// absolute URL of `protocol` with nothing in it a POST could be misdirected by.
pub fn host_of(url: &str, protocol: &str) -> Option<String> {
    if url.len() > MAX_URL || url.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return None;
    }
    let (scheme, rest) = url.split_once("://")?;
    if !scheme.eq_ignore_ascii_case(protocol) {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    // User information in a URL is refused: `http://allowed@elsewhere/` reads as allowed.
    if authority.is_empty() || authority.contains(['@', '\\']) {
        return None;
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (inner, after) = v6.split_once(']')?;
        (format!("[{inner}]"), after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    if let Some(p) = port {
        if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
    }
    let host = host.to_ascii_lowercase();
    let plain = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => {
            !v6.is_empty()
                && v6
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || matches!(b, b':' | b'.'))
        }
        None => host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-')),
    };
    (plain && !host.is_empty()).then_some(host)
}

/// Whether `host` is one the operator allows: listed, under a listed `*.suffix`, or any
/// host when the list holds `*`.
pub fn allowed(cfg: &Config, host: &str) -> bool {
    cfg.sns_http_allowed_hosts.iter().any(|a| {
        a == "*"
            || a == host
            || a.strip_prefix("*.")
                .is_some_and(|suffix| host.ends_with(&format!(".{suffix}")))
    })
}

/// Checks a `Subscribe`'s endpoint for `protocol` (`http` or `https`).
pub fn check(cfg: &Config, protocol: &str, url: &str) -> Result<(), ApiError> {
    let Some(host) = host_of(url, protocol) else {
        // SNS's sentence for an endpoint that is not a URL of its protocol.
        return Err(invalid("Endpoint must match the specified protocol"));
    };
    if !allowed(cfg, &host) {
        return Err(invalid_because(
            "Endpoint",
            format!("this endpoint delivers to no host {host}: it is not in QUEEN_SQS_SNS_HTTP_ALLOWED_HOSTS"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_read_as_a_client_would_connect() {
        assert_eq!(
            host_of("http://127.0.0.1:8080/x", "http").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(
            host_of("HTTP://LocalHost/", "http").as_deref(),
            Some("localhost")
        );
        assert_eq!(
            host_of("https://[::1]:9/p?q", "https").as_deref(),
            Some("[::1]")
        );
        assert_eq!(
            host_of("http://h.example.com", "http").as_deref(),
            Some("h.example.com")
        );
        for bad in [
            "https://127.0.0.1/",             // not the protocol's
            "http://allowed@evil.example/",   // user information
            "http://127.0.0.1:80x/",          // a port that is not one
            "http://127.0.0.1:/",             // an empty port
            "http:///path",                   // no host
            "http://127.0.0.1/a b",           // a space
            "http://127.0.0.1/\r\nX-Evil: 1", // a header smuggled in
            "127.0.0.1:8080",                 // not absolute
            "http://h%2f/",                   // an escape in the host
            "http://a\\b/",
            "http://::1/", // an IPv6 literal without its brackets
        ] {
            assert_eq!(host_of(bad, "http"), None, "{bad}");
        }
        assert_eq!(
            host_of(&format!("http://h/{}", "a".repeat(MAX_URL)), "http"),
            None
        );
    }

    fn cfg(hosts: &[&str]) -> Config {
        let mut c = Config::from_env([
            ("QUEEN_URL", "http://q"),
            ("QUEEN_SQS_AUTH", "off"),
            ("QUEEN_SQS_HANDLE_SECRET", "0123456789abcdef"),
        ])
        .unwrap();
        c.sns_http_allowed_hosts = hosts.iter().map(|h| h.to_string()).collect();
        c
    }

    #[test]
    fn only_allowed_hosts_pass() {
        let default = Config::from_env([
            ("QUEEN_URL", "http://q"),
            ("QUEEN_SQS_AUTH", "off"),
            ("QUEEN_SQS_HANDLE_SECRET", "0123456789abcdef"),
        ])
        .unwrap();
        assert!(check(&default, "http", "http://127.0.0.1:1/").is_ok());
        assert!(check(&default, "http", "http://localhost/").is_ok());
        assert!(check(&default, "http", "http://[::1]/").is_ok());
        assert!(check(&default, "http", "http://169.254.169.254/latest/").is_err());
        assert!(check(&default, "http", "http://127.0.0.1.evil.example/").is_err());
        let c = cfg(&["*.example.com", "hooks.internal"]);
        assert!(check(&c, "https", "https://a.example.com/").is_ok());
        assert!(check(&c, "https", "https://example.com/").is_err());
        assert!(check(&c, "https", "https://a.example.com.evil/").is_err());
        assert!(check(&c, "http", "http://hooks.internal:81/").is_ok());
        assert!(check(&cfg(&["*"]), "http", "http://anything/").is_ok());
        let e = check(&c, "http", "https://a.example.com/").unwrap_err();
        assert!(e.message.contains("Endpoint must match"), "{}", e.message);
    }
}
