//! The request log (`QUEEN_SQS_REQUEST_LOG`): one JSON line per answered request, read back
//! after known traffic; and the component's telemetry header never reaches a client.

mod support;

use serde_json::{json, Value};
use support::{fresh_dir, Endpoint};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_is_one_json_line_and_the_telemetry_header_never_leaves() {
    let log = fresh_dir("request-log").join("requests.jsonl");
    let ep = Endpoint::with_env(&[
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_REQUEST_LOG", log.to_str().unwrap()),
    ])
    .await;
    let url = ep.create_queue("logged", json!({})).await;
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "a body that must not be logged"}),
    )
    .await;
    let (status, _) = ep
        .sqs("GetQueueUrl", json!({"QueueName": "no-such-queue"}))
        .await;
    assert_eq!(status, 400);
    // A Query call, whose answer is XML.
    let (status, headers, _) = ep
        .raw(
            "POST",
            "/",
            &[("content-type", "application/x-www-form-urlencoded")],
            "Action=ListQueues&Version=2012-11-05",
        )
        .await;
    assert_eq!(status, 200);
    assert!(
        headers.iter().all(|(k, _)| k != "x-queen-sqs-said"),
        "the telemetry header reached the client: {headers:?}"
    );

    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(!text.contains("a body that must not be logged"));
    let (create, send, missing, list) = (&lines[0], &lines[1], &lines[2], &lines[3]);
    assert_eq!(create["action"], "CreateQueue");
    assert_eq!(create["target"], "logged");
    assert_eq!(send["service"], "sqs");
    assert_eq!(send["action"], "SendMessage");
    assert_eq!(send["target"], "logged");
    assert_eq!(send["status"], 200);
    assert_eq!(send["error"], Value::Null);
    assert!(send["bytes_in"].as_u64().unwrap() > 30);
    assert!(send["bytes_out"].as_u64().unwrap() > 0);
    assert!(send["latency_ms"].as_f64().unwrap() > 0.0);
    assert!(send["request_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(send["access_key_id"], Value::Null, "auth is off");
    assert_eq!(missing["status"], 400);
    assert_eq!(missing["error"], "QueueDoesNotExist");
    assert_eq!(missing["target"], "no-such-queue");
    assert_eq!(list["action"], "ListQueues");
    assert!(list["time"].as_str().unwrap().ends_with('Z'));
}
