//! Queue attributes (validation, SetQueueAttributes merging, the computed depth
//! attributes), PurgeQueue, tags, permissions and dead-letter sources, through the
//! real host.

mod support;

use bytes::Bytes;
use serde_json::{json, Map, Value};
use support::Endpoint;

const ACCOUNT: &str = "000000000000";

async fn attrs(ep: &Endpoint, url: &str, names: &[&str]) -> Map<String, Value> {
    let v = ep
        .sqs_ok(
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": names}),
        )
        .await;
    v.get("Attributes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn arn(name: &str) -> String {
    format!("arn:aws:sqs:us-east-1:{ACCOUNT}:{name}")
}

async fn push_native(ep: &Endpoint, queue: &str, n: usize) {
    let items: Vec<Value> = (0..n)
        .map(|_| json!({"queue": queue, "partition": "0", "payload": {"b": "x"}}))
        .collect();
    let (status, _, body) = ep
        .broker
        .handle(
            "POST",
            "/api/v1/push",
            Bytes::from(json!({ "items": items }).to_string()),
        )
        .await;
    assert!(
        status == 200 || status == 201,
        "{}",
        String::from_utf8_lossy(&body)
    );
}

/// Claims one message of lane "0" natively; answers the pop's body.
async fn pop_native(ep: &Endpoint, queue: &str) -> Value {
    let (status, _, body) = ep
        .broker
        .handle(
            "GET",
            &format!("/api/v1/pop/queue/{queue}/partition/0?batch=1&leaseSeconds=60"),
            Bytes::new(),
        )
        .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    serde_json::from_slice(&body).unwrap()
}

async fn schedule_delayed(ep: &Endpoint, queue: &str, key: &str) {
    let (status, _, body) = ep
        .broker
        .handle(
            "POST",
            "/api/v1/timers",
            Bytes::from(
                json!({"operations": [{"op": "schedule", "queue": queue, "timerKey": format!("sqs.{key}"),
                    "partition": "0", "delayMs": 600000, "txn": key, "payload": "eyJiIjoieCJ9"}]})
                .to_string(),
            ),
        )
        .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
}

const DEPTH: [&str; 3] = [
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn depth_attributes_move_with_the_queue() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("deep", json!({})).await;
    let a = attrs(&ep, &url, &DEPTH).await;
    assert_eq!(
        (&a[DEPTH[0]], &a[DEPTH[1]], &a[DEPTH[2]]),
        (&json!("0"), &json!("0"), &json!("0"))
    );

    push_native(&ep, "deep", 3).await;
    schedule_delayed(&ep, "deep", "a").await;
    schedule_delayed(&ep, "deep", "b").await;
    // A timer the send path did not schedule is not a delayed SQS message.
    let (status, _, _) = ep
        .broker
        .handle(
            "POST",
            "/api/v1/timers",
            Bytes::from(
                json!({"operations": [{"op": "schedule", "queue": "deep", "timerKey": "other.x",
                    "partition": "0", "delayMs": 600000, "txn": "o", "payload": "eyJiIjoieCJ9"}]})
                .to_string(),
            ),
        )
        .await;
    assert_eq!(status, 200);
    let a = attrs(&ep, &url, &DEPTH).await;
    assert_eq!(a[DEPTH[0]], "3");
    assert_eq!(a[DEPTH[1]], "0");
    assert_eq!(a[DEPTH[2]], "2");

    let popped = pop_native(&ep, "deep").await;
    assert_eq!(
        popped["messages"].as_array().map(Vec::len),
        Some(1),
        "{popped}"
    );
    let a = attrs(&ep, &url, &DEPTH).await;
    assert_eq!(a[DEPTH[0]], "2");
    assert_eq!(a[DEPTH[1]], "1");

    // Only what is asked for is answered.
    let only = attrs(&ep, &url, &["ApproximateNumberOfMessages"]).await;
    assert_eq!(only.len(), 1, "{only:?}");
    let none = ep
        .sqs_ok("GetQueueAttributes", json!({"QueueUrl": url}))
        .await;
    assert!(none.get("Attributes").is_none(), "{none}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attribute_values_are_validated_like_sqs() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("v", json!({})).await;
    let cases: &[(&str, &str, &str)] = &[
        ("DelaySeconds", "901", "InvalidAttributeValue"),
        ("MaximumMessageSize", "1023", "InvalidAttributeValue"),
        ("MaximumMessageSize", "1048577", "InvalidAttributeValue"),
        ("MessageRetentionPeriod", "59", "InvalidAttributeValue"),
        ("MessageRetentionPeriod", "1209601", "InvalidAttributeValue"),
        (
            "ReceiveMessageWaitTimeSeconds",
            "21",
            "InvalidAttributeValue",
        ),
        ("VisibilityTimeout", "43201", "InvalidAttributeValue"),
        ("VisibilityTimeout", "abc", "InvalidAttributeValue"),
        ("SqsManagedSseEnabled", "maybe", "InvalidAttributeValue"),
        (
            "KmsDataKeyReusePeriodSeconds",
            "59",
            "InvalidAttributeValue",
        ),
        ("Policy", "not json", "InvalidAttributeValue"),
        ("Nonsense", "1", "InvalidAttributeName"),
        ("All", "1", "InvalidAttributeName"),
        ("ContentBasedDeduplication", "true", "InvalidAttributeName"),
        ("DeduplicationScope", "queue", "InvalidAttributeName"),
        ("queen.dedupWindowSeconds", "600", "InvalidAttributeName"),
        ("queen.partitions", "0", "InvalidAttributeValue"),
        ("queen.partitions", "100001", "InvalidAttributeValue"),
        ("RedrivePolicy", "{", "InvalidParameterValueException"),
        (
            "RedriveAllowPolicy",
            "{\"redrivePermission\":\"byQueue\"}",
            "InvalidParameterValueException",
        ),
    ];
    for (name, value, code) in cases {
        assert_eq!(
            ep.sqs_err(
                "CreateQueue",
                json!({"QueueName": "v2", "Attributes": {*name: *value}})
            )
            .await,
            (400, code.to_string()),
            "CreateQueue {name}={value}"
        );
        if *name != "queen.partitions" {
            assert_eq!(
                ep.sqs_err(
                    "SetQueueAttributes",
                    json!({"QueueUrl": url, "Attributes": {*name: *value}})
                )
                .await,
                (400, code.to_string()),
                "SetQueueAttributes {name}={value}"
            );
        }
    }
    // FIFO-only attributes on a FIFO queue.
    let fifo = ep
        .create_queue("v.fifo", json!({"FifoQueue": "true"}))
        .await;
    for (name, value) in [
        ("DeduplicationScope", "group"),
        ("FifoThroughputLimit", "perGroup"),
        ("ContentBasedDeduplication", "1"),
        ("queen.dedupWindowSeconds", "299"),
        ("queen.dedupWindowSeconds", "31536001"),
    ] {
        assert_eq!(
            ep.sqs_err(
                "SetQueueAttributes",
                json!({"QueueUrl": fifo, "Attributes": {name: value}})
            )
            .await,
            (400, "InvalidAttributeValue".to_string()),
            "{name}={value}"
        );
    }
    assert_eq!(
        ep.sqs_err(
            "CreateQueue",
            json!({"QueueName": "w.fifo",
                "Attributes": {"FifoQueue": "true", "queen.partitions": "4"}})
        )
        .await,
        (400, "InvalidAttributeName".to_string())
    );
    // Fixed at create.
    for (name, value) in [
        ("FifoQueue", "true"),
        ("queen.partitions", "8"),
        ("QueueArn", "x"),
    ] {
        assert_eq!(
            ep.sqs_err(
                "SetQueueAttributes",
                json!({"QueueUrl": url, "Attributes": {name: value}})
            )
            .await,
            (400, "InvalidAttributeName".to_string()),
            "{name}"
        );
    }
    assert_eq!(
        ep.sqs_err(
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": ["Bogus"]})
        )
        .await,
        (400, "InvalidAttributeName".to_string())
    );
    assert_eq!(
        ep.sqs_err("SetQueueAttributes", json!({"QueueUrl": url}))
            .await,
        (400, "MissingRequiredParameterException".to_string())
    );
    assert_eq!(
        ep.sqs_err("GetQueueAttributes", json!({"AttributeNames": ["All"]}))
            .await,
        (400, "MissingRequiredParameterException".to_string())
    );
    // Nothing changed by any of the refusals.
    let a = attrs(&ep, &url, &["All"]).await;
    assert_eq!(a["VisibilityTimeout"], "30");
    assert!(a.get("Policy").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_queue_attributes_merges_and_reconfigures_the_broker() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue("s", json!({"DelaySeconds": "4", "queen.partitions": "3"}))
        .await;
    let before = attrs(&ep, &url, &["LastModifiedTimestamp"]).await;
    ep.sqs_ok(
        "SetQueueAttributes",
        json!({"QueueUrl": url, "Attributes": {"VisibilityTimeout": "90", "Policy": "{\"Version\":\"2012-10-17\"}"}}),
    )
    .await;
    let a = attrs(&ep, &url, &["All", "queen.partitions"]).await;
    assert_eq!(a["VisibilityTimeout"], "90");
    assert_eq!(a["DelaySeconds"], "4", "a merge, not a replacement");
    assert_eq!(a["Policy"], "{\"Version\":\"2012-10-17\"}");
    assert_eq!(a["queen.partitions"], "3");
    assert!(
        a["LastModifiedTimestamp"].as_str().unwrap()
            >= before["LastModifiedTimestamp"].as_str().unwrap()
    );
    // An empty value unsets an optional attribute.
    ep.sqs_ok(
        "SetQueueAttributes",
        json!({"QueueUrl": url, "Attributes": {"Policy": ""}}),
    )
    .await;
    assert!(attrs(&ep, &url, &["Policy"]).await.get("Policy").is_none());

    // The broker's row follows the record: the lease is the visibility timeout.
    let options = ep.broker.queue_options("s").await;
    assert_eq!(options["leaseTime"], 90, "{options}");
    // A standard queue's delay is a timer at send, never the broker's (it would also
    // delay redeliveries): sqs_delivery_edges.rs.
    assert_eq!(options["delayedProcessing"], 0, "{options}");

    // Concurrent sets of different attributes all land (compare-and-set, retried).
    let ep = std::sync::Arc::new(ep);
    let mut joins = Vec::new();
    for (name, value) in [
        ("MaximumMessageSize", "2048"),
        ("MessageRetentionPeriod", "600"),
        ("ReceiveMessageWaitTimeSeconds", "7"),
        ("DelaySeconds", "11"),
    ] {
        let ep = ep.clone();
        let url = url.clone();
        joins.push(tokio::spawn(async move {
            ep.sqs_ok(
                "SetQueueAttributes",
                json!({"QueueUrl": url, "Attributes": {name: value}}),
            )
            .await
        }));
    }
    for j in joins {
        j.await.unwrap();
    }
    let a = attrs(&ep, &url, &["All"]).await;
    assert_eq!(a["MaximumMessageSize"], "2048");
    assert_eq!(a["MessageRetentionPeriod"], "600");
    assert_eq!(a["ReceiveMessageWaitTimeSeconds"], "7");
    assert_eq!(a["DelaySeconds"], "11");
    assert_eq!(a["VisibilityTimeout"], "90");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_policies_are_checked_against_the_registry() {
    let ep = Endpoint::start().await;
    let src = ep.create_queue("src", json!({})).await;
    ep.create_queue("dlq", json!({})).await;
    ep.create_queue("dlq.fifo", json!({"FifoQueue": "true"}))
        .await;
    let policy = |target: &str, n: u32| {
        format!(
            "{{\"deadLetterTargetArn\":\"{}\",\"maxReceiveCount\":{n}}}",
            arn(target)
        )
    };
    let set = |p: String| json!({"QueueUrl": src, "Attributes": {"RedrivePolicy": p}});
    assert_eq!(
        ep.sqs_err("SetQueueAttributes", set(policy("missing", 3)))
            .await,
        (400, "QueueDoesNotExist".to_string())
    );
    // A queue may name itself, as on SQS (LocalStack's AWS-validated
    // test_set_empty_redrive_policy).
    ep.sqs_ok("SetQueueAttributes", set(policy("src", 3))).await;
    assert_eq!(
        ep.sqs_err("SetQueueAttributes", set(policy("dlq.fifo", 3)))
            .await,
        (400, "InvalidParameterValueException".to_string()),
        "a standard queue with a FIFO dead-letter queue"
    );
    for n in [0, 1001] {
        assert_eq!(
            ep.sqs_err("SetQueueAttributes", set(policy("dlq", n)))
                .await,
            (400, "InvalidParameterValueException".to_string())
        );
    }
    let other_account = "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:123456789012:dlq\",\"maxReceiveCount\":3}";
    assert_eq!(
        ep.sqs_err("SetQueueAttributes", set(other_account.to_string()))
            .await,
        (400, "QueueDoesNotExist".to_string())
    );
    assert_eq!(
        ep.sqs_err(
            "CreateQueue",
            json!({"QueueName": "self", "Attributes": {"RedrivePolicy": policy("self", 2)}})
        )
        .await,
        (400, "QueueDoesNotExist".to_string()),
        "a queue being created names a dead-letter queue that does not exist yet"
    );
    assert_eq!(
        ep.sqs_err(
            "CreateQueue",
            json!({"QueueName": "f.fifo",
                "Attributes": {"FifoQueue": "true", "RedrivePolicy": policy("dlq", 2)}})
        )
        .await,
        (400, "InvalidParameterValueException".to_string()),
        "a FIFO queue with a standard dead-letter queue"
    );
    ep.create_queue(
        "f.fifo",
        json!({"FifoQueue": "true", "RedrivePolicy": policy("dlq.fifo", 2)}),
    )
    .await;

    // A dead-letter queue that allows nobody, or only someone else.
    let strict = ep
        .create_queue(
            "strict",
            json!({"RedriveAllowPolicy": "{\"redrivePermission\":\"denyAll\"}"}),
        )
        .await;
    assert_eq!(
        ep.sqs_err("SetQueueAttributes", set(policy("strict", 3)))
            .await,
        (400, "InvalidParameterValueException".to_string())
    );
    ep.sqs_ok(
        "SetQueueAttributes",
        json!({"QueueUrl": strict, "Attributes": {"RedriveAllowPolicy":
            format!("{{\"redrivePermission\":\"byQueue\",\"sourceQueueArns\":[\"{}\"]}}", arn("src"))}}),
    )
    .await;
    ep.sqs_ok("SetQueueAttributes", set(policy("strict", 3)))
        .await;
    assert_eq!(
        attrs(&ep, &src, &["RedrivePolicy"]).await["RedrivePolicy"],
        policy("strict", 3)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letter_sources_are_found_and_paged() {
    let ep = Endpoint::start().await;
    let dlq = ep.create_queue("the-dlq", json!({})).await;
    let other = ep.create_queue("other-dlq", json!({})).await;
    let rp = |t: &str| {
        format!(
            "{{\"deadLetterTargetArn\":\"{}\",\"maxReceiveCount\":5}}",
            arn(t)
        )
    };
    let mut expected = Vec::new();
    for i in 0..5 {
        expected.push(
            ep.create_queue(&format!("src-{i}"), json!({"RedrivePolicy": rp("the-dlq")}))
                .await,
        );
    }
    ep.create_queue("elsewhere", json!({"RedrivePolicy": rp("other-dlq")}))
        .await;
    ep.create_queue("plain", json!({})).await;

    let all = ep
        .sqs_ok("ListDeadLetterSourceQueues", json!({"QueueUrl": dlq}))
        .await;
    let got: Vec<&str> = all["queueUrls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(got, expected);

    let mut paged = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut req = json!({"QueueUrl": dlq, "MaxResults": 2});
        if let Some(t) = &token {
            req["NextToken"] = json!(t);
        }
        let v = ep.sqs_ok("ListDeadLetterSourceQueues", req).await;
        paged.extend(
            v["queueUrls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|u| u.as_str().unwrap().to_string()),
        );
        match v.get("NextToken").and_then(Value::as_str) {
            Some(t) => token = Some(t.to_string()),
            None => break,
        }
        assert!(paged.len() <= 5);
    }
    assert_eq!(paged, expected);

    let one = ep
        .sqs_ok("ListDeadLetterSourceQueues", json!({"QueueUrl": other}))
        .await;
    assert_eq!(one["queueUrls"].as_array().unwrap().len(), 1);
    let none = ep
        .sqs_ok(
            "ListDeadLetterSourceQueues",
            json!({"QueueUrl": format!("{}/{ACCOUNT}/plain", ep.url)}),
        )
        .await;
    assert_eq!(none["queueUrls"], json!([]));
    assert_eq!(
        ep.sqs_err(
            "ListDeadLetterSourceQueues",
            json!({"QueueUrl": format!("{}/{ACCOUNT}/nope", ep.url)})
        )
        .await,
        (400, "QueueDoesNotExist".to_string())
    );
    assert_eq!(
        ep.sqs_err(
            "ListDeadLetterSourceQueues",
            json!({"QueueUrl": dlq, "MaxResults": 0})
        )
        .await,
        (400, "InvalidParameterValueException".to_string())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purge_empties_the_queue_keeps_its_attributes_and_cools_down() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue(
            "p",
            json!({"VisibilityTimeout": "75", "queen.partitions": "2"}),
        )
        .await;
    push_native(&ep, "p", 4).await;
    schedule_delayed(&ep, "p", "later").await;
    let popped = pop_native(&ep, "p").await;
    let partition_id = popped["messages"][0]["partitionId"]
        .as_str()
        .unwrap()
        .to_string();
    let txn = popped["messages"][0]["transactionId"]
        .as_str()
        .unwrap()
        .to_string();
    let lease = popped["leaseId"].as_str().unwrap().to_string();

    ep.sqs_ok("PurgeQueue", json!({"QueueUrl": url})).await;
    let a = attrs(&ep, &url, &["All", "queen.partitions"]).await;
    assert_eq!(a["ApproximateNumberOfMessages"], "0");
    assert_eq!(a["ApproximateNumberOfMessagesNotVisible"], "0");
    assert_eq!(a["ApproximateNumberOfMessagesDelayed"], "0");
    assert_eq!(a["VisibilityTimeout"], "75");
    assert_eq!(a["queen.partitions"], "2");
    let options = ep.broker.queue_options("p").await;
    assert_eq!(
        options["leaseTime"], 75,
        "the record was re-applied: {options}"
    );

    // The claim taken before the purge addresses nothing any more.
    let (_, _, body) = ep
        .broker
        .handle(
            "POST",
            "/api/v1/ack",
            Bytes::from(
                json!({"transactionId": txn, "partitionId": partition_id, "leaseId": lease, "status": "completed"})
                    .to_string(),
            ),
        )
        .await;
    let ack: Value = serde_json::from_slice(&body).unwrap();
    assert_ne!(ack["success"], true, "{ack}");

    // The queue still works, and a second purge within a minute is refused.
    push_native(&ep, "p", 1).await;
    assert_eq!(
        attrs(&ep, &url, &["ApproximateNumberOfMessages"]).await["ApproximateNumberOfMessages"],
        "1"
    );
    assert_eq!(
        ep.sqs_err("PurgeQueue", json!({"QueueUrl": url})).await,
        (403, "PurgeQueueInProgress".to_string())
    );
    assert_eq!(
        ep.sqs_err(
            "PurgeQueue",
            json!({"QueueUrl": format!("{}/{ACCOUNT}/nope", ep.url)})
        )
        .await,
        (400, "QueueDoesNotExist".to_string())
    );
}

async fn tags_of(ep: &Endpoint, url: &str) -> Value {
    ep.sqs_ok("ListQueueTags", json!({"QueueUrl": url})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_live_on_the_record_within_sqs_limits() {
    let ep = Endpoint::start().await;
    let url = ep
        .sqs_ok(
            "CreateQueue",
            json!({"QueueName": "t", "tags": {"a": "1", "b": "2"}}),
        )
        .await["QueueUrl"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        tags_of(&ep, &url).await["Tags"],
        json!({"a": "1", "b": "2"})
    );
    ep.sqs_ok(
        "TagQueue",
        json!({"QueueUrl": url, "Tags": {"b": "two", "c": ""}}),
    )
    .await;
    assert_eq!(
        tags_of(&ep, &url).await["Tags"],
        json!({"a": "1", "b": "two", "c": ""})
    );
    ep.sqs_ok(
        "UntagQueue",
        json!({"QueueUrl": url, "TagKeys": ["a", "zz"]}),
    )
    .await;
    assert_eq!(
        tags_of(&ep, &url).await["Tags"],
        json!({"b": "two", "c": ""})
    );

    let long_key = "k".repeat(129);
    let long_value = "v".repeat(257);
    for bad in [
        json!({"": "x"}),
        json!({long_key.clone(): "x"}),
        json!({"k": long_value}),
    ] {
        assert_eq!(
            ep.sqs_err("TagQueue", json!({"QueueUrl": url, "Tags": bad}))
                .await,
            (400, "InvalidParameterValueException".to_string())
        );
    }
    assert_eq!(
        ep.sqs_err("TagQueue", json!({"QueueUrl": url, "Tags": {}}))
            .await,
        (400, "MissingRequiredParameterException".to_string())
    );
    assert_eq!(
        ep.sqs_err("UntagQueue", json!({"QueueUrl": url, "TagKeys": []}))
            .await,
        (400, "MissingRequiredParameterException".to_string())
    );
    // 50 tags at most, counted after the merge.
    let mut many = Map::new();
    for i in 0..48 {
        many.insert(format!("k{i}"), json!("v"));
    }
    ep.sqs_ok("TagQueue", json!({"QueueUrl": url, "Tags": many}))
        .await;
    assert_eq!(
        ep.sqs_err(
            "TagQueue",
            json!({"QueueUrl": url, "Tags": {"one-more": "x"}})
        )
        .await,
        (400, "InvalidParameterValueException".to_string())
    );
    ep.sqs_ok(
        "TagQueue",
        json!({"QueueUrl": url, "Tags": {"b": "replaced"}}),
    )
    .await;
    assert_eq!(
        tags_of(&ep, &url).await["Tags"].as_object().unwrap().len(),
        50
    );
    let mut fifty_one = Map::new();
    for i in 0..51 {
        fifty_one.insert(format!("k{i}"), json!("v"));
    }
    assert_eq!(
        ep.sqs_err("CreateQueue", json!({"QueueName": "t2", "tags": fifty_one}))
            .await,
        (400, "InvalidParameterValueException".to_string())
    );
    assert_eq!(
        ep.sqs_err(
            "CreateQueue",
            json!({"QueueName": "t3", "tags": {long_key: "x"}})
        )
        .await,
        (400, "InvalidParameterValueException".to_string())
    );
    assert_eq!(
        ep.sqs_err(
            "ListQueueTags",
            json!({"QueueUrl": format!("{}/{ACCOUNT}/nope", ep.url)})
        )
        .await,
        (400, "QueueDoesNotExist".to_string())
    );
    // Tags are not attributes.
    assert!(attrs(&ep, &url, &["All"]).await.get("b").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permissions_are_validated_and_kept_but_not_enforced() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("perm", json!({})).await;
    let add = |label: &str, accounts: Value, actions: Value| json!({"QueueUrl": url, "Label": label, "AWSAccountIds": accounts, "Actions": actions});
    ep.sqs_ok(
        "AddPermission",
        add("grant_1", json!(["111122223333"]), json!(["SendMessage"])),
    )
    .await;
    assert_eq!(
        ep.sqs_err(
            "AddPermission",
            add("grant_1", json!(["111122223333"]), json!(["*"]))
        )
        .await,
        (400, "InvalidParameterValueException".to_string()),
        "a label already in use"
    );
    let cases: &[(Value, &str)] = &[
        (
            json!({"QueueUrl": url, "AWSAccountIds": ["1"], "Actions": ["*"]}),
            "MissingRequiredParameterException",
        ),
        (
            add("bad label", json!(["1"]), json!(["*"])),
            "InvalidParameterValueException",
        ),
        (
            add(&"l".repeat(81), json!(["1"]), json!(["*"])),
            "InvalidParameterValueException",
        ),
        (
            add("x", json!([]), json!(["*"])),
            "MissingRequiredParameterException",
        ),
        (
            add("x", json!(["1"]), json!([])),
            "MissingRequiredParameterException",
        ),
        (
            add("x", json!(["1"]), json!(["FlyAway"])),
            "InvalidParameterValueException",
        ),
    ];
    for (req, code) in cases {
        assert_eq!(
            ep.sqs_err("AddPermission", req.clone()).await,
            (400, code.to_string()),
            "{req}"
        );
    }
    assert_eq!(
        ep.sqs_err(
            "AddPermission",
            json!({"QueueUrl": format!("{}/{ACCOUNT}/nope", ep.url), "Label": "x",
                   "AWSAccountIds": ["1"], "Actions": ["*"]})
        )
        .await,
        (400, "QueueDoesNotExist".to_string())
    );
    assert_eq!(
        ep.sqs_err(
            "RemovePermission",
            json!({"QueueUrl": url, "Label": "unknown"})
        )
        .await,
        (400, "InvalidParameterValueException".to_string())
    );
    assert_eq!(
        ep.sqs_err("RemovePermission", json!({"QueueUrl": url}))
            .await,
        (400, "MissingRequiredParameterException".to_string())
    );
    ep.sqs_ok(
        "RemovePermission",
        json!({"QueueUrl": url, "Label": "grant_1"}),
    )
    .await;
    assert_eq!(
        ep.sqs_err(
            "RemovePermission",
            json!({"QueueUrl": url, "Label": "grant_1"})
        )
        .await,
        (400, "InvalidParameterValueException".to_string()),
        "gone once removed"
    );
    // The label is free again.
    ep.sqs_ok("AddPermission", add("grant_1", json!(["1"]), json!(["*"])))
        .await;

    // Grants go with the queue: a queue re-created under the name starts with none.
    ep.sqs_ok("DeleteQueue", json!({"QueueUrl": url})).await;
    let (status, _, _) = ep
        .broker
        .handle(
            "POST",
            "/api/v1/kv",
            Bytes::from(
                json!({"operations": [{"op": "delete", "ns": "qs", "key": "qs:dq:perm"}]})
                    .to_string(),
            ),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(ep.create_queue("perm", json!({})).await, url);
    assert_eq!(
        ep.sqs_err(
            "RemovePermission",
            json!({"QueueUrl": url, "Label": "grant_1"})
        )
        .await,
        (400, "InvalidParameterValueException".to_string())
    );
    ep.sqs_ok("AddPermission", add("grant_1", json!(["1"]), json!(["*"])))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn depth_attributes_follow_sqs_sends_receives_and_purges() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("flow", json!({})).await;
    for i in 0..3 {
        ep.sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": format!("m{i}")}),
        )
        .await;
    }
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "later", "DelaySeconds": 600}),
    )
    .await;
    let a = attrs(&ep, &url, &DEPTH).await;
    assert_eq!(a[DEPTH[0]], "3");
    assert_eq!(a[DEPTH[1]], "0");
    assert_eq!(a[DEPTH[2]], "1");

    let got = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "MaxNumberOfMessages": 1, "VisibilityTimeout": 60}),
        )
        .await;
    let handle = got["Messages"][0]["ReceiptHandle"]
        .as_str()
        .unwrap()
        .to_string();
    let a = attrs(&ep, &url, &DEPTH).await;
    assert_eq!(a[DEPTH[0]], "2");
    assert_eq!(a[DEPTH[1]], "1");

    ep.sqs_ok("PurgeQueue", json!({"QueueUrl": url})).await;
    let a = attrs(&ep, &url, &DEPTH).await;
    assert_eq!(
        (&a[DEPTH[0]], &a[DEPTH[1]], &a[DEPTH[2]]),
        (&json!("0"), &json!("0"), &json!("0"))
    );
    // The handle minted before the purge addresses nothing: extending it is refused as a
    // change of a deleted message (a purge deletes, in SQS's words).
    let (status, body) = ep
        .sqs(
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": 100}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["__type"], "com.amazonaws.sqs#InvalidParameterValueException",
        "{body}"
    );
    assert!(
        body["message"].as_str().is_some_and(|m| m.ends_with(
            "Message does not exist or is not available for visibility timeout change."
        )),
        "{body}"
    );
    // And the queue keeps serving.
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "after"}),
    )
    .await;
    let got = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "WaitTimeSeconds": 1}),
        )
        .await;
    assert_eq!(got["Messages"][0]["Body"], "after");
}
