//! SigV4: the `Authorization` header and presigned query forms, parsed and verified.
//!
//! Byte 0 picks the mode:
//! - raw: the rest is a request as text (`METHOD\npath?query\nname: value\n...\n\nbody`),
//!   verified against a fixed credential at the time its own X-Amz-Date names. Asserts no
//!   panic, an error's status matches its code (400 only for IncompleteSignature), and its
//!   message is non-empty and bounded (client text is clipped when echoed).
//! - signed: a request built from structured input (method, path segments, query pairs,
//!   extra headers, body, optional x-amz-content-sha256, region, service, time, presigned
//!   or not) is signed by an independent SigV4 signer written here from AWS's description,
//!   and must verify, with the scope's service and region, at any instant inside the
//!   window; `peek_scope_service` must agree. Then one thing is changed (a body bit, the
//!   clock outside the window, the secret, the access key, a signed header, the method)
//!   and it must fail with the matching error.
//! - dates: `parse_amz_date` and `format_amz_date` are inverse on every valid date.
#![no_main]

use hmac::{Hmac, Mac};
use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use queen_sqs::auth::{self, format_amz_date, parse_amz_date, AuthError};
use queen_sqs::config::Credential;
use queen_sqs::http::Request;
use queen_sqs::wire::Service;
use sha2::{Digest, Sha256};

const AKID: &str = "AKIDEXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

fn creds(akid: &str, secret: &str) -> Vec<Credential> {
    vec![Credential {
        access_key_id: akid.into(),
        secret_access_key: secret.into(),
        queen_token: String::new(),
    }]
}

fn check_error(e: &AuthError) {
    let msg = e.message();
    assert!(!msg.is_empty());
    assert!(
        msg.chars().count() <= 512,
        "unbounded message ({} chars): {e:?}",
        msg.chars().count()
    );
    let code = e.code_name();
    assert!(
        matches!(
            code,
            "MissingAuthenticationToken"
                | "IncompleteSignature"
                | "InvalidClientTokenId"
                | "SignatureDoesNotMatch"
        ),
        "{code}"
    );
    assert_eq!(e.status() == 400, code == "IncompleteSignature", "{e:?}");
}

// ---- raw mode -------------------------------------------------------------------------

fn raw(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let method = lines.next().unwrap_or("").to_string();
    let path_and_query = lines.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut body = String::new();
    let mut in_body = false;
    for line in lines {
        if in_body {
            if !body.is_empty() {
                body.push('\n');
            }
            body.push_str(line);
        } else if line.is_empty() {
            in_body = true;
        } else {
            let (k, v) = line.split_once(':').unwrap_or((line, ""));
            headers.push((
                k.trim().to_ascii_lowercase(),
                v.strip_prefix(' ').unwrap_or(v).to_string(),
            ));
        }
    }
    let req = Request {
        method,
        path_and_query,
        headers,
        body: body.into_bytes(),
        scheme: "http".into(),
    };
    let _ = auth::peek_scope_service(&req);
    // The request's own time, so the parse goes past the clock check when it can.
    let date = req.header("x-amz-date").map(str::to_string).or_else(|| {
        req.query()
            .split('&')
            .find_map(|p| p.strip_prefix("X-Amz-Date="))
            .map(str::to_string)
    });
    let now = date
        .as_deref()
        .and_then(|d| parse_amz_date(d.trim()))
        .unwrap_or(1_790_000_000);
    let creds = creds(AKID, SECRET);
    match auth::verify(&req, &creds, now) {
        Ok(v) => assert_eq!(auth::peek_scope_service(&req), Some(v.service)),
        Err(e) => check_error(&e),
    }
}

// ---- signed mode: an independent signer -----------------------------------------------

#[derive(Arbitrary, Debug)]
struct Signed {
    presigned: bool,
    sns: bool,
    post: bool,
    region: String,
    segments: Vec<String>,
    query: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    content_sha: u8,
    secs: u32,
    offset: u32,
    expires: u32,
    tamper: u8,
}

