//! The SQS message actions through the real host: send, receive, delete and their batches,
//! receipt handles, FIFO order and deduplication, foreign payloads, and the in-flight
//! ceiling a standard queue's width sets.

mod sqs_messages_support;
mod support;

use queen_sqs::model::{
    attrs_from_api, md5_of_body, md5_of_message_attributes, mint, ReceiptHandle,
};
use serde_json::{json, Value};
use sqs_messages_support::*;
use support::{Endpoint, HANDLE_SECRET};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_receive_delete_round_trip_with_attributes_and_md5s() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "rt", &[], 4).await;
    let attrs = json!({
        "event": {"DataType": "String", "StringValue": "order.created"},
        "amount": {"DataType": "Number", "StringValue": "12.50"},
        "blob": {"DataType": "Binary.gz", "BinaryValue": "AAEC/w=="},
    });
    let sys = json!({"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-5759e988-bd862e3fe1be46a994272793"}});
    let body = "  hello, wörld\r\n";
    let sent = ep
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": body, "MessageAttributes": attrs, "MessageSystemAttributes": sys}),
        )
        .await;
    let user = attrs_from_api(&attrs).unwrap();
    let system = attrs_from_api(&sys).unwrap();
    assert_eq!(sent["MD5OfMessageBody"], md5_of_body(body));
    assert_eq!(
        sent["MD5OfMessageAttributes"],
        md5_of_message_attributes(&user).unwrap()
    );
    assert_eq!(
        sent["MD5OfMessageSystemAttributes"],
        md5_of_message_attributes(&system).unwrap()
    );
    let id = sent["MessageId"].as_str().unwrap().to_string();
    assert!(sent.get("SequenceNumber").is_none(), "{sent}");

    let before = now_ms();
    let got = receive(&ep, &url, json!({})).await;
    assert_eq!(got.len(), 1);
    let m = &got[0];
    assert_eq!(m["MessageId"], id.as_str());
    assert_eq!(m["Body"], body);
    assert_eq!(m["MD5OfBody"], md5_of_body(body));
    assert_eq!(
        m["MD5OfMessageAttributes"],
        md5_of_message_attributes(&user).unwrap()
    );
    assert_eq!(m["MessageAttributes"], attrs);
    assert_eq!(attr(m, "ApproximateReceiveCount"), "1");
    assert_eq!(
        attr(m, "AWSTraceHeader"),
        "Root=1-5759e988-bd862e3fe1be46a994272793"
    );
    let sent_ts: i64 = attr(m, "SentTimestamp").parse().unwrap();
    assert!(
        (before - 60_000..=before + 5_000).contains(&sent_ts),
        "{sent_ts} vs {before}"
    );
    let first_receive: i64 = attr(m, "ApproximateFirstReceiveTimestamp").parse().unwrap();
    assert!(first_receive >= sent_ts, "{first_receive} vs {sent_ts}");
    assert!(attr(m, "SenderId").starts_with("AIDA"), "{m}");
    for absent in ["MessageGroupId", "SequenceNumber"] {
        assert!(m["Attributes"].get(absent).is_none(), "{absent}: {m}");
    }

    delete(&ep, &url, m).await;
    assert!(receive(&ep, &url, json!({})).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attribute_selection_filters_and_hashes_what_is_returned() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "sel", &[], 2).await;
    let attrs = json!({
        "foo.a": {"DataType": "String", "StringValue": "1"},
        "foo.b": {"DataType": "String", "StringValue": "2"},
        "bar": {"DataType": "String", "StringValue": "3"},
    });
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "x", "MessageAttributes": attrs}),
    )
    .await;
    let v = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "MessageAttributeNames": ["foo.*"], "AttributeNames": ["SentTimestamp"]}),
        )
        .await;
    let m = &v["Messages"][0];
    let want = json!({
        "foo.a": {"DataType": "String", "StringValue": "1"},
        "foo.b": {"DataType": "String", "StringValue": "2"},
    });
    assert_eq!(m["MessageAttributes"], want);
    assert_eq!(
        m["MD5OfMessageAttributes"],
        md5_of_message_attributes(&attrs_from_api(&want).unwrap()).unwrap()
    );
    let keys: Vec<&String> = m["Attributes"].as_object().unwrap().keys().collect();
    assert_eq!(keys, vec!["SentTimestamp"]);

    // Nothing asked for: neither map, nor the attribute digest.
    ep.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}),
    )
    .await;
    let v = ep.sqs_ok("ReceiveMessage", json!({"QueueUrl": url})).await;
    let m = &v["Messages"][0];
    assert!(
        m.get("MessageAttributes").is_none()
            && m.get("MD5OfMessageAttributes").is_none()
            && m.get("Attributes").is_none(),
        "{m}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_validation_errors() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "val", &[("MaximumMessageSize", "1024")], 2).await;
    let cases = [
        (
            json!({"QueueUrl": url}),
            "MissingRequiredParameterException",
        ),
        (
            json!({"QueueUrl": url, "MessageBody": "a\u{0}b"}),
            "InvalidMessageContents",
        ),
        (
            json!({"QueueUrl": url, "MessageBody": "x".repeat(1025)}),
            "InvalidParameterValueException",
        ),
        (
            json!({"QueueUrl": url, "MessageBody": "x", "DelaySeconds": 901}),
            "InvalidParameterValueException",
        ),
        (
            json!({"QueueUrl": url, "MessageBody": "x", "MessageDeduplicationId": "d"}),
            "InvalidParameterValueException",
        ),
        (
            json!({"QueueUrl": url, "MessageBody": "x", "MessageAttributes": {"AWS.x": {"DataType": "String", "StringValue": "v"}}}),
            "InvalidParameterValueException",
        ),
        (
            json!({"QueueUrl": url, "MessageBody": "x", "MessageSystemAttributes": {"Nope": {"DataType": "String", "StringValue": "v"}}}),
            "InvalidParameterValueException",
        ),
        (
            json!({"QueueUrl": format!("{}/{ACCOUNT}/missing", ep.url), "MessageBody": "x"}),
            "QueueDoesNotExist",
        ),
    ];
    for (input, want) in cases {
        let (status, ty) = ep.sqs_err("SendMessage", input.clone()).await;
        assert_eq!((status, ty.as_str()), (400, want), "{input}");
    }
    // The size counts attribute names, types and values too.
    let (_, ty) = ep
        .sqs_err(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "x".repeat(1000), "MessageAttributes": {"name": {"DataType": "String", "StringValue": "y".repeat(30)}}}),
        )
        .await;
    assert_eq!(ty, "InvalidParameterValueException");
    // A standard queue accepts (and ignores) a MessageGroupId.
    send_ok_group(&ep, &url).await;
}

