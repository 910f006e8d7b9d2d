//! The SQS message actions that involve time, through the real host: visibility
//! timeouts, long polls, per-message delays, dead-lettering after `maxReceiveCount`, and
//! moving dead letters back with a message move task.

mod sqs_messages_support;
mod support;

use serde_json::{json, Value};
use sqs_messages_support::*;
use std::time::{Duration, Instant};
use support::Endpoint;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_not_deleted_comes_back_after_its_visibility_timeout() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "vis", &[("VisibilityTimeout", "2")], 4).await;
    let id = send(&ep, &url, "again").await["MessageId"].clone();
    let first = receive(&ep, &url, json!({})).await;
    assert_eq!(first.len(), 1);
    assert_eq!(attr(&first[0], "ApproximateReceiveCount"), "1");
    assert!(
        receive(&ep, &url, json!({})).await.is_empty(),
        "hidden while in flight"
    );
    sleep_ms(2600).await;
    let second = receive(&ep, &url, json!({})).await;
    assert_eq!(second.len(), 1);
    assert_eq!(second[0]["MessageId"], id);
    assert_eq!(attr(&second[0], "ApproximateReceiveCount"), "2");
    // The first delivery's handle is stale now: while the second delivery holds the
    // message, deleting with it removes nothing (SQS: "the message will not be deleted")
    // and a change by it answers success and changes nothing.
    delete(&ep, &url, &first[0]).await;
    ep.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": first[0]["ReceiptHandle"], "VisibilityTimeout": 5}),
    )
    .await;
    assert!(
        receive(&ep, &url, json!({})).await.is_empty(),
        "still held by the second delivery"
    );
    delete(&ep, &url, &second[0]).await;
    assert!(receive(&ep, &url, json!({})).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visibility_zero_releases_and_an_extension_keeps_hidden() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "vis0", &[("VisibilityTimeout", "30")], 4).await;
    send(&ep, &url, "m").await;
    let m = receive(&ep, &url, json!({})).await.remove(0);
    ep.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}),
    )
    .await;
    let again = receive(&ep, &url, json!({})).await;
    assert_eq!(again.len(), 1, "immediately receivable after visibility 0");
    assert_eq!(attr(&again[0], "ApproximateReceiveCount"), "2");

    // Received with a 1 s lease, extended to 10 s: still hidden after the first second.
    ep.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": again[0]["ReceiptHandle"], "VisibilityTimeout": 0}),
    )
    .await;
    let short = receive(&ep, &url, json!({"VisibilityTimeout": 1}))
        .await
        .remove(0);
    ep.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": short["ReceiptHandle"], "VisibilityTimeout": 10}),
    )
    .await;
    sleep_ms(1800).await;
    assert!(
        receive(&ep, &url, json!({})).await.is_empty(),
        "the extension holds"
    );
    delete(&ep, &url, &short).await;

    // A receive with VisibilityTimeout 0 leaves the message visible.
    send(&ep, &url, "peek").await;
    let peeked = receive(&ep, &url, json!({"VisibilityTimeout": 0})).await;
    assert_eq!(peeked.len(), 1);
    let seen = receive(&ep, &url, json!({})).await;
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["MessageId"], peeked[0]["MessageId"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_returns_promptly_when_a_message_arrives() {
    let ep = std::sync::Arc::new(Endpoint::start().await);
    let url = make_queue(&ep, "lp", &[], 8).await;
    let sender = {
        let (ep, url) = (ep.clone(), url.clone());
        tokio::spawn(async move {
            sleep_ms(1000).await;
            send(&ep, &url, "late").await;
        })
    };
    let started = Instant::now();
    let got = receive(&ep, &url, json!({"WaitTimeSeconds": 5})).await;
    let took = started.elapsed();
    sender.await.unwrap();
    assert_eq!(got.len(), 1, "the long poll found the message");
    assert_eq!(got[0]["Body"], "late");
    assert!(took >= Duration::from_millis(900), "it waited: {took:?}");
    assert!(
        took < Duration::from_millis(3500),
        "it returned promptly: {took:?}"
    );

    // Nothing arrives: the poll waits its full time and answers empty.
    let started = Instant::now();
    assert!(receive(&ep, &url, json!({"WaitTimeSeconds": 1}))
        .await
        .is_empty());
    assert!(started.elapsed() >= Duration::from_millis(900));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delayed_message_is_invisible_counted_then_visible() {
    let ep = Endpoint::start().await;
    let url = make_queue(&ep, "delay", &[], 4).await;
    let sent = ep
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "later", "DelaySeconds": 2,
                   "MessageAttributes": {"k": {"DataType": "String", "StringValue": "v"}}}),
        )
        .await;
    assert!(
        receive(&ep, &url, json!({})).await.is_empty(),
        "invisible while delayed"
    );
    assert_eq!(
        timer_count(&ep, "delay", "sqs.").await,
        1,
        "counted as delayed"
    );
    sleep_ms(3200).await;
    let got = receive(&ep, &url, json!({})).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["MessageId"], sent["MessageId"]);
    assert_eq!(got[0]["Body"], "later");
    assert_eq!(
        got[0]["MD5OfMessageAttributes"],
        sent["MD5OfMessageAttributes"]
    );
    assert_eq!(timer_count(&ep, "delay", "sqs.").await, 0);
    // Deleted, so its lease blocks no lane for what follows.
    delete(&ep, &url, &got[0]).await;

    // A batch mixing a delayed and an immediate entry.
    let v = ep
        .sqs_ok(
            "SendMessageBatch",
            json!({"QueueUrl": url, "Entries": [
                {"Id": "now", "MessageBody": "now"},
                {"Id": "later", "MessageBody": "later2", "DelaySeconds": 30}]}),
        )
        .await;
    assert_eq!(v["Successful"].as_array().unwrap().len(), 2, "{v}");
    let got = receive(&ep, &url, json!({})).await;
    let bodies: Vec<&str> = got.iter().map(|m| m["Body"].as_str().unwrap()).collect();
    assert_eq!(bodies, vec!["now"]);
}