/// RFC 3986 unreserved characters stay; every other byte becomes `%XY` (upper-case hex).
fn enc(s: &[u8], keep_slash: bool) -> String {
    let mut out = String::new();
    for &b in s {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) || (keep_slash && b == b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn hmac(key: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap();
    m.update(msg);
    m.finalize().into_bytes().to_vec()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

struct Built {
    req: Request,
    amz: i64,
    expires: Option<i64>,
    extra_header: Option<String>,
}

fn build(s: &Signed, secret: &str) -> Built {
    let service = if s.sns { "sns" } else { "sqs" };
    let region: String = s
        .region
        .chars()
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
        .collect();
    let region = if region.is_empty() {
        "us-east-1".to_string()
    } else {
        region
    };
    // Any instant from 2001 to 2137.
    let amz = 1_000_000_000 + i64::from(s.secs);
    let amz_date = format_amz_date(amz);
    let date = &amz_date[..8];
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let method = if s.post { "POST" } else { "GET" };

    // The path as an SDK sends it (each segment encoded once); signed encoded once more.
    let segments: Vec<String> = s
        .segments
        .iter()
        .filter(|g| !g.is_empty() && *g != "." && *g != "..")
        .map(|g| enc(g.as_bytes(), false))
        .collect();
    let path = format!("/{}", segments.join("/"));
    let canonical_uri = enc(path.as_bytes(), true);

    // Query pairs: the caller's (none of them X-Amz-*), then the presigned parameters.
    let mut pairs: Vec<(String, String)> = s
        .query
        .iter()
        .filter(|(k, _)| !k.to_ascii_lowercase().starts_with("x-amz-"))
        .map(|(k, v)| (enc(k.as_bytes(), false), enc(v.as_bytes(), false)))
        .collect();

    // Headers: host, the date (header form), extras, maybe the payload hash.
    let mut headers: Vec<(String, String)> = vec![("host".into(), "localhost:4566".into())];
    if !s.presigned {
        headers.push(("x-amz-date".into(), amz_date.clone()));
    }
    let mut extra_header = None;
    for (k, v) in &s.headers {
        let name: String = k
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .map(|c| c.to_ascii_lowercase())
            .collect();
        if name.is_empty()
            || matches!(
                name.as_str(),
                "host" | "authorization" | "x-amz-date" | "x-amz-content-sha256"
            )
        {
            continue;
        }
        let value: String = v.chars().filter(|c| (' '..='~').contains(c)).collect();
        extra_header.get_or_insert_with(|| name.clone());
        headers.push((name, value));
    }
    let body_hash = hex(&Sha256::digest(&s.body));
    let payload_hash = match s.content_sha % 3 {
        1 => Some(body_hash.clone()),
        2 => Some(body_hash.to_ascii_uppercase()),
        _ => None,
    };
    if let Some(h) = &payload_hash {
        headers.push(("x-amz-content-sha256".into(), h.clone()));
    }
    let mut names: Vec<String> = headers.iter().map(|(k, _)| k.clone()).collect();
    names.sort();
    names.dedup();
    let signed_headers = names.join(";");
    let mut canonical_headers = String::new();
    for n in &names {
        let values: Vec<String> = headers
            .iter()
            .filter(|(k, _)| k == n)
            .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        canonical_headers.push_str(&format!("{n}:{}\n", values.join(",")));
    }

    let expires = s.presigned.then(|| i64::from(s.expires % 604_800) + 1);
    if let Some(exp) = expires {
        for (k, v) in [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256".to_string()),
            ("X-Amz-Credential", format!("{AKID}/{scope}")),
            ("X-Amz-Date", amz_date.clone()),
            ("X-Amz-Expires", exp.to_string()),
            ("X-Amz-SignedHeaders", signed_headers.clone()),
        ] {
            pairs.push((k.to_string(), enc(v.as_bytes(), false)));
        }
    }
    let mut sorted = pairs.clone();
    sorted.sort();
    let canonical_query = sorted
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");

    let canonical = format!(
        "{method}\n{canonical_uri}\n{canonical_query}\n{canonical_headers}\n{signed_headers}\n{}",
        payload_hash.as_deref().unwrap_or(&body_hash)
    );
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let k = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k = hmac(&k, region.as_bytes());
    let k = hmac(&k, service.as_bytes());
    let k = hmac(&k, b"aws4_request");
    let signature = hex(&hmac(&k, string_to_sign.as_bytes()));

    if s.presigned {
        pairs.push(("X-Amz-Signature".into(), signature));
    } else {
        headers.push((
            "authorization".into(),
            format!("AWS4-HMAC-SHA256 Credential={AKID}/{scope}, SignedHeaders={signed_headers}, Signature={signature}"),
        ));
    }
    let query = pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let path_and_query = if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    };
    Built {
        req: Request {
            method: method.into(),
            path_and_query,
            headers,
            body: s.body.clone(),
            scheme: "http".into(),
        },
        amz,
        expires,
        extra_header,
    }
}

fn signed(s: Signed) {
    let b = build(&s, SECRET);
    let want_service = if s.sns { Service::Sns } else { Service::Sqs };
    // Any instant the window allows: 15 minutes either side, or up to the expiry.
    let span = 900 + b.expires.unwrap_or(900);
    let now = b.amz - 900 + i64::from(s.offset) % (span + 1);
    let good = creds(AKID, SECRET);
    let v = auth::verify(&b.req, &good, now)
        .unwrap_or_else(|e| panic!("a correctly signed request was refused: {e:?}\n{:?}", b.req));
    assert_eq!(v.service, want_service);
    assert_eq!(v.credential.access_key_id, AKID);
    assert_eq!(auth::peek_scope_service(&b.req), Some(want_service));

    let mut req = b.req.clone();
    let mut now2 = now;
    let mut creds2 = good.clone();
    let expect: &[&str] = match s.tamper % 7 {
        0 => return,
        1 => {
            let Some(byte) = req.body.first_mut() else {
                return;
            };
            *byte ^= 1;
            if s.content_sha.is_multiple_of(3) {
                &["SignatureDoesNotMatch"]
            } else {
                &["PayloadHashMismatch"]
            }
        }
        2 => {
            now2 = match b.expires {
                Some(exp) => b.amz + exp + 1 + i64::from(s.offset % 1000),
                None => b.amz + 901 + i64::from(s.offset % 1000),
            };
            if s.offset % 2 == 1 {
                now2 = b.amz - 901 - i64::from(s.offset % 1000);
                &["SignatureNotYetCurrent"]
            } else if b.expires.is_some() {
                &["PresignedUrlExpired"]
            } else {
                &["SignatureExpired"]
            }
        }
        3 => {
            creds2 = creds(AKID, "another-secret");
            &["SignatureDoesNotMatch"]
        }
        4 => {
            creds2 = creds("AKIDOTHER", SECRET);
            &["InvalidClientTokenId"]
        }
        5 => {
            let name = b.extra_header.clone().unwrap_or_else(|| "host".into());
            let h = req.headers.iter_mut().find(|(k, _)| *k == name).unwrap();
            h.1.push_str(" x");
            &["SignatureDoesNotMatch"]
        }
        _ => {
            req.method = if s.post { "GET".into() } else { "POST".into() };
            &["SignatureDoesNotMatch"]
        }
    };
    let e = auth::verify(&req, &creds2, now2).expect_err("a changed request still verified");
    check_error(&e);
    let kind = format!("{e:?}");
    let kind = kind.split(['(', ' ']).next().unwrap();
    assert!(expect.contains(&kind), "expected {expect:?}, got {e:?}");
}

// ---- dates ----------------------------------------------------------------------------

fn dates(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Some(t) = parse_amz_date(&text) {
        assert_eq!(format_amz_date(t), text, "{t}");
    }
    if data.len() >= 8 {
        // Years 0000 to 9999.
        let lo = -62_167_219_200i64;
        let hi = 253_402_300_799i64;
        let raw = i64::from_le_bytes(data[..8].try_into().unwrap());
        let secs = lo + raw.rem_euclid(hi - lo + 1);
        let formatted = format_amz_date(secs);
        assert_eq!(parse_amz_date(&formatted), Some(secs), "{formatted}");
    }
}

fuzz_target!(|data: &[u8]| {
    let [mode, rest @ ..] = data else { return };
    match mode % 3 {
        0 => raw(rest),
        1 => {
            if let Ok(s) = Signed::arbitrary_take_rest(Unstructured::new(rest)) {
                signed(s);
            }
        }
        _ => dates(rest),
    }
});