async fn send_ok_group(ep: &Endpoint, url: &str) {
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "x", "MessageGroupId": "g"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_batch_success_partial_failure_and_batch_errors() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "batch", &[("MaximumMessageSize", "2048")], 8).await;
    let v = ep
        .sqs_ok(
            "SendMessageBatch",
            json!({"QueueUrl": url, "Entries": [
                {"Id": "a", "MessageBody": "one"},
                {"Id": "b", "MessageBody": "two", "MessageAttributes": {"k": {"DataType": "String", "StringValue": "v"}}},
                {"Id": "bad-chars", "MessageBody": "\u{1}"},
                {"Id": "bad_attr", "MessageBody": "x", "MessageAttributes": {"k": {"DataType": "Text", "StringValue": "v"}}},
            ]}),
        )
        .await;
    let ok = v["Successful"].as_array().unwrap();
    let failed = v["Failed"].as_array().unwrap();
    assert_eq!(ok.len(), 2, "{v}");
    assert_eq!(ok[0]["Id"], "a");
    assert_eq!(ok[0]["MD5OfMessageBody"], md5_of_body("one"));
    assert!(ok[0].get("MD5OfMessageAttributes").is_none());
    assert_eq!(ok[1]["Id"], "b");
    assert!(ok[1]["MD5OfMessageAttributes"].is_string());
    assert_ne!(ok[0]["MessageId"], ok[1]["MessageId"]);
    assert_eq!(failed.len(), 2, "{v}");
    assert_eq!(failed[0]["Id"], "bad-chars");
    assert_eq!(failed[0]["Code"], "InvalidMessageContents");
    assert_eq!(failed[0]["SenderFault"], true);
    assert!(failed[0]["Message"].as_str().unwrap().len() > 5);
    assert_eq!(failed[1]["Id"], "bad_attr");
    assert_eq!(failed[1]["Code"], "InvalidParameterValue");

    let bodies: Vec<String> = drain(&ep, &url)
        .await
        .iter()
        .map(|m| m["Body"].as_str().unwrap().to_string())
        .collect();
    let mut sorted = bodies.clone();
    sorted.sort();
    assert_eq!(sorted, vec!["one", "two"]);

    let eleven: Vec<Value> = (0..11)
        .map(|i| json!({"Id": format!("e{i}"), "MessageBody": "x"}))
        .collect();
    let cases = [
        (json!({"QueueUrl": url, "Entries": []}), "EmptyBatchRequest"),
        (json!({"QueueUrl": url}), "EmptyBatchRequest"),
        (
            json!({"QueueUrl": url, "Entries": eleven}),
            "TooManyEntriesInBatchRequest",
        ),
        (
            json!({"QueueUrl": url, "Entries": [{"Id": "x", "MessageBody": "1"}, {"Id": "x", "MessageBody": "2"}]}),
            "BatchEntryIdsNotDistinct",
        ),
        (
            json!({"QueueUrl": url, "Entries": [{"Id": "no.dots", "MessageBody": "1"}]}),
            "InvalidBatchEntryId",
        ),
        (
            // The batch ceiling is AWS's 1 MiB in total, not the queue's MaximumMessageSize.
            json!({"QueueUrl": url, "Entries": [{"Id": "a", "MessageBody": "x".repeat(600_000)}, {"Id": "b", "MessageBody": "y".repeat(600_000)}]}),
            "BatchRequestTooLong",
        ),
    ];
    for (input, want) in cases {
        let (status, ty) = ep.sqs_err("SendMessageBatch", input.clone()).await;
        assert_eq!((status, ty.as_str()), (400, want), "{input}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_and_visibility_batches() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "settle", &[], 16).await;
    let entries: Vec<Value> = (0..4)
        .map(|i| json!({"Id": format!("m{i}"), "MessageBody": format!("b{i}")}))
        .collect();
    ep.sqs_ok(
        "SendMessageBatch",
        json!({"QueueUrl": url, "Entries": entries}),
    )
    .await;
    let got = drain(&ep, &url).await;
    assert_eq!(got.len(), 4);

    // Two released at once, one forged handle failing alone.
    let v = ep
        .sqs_ok(
            "ChangeMessageVisibilityBatch",
            json!({"QueueUrl": url, "Entries": [
                {"Id": "r0", "ReceiptHandle": got[0]["ReceiptHandle"], "VisibilityTimeout": 0},
                {"Id": "r1", "ReceiptHandle": got[1]["ReceiptHandle"], "VisibilityTimeout": 0},
                {"Id": "x", "ReceiptHandle": "not-a-handle", "VisibilityTimeout": 0},
                {"Id": "bad_vis", "ReceiptHandle": got[2]["ReceiptHandle"], "VisibilityTimeout": 43201},
            ]}),
        )
        .await;
    assert_eq!(v["Successful"].as_array().unwrap().len(), 2, "{v}");
    let failed = v["Failed"].as_array().unwrap();
    assert_eq!(failed.len(), 2, "{v}");
    assert_eq!(failed[0]["Code"], "ReceiptHandleIsInvalid");
    assert_eq!(failed[1]["Code"], "InvalidParameterValue");
    let again = drain(&ep, &url).await;
    assert_eq!(again.len(), 2, "the two released come back");

    let mut entries: Vec<Value> = got[2..]
        .iter()
        .chain(again.iter())
        .enumerate()
        .map(|(i, m)| json!({"Id": format!("d{i}"), "ReceiptHandle": m["ReceiptHandle"]}))
        .collect();
    entries.push(json!({"Id": "forged", "ReceiptHandle": "AAAA"}));
    let v = ep
        .sqs_ok(
            "DeleteMessageBatch",
            json!({"QueueUrl": url, "Entries": entries}),
        )
        .await;
    assert_eq!(v["Successful"].as_array().unwrap().len(), 4, "{v}");
    assert_eq!(v["Failed"][0]["Id"], "forged");
    assert_eq!(v["Failed"][0]["Code"], "ReceiptHandleIsInvalid");
    assert_eq!(v["Failed"][0]["SenderFault"], true);
    assert!(drain(&ep, &url).await.is_empty());
    let depth = broker(
        &ep,
        "GET",
        "/api/v1/resources/queues/settle/depth?group=__QUEUE_MODE__",
        Value::Null,
    )
    .await
    .1;
    assert_eq!(depth["pending"].as_u64().unwrap_or(0), 0, "{depth}");

    let (_, ty) = ep
        .sqs_err(
            "DeleteMessageBatch",
            json!({"QueueUrl": url, "Entries": []}),
        )
        .await;
    assert_eq!(ty, "EmptyBatchRequest");
    let (_, ty) = ep
        .sqs_err("ChangeMessageVisibilityBatch", json!({"QueueUrl": url, "Entries": [{"Id": "a", "ReceiptHandle": "h", "VisibilityTimeout": 1}, {"Id": "a", "ReceiptHandle": "h", "VisibilityTimeout": 1}]}))
        .await;
    assert_eq!(ty, "BatchEntryIdsNotDistinct");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receipt_handles_stale_forged_and_foreign() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "h1", &[], 2).await;
    let other = make_queue(&ep, "h2", &[], 2).await;
    send(&ep, &url, "one").await;
    let m = receive(&ep, &url, json!({})).await.remove(0);
    let handle = m["ReceiptHandle"].as_str().unwrap().to_string();

    // Another queue's URL with this queue's handle.
    let (_, ty) = ep
        .sqs_err(
            "DeleteMessage",
            json!({"QueueUrl": other, "ReceiptHandle": handle}),
        )
        .await;
    assert_eq!(ty, "ReceiptHandleIsInvalid");
    // A token we did not mint, and one minted with another secret.
    let (_, ty) = ep
        .sqs_err(
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": "garbage!"}),
        )
        .await;
    assert_eq!(ty, "ReceiptHandleIsInvalid");
    // The handle with its last character cut off (issue 21 item 6: it used to delete).
    let (_, ty) = ep
        .sqs_err(
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": &handle[..handle.len() - 1]}),
        )
        .await;
    assert_eq!(ty, "ReceiptHandleIsInvalid");
    let forged = mint(
        &ReceiptHandle {
            queue: "h1".into(),
            partition: "0".into(),
            partition_id: "00000000-0000-0000-0000-000000000000".into(),
            transaction_id: "t".into(),
            lease_id: "l".into(),
            message_id: "m".into(),
            timer_key: None,
            expiry_unix_ms: now_ms() + 60_000,
            behind_in_claim: false,
        },
        b"some-other-secret-of-enough-length",
    );
    let (_, ty) = ep
        .sqs_err(
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": forged}),
        )
        .await;
    assert_eq!(ty, "ReceiptHandleIsInvalid");
    // A tampered copy of a real handle.
    let mut tampered = handle.clone().into_bytes();
    let i = tampered.len() / 2;
    tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
    let (_, ty) = ep
        .sqs_err(
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": String::from_utf8(tampered).unwrap()}),
        )
        .await;
    assert_eq!(ty, "ReceiptHandleIsInvalid");

    // The real one deletes; used again it is stale and still answers success.
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": handle}),
    )
    .await;
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": handle}),
    )
    .await;
    // A well-formed handle of ours naming nothing real: stale, success.
    let nothing = mint(
        &ReceiptHandle {
            queue: "h1".into(),
            partition: "0".into(),
            partition_id: "00000000-0000-0000-0000-000000000000".into(),
            transaction_id: "t".into(),
            lease_id: "l".into(),
            message_id: "m".into(),
            timer_key: None,
            expiry_unix_ms: now_ms() + 60_000,
            behind_in_claim: false,
        },
        HANDLE_SECRET.as_bytes(),
    );
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": nothing}),
    )
    .await;
    // The same for a handle naming a visibility timer that does not exist.
    let no_timer = mint(
        &ReceiptHandle {
            queue: "h1".into(),
            partition: "0".into(),
            partition_id: String::new(),
            transaction_id: String::new(),
            lease_id: String::new(),
            message_id: "m".into(),
            timer_key: Some("vis.m.1".into()),
            expiry_unix_ms: now_ms() + 60_000,
            behind_in_claim: false,
        },
        HANDLE_SECRET.as_bytes(),
    );
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": no_timer}),
    )
    .await;
    let (_, ty) = ep
        .sqs_err(
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": no_timer, "VisibilityTimeout": 10}),
        )
        .await;
    assert_eq!(ty, "InvalidParameterValueException");
    // Deleted (a delete that found no timer marks the delivery): SQS refuses the handle.
    let (_, ty) = ep
        .sqs_err(
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": 10}),
        )
        .await;
    assert_eq!(ty, "InvalidParameterValueException");
    let (_, ty) = ep
        .sqs_err(
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": 0}),
        )
        .await;
    assert_eq!(ty, "InvalidParameterValueException");
    let (_, ty) = ep
        .sqs_err(
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": 43201}),
        )
        .await;
    assert_eq!(ty, "InvalidParameterValueException");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_parameter_ranges() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "ranges", &[], 2).await;
    for (k, v) in [
        ("MaxNumberOfMessages", 0),
        ("MaxNumberOfMessages", 11),
        ("WaitTimeSeconds", 21),
        ("VisibilityTimeout", 43201),
        ("VisibilityTimeout", -1),
    ] {
        let (status, ty) = ep
            .sqs_err("ReceiveMessage", json!({"QueueUrl": url, k: v}))
            .await;
        assert_eq!(
            (status, ty.as_str()),
            (400, "InvalidParameterValueException"),
            "{k}={v}"
        );
    }
    let v = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "ReceiveRequestAttemptId": "abc"}),
        )
        .await;
    assert!(
        v.get("Messages")
            .map_or(true, |m| m.as_array().unwrap().is_empty()),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_order_within_a_group_and_deduplication() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "orders.fifo", &[], 0).await;
    let mut ids = Vec::new();
    let mut seqs: Vec<String> = Vec::new();
    for i in 0..5 {
        let v = ep
            .sqs_ok(
                "SendMessage",
                json!({"QueueUrl": url, "MessageBody": format!("g1-{i}"), "MessageGroupId": "g1", "MessageDeduplicationId": format!("d{i}")}),
            )
            .await;
        // 20 digits, as AWS's, and increasing in send order.
        let seq = v["SequenceNumber"]
            .as_str()
            .expect("SequenceNumber")
            .to_string();
        assert!(
            seq.len() == 20 && seq.bytes().all(|b| b.is_ascii_digit()),
            "{v}"
        );
        assert!(
            seqs.last().map_or(true, |prev| *prev < seq),
            "{seqs:?} then {seq}"
        );
        seqs.push(seq);
        ids.push(v["MessageId"].as_str().unwrap().to_string());
    }
    // The same deduplication id answers the original MessageId and adds nothing.
    let dup = ep
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "other body", "MessageGroupId": "g1", "MessageDeduplicationId": "d2"}),
        )
        .await;
    assert_eq!(dup["MessageId"], ids[2].as_str());
    assert_eq!(dup["SequenceNumber"], seqs[2].as_str());
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "g2-0", "MessageGroupId": "g2", "MessageDeduplicationId": "e0"}),
    )
    .await;
    let (_, ty) = ep
        .sqs_err(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "x", "MessageDeduplicationId": "z"}),
        )
        .await;
    assert_eq!(ty, "MissingRequiredParameterException");
    let (_, ty) = ep
        .sqs_err(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "x", "MessageGroupId": "g"}),
        )
        .await;
    assert_eq!(ty, "InvalidParameterValueException");

    // A receive claims a run of each group it reaches (one claim per group): a group's
    // messages arrive together, in order (checked below), and never split across claims.
    let mut seen = Vec::new();
    loop {
        let got = receive(&ep, &url, json!({})).await;
        if got.is_empty() {
            break;
        }
        let mut groups: Vec<&str> = got.iter().map(|m| attr(m, "MessageGroupId")).collect();
        groups.dedup();
        let mut distinct = groups.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            groups.len(),
            "a group's messages split in one answer: {groups:?}"
        );
        for m in &got {
            if attr(m, "MessageGroupId") == "g1" {
                let i = seen.len();
                assert_eq!(m["Body"], format!("g1-{i}"));
                assert_eq!(m["MessageId"], ids[i].as_str());
                assert_eq!(
                    attr(m, "SequenceNumber"),
                    seqs[i].as_str(),
                    "a delivery carries the number its send answered"
                );
                assert_eq!(attr(m, "MessageDeduplicationId"), format!("d{i}"));
                seen.push(i);
            }
            delete(&ep, &url, m).await;
        }
    }
    assert_eq!(seen, vec![0, 1, 2, 3, 4]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_content_based_deduplication() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "cbd.fifo", &[("ContentBasedDeduplication", "true")], 0).await;
    let a = ep
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "same", "MessageGroupId": "g"}),
        )
        .await;
    let b = ep
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "same", "MessageGroupId": "g"}),
        )
        .await;
    let c = ep
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "different", "MessageGroupId": "g"}),
        )
        .await;
    assert_eq!(a["MessageId"], b["MessageId"]);
    assert_ne!(a["MessageId"], c["MessageId"]);
    // A batch repeating a body inside itself: first wins.
    let v = ep
        .sqs_ok(
            "SendMessageBatch",
            json!({"QueueUrl": url, "Entries": [
                {"Id": "x", "MessageBody": "batch", "MessageGroupId": "g"},
                {"Id": "y", "MessageBody": "batch", "MessageGroupId": "g"}]}),
        )
        .await;
    assert_eq!(
        v["Successful"][0]["MessageId"], v["Successful"][1]["MessageId"],
        "{v}"
    );
    let mut bodies = Vec::new();
    loop {
        let got = receive(&ep, &url, json!({})).await;
        if got.is_empty() {
            break;
        }
        for m in &got {
            bodies.push(m["Body"].as_str().unwrap().to_string());
            assert_eq!(attr(m, "MessageDeduplicationId").len(), 64);
            delete(&ep, &url, m).await;
        }
    }
    assert_eq!(bodies, vec!["same", "different", "batch"]);
    let plain = make_queue(&ep, "plain.fifo", &[], 0).await;
    let (_, ty) = ep
        .sqs_err(
            "SendMessage",
            json!({"QueueUrl": plain, "MessageBody": "x", "MessageGroupId": "g"}),
        )
        .await;
    assert_eq!(ty, "InvalidParameterValueException");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_native_payload_is_received_as_itself() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "native", &[], 4).await;
    let (status, _) = broker(
        &ep,
        "POST",
        "/api/v1/push",
        json!({"items": [{"queue": "native", "partition": "1", "payload": {"order": 7, "items": [1, 2]}}]}),
    )
    .await;
    assert_eq!(status, 201);
    let m = receive(&ep, &url, json!({})).await.remove(0);
    let body = m["Body"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(body).unwrap(),
        json!({"order": 7, "items": [1, 2]})
    );
    assert_eq!(m["MD5OfBody"], md5_of_body(body));
    assert!(m.get("MessageAttributes").is_none());
    delete(&ep, &url, &m).await;
    assert!(receive(&ep, &url, json!({})).await.is_empty());
}

