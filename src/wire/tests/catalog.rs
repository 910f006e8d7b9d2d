//! The error catalog against botocore's models, and each rendering against botocore's
//! parsers: the `Error.Code` (and for JSON the `QueryErrorCode`) an SDK sees.

use serde_json::{json, Value};

use super::oracle;
use crate::wire::errors::Origin;
use crate::wire::{encode_error, ApiError, ErrorCode, Protocol, Service};

fn query_era_sqs_errors() -> Value {
    let path = oracle::repo_root().join("tests/data/wire/sqs_query_errors.json");
    let text = std::fs::read_to_string(path).expect("sqs_query_errors.json");
    serde_json::from_str::<Value>(&text).expect("fixture JSON")["errors"].clone()
}

/// (code, status, sender) botocore would assume for an exception shape's `error` facts.
fn facts(shape: &str, error: &Value) -> (String, u64, bool) {
    if error.is_null() {
        return (shape.to_string(), 400, true);
    }
    (
        error["code"].as_str().unwrap_or(shape).to_string(),
        error["httpStatusCode"].as_u64().unwrap_or(400),
        error["senderFault"].as_bool().unwrap_or(false),
    )
}

#[test]
fn oracle_modelled_variants_match_botocore() {
    let models = oracle::ask(&json!({"cmd": "models"}));
    let old_sqs = query_era_sqs_errors();
    let mut checked = 0;
    for code in ErrorCode::ALL {
        let spec = code.spec();
        let (want, where_) = match spec.origin {
            Origin::Common => continue,
            Origin::Sqs => {
                assert!(
                    models["sqs_errors"].get(spec.shape).is_some(),
                    "{code:?}: {} is not an exception shape of SQS's model",
                    spec.shape
                );
                // Shapes newer than the query-era model carry their own name, status 400.
                let error = old_sqs.get(spec.shape).cloned().unwrap_or(Value::Null);
                (facts(spec.shape, &error), "SQS (query era)")
            }
            Origin::Sns => {
                let error = models["sns_errors"]
                    .get(spec.shape)
                    .unwrap_or_else(|| panic!("{code:?}: {} not in SNS's model", spec.shape));
                (facts(spec.shape, error), "SNS")
            }
        };
        let got = (spec.code.to_string(), spec.status as u64, spec.sender);
        assert_eq!(got, want, "{code:?} disagrees with {where_}");
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} modelled variants checked");
}

#[test]
fn oracle_common_codes_agree_with_any_model_spelling_them() {
    let models = oracle::ask(&json!({"cmd": "models"}));
    for code in ErrorCode::ALL
        .iter()
        .filter(|c| c.spec().origin == Origin::Common)
    {
        for (shape, error) in models["sns_errors"].as_object().expect("map") {
            let (c, status, sender) = facts(shape, error);
            if c == code.code() {
                assert_eq!(
                    (status, sender),
                    (code.status() as u64, code.is_sender_fault()),
                    "{code:?}"
                );
            }
        }
    }
}

#[test]
fn codes_and_statuses_are_sane() {
    for code in ErrorCode::ALL {
        let s = code.spec();
        assert!(!s.code.is_empty() && !s.shape.is_empty());
        assert!((400..600).contains(&s.status), "{code:?}");
        assert_eq!(
            s.sender,
            s.status < 500,
            "{code:?}: fault and status disagree"
        );
        assert_eq!(code.batch_entry_code(), s.code);
    }
    // The pairs the contract names, and its inverted one.
    assert_eq!(
        ErrorCode::QueueDoesNotExist.code(),
        "AWS.SimpleQueueService.NonExistentQueue"
    );
    assert_eq!(ErrorCode::QueueNameExists.code(), "QueueAlreadyExists");
    assert_eq!(ErrorCode::NotFound.status(), 404);
    assert_eq!(ErrorCode::QueueDoesNotExist.status(), 400);
    assert_eq!(
        ErrorCode::SnsInvalidParameterValue.code(),
        "ParameterValueInvalid"
    );
    assert!(!ErrorCode::InternalError.is_sender_fault());
}

