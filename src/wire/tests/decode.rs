//! Decoding: a Query form as botocore's Query serializer writes it decodes to the value the
//! JSON protocol carries for the same call; bad input is an AWS error, never a panic.

use serde_json::{json, Value};

use super::{form_request, json_request, oracle};
use crate::http::Request;
use crate::wire::{decode_input, recognise, Action, ErrorCode, Service};

fn decode_form(body: &str, scope: Option<Service>) -> Result<(Action, Value), ErrorCode> {
    let req = form_request(body);
    let rec = recognise(&req, scope).map_err(|(_, _, e)| e.code)?;
    let v = decode_input(&rec, &req).map_err(|e| e.code)?;
    Ok((rec.action, v))
}

#[test]
fn sqs_query_forms_from_the_query_era_model_decode_to_json_inputs() {
    let path = oracle::repo_root().join("tests/data/wire/sqs_query_forms.json");
    let fixtures: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    let fixtures = fixtures.as_array().expect("list");
    assert_eq!(fixtures.len(), 23, "one fixture per SQS action");
    for f in fixtures {
        let body = f["body"].as_str().expect("body");
        let (action, got) = decode_form(body, None).expect("decodes");
        assert_eq!(action.name(), f["action"], "action");
        assert_eq!(got, f["input"], "{}", f["action"]);
        // The same call with the SigV4 scope given, and as a presigned GET (all in the URL).
        let (_, scoped) = decode_form(body, Some(Service::Sqs)).expect("decodes");
        assert_eq!(scoped, f["input"]);
        let get = Request {
            method: "GET".into(),
            path_and_query: format!(
                "/?{body}&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abc"
            ),
            ..Request::default()
        };
        let rec = recognise(&get, None).expect("recognised");
        assert_eq!(decode_input(&rec, &get).expect("decodes"), f["input"]);
    }
}

#[test]
fn oracle_sns_query_forms_decode_to_json_inputs() {
    let path = oracle::repo_root().join("tests/data/wire/query_inputs.json");
    let inputs: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("inputs")).expect("JSON");
    let cases = inputs["sns"].clone();
    let bodies = oracle::ask(&json!({"cmd": "serialize", "service": "sns", "cases": cases}));
    let cases = cases.as_array().expect("list");
    assert_eq!(cases.len(), 19, "one case per SNS action answered");
    for (case, body) in cases.iter().zip(bodies.as_array().expect("list")) {
        let body = body.as_str().expect("body");
        let req = form_request(body);
        let rec = recognise(&req, None).expect("recognised");
        assert_eq!(rec.service, Service::Sns, "{body}");
        assert_eq!(rec.action.name(), case["action"]);
        assert_eq!(
            decode_input(&rec, &req).expect("decodes"),
            case["input"],
            "{}",
            case["action"]
        );
    }
}

#[test]
fn post_query_era_member_decodes_by_its_overlay_name() {
    // ReceiveMessage.MessageSystemAttributeNames postdates SQS's query protocol.
    let (_, v) = decode_form(
        "Action=ReceiveMessage&QueueUrl=u&MessageSystemAttributeName.1=All&MessageSystemAttributeName.2=SenderId",
        None,
    )
    .unwrap();
    assert_eq!(
        v,
        json!({"QueueUrl": "u", "MessageSystemAttributeNames": ["All", "SenderId"]})
    );
}

#[test]
fn query_lists_follow_numeric_order_and_empty_markers() {
    let (_, v) = decode_form(
        "Action=GetQueueAttributes&QueueUrl=u&AttributeName.10=C&AttributeName.2=B&AttributeName.1=A&AttributeName.x=no",
        None,
    )
    .unwrap();
    assert_eq!(v["AttributeNames"], json!(["A", "B", "C"]));
    let (_, v) = decode_form("Action=UntagQueue&QueueUrl=u&TagKey=", None).unwrap();
    assert_eq!(v["TagKeys"], json!([]));
}

#[test]
fn unknown_and_presign_params_are_ignored() {
    let (_, v) = decode_form(
        "Action=DeleteQueue&Version=2012-11-05&QueueUrl=u&Bogus=1&Bogus.1.x=2&X-Amz-Credential=c&X-Amz-Date=d",
        None,
    )
    .unwrap();
    assert_eq!(v, json!({"QueueUrl": "u"}));
}

#[test]
fn non_numeric_integers_and_bad_booleans_are_parameter_errors() {
    assert_eq!(
        decode_form(
            "Action=ReceiveMessage&QueueUrl=u&MaxNumberOfMessages=ten",
            None
        )
        .unwrap_err(),
        ErrorCode::InvalidParameterValue
    );
    assert_eq!(
        decode_form(
            "Action=SendMessageBatch&QueueUrl=u&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.DelaySeconds=1.5",
            None
        )
        .unwrap_err(),
        ErrorCode::InvalidParameterValue
    );
    assert_eq!(
        decode_form(
            "Action=Subscribe&Version=2010-03-31&TopicArn=t&ReturnSubscriptionArn=maybe",
            None
        )
        .unwrap_err(),
        ErrorCode::InvalidParameter
    );
    let req = form_request("Action=ReceiveMessage&QueueUrl=u&WaitTimeSeconds=x");
    let rec = recognise(&req, None).unwrap();
    let err = decode_input(&rec, &req).unwrap_err();
    assert_eq!(
        err.message,
        "Value for parameter WaitTimeSeconds is invalid. Reason: must be an integer."
    );
}

#[test]
fn hostile_forms_do_not_panic() {
    let deep = format!(
        "Action=SendMessage&QueueUrl=u&MessageAttribute{}=1",
        ".1".repeat(100_000)
    );
    assert!(decode_form(&deep, None).is_ok());
    let many: String = (1..20_000)
        .map(|i| format!("&AttributeName.{i}=A"))
        .collect();
    let (_, v) = decode_form(&format!("Action=GetQueueAttributes{many}"), None).unwrap();
    assert_eq!(v["AttributeNames"].as_array().map(Vec::len), Some(19_999));
    let huge_index =
        "Action=GetQueueAttributes&AttributeName.99999999999999999999999=A&AttributeName.0=B";
    assert_eq!(decode_form(huge_index, None).unwrap().1, json!({}));
    // A map entry missing its key or value carries nothing.
    let (_, v) = decode_form("Action=TagQueue&QueueUrl=u&Tag.1.Key=k&Tag.2.Value=v", None).unwrap();
    assert_eq!(v, json!({"QueueUrl": "u"}));
}

#[test]
fn json_bodies_decode_or_fail_as_serialization_errors() {
    let ok = |body: &[u8]| {
        let req = json_request("AmazonSQS.SendMessage", body);
        let rec = recognise(&req, None).expect("recognised");
        decode_input(&rec, &req)
    };
    assert_eq!(ok(b"").unwrap(), json!({}));
    assert_eq!(ok(b" \n").unwrap(), json!({}));
    assert_eq!(
        ok(br#"{"QueueUrl":"u","MessageBody":"b","Extra":1}"#).unwrap()["Extra"],
        1
    );
    for bad in [
        &b"{"[..],
        b"[1,2]",
        b"\"s\"",
        b"null",
        b"{\"a\":\"\xff\"}",
        b"\xef\xbb\xbf{}",
    ] {
        let err = ok(bad).unwrap_err();
        assert_eq!(
            err.code,
            ErrorCode::SerializationException,
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
    let deep = "[".repeat(100_000);
    assert_eq!(
        ok(deep.as_bytes()).unwrap_err().code,
        ErrorCode::SerializationException
    );
}
