//! The Query decoder: an `application/x-www-form-urlencoded` form (`Action=...&...`) decoded,
//! by the action's input shape, into the JSON 1.0 input.
//!
//! Input: byte 0 picks the canned broker answer, byte 1 seeds the re-encoding below, the
//! rest is the form.
//!
//! Asserts: the outcome (recognition, then the decoded input or its error) is the same
//! whether the form is the body or the URL's query string, and the same after the form is
//! re-encoded (bytes percent-escaped in upper- or lower-case hex, `+` written `%20`); and
//! the whole service (auth off, canned broker) answers with a real status, the request id
//! and a well-formed XML document: only XML 1.0 characters, one root named
//! `<Action>Response` (carrying `ResponseMetadata/RequestId`) or `ErrorResponse` (with a
//! `Code`), no mixed content, only the predefined entities.
#![no_main]

use libfuzzer_sys::fuzz_target;
use queen_sqs::http::Request;
use queen_sqs::wire::{self, Action, ApiError, Protocol, Service};
use queen_sqs_fuzz::{check_response, handle};
use serde_json::Value;

type Outcome = (
    Result<(Protocol, Service, Action), (Protocol, Service, ApiError)>,
    Option<Result<Value, ApiError>>,
);

fn request(query: &str, body: &[u8]) -> Request {
    Request {
        method: "POST".into(),
        path_and_query: if query.is_empty() {
            "/".into()
        } else {
            format!("/?{query}")
        },
        headers: vec![
            ("host".into(), "localhost:4566".into()),
            (
                "content-type".into(),
                "application/x-www-form-urlencoded; charset=utf-8".into(),
            ),
        ],
        body: body.to_vec(),
        scheme: "http".into(),
    }
}

fn outcome(req: &Request) -> Outcome {
    match wire::recognise(req, None) {
        Ok(rec) => {
            assert_eq!(rec.protocol, Protocol::Query);
            let decoded = wire::decode_input(&rec, req);
            if let Ok(v) = &decoded {
                assert!(v.is_object(), "{v:?}");
            }
            (Ok((rec.protocol, rec.service, rec.action)), Some(decoded))
        }
        Err(e) => (Err(e), None),
    }
}

/// The same form, spelt differently: escapes and separators kept, other bytes written as
/// `%XY` (either case) or left alone, `+` as `%20` or left alone.
fn reencode(form: &[u8], seed: u8) -> Vec<u8> {
    const UPPER: &[u8; 16] = b"0123456789ABCDEF";
    const LOWER: &[u8; 16] = b"0123456789abcdef";
    let mut x: u32 = 0x9E37_79B9 ^ u32::from(seed);
    let mut out = Vec::with_capacity(form.len() * 3);
    let mut i = 0;
    while i < form.len() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let b = form[i];
        match b {
            b'%' => {
                let end = (i + 3).min(form.len());
                out.extend_from_slice(&form[i..end]);
                i = end;
                continue;
            }
            b'&' | b'=' => out.push(b),
            b'+' if x & 1 == 0 => out.extend_from_slice(b"%20"),
            b'+' => out.push(b'+'),
            _ if x & 3 == 1 => {
                out.extend_from_slice(&[b'%', UPPER[(b >> 4) as usize], UPPER[(b & 15) as usize]])
            }
            _ if x & 3 == 2 => {
                out.extend_from_slice(&[b'%', LOWER[(b >> 4) as usize], LOWER[(b & 15) as usize]])
            }
            _ => out.push(b),
        }
        i += 1;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let [mode, seed, form @ ..] = data else {
        return;
    };
    let req = request("", form);
    let first = outcome(&req);

    if let Ok(text) = std::str::from_utf8(form) {
        assert_eq!(outcome(&request(text, b"")), first, "form in the URL");
    }
    let respelt = reencode(form, *seed);
    assert_eq!(
        outcome(&request("", &respelt)),
        first,
        "respelt: {:?}",
        String::from_utf8_lossy(&respelt)
    );

    let action = first.0.as_ref().ok().map(|(_, _, a)| a.name());
    let resp = handle(req, *mode);
    check_response(&resp, Protocol::Query, action);
    if first.0.is_err() {
        // MissingAction and InvalidAction are 400, MalformedQueryString AWS's 404.
        assert!((400..500).contains(&resp.status), "{}", resp.status);
    }
});