fn cases_for(protocol: Protocol, service: Service) -> (Vec<ErrorCode>, Vec<Value>) {
    let codes: Vec<ErrorCode> = ErrorCode::ALL.to_vec();
    let message = "Bad <thing> & \"quotes\"\r\n✓";
    let cases = codes
        .iter()
        .map(|c| {
            let resp = encode_error(protocol, service, &ApiError::new(*c, message), "req-1");
            assert_eq!(resp.status, c.status());
            assert_eq!(resp.header("x-amzn-RequestId"), Some("req-1"));
            let headers: serde_json::Map<String, Value> = resp
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            json!({
                "action": if service == Service::Sqs { "SendMessage" } else { "Publish" },
                "status": resp.status,
                "headers": headers,
                "body": String::from_utf8(resp.body).expect("UTF-8 body"),
            })
        })
        .collect();
    (codes, cases)
}

fn parse_errors(protocol: Protocol, service: Service) -> Vec<(ErrorCode, Value)> {
    let (codes, cases) = cases_for(protocol, service);
    let parsed = oracle::ask(&json!({
        "cmd": "parse",
        "service": if service == Service::Sqs { "sqs" } else { "sns" },
        "protocol": if protocol == Protocol::Json { "json" } else { "query" },
        "cases": cases,
    }));
    codes
        .into_iter()
        .zip(parsed.as_array().expect("list").iter().cloned())
        .collect()
}

#[test]
fn oracle_sqs_json_errors_parse_to_legacy_code_and_shape() {
    for (code, parsed) in parse_errors(Protocol::Json, Service::Sqs) {
        let e = &parsed["Error"];
        assert_eq!(e["Code"], code.code(), "{code:?}");
        assert_eq!(e["QueryErrorCode"], code.shape(), "{code:?}");
        assert_eq!(e["Type"], code.fault(), "{code:?}");
        assert_eq!(e["Message"], "Bad <thing> & \"quotes\"\r\n✓");
        assert_eq!(parsed["ResponseMetadata"]["RequestId"], "req-1");
    }
}

#[test]
fn oracle_sqs_query_errors_parse_to_legacy_code() {
    for (code, parsed) in parse_errors(Protocol::Query, Service::Sqs) {
        let e = &parsed["Error"];
        assert_eq!(e["Code"], code.code(), "{code:?}");
        assert_eq!(e["Type"], code.fault(), "{code:?}");
        assert_eq!(e["Message"], "Bad <thing> & \"quotes\"\r\n✓", "{code:?}");
        assert_eq!(parsed["ResponseMetadata"]["RequestId"], "req-1");
    }
}

#[test]
fn oracle_sns_query_errors_parse_to_sns_code() {
    for (code, parsed) in parse_errors(Protocol::Query, Service::Sns) {
        let e = &parsed["Error"];
        assert_eq!(e["Code"], code.code(), "{code:?}");
        assert_eq!(e["Type"], code.fault(), "{code:?}");
        assert_eq!(parsed["ResponseMetadata"]["RequestId"], "req-1");
    }
}

#[test]
fn error_documents_have_aws_layout() {
    let err = ApiError::new(
        ErrorCode::QueueDoesNotExist,
        "The specified queue does not exist.",
    );
    let r = encode_error(Protocol::Query, Service::Sqs, &err, "rid");
    assert_eq!(r.header("content-type"), Some("text/xml"));
    let body = String::from_utf8(r.body).unwrap();
    assert!(body.contains(
        "<ErrorResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><Error><Type>Sender</Type>\
         <Code>AWS.SimpleQueueService.NonExistentQueue</Code><Message>The specified queue does not exist for this wsdl version.</Message>\
         <Detail/></Error><RequestId>rid</RequestId></ErrorResponse>"
    ), "{body}");

    let r = encode_error(Protocol::Json, Service::Sqs, &err, "rid");
    assert_eq!(r.status, 400);
    assert_eq!(r.header("content-type"), Some("application/x-amz-json-1.0"));
    assert_eq!(
        r.header("x-amzn-query-error"),
        Some("AWS.SimpleQueueService.NonExistentQueue;Sender")
    );
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["__type"], "com.amazonaws.sqs#QueueDoesNotExist");
    assert_eq!(v["message"], "The specified queue does not exist.");

    let err = ApiError::new(ErrorCode::NotFound, "Topic does not exist");
    let r = encode_error(Protocol::Query, Service::Sns, &err, "rid");
    assert_eq!(r.status, 404);
    let body = String::from_utf8(r.body).unwrap();
    assert!(body.contains("<ErrorResponse xmlns=\"http://sns.amazonaws.com/doc/2010-03-31/\"><Error><Type>Sender</Type><Code>NotFound</Code>"));
    assert!(!body.contains("<Detail/>"));
    let r = encode_error(Protocol::Json, Service::Sns, &err, "rid");
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["__type"], "com.amazonaws.sns#NotFoundException");
}
