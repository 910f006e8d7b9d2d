//! The SigV4 canonical request, built from the request as received so that it equals
//! what the client signed.

use sha2::{Digest, Sha256};

use crate::http::Request;

/// URI-encodes bytes: everything but `A-Z a-z 0-9 - _ . ~` (and `/` when asked) becomes
/// `%XY` with upper-case hex.
pub fn uri_encode(bytes: &[u8], keep_slash: bool) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
    }
    out
}

/// Decodes `%XY` escapes; a `%` not followed by two hex digits stays literal. `+` is
/// not a space here: SigV4 signs the query with `%20`.
pub fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex_val(b[i + 1]), hex_val(b[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The canonical URI of a non-S3 service, as botocore computes it: the path as sent
/// (still percent-encoded), dot segments and empty segments removed, then URI-encoded
/// once more, so an escape in the path is encoded twice.
pub fn canonical_uri(raw_path: &str) -> String {
    if raw_path.is_empty() {
        return "/".into();
    }
    let mut segments: Vec<&str> = Vec::new();
    for seg in raw_path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let mut path = String::with_capacity(raw_path.len() + 1);
    if raw_path.starts_with('/') {
        path.push('/');
    }
    path.push_str(&segments.join("/"));
    if raw_path.ends_with('/') && !segments.is_empty() {
        path.push('/');
    }
    if path.is_empty() {
        // A relative path that normalised away entirely.
        return "/".into();
    }
    uri_encode(path.as_bytes(), true)
}

/// The query's `(name, value)` pairs, decoded, in the order sent. Empty segments
/// (`a=1&&b=2`, a trailing `&`) carry nothing and are dropped. A raw `+` is a space, as
/// in the form the query is (and as AWS reads it: a client that signs `%20` and sends
/// `+`, as Python's `requests` does, is accepted there); a plus sign travels as `%2B`.
pub fn query_pairs(raw_query: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let decode = |s: &str| percent_decode(&s.replace('+', " "));
    raw_query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// Canonical query string: every pair re-encoded, sorted by encoded name then value.
/// `skip` names a parameter left out (X-Amz-Signature on a presigned request).
pub fn canonical_query(raw_query: &str, skip: Option<&str>) -> String {
    let mut pairs: Vec<(String, String)> = query_pairs(raw_query)
        .into_iter()
        .filter(|(k, _)| skip.is_none_or(|s| k.as_slice() != s.as_bytes()))
        .map(|(k, v)| (uri_encode(&k, false), uri_encode(&v, false)))
        .collect();
    pairs.sort();
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(k);
        out.push('=');
        out.push_str(v);
    }
    out
}

/// `name:value\n` for each signed header, in the signed order. Repeated headers are
/// joined with `,`; each value is trimmed and its whitespace runs collapsed. None when a
/// signed header is absent from the request.
pub fn canonical_headers(req: &Request, signed: &[String]) -> Option<String> {
    let mut out = String::new();
    for name in signed {
        let mut values = req
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.split_ascii_whitespace().collect::<Vec<_>>().join(" "))
            .peekable();
        values.peek()?;
        out.push_str(name);
        out.push(':');
        out.push_str(&values.collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    Some(out)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// The whole canonical request.
pub fn canonical_request(
    req: &Request,
    query_skip: Option<&str>,
    signed_headers: &[String],
    payload_hash: &str,
) -> Option<String> {
    let headers = canonical_headers(req, signed_headers)?;
    Some(format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        req.method.to_ascii_uppercase(),
        canonical_uri(req.path()),
        canonical_query(req.query(), query_skip),
        headers,
        signed_headers.join(";"),
        payload_hash
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_normalisation_matches_botocore() {
        // Expected values are what botocore's quote(normalize_url_path(p), safe='/~') gives.
        let cases = [
            ("", "/"),
            ("/", "/"),
            ("/000000000000/my-queue", "/000000000000/my-queue"),
            ("//a///b/", "/a/b/"),
            ("/a/./b/../c", "/a/c"),
            ("/../..", "/"),
            ("/a b", "/a%20b"),
            ("/my%20queue", "/my%2520queue"),
            ("/caf\u{e9}", "/caf%C3%A9"),
            ("/~user/x:y", "/~user/x%3Ay"),
        ];
        for (raw, want) in cases {
            assert_eq!(canonical_uri(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn query_is_reencoded_and_sorted() {
        assert_eq!(canonical_query("", None), "");
        assert_eq!(canonical_query("b=2&a=1&a=0", None), "a=0&a=1&b=2");
        assert_eq!(canonical_query("flag&x=", None), "flag=&x=");
        assert_eq!(
            canonical_query("k=a%2fb&k2=a/b&s=a b", None),
            "k=a%2Fb&k2=a%2Fb&s=a%20b"
        );
        assert_eq!(canonical_query("p=%zz&q=100%", None), "p=%25zz&q=100%25");
        // A raw `+` is a space (AWS reads it so); a plus sign is `%2B`.
        assert_eq!(canonical_query("p=a+b", None), "p=a%20b");
        assert_eq!(
            canonical_query("X-Amz-Signature=abc&z=1&&", Some("X-Amz-Signature")),
            "z=1"
        );
    }

    #[test]
    fn headers_trimmed_collapsed_and_joined() {
        let req = Request {
            headers: vec![
                ("host".into(), "example.com".into()),
                ("x-a".into(), "  one   two\tthree ".into()),
                ("x-a".into(), "four".into()),
            ],
            ..Default::default()
        };
        let signed = vec!["host".to_string(), "x-a".to_string()];
        assert_eq!(
            canonical_headers(&req, &signed).unwrap(),
            "host:example.com\nx-a:one two three,four\n"
        );
        assert_eq!(canonical_headers(&req, &["x-missing".to_string()]), None);
    }

    #[test]
    fn a_raw_plus_in_the_query_is_a_space() {
        assert_eq!(
            canonical_query("Message=a+b%2Bc&Action=Publish", None),
            "Action=Publish&Message=a%20b%2Bc"
        );
    }

    #[test]
    fn decode_edges_never_panic() {
        assert_eq!(percent_decode("%"), b"%");
        assert_eq!(percent_decode("%4"), b"%4");
        assert_eq!(percent_decode("%41"), b"A");
        assert_eq!(percent_decode("a%4"), b"a%4");
        assert_eq!(percent_decode("%%41"), b"%A");
    }
}