/// The contract's table: ten messages sent (one batch) and received without deleting.
/// Messages in flight are held by timers, not lanes, so every width answers all ten.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_at_once_is_not_bounded_by_the_width() {
    let ep = Endpoint::start().await;
    let mut table = Vec::new();
    for width in [1u32, 8, 64, 256] {
        let name = format!("w{width}");
        let url = make_queue(&ep, &name, &[("VisibilityTimeout", "60")], width).await;
        send_batches(&ep, &url, 0, 10).await;
        let mut in_flight = 0;
        for _ in 0..5 {
            let got = receive(&ep, &url, json!({})).await;
            in_flight += got.len();
        }
        println!("queen.partitions {width}: 10 sent, {in_flight} in flight at once");
        table.push((width, in_flight));
    }
    assert_eq!(table, vec![(1, 10), (8, 10), (64, 10), (256, 10)]);
}

async fn drain(ep: &Endpoint, url: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for _ in 0..5 {
        let got = receive(ep, url, json!({})).await;
        if got.is_empty() {
            break;
        }
        out.extend(got);
    }
    out
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The same actions over the Query protocol: the outputs encode as SQS's XML.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_protocol_send_receive_delete() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "xmlq", &[], 2).await;
    let path = format!("/{ACCOUNT}/xmlq");
    let (status, xml) = ep
        .query(
            &path,
            &[
                ("Action", "SendMessage"),
                ("MessageBody", "over query"),
                ("MessageAttribute.1.Name", "k"),
                ("MessageAttribute.1.Value.DataType", "String"),
                ("MessageAttribute.1.Value.StringValue", "v"),
            ],
        )
        .await;
    assert_eq!(status, 200, "{xml}");
    assert!(
        xml.contains(&format!(
            "<MD5OfMessageBody>{}</MD5OfMessageBody>",
            md5_of_body("over query")
        )),
        "{xml}"
    );
    assert!(xml.contains("<MD5OfMessageAttributes>"), "{xml}");
    let (status, xml) = ep
        .query(
            "/",
            &[
                ("Action", "ReceiveMessage"),
                ("QueueUrl", &url),
                ("AttributeName.1", "All"),
                ("MessageAttributeName.1", "All"),
            ],
        )
        .await;
    assert_eq!(status, 200, "{xml}");
    assert!(xml.contains("<Body>over query</Body>"), "{xml}");
    assert!(
        xml.contains("<Name>ApproximateReceiveCount</Name><Value>1</Value>"),
        "{xml}"
    );
    assert!(xml.contains("<StringValue>v</StringValue>"), "{xml}");
    let handle = xml
        .split("<ReceiptHandle>")
        .nth(1)
        .and_then(|s| s.split("</ReceiptHandle>").next())
        .expect("a receipt handle")
        .to_string();
    let (status, xml) = ep
        .query(
            &path,
            &[("Action", "DeleteMessage"), ("ReceiptHandle", &handle)],
        )
        .await;
    assert_eq!(status, 200, "{xml}");
    assert!(receive(&ep, &url, json!({})).await.is_empty());
}
