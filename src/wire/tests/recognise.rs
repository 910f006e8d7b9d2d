//! Recognition: protocol, service and action, and the errors for what is not one of ours.

use super::{form_request, json_request};
use crate::http::Request;
use crate::wire::{encode_error, recognise, Action, ErrorCode, Protocol, Service};

fn err_of(req: &Request, scope: Option<Service>) -> (Protocol, Service, ErrorCode, String) {
    let (p, s, e) = recognise(req, scope).expect_err("refused");
    (p, s, e.code, e.message)
}

#[test]
fn json_target_names_sqs_actions_only() {
    let rec = recognise(
        &json_request("AmazonSQS.SendMessage", b"{}"),
        Some(Service::Sqs),
    )
    .unwrap();
    assert_eq!(
        (rec.protocol, rec.service, rec.action),
        (Protocol::Json, Service::Sqs, Action::SendMessage)
    );
    // X-Amz-Target wins over a form Action in the body, and Content-Type is not read.
    let mut req = json_request("AmazonSQS.ListQueues", b"Action=SendMessage");
    req.headers.retain(|(k, _)| k != "content-type");
    assert_eq!(recognise(&req, None).unwrap().action, Action::ListQueues);

    for target in [
        "AmazonSQS.sendmessage",
        "AmazonSQS.Publish",
        "AmazonSQS.",
        "AmazonSQS.Bogus",
    ] {
        let (p, s, code, msg) = err_of(&json_request(target, b"{}"), None);
        assert_eq!(
            (p, s, code),
            (Protocol::Json, Service::Sqs, ErrorCode::InvalidAction),
            "{target}"
        );
        assert!(
            !msg.contains("Bogus") && !msg.contains("sendmessage"),
            "echoed: {msg}"
        );
    }
    for target in [
        "DynamoDB_20120810.ListTables",
        "SNS_20100331.Publish",
        "amazonsqs.SendMessage",
        "",
    ] {
        let (p, _, code, _) = err_of(&json_request(target, b"{}"), None);
        assert_eq!(
            (p, code),
            (Protocol::Json, ErrorCode::InvalidAction),
            "{target:?}"
        );
    }
}

#[test]
fn query_service_comes_from_scope_then_version_then_table() {
    let cases = [
        ("Action=ListQueues", None, Service::Sqs, Action::ListQueues),
        ("Action=Publish", None, Service::Sns, Action::Publish),
        (
            "Action=AddPermission",
            None,
            Service::Sqs,
            Action::AddPermission,
        ),
        (
            "Action=AddPermission&Version=2010-03-31",
            None,
            Service::Sns,
            Action::AddPermission,
        ),
        (
            "Action=RemovePermission",
            Some(Service::Sns),
            Service::Sns,
            Action::RemovePermission,
        ),
        (
            "Action=AddPermission&Version=2010-03-31",
            Some(Service::Sqs),
            Service::Sqs,
            Action::AddPermission,
        ),
        (
            "Action=ListQueues&Version=1999-01-01",
            None,
            Service::Sqs,
            Action::ListQueues,
        ),
    ];
    for (body, scope, service, action) in cases {
        let rec = recognise(&form_request(body), scope).unwrap();
        assert_eq!(
            (rec.protocol, rec.service, rec.action),
            (Protocol::Query, service, action),
            "{body}"
        );
    }
}

#[test]
fn query_actions_outside_the_requested_service_are_invalid() {
    let cases = [
        ("Action=Publish", Some(Service::Sqs), Service::Sqs),
        ("Action=Publish&Version=2012-11-05", None, Service::Sqs),
        ("Action=SendMessage&Version=2010-03-31", None, Service::Sns),
        ("Action=CreatePlatformEndpoint", None, Service::Sqs),
        (
            "Action=CreatePlatformEndpoint&Version=2010-03-31",
            None,
            Service::Sns,
        ),
        ("Action=sendmessage", None, Service::Sqs),
    ];
    for (body, scope, service) in cases {
        let (p, s, code, msg) = err_of(&form_request(body), scope);
        assert_eq!(
            (p, s, code),
            (Protocol::Query, service, ErrorCode::InvalidAction),
            "{body}"
        );
        // SQS names the action it does not know (recorded: test_invalid_action_raises_exception).
        let name = body
            .split('&')
            .next()
            .unwrap()
            .trim_start_matches("Action=");
        assert_eq!(
            msg,
            format!("The action {name} is not valid for this endpoint.")
        );
    }
    // A name no action could have is not echoed: too long, or not letters and digits.
    let long = format!("Action={}", "A".repeat(65));
    for body in [long.as_str(), "Action=Send%3Cb%3E", "Action=a%20b"] {
        let (_, _, code, msg) = err_of(&form_request(body), None);
        assert_eq!(code, ErrorCode::InvalidAction, "{body}");
        assert!(
            msg.starts_with("The action or operation requested is invalid"),
            "{body}: {msg}"
        );
    }
}

#[test]
fn missing_action_and_malformed_forms() {
    for body in [
        "",
        "Version=2012-11-05&QueueUrl=x",
        "Action=",
        "{\"QueueUrl\":\"u\"}",
    ] {
        let (p, _, code, _) = err_of(&form_request(body), None);
        assert_eq!(
            (p, code),
            (Protocol::Query, ErrorCode::MissingAction),
            "{body:?}"
        );
    }
    for body in [
        &b"Action=ListQueues&QueueNamePrefix=%zz"[..],
        b"Action=ListQueues&QueueNamePrefix=%FF",
        b"Action=List\xffQueues",
    ] {
        let mut req = form_request("");
        req.body = body.to_vec();
        let (p, s, code, _) = err_of(&req, Some(Service::Sns));
        assert_eq!(
            (p, s, code),
            (
                Protocol::Query,
                Service::Sns,
                ErrorCode::MalformedQueryString
            )
        );
        // The refusal renders (status 404 is AWS's documented one for this code).
        assert_eq!(
            encode_error(p, s, &crate::wire::ApiError::new(code, "m"), "r").status,
            404
        );
    }
}
