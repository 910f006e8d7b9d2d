//! The AWS JSON 1.0 decoder: `X-Amz-Target` names the action, the body is its input.
//!
//! Input: byte 0 picks the target (one of the 23 SQS actions, or a name that is not one),
//! byte 1 the canned broker answer, the rest is the body.
//!
//! Asserts: recognition finds exactly the named action; the decoded input is the body's
//! JSON object (an all-whitespace body is `{}`), anything else a SerializationException;
//! and the whole service (auth off, canned broker) answers with a real status, the request
//! id and a JSON object body, errors carrying `__type`, `message` and `x-amzn-query-error`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use queen_sqs::http::Request;
use queen_sqs::wire::{self, Action, ErrorCode, Protocol, Service};
use queen_sqs_fuzz::{check_response, handle};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let [sel, mode, body @ ..] = data else { return };
    let actions: Vec<Action> = Action::ALL
        .iter()
        .copied()
        .filter(|a| a.service() == Service::Sqs)
        .collect();
    let pick = *sel as usize % (actions.len() + 2);
    let target = match actions.get(pick) {
        Some(a) => format!("AmazonSQS.{}", a.name()),
        None if pick == actions.len() => "AmazonSQS.NotAnAction".to_string(),
        None => "AmazonSNS.Publish".to_string(),
    };
    let req = Request {
        method: "POST".into(),
        path_and_query: "/".into(),
        headers: vec![
            ("host".into(), "localhost:4566".into()),
            ("content-type".into(), "application/x-amz-json-1.0".into()),
            ("x-amz-target".into(), target),
        ],
        body: body.to_vec(),
        scheme: "http".into(),
    };

    let caller = wire::caller(&req);
    assert_eq!(caller.protocol, Protocol::Json);
    match wire::recognise(&req, None) {
        Ok(rec) => {
            let want = actions
                .get(pick)
                .copied()
                .expect("only real names are recognised");
            assert_eq!(
                (rec.protocol, rec.service, rec.action),
                (Protocol::Json, Service::Sqs, want)
            );
            assert_eq!(caller.may_wait, want == Action::ReceiveMessage);

            let expected = if body.iter().all(u8::is_ascii_whitespace) {
                Some(Value::Object(Default::default()))
            } else {
                match serde_json::from_slice::<Value>(body) {
                    Ok(v @ Value::Object(_)) => Some(v),
                    _ => None,
                }
            };
            match (wire::decode_input(&rec, &req), expected) {
                (Ok(got), Some(want)) => assert_eq!(got, want),
                (Err(e), None) => assert_eq!(e.code, ErrorCode::SerializationException),
                (got, want) => panic!("decoded {got:?}, expected {want:?}"),
            }
            let resp = handle(req, *mode);
            check_response(&resp, Protocol::Json, Some(want.name()));
        }
        Err((protocol, _, e)) => {
            assert!(pick >= actions.len(), "{e:?}");
            assert_eq!(protocol, Protocol::Json);
            assert_eq!(e.code, ErrorCode::InvalidAction);
            let resp = handle(req, *mode);
            check_response(&resp, Protocol::Json, None);
            assert_eq!(resp.status, 400);
        }
    }
});
