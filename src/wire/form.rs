//! `application/x-www-form-urlencoded` decoding, for Query bodies and URL query strings.

use std::collections::BTreeMap;

/// Why a form could not be decoded. Carries no client bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormError {
    /// A `%` not followed by two hex digits.
    BadEscape,
    /// The decoded bytes of a name or value are not UTF-8.
    NotUtf8,
}

/// Decodes `a=1&b=2` into pairs, in order. `+` is a space; a pair without `=` has an empty
/// value; empty segments (`a=1&&b=2`) are skipped.
pub fn parse(input: &[u8]) -> Result<Vec<(String, String)>, FormError> {
    let mut pairs = Vec::new();
    for segment in input.split(|b| *b == b'&') {
        if segment.is_empty() {
            continue;
        }
        let (name, value) = match segment.iter().position(|b| *b == b'=') {
            Some(i) => (&segment[..i], &segment[i + 1..]),
            None => (segment, &segment[segment.len()..]),
        };
        pairs.push((decode(name)?, decode(value)?));
    }
    Ok(pairs)
}

/// The parameters of a Query request: the URL's query string (presigned and GET requests)
/// merged with the form body, a body parameter overriding a URL one of the same name.
pub fn merged(url_query: &str, body: &[u8]) -> Result<BTreeMap<String, String>, FormError> {
    let mut params = BTreeMap::new();
    for (k, v) in parse(url_query.as_bytes())?.into_iter().chain(parse(body)?) {
        params.insert(k, v);
    }
    Ok(params)
}

fn decode(raw: &[u8]) -> Result<String, FormError> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hi = raw.get(i + 1).and_then(|b| hex(*b));
                let lo = raw.get(i + 2).and_then(|b| hex(*b));
                match (hi, lo) {
                    (Some(h), Some(l)) => out.push(h << 4 | l),
                    _ => return Err(FormError::BadEscape),
                }
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| FormError::NotUtf8)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_percent_plus_and_bare_names() {
        let got =
            parse(b"Action=SendMessage&MessageBody=a+b%2Bc%26d%3D&Empty=&Bare&&X=%C3%A9").unwrap();
        let want: Vec<(String, String)> = [
            ("Action", "SendMessage"),
            ("MessageBody", "a b+c&d="),
            ("Empty", ""),
            ("Bare", ""),
            ("X", "é"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn rejects_bad_escapes_and_invalid_utf8() {
        assert_eq!(parse(b"a=%zz"), Err(FormError::BadEscape));
        assert_eq!(parse(b"a=%4"), Err(FormError::BadEscape));
        assert_eq!(parse(b"a=%"), Err(FormError::BadEscape));
        assert_eq!(parse(b"a=%FF%FE"), Err(FormError::NotUtf8));
        assert_eq!(parse(b"a=\xff"), Err(FormError::NotUtf8));
    }

    #[test]
    fn body_overrides_url_query() {
        let m = merged(
            "Action=ListQueues&Version=2012-11-05",
            b"Action=GetQueueUrl",
        )
        .unwrap();
        assert_eq!(m.get("Action").map(String::as_str), Some("GetQueueUrl"));
        assert_eq!(m.get("Version").map(String::as_str), Some("2012-11-05"));
    }
}