async fn redrive_pair(ep: &Endpoint) -> (String, String) {
    let dlq = make_queue(ep, "dead", &[], 4).await;
    let policy = json!({"deadLetterTargetArn": arn("dead"), "maxReceiveCount": 2}).to_string();
    let src = make_queue(
        ep,
        "work",
        &[("VisibilityTimeout", "1"), ("RedrivePolicy", &policy)],
        4,
    )
    .await;
    (src, dlq)
}

/// Receives from `url` until a message arrives (or `tries` receives found none).
async fn receive_one(ep: &Endpoint, url: &str, tries: usize) -> Option<Value> {
    for _ in 0..tries {
        let mut got = receive(ep, url, json!({"WaitTimeSeconds": 1})).await;
        if !got.is_empty() {
            return Some(got.remove(0));
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_after_max_receive_count_carry_count_and_original_id() {
    let ep = Endpoint::start().await;
    let (src, dlq) = redrive_pair(&ep).await;
    let sent = ep
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": src, "MessageBody": "poison",
                   "MessageAttributes": {"k": {"DataType": "String", "StringValue": "v"}}}),
        )
        .await;
    let id = sent["MessageId"].as_str().unwrap();
    for want in ["1", "2"] {
        let m = receive_one(&ep, &src, 4).await.expect("delivered");
        assert_eq!(m["MessageId"], id);
        assert_eq!(attr(&m, "ApproximateReceiveCount"), want);
    }
    // The third delivery is over maxReceiveCount: it is moved, never handed out.
    sleep_ms(1200).await;
    assert!(receive(&ep, &src, json!({"WaitTimeSeconds": 1}))
        .await
        .is_empty());
    let copy = receive_one(&ep, &dlq, 3).await.expect("dead-lettered");
    assert_eq!(copy["Body"], "poison");
    assert_eq!(
        copy["MD5OfMessageAttributes"],
        sent["MD5OfMessageAttributes"]
    );
    assert_eq!(
        copy["MessageId"], id,
        "answered under its own MessageId, as SQS does"
    );
    assert_eq!(attr(&copy, "queen.originalMessageId"), id);
    assert_eq!(attr(&copy, "queen.sourceQueue"), "work");
    assert_eq!(attr(&copy, "DeadLetterQueueSourceArn"), arn("work"));
    assert_eq!(attr(&copy, "ApproximateReceiveCount"), "3", "{copy}");
    assert!(copy["Attributes"].get("queen.receiveCount").is_none());
    assert!(copy["Attributes"].get("queen.sentTimestamp").is_none());
    // The count continues on the next delivery of the copy.
    ep.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": dlq, "ReceiptHandle": copy["ReceiptHandle"], "VisibilityTimeout": 0}),
    )
    .await;
    let again = receive_one(&ep, &dlq, 2).await.expect("again");
    assert_eq!(attr(&again, "ApproximateReceiveCount"), "4");
    assert_eq!(attr(&again, "SentTimestamp"), attr(&copy, "SentTimestamp"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_task_returns_dead_letters_to_their_source() {
    let ep = Endpoint::start().await;
    let (src, dlq) = redrive_pair(&ep).await;
    let id = send(&ep, &src, "comeback").await["MessageId"]
        .as_str()
        .unwrap()
        .to_string();
    for _ in 0..2 {
        receive_one(&ep, &src, 4).await.expect("delivered");
    }
    sleep_ms(1200).await;
    assert!(receive(&ep, &src, json!({"WaitTimeSeconds": 1}))
        .await
        .is_empty());
    // In the dead-letter queue now, and not in flight there.
    assert_eq!(ready_count(&ep, "dead").await, 1);

    // Only a dead-letter queue can be a source; one that exists.
    let (_, ty) = ep
        .sqs_err("StartMessageMoveTask", json!({"SourceArn": arn("work")}))
        .await;
    assert_eq!(ty, "InvalidParameterValueException");
    let (_, ty) = ep
        .sqs_err("StartMessageMoveTask", json!({"SourceArn": arn("nope")}))
        .await;
    assert_eq!(ty, "ResourceNotFoundException");
    let (_, ty) = ep
        .sqs_err(
            "StartMessageMoveTask",
            json!({"SourceArn": arn("dead"), "MaxNumberOfMessagesPerSecond": 501}),
        )
        .await;
    assert_eq!(ty, "InvalidParameterValueException");

    let started = ep
        .sqs_ok(
            "StartMessageMoveTask",
            json!({"SourceArn": arn("dead"), "MaxNumberOfMessagesPerSecond": 10}),
        )
        .await;
    let handle = started["TaskHandle"].as_str().unwrap().to_string();
    let listed = ep
        .sqs_ok(
            "ListMessageMoveTasks",
            json!({"SourceArn": arn("dead"), "MaxResults": 10}),
        )
        .await;
    let task = &listed["Results"][0];
    assert_eq!(task["Status"], "COMPLETED", "{listed}");
    assert_eq!(task["ApproximateNumberOfMessagesMoved"], 1);
    assert_eq!(task["ApproximateNumberOfMessagesToMove"], 1);
    assert_eq!(task["SourceArn"], arn("dead"));
    assert!(
        task.get("TaskHandle").is_none(),
        "a finished task has no handle"
    );
    assert!(task["StartedTimestamp"].as_i64().unwrap() > 0);
    let (_, ty) = ep
        .sqs_err("CancelMessageMoveTask", json!({"TaskHandle": handle}))
        .await;
    assert_eq!(ty, "UnsupportedOperation");

    // Back in the source, with a fresh count and its original id attached.
    let back = receive_one(&ep, &src, 3).await.expect("moved back");
    assert_eq!(back["Body"], "comeback");
    assert_eq!(attr(&back, "ApproximateReceiveCount"), "1");
    assert_eq!(attr(&back, "queen.originalMessageId"), id);
    assert!(back["Attributes"].get("DeadLetterQueueSourceArn").is_none());
    assert!(receive(&ep, &dlq, json!({})).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_capped_move_task_advances_across_requests_and_cancels() {
    let ep = Endpoint::start().await;
    let dlq = make_queue(&ep, "dl2", &[], 8).await;
    let policy = json!({"deadLetterTargetArn": arn("dl2"), "maxReceiveCount": 1}).to_string();
    make_queue(&ep, "src2", &[("RedrivePolicy", &policy)], 8).await;
    let dest = make_queue(&ep, "elsewhere", &[], 8).await;
    // Five messages put straight into the dead-letter queue.
    let entries: Vec<Value> = (0..5)
        .map(|i| json!({"Id": format!("e{i}"), "MessageBody": format!("m{i}")}))
        .collect();
    ep.sqs_ok(
        "SendMessageBatch",
        json!({"QueueUrl": dlq, "Entries": entries}),
    )
    .await;

    let started = ep
        .sqs_ok(
            "StartMessageMoveTask",
            json!({"SourceArn": arn("dl2"), "DestinationArn": arn("elsewhere"), "MaxNumberOfMessagesPerSecond": 1}),
        )
        .await;
    let handle = started["TaskHandle"].as_str().unwrap();
    let (_, ty) = ep
        .sqs_err("StartMessageMoveTask", json!({"SourceArn": arn("dl2")}))
        .await;
    assert_eq!(
        ty, "InvalidParameterValueException",
        "one active task per source"
    );
    let listed = ep
        .sqs_ok("ListMessageMoveTasks", json!({"SourceArn": arn("dl2")}))
        .await;
    let task = &listed["Results"][0];
    assert_eq!(task["Status"], "RUNNING", "{listed}");
    assert_eq!(task["TaskHandle"], handle);
    assert_eq!(task["DestinationArn"], arn("elsewhere"));
    let moved = task["ApproximateNumberOfMessagesMoved"].as_u64().unwrap();
    assert!(
        (1..=2).contains(&moved),
        "the rate caps the first second: {listed}"
    );
    sleep_ms(1100).await;
    let listed = ep
        .sqs_ok("ListMessageMoveTasks", json!({"SourceArn": arn("dl2")}))
        .await;
    let later = listed["Results"][0]["ApproximateNumberOfMessagesMoved"]
        .as_u64()
        .unwrap();
    assert!(
        later > moved && later <= 3,
        "a later request advances it: {listed}"
    );

    let cancelled = ep
        .sqs_ok("CancelMessageMoveTask", json!({"TaskHandle": handle}))
        .await;
    assert_eq!(cancelled["ApproximateNumberOfMessagesMoved"], later);
    sleep_ms(1100).await;
    let listed = ep
        .sqs_ok("ListMessageMoveTasks", json!({"SourceArn": arn("dl2")}))
        .await;
    assert_eq!(listed["Results"][0]["Status"], "CANCELLED");
    assert_eq!(
        listed["Results"][0]["ApproximateNumberOfMessagesMoved"],
        later
    );

    let mut arrived = 0;
    loop {
        let got = receive(&ep, &dest, json!({})).await;
        if got.is_empty() {
            break;
        }
        for m in &got {
            delete(&ep, &dest, m).await;
            arrived += 1;
        }
    }
    assert_eq!(arrived as u64, later);
    let (_, ty) = ep
        .sqs_err("CancelMessageMoveTask", json!({"TaskHandle": "nope"}))
        .await;
    assert_eq!(ty, "InvalidParameterValueException");
}
