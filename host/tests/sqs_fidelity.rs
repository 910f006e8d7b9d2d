//! SQS answers as AWS gave them in recordings against the real service (LocalStack's
//! AWS-validated snapshots, issue 20): error names and texts, attribute defaults and
//! selections, and the request forms AWS accepts. Each test pins one behaviour that
//! differed before.

mod support;

use serde_json::{json, Value};
use support::Endpoint;

/// (status, `__type` suffix, `x-amzn-query-error`, message) of a JSON 1.0 error answer.
async fn json_error(ep: &Endpoint, action: &str, input: Value) -> (u16, String, String, String) {
    let target = format!("AmazonSQS.{action}");
    let (status, headers, body) = ep
        .raw(
            "POST",
            "/",
            &[
                ("x-amz-target", &target),
                ("content-type", "application/x-amz-json-1.0"),
            ],
            input.to_string(),
        )
        .await;
    let v: Value = serde_json::from_slice(&body).expect("JSON error body");
    let ty = v["__type"].as_str().unwrap_or("");
    let query_error = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("x-amzn-query-error"))
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    (
        status,
        ty.rsplit('#').next().unwrap_or("").to_string(),
        query_error,
        v["message"].as_str().unwrap_or("").to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_errors_name_the_exception_and_the_header_the_query_code() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("names", json!({})).await;
    let (status, ty, header, _) = json_error(
        &ep,
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "x", "DelaySeconds": 901}),
    )
    .await;
    assert_eq!(
        (status, ty.as_str(), header.as_str()),
        (
            400,
            "InvalidParameterValueException",
            "InvalidParameterValue;Sender"
        )
    );
    let (status, ty, header, _) = json_error(&ep, "SendMessage", json!({"QueueUrl": url})).await;
    assert_eq!(
        (status, ty.as_str(), header.as_str()),
        (
            400,
            "MissingRequiredParameterException",
            "MissingParameter;Sender"
        )
    );
    // Modelled SQS exceptions keep their shape name.
    let (_, ty, header, _) = json_error(&ep, "GetQueueUrl", json!({"QueueName": "absent"})).await;
    assert_eq!(
        (ty.as_str(), header.as_str()),
        (
            "QueueDoesNotExist",
            "AWS.SimpleQueueService.NonExistentQueue;Sender"
        )
    );
}

async fn queue_attributes(
    ep: &Endpoint,
    url: &str,
    names: &[&str],
) -> serde_json::Map<String, Value> {
    let v = ep
        .sqs_ok(
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": names}),
        )
        .await;
    v["Attributes"].as_object().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_attributes_are_aws_s_set_with_aws_s_defaults() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("defaults", json!({})).await;
    let all = queue_attributes(&ep, &url, &["All"]).await;
    let mut names: Vec<&str> = all.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesDelayed",
            "ApproximateNumberOfMessagesNotVisible",
            "CreatedTimestamp",
            "DelaySeconds",
            "LastModifiedTimestamp",
            "MaximumMessageSize",
            "MessageRetentionPeriod",
            "QueueArn",
            "ReceiveMessageWaitTimeSeconds",
            "SqsManagedSseEnabled",
            "VisibilityTimeout",
        ]
    );
    assert_eq!(all["MaximumMessageSize"], "1048576");
    // Ours are still answered by name.
    let ours = queue_attributes(&ep, &url, &["queen.partitions"]).await;
    assert!(ours.contains_key("queen.partitions"), "{ours:?}");

    let fifo = ep
        .create_queue("defaults.fifo", json!({"FifoQueue": "true"}))
        .await;
    let all = queue_attributes(&ep, &fifo, &["All"]).await;
    assert!(!all.keys().any(|k| k.starts_with("queen.")), "{all:?}");
    assert_eq!(all["MaximumMessageSize"], "1048576");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_name_is_accepted_where_a_queue_url_is() {
    let ep = Endpoint::start().await;
    ep.create_queue("by-name", json!({})).await;
    let sent = ep
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": "by-name", "MessageBody": "Using name instead of URL"}),
        )
        .await;
    assert_eq!(sent["MD5OfMessageBody"], "86a83f96652a1bfad3891e7d523750cb");
    let got = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": "by-name", "WaitTimeSeconds": 1}),
        )
        .await;
    assert_eq!(got["Messages"][0]["Body"], "Using name instead of URL");
    assert_eq!(
        ep.sqs_err("GetQueueAttributes", json!({"QueueUrl": "no-such-name"}))
            .await,
        (400, "QueueDoesNotExist".to_string())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_queue_is_worded_per_protocol() {
    let ep = Endpoint::start().await;
    let url = format!("{}/000000000000/gone", ep.url);
    let (_, _, _, message) = json_error(&ep, "GetQueueAttributes", json!({"QueueUrl": url})).await;
    assert_eq!(message, "The specified queue does not exist.");
    let (status, xml) = ep
        .query(
            "/",
            &[
                ("Action", "GetQueueAttributes"),
                ("Version", "2012-11-05"),
                ("QueueUrl", &url),
            ],
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        xml.contains(
            "<Message>The specified queue does not exist for this wsdl version.</Message>"
        ),
        "{xml}"
    );
}
