//! The wire layer's tests. Those marked "oracle" run botocore (python3) as the reference:
//! they fail, rather than skip, when python3 or botocore is missing.

mod catalog;
mod decode;
mod encode;
mod model;
mod oracle;
mod recognise;
mod table;

use crate::http::Request;

/// A Query request with the given form body.
fn form_request(body: &str) -> Request {
    Request {
        method: "POST".into(),
        path_and_query: "/".into(),
        headers: vec![(
            "content-type".into(),
            "application/x-www-form-urlencoded".into(),
        )],
        body: body.as_bytes().to_vec(),
        scheme: "http".into(),
    }
}

/// A JSON 1.0 request for `target` (the whole `X-Amz-Target` value).
fn json_request(target: &str, body: &[u8]) -> Request {
    Request {
        method: "POST".into(),
        path_and_query: "/".into(),
        headers: vec![
            ("x-amz-target".into(), target.into()),
            ("content-type".into(), "application/x-amz-json-1.0".into()),
        ],
        body: body.to_vec(),
        scheme: "http".into(),
    }
}
