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

async fn receive_one(ep: &Endpoint, url: &str, extra: Value) -> Value {
    let mut input = json!({"QueueUrl": url, "WaitTimeSeconds": 1});
    for (k, v) in extra.as_object().unwrap() {
        input[k] = v.clone();
    }
    let v = ep.sqs_ok("ReceiveMessage", input).await;
    v["Messages"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_received_message_names_its_sender_when_asked() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue("sender", json!({"VisibilityTimeout": "0"}))
        .await;
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "msg"}),
    )
    .await;
    let all = receive_one(&ep, &url, json!({"AttributeNames": ["All"]})).await;
    let sender = all["Attributes"]["SenderId"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(sender.starts_with("AIDA") && sender.len() == 20, "{all}");
    let named = receive_one(
        &ep,
        &url,
        json!({"MessageSystemAttributeNames": ["SenderId"]}),
    )
    .await;
    assert_eq!(named["Attributes"], json!({"SenderId": sender}));
    let none = receive_one(&ep, &url, json!({})).await;
    assert!(none.get("Attributes").is_none(), "{none}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_message_answers_its_first_receive_time_on_every_receive() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue(
            "first.fifo",
            json!({"FifoQueue": "true", "ContentBasedDeduplication": "true"}),
        )
        .await;
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "msg", "MessageGroupId": "g"}),
    )
    .await;
    let m = receive_one(&ep, &url, json!({"AttributeNames": ["All"]})).await;
    let sent: i64 = m["Attributes"]["SentTimestamp"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let first: i64 = m["Attributes"]["ApproximateFirstReceiveTimestamp"]
        .as_str()
        .unwrap_or_else(|| panic!("no ApproximateFirstReceiveTimestamp: {m}"))
        .parse()
        .unwrap();
    assert!(first >= sent, "{first} < {sent}");
    assert_eq!(m["Attributes"]["MessageGroupId"], "g");
    // Its later receives answer the same first receive (recorded: test_fifo_message_attributes).
    ep.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}),
    )
    .await;
    std::thread::sleep(std::time::Duration::from_millis(20));
    let again = receive_one(&ep, &url, json!({"AttributeNames": ["All"]})).await;
    assert_eq!(
        again["Attributes"]["ApproximateReceiveCount"], "2",
        "{again}"
    );
    assert_eq!(
        again["Attributes"]["ApproximateFirstReceiveTimestamp"],
        m["Attributes"]["ApproximateFirstReceiveTimestamp"],
        "{again}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_attribute_prefix_selects_every_name_beginning_with_it() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue("prefix", json!({"VisibilityTimeout": "0"}))
        .await;
    let attr = |v: &str| json!({"DataType": "String", "StringValue": v});
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "msg", "MessageAttributes": {
            "General": attr("Kenobi"), "Hello": attr("There"), "Help.Me": attr("Me")}}),
    )
    .await;
    let m = receive_one(&ep, &url, json!({"MessageAttributeNames": ["Hel.*"]})).await;
    assert_eq!(
        m["MessageAttributes"],
        json!({"Hello": attr("There"), "Help.Me": attr("Me")})
    );
    // The digest AWS answered for exactly these two.
    assert_eq!(
        m["MD5OfMessageAttributes"],
        "83fee93c1bcd8b9a5a923ffacdc636c7"
    );
    let m = receive_one(&ep, &url, json!({"MessageAttributeNames": ["*"]})).await;
    assert_eq!(m["MessageAttributes"].as_object().map(|o| o.len()), Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_kind_is_fixed_in_aws_s_words() {
    let ep = Endpoint::start().await;
    for name in ["DeduplicationScope", "FifoThroughputLimit"] {
        let value = if name == "DeduplicationScope" {
            "queue"
        } else {
            "perQueue"
        };
        let (status, ty, _, message) = json_error(
            &ep,
            "CreateQueue",
            json!({"QueueName": "std", "Attributes": {name: value}}),
        )
        .await;
        assert_eq!((status, ty.as_str()), (400, "InvalidAttributeName"));
        assert_eq!(
            message,
            format!("You can specify the {name} only when FifoQueue is set to true.")
        );
    }
    let fifo = ep
        .create_queue("kind.fifo", json!({"FifoQueue": "true"}))
        .await;
    ep.sqs_ok(
        "SetQueueAttributes",
        json!({"QueueUrl": fifo, "Attributes": {"FifoQueue": "true"}}),
    )
    .await;
    let (status, ty, _, message) = json_error(
        &ep,
        "SetQueueAttributes",
        json!({"QueueUrl": fifo, "Attributes": {"FifoQueue": "false"}}),
    )
    .await;
    assert_eq!((status, ty.as_str()), (400, "InvalidAttributeValue"));
    assert_eq!(
        message,
        "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_batch_entry_without_its_ids_fails_the_whole_batch() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue("ids.fifo", json!({"FifoQueue": "true"}))
        .await;
    let ok = json!({"Id": "ok", "MessageBody": "x", "MessageGroupId": "g", "MessageDeduplicationId": "d"});
    let cases = [
        (
            json!({"Id": "nogroup", "MessageBody": "x", "MessageDeduplicationId": "d2"}),
            "The request must contain the parameter MessageGroupId.",
        ),
        (
            json!({"Id": "nodedup", "MessageBody": "x", "MessageGroupId": "g"}),
            "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
        ),
    ];
    for (bad, want) in cases {
        let (status, ty, _, message) = json_error(
            &ep,
            "SendMessageBatch",
            json!({"QueueUrl": url, "Entries": [ok.clone(), bad]}),
        )
        .await;
        assert_eq!(
            (status, ty.as_str()),
            (400, "InvalidParameterValueException")
        );
        assert_eq!(message, want);
    }
    // Nothing of either batch was sent.
    let v = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "WaitTimeSeconds": 1}),
        )
        .await;
    assert!(v.get("Messages").is_none(), "{v}");
    // A batch that fails nothing answers no `Failed` list.
    let v = ep
        .sqs_ok(
            "SendMessageBatch",
            json!({"QueueUrl": url, "Entries": [ok]}),
        )
        .await;
    assert!(v.get("Failed").is_none(), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_attribute_and_id_errors_are_worded_as_aws_words_them() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("words", json!({})).await;
    // Letters of any script are allowed in a name.
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "x", "MessageAttributes": {
            "attr.1øßä": {"DataType": "String", "StringValue": "Valida"}}}),
    )
    .await;
    let send =
        |attrs: Value| json!({"QueueUrl": url, "MessageBody": "x", "MessageAttributes": attrs});
    let (_, ty, _, _) = json_error(
        &ep,
        "SendMessage",
        send(json!({"attr1": {"DataType": "String", "StringValue": "Invalid-\u{8},\u{b}"}})),
    )
    .await;
    assert_eq!(ty, "InvalidParameterValueException");
    let (_, ty, _, message) = json_error(
        &ep,
        "SendMessage",
        send(json!({"ErrorDetails": {"DataType": "String", "StringValue": ""}})),
    )
    .await;
    assert_eq!(ty, "InvalidParameterValueException");
    assert_eq!(
        message,
        "Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'."
    );
    let (_, ty, _, message) = json_error(
        &ep,
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "x", "MessageGroupId": ""}),
    )
    .await;
    assert_eq!(ty, "InvalidParameterValueException");
    assert_eq!(
        message,
        "Value  for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length."
    );
}

/// A dead-letter queue `dlq` with one message in it, its source `src`, and a `dest`.
async fn dead_letter_pipe(ep: &Endpoint) -> (String, String) {
    let dlq = ep.create_queue("dlq", json!({})).await;
    let arn = "arn:aws:sqs:us-east-1:000000000000:dlq";
    let policy = format!("{{\"deadLetterTargetArn\":\"{arn}\",\"maxReceiveCount\":1}}");
    ep.create_queue("src", json!({"RedrivePolicy": policy}))
        .await;
    ep.sqs_ok("SendMessage", json!({"QueueUrl": dlq, "MessageBody": "m"}))
        .await;
    ep.create_queue("dest", json!({})).await;
    (dlq, arn.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_task_handle_is_aws_s_base64_document() {
    use base64::Engine;
    let ep = Endpoint::start().await;
    let (_, source_arn) = dead_letter_pipe(&ep).await;
    let started = ep
        .sqs_ok(
            "StartMessageMoveTask",
            json!({"SourceArn": source_arn, "DestinationArn": "arn:aws:sqs:us-east-1:000000000000:dest",
                   "MaxNumberOfMessagesPerSecond": 1}),
        )
        .await;
    let handle = started["TaskHandle"].as_str().unwrap();
    let doc: Value = serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(handle)
            .expect("base64"),
    )
    .expect("a JSON document");
    assert_eq!(doc["sourceArn"], source_arn);
    let id = doc["taskId"].as_str().unwrap();
    assert_eq!(id.len(), 36, "{id}");
    assert_eq!(id.matches('-').count(), 4, "{id}");
    // A second task on the same source while the first runs.
    let (status, ty, _, message) = json_error(
        &ep,
        "StartMessageMoveTask",
        json!({"SourceArn": source_arn}),
    )
    .await;
    if status != 200 {
        assert_eq!(ty, "InvalidParameterValueException");
        assert_eq!(message, "There is already a task running. Only one active task is allowed for a source queue arn at a given time.");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_move_task_answers_sqs_s_three_refusals() {
    use base64::Engine;
    let ep = Endpoint::start().await;
    let (_, source_arn) = dead_letter_pipe(&ep).await;
    let handle = |task: &str, arn: &str| {
        base64::engine::general_purpose::STANDARD
            .encode(format!("{{\"taskId\":\"{task}\",\"sourceArn\":\"{arn}\"}}"))
    };
    let cases = [
        (
            "foobared".to_string(),
            (
                400,
                "InvalidParameterValueException",
                "Value for parameter TaskHandle is invalid.",
            ),
        ),
        (
            handle(
                "10000000-0000-4000-8000-000000000000",
                "arn:aws:sqs:us-east-1:000000000000:no-such",
            ),
            (
                404,
                "ResourceNotFoundException",
                "The resource that you specified for the SourceArn parameter doesn't exist.",
            ),
        ),
        (
            handle("10000000-0000-4000-8000-000000000000", &source_arn),
            (404, "ResourceNotFoundException", "Task does not exist."),
        ),
    ];
    for (task_handle, (status, ty, message)) in cases {
        let got = json_error(
            &ep,
            "CancelMessageMoveTask",
            json!({"TaskHandle": task_handle}),
        )
        .await;
        assert_eq!(
            (got.0, got.1.as_str(), got.3.as_str()),
            (status, ty, message),
            "{task_handle}"
        );
    }
}

/// A Query GET of `path` with `query` (already encoded); answers (status, body).
async fn get(ep: &Endpoint, path_and_query: &str) -> (u16, String) {
    let (status, _, body) = ep.raw("GET", path_and_query, &[], "").await;
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_query_protocol_over_get_on_a_queue_url() {
    let ep = Endpoint::start().await;
    ep.create_queue("one", json!({})).await;
    ep.create_queue("two", json!({})).await;
    let (status, _) = get(
        &ep,
        "/000000000000/one?Action=SendMessage&MessageBody=foobar",
    )
    .await;
    assert_eq!(status, 200);
    // An empty result is written `<ReceiveMessageResult/>`.
    let (status, xml) = get(&ep, "/000000000000/two?Action=ReceiveMessage").await;
    assert_eq!(status, 200);
    assert!(xml.contains("<ReceiveMessageResult/>"), "{xml}");
    let (_, xml) = get(&ep, "/000000000000/one?Action=ReceiveMessage").await;
    assert!(xml.contains("<Body>foobar</Body>"), "{xml}");
    // Actions that address no queue are not the queue URL's.
    for action in ["CreateQueue", "ListQueues"] {
        let (status, xml) = get(
            &ep,
            &format!("/000000000000/one?Action={action}&QueueName=x"),
        )
        .await;
        assert_eq!(status, 400, "{xml}");
        assert!(xml.contains("<Code>InvalidAction</Code>"), "{xml}");
        assert!(
            xml.contains(&format!(
                "<Message>The action {action} is not valid for this endpoint.</Message>"
            )),
            "{xml}"
        );
    }
    // A GET that names no action at all.
    let (status, xml) = get(&ep, "/000000000000/one").await;
    assert_eq!(status, 404, "{xml}");
    assert!(xml.contains("<UnknownOperationException"), "{xml}");
    // GetQueueUrl is answered on a queue's URL, for that queue or another.
    let (status, xml) = get(&ep, "/000000000000/one?Action=GetQueueUrl&QueueName=two").await;
    assert_eq!(status, 200, "{xml}");
    assert!(xml.contains("/000000000000/two</QueueUrl>"), "{xml}");
    // The root still answers every action.
    let (status, xml) = get(&ep, "/?Action=ListQueues").await;
    assert_eq!(status, 200, "{xml}");
}

async fn queue_policy(ep: &Endpoint, url: &str) -> Option<Value> {
    let a = queue_attributes(ep, url, &["Policy"]).await;
    a.get("Policy")
        .map(|p| serde_json::from_str::<Value>(p.as_str().unwrap()).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_permission_grants_are_statements_of_the_queue_policy() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("granted", json!({})).await;
    let arn = "arn:aws:sqs:us-east-1:000000000000:granted";
    assert!(queue_policy(&ep, &url).await.is_none());
    let grant = |label: &str, accounts: Value| json!({"QueueUrl": url, "Label": label, "AWSAccountIds": accounts, "Actions": ["ReceiveMessage"]});
    ep.sqs_ok("AddPermission", grant("first", json!(["000000000000"])))
        .await;
    ep.sqs_ok(
        "AddPermission",
        grant("second", json!(["000000000000", "668614515564"])),
    )
    .await;
    let doc = queue_policy(&ep, &url).await.expect("a Policy");
    assert_eq!(doc["Version"], "2008-10-17");
    assert_eq!(doc["Id"], format!("{arn}/SQSDefaultPolicy"));
    assert_eq!(
        doc["Statement"][0],
        json!({"Sid": "first", "Effect": "Allow",
               "Principal": {"AWS": "arn:aws:iam::000000000000:root"},
               "Action": "SQS:ReceiveMessage", "Resource": arn})
    );
    assert_eq!(
        doc["Statement"][1]["Principal"]["AWS"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    let (_, ty, _, message) = json_error(&ep, "AddPermission", grant("first", json!(["1"]))).await;
    assert_eq!(ty, "InvalidParameterValueException");
    assert_eq!(
        message,
        "Value first for parameter Label is invalid. Reason: Already exists."
    );
    for label in ["first", "second"] {
        ep.sqs_ok("RemovePermission", json!({"QueueUrl": url, "Label": label}))
            .await;
    }
    assert!(
        queue_policy(&ep, &url).await.is_none(),
        "no grants, no policy"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_reuse_period_is_answered_only_beside_a_key() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("kms", json!({})).await;
    let set = |attrs: Value| json!({"QueueUrl": url, "Attributes": attrs});
    ep.sqs_ok(
        "SetQueueAttributes",
        set(json!({"KmsMasterKeyId": "testKeyId", "KmsDataKeyReusePeriodSeconds": "6000"})),
    )
    .await;
    let all = queue_attributes(&ep, &url, &["All"]).await;
    assert_eq!(all["KmsDataKeyReusePeriodSeconds"], "6000");
    assert_eq!(all["SqsManagedSseEnabled"], "false");
    ep.sqs_ok(
        "SetQueueAttributes",
        set(json!({"KmsMasterKeyId": "", "KmsDataKeyReusePeriodSeconds": "300"})),
    )
    .await;
    let all = queue_attributes(&ep, &url, &["All"]).await;
    assert!(all.get("KmsMasterKeyId").is_none(), "{all:?}");
    assert!(all.get("KmsDataKeyReusePeriodSeconds").is_none(), "{all:?}");
}

/// SQS (recorded: LocalStack's `test_change_message_visibility_after_visibility_timeout_expiration`)
/// answers a change by a handle whose visibility has ended with success; the message stays
/// visible. A delivery deleted once its visibility ended is refused with the handle quoted
/// (`test_change_visibility_on_deleted_message_raises_invalid_parameter_value`'s wording).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_visibility_change_after_the_visibility_ended_succeeds_until_the_message_is_deleted() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue("cmv-expired", json!({"VisibilityTimeout": "1"}))
        .await;
    ep.sqs_ok("SendMessage", json!({"QueueUrl": url, "MessageBody": "x"}))
        .await;
    let m = receive_one(&ep, &url, json!({})).await;
    let handle = m["ReceiptHandle"].as_str().unwrap().to_string();
    tokio::time::sleep(std::time::Duration::from_millis(2000)).await;
    for seconds in [2, 0] {
        ep.sqs_ok(
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": seconds}),
        )
        .await;
    }
    // The change to 2 s after the end changed nothing: the message is there at once.
    let again = receive_one(&ep, &url, json!({"VisibilityTimeout": 30})).await;
    assert_eq!(again["MessageId"], m["MessageId"], "{again}");
    // A delete by the first delivery's handle while a newer delivery holds the message
    // deletes nothing (SQS: "the request succeeds, but the message will not be deleted"),
    // and a change by it answers success and changes nothing.
    for (action, extra) in [
        ("DeleteMessage", json!({})),
        ("ChangeMessageVisibility", json!({"VisibilityTimeout": 5})),
    ] {
        let mut input = json!({"QueueUrl": url, "ReceiptHandle": handle});
        input
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        ep.sqs_ok(action, input).await;
    }
    // The newer delivery's visibility ends; a late delete by its handle deletes the visible
    // message, and a change by that handle is then refused in SQS's words.
    let late = again["ReceiptHandle"].as_str().unwrap().to_string();
    ep.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": late, "VisibilityTimeout": 1}),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": late}),
    )
    .await;
    let (status, ty, query_error, message) = json_error(
        &ep,
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": late, "VisibilityTimeout": 5}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(ty, "InvalidParameterValueException");
    assert_eq!(query_error, "InvalidParameterValue;Sender");
    assert_eq!(
        message,
        format!("Value {late} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.")
    );
    // In a batch, that entry only fails, and in other words: AWS answers a deleted
    // message's entry `ReceiptHandleIsInvalid` (recorded on AWS by the Go CDK's
    // conformance suite, pubsub/awssnssqs testdata TestDoubleAck.replay), which the Go
    // CDK's driver counts as a nack of a message already gone.
    ep.sqs_ok("SendMessage", json!({"QueueUrl": url, "MessageBody": "y"}))
        .await;
    let live = receive_one(&ep, &url, json!({"VisibilityTimeout": 30})).await;
    let out = ep
        .sqs_ok(
            "ChangeMessageVisibilityBatch",
            json!({"QueueUrl": url, "Entries": [
                {"Id": "old", "ReceiptHandle": late, "VisibilityTimeout": 5},
                {"Id": "live", "ReceiptHandle": live["ReceiptHandle"], "VisibilityTimeout": 5},
            ]}),
        )
        .await;
    assert_eq!(out["Successful"][0]["Id"], "live", "{out}");
    assert_eq!(out["Failed"][0]["Id"], "old", "{out}");
    assert_eq!(out["Failed"][0]["Code"], "ReceiptHandleIsInvalid", "{out}");
    assert_eq!(
        out["Failed"][0]["Message"],
        "Message does not exist or is not available for visibility timeout change",
        "{out}"
    );
    assert_eq!(out["Failed"][0]["SenderFault"], true, "{out}");
}

/// SQS keeps a request's `X-Amzn-Trace-Id` header as the message's `AWSTraceHeader` when
/// the send names none itself (recorded: `test_aws_trace_header_propagation`); one the
/// send names wins, and a batch's entries all take the header.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sent_message_keeps_the_requests_trace_header() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue("traced", json!({"VisibilityTimeout": "0"}))
        .await;
    let trace = "Root=1-3152b799-8954dae64eda91bc9a23a7e8;Parent=7fa8c0f79203be72;Sampled=1";
    let send = |input: Value, action: &'static str| {
        let ep = &ep;
        async move {
            let target = format!("AmazonSQS.{action}");
            let (status, _, body) = ep
                .raw(
                    "POST",
                    "/",
                    &[
                        ("x-amz-target", &target),
                        ("content-type", "application/x-amz-json-1.0"),
                        ("x-amzn-trace-id", trace),
                    ],
                    input.to_string(),
                )
                .await;
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        }
    };
    send(
        json!({"QueueUrl": url, "MessageBody": "from-header"}),
        "SendMessage",
    )
    .await;
    send(
        json!({"QueueUrl": url, "MessageBody": "named",
               "MessageSystemAttributes": {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-named"}}}),
        "SendMessage",
    )
    .await;
    send(
        json!({"QueueUrl": url, "Entries": [{"Id": "a", "MessageBody": "batched"}]}),
        "SendMessageBatch",
    )
    .await;
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "untraced"}),
    )
    .await;
    let mut seen = std::collections::BTreeMap::new();
    for _ in 0..20 {
        let v = ep
            .sqs_ok(
                "ReceiveMessage",
                json!({"QueueUrl": url, "MaxNumberOfMessages": 10, "AttributeNames": ["AWSTraceHeader"]}),
            )
            .await;
        for m in v["Messages"].as_array().cloned().unwrap_or_default() {
            seen.insert(
                m["Body"].as_str().unwrap().to_string(),
                m["Attributes"]["AWSTraceHeader"].clone(),
            );
        }
        if seen.len() == 4 {
            break;
        }
    }
    assert_eq!(seen["from-header"], json!(trace), "{seen:?}");
    assert_eq!(seen["batched"], json!(trace), "{seen:?}");
    assert_eq!(seen["named"], json!("Root=1-named"), "{seen:?}");
    assert_eq!(seen["untraced"], Value::Null, "{seen:?}");
}

/// Since fair queues, a standard queue takes a `MessageGroupId` and answers it back among
/// the message's attributes (recorded: `test_fair_queue_with_message_group_id`); a message
/// sent without one answers none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standard_queue_answers_the_message_group_id_it_was_sent_with() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("fair", json!({})).await;
    let sent = ep
        .sqs_ok(
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "grouped", "MessageGroupId": "tenant-7"}),
        )
        .await;
    // The group is no system attribute of the send: no MD5 of any is answered.
    assert!(sent.get("MD5OfMessageSystemAttributes").is_none(), "{sent}");
    let m = receive_one(&ep, &url, json!({"AttributeNames": ["All"]})).await;
    assert_eq!(m["Attributes"]["MessageGroupId"], "tenant-7", "{m}");
    assert!(
        m["Attributes"].get("MessageDeduplicationId").is_none(),
        "{m}"
    );
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": m["ReceiptHandle"]}),
    )
    .await;
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "plain"}),
    )
    .await;
    let m = receive_one(&ep, &url, json!({"AttributeNames": ["All"]})).await;
    assert!(m["Attributes"].get("MessageGroupId").is_none(), "{m}");
}

/// A FIFO queue keeps the deduplication scope it was created with (recorded:
/// test_fifo_change_to_high_throughput_after_creation: after `DeduplicationScope` is set to
/// `messageGroup`, an id used in another group is still a duplicate, old or new); the
/// attribute itself answers what was set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_queue_keeps_the_deduplication_scope_it_was_created_with() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue(
            "scoped.fifo",
            json!({"FifoQueue": "true", "DeduplicationScope": "queue"}),
        )
        .await;
    let send = |group: &'static str, dedup: &'static str, body: &'static str| {
        let ep = &ep;
        let url = url.clone();
        async move {
            ep.sqs_ok(
                "SendMessage",
                json!({"QueueUrl": url, "MessageBody": body, "MessageGroupId": group, "MessageDeduplicationId": dedup}),
            )
            .await["MessageId"]
                .clone()
        }
    };
    let first = send("g1", "same", "one").await;
    ep.sqs_ok(
        "SetQueueAttributes",
        json!({"QueueUrl": url, "Attributes": {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}}),
    )
    .await;
    let attrs = ep
        .sqs_ok(
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": ["DeduplicationScope"]}),
        )
        .await;
    assert_eq!(attrs["Attributes"]["DeduplicationScope"], "messageGroup");
    // An id used in another group is still a duplicate of the first message.
    assert_eq!(send("g2", "same", "two").await, first);
    // A new id too, across groups.
    let new = send("g3", "new", "three").await;
    assert_eq!(send("g4", "new", "four").await, new);
}

/// A FIFO delete after the handle's visibility ended is refused, and deletes nothing: the
/// group is free again and its message next in line (recorded against SQS:
/// test_fifo_delete_after_visibility_timeout). A delete inside a visibility extended by a
/// change still deletes (test_fifo_delete_after_visibility_timeout_extended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_delete_after_the_visibility_ended_is_refused_as_expired() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue(
            "expired.fifo",
            json!({"FifoQueue": "true", "ContentBasedDeduplication": "true", "VisibilityTimeout": "1"}),
        )
        .await;
    let send = |body: &'static str| {
        let ep = &ep;
        let url = url.clone();
        async move {
            ep.sqs_ok(
                "SendMessage",
                json!({"QueueUrl": url, "MessageBody": body, "MessageGroupId": "1"}),
            )
            .await
        }
    };
    send("foobar").await;
    let m = receive_one(&ep, &url, json!({})).await;
    let handle = m["ReceiptHandle"].as_str().unwrap().to_string();
    tokio::time::sleep(std::time::Duration::from_millis(1_300)).await;
    let (status, ty, query, message) = json_error(
        &ep,
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": handle}),
    )
    .await;
    assert_eq!(
        (status, ty.as_str(), query.split(';').next().unwrap()),
        (
            400,
            "InvalidParameterValueException",
            "InvalidParameterValue"
        )
    );
    assert_eq!(
        message,
        format!("Value {handle} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.")
    );
    let again = receive_one(&ep, &url, json!({"VisibilityTimeout": 1})).await;
    assert_eq!(
        again["Body"], "foobar",
        "the refused delete deleted nothing"
    );
    assert_eq!(
        again["MessageId"], m["MessageId"],
        "the same message, received again"
    );
    // Extended: a change to 5 s, then a delete after the first second still deletes.
    let handle = again["ReceiptHandle"].as_str().unwrap();
    ep.sqs_ok(
        "ChangeMessageVisibility",
        json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": 5}),
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    ep.sqs_ok(
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": handle}),
    )
    .await;
    let v = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "WaitTimeSeconds": 2}),
        )
        .await;
    assert!(v["Messages"].as_array().is_none_or(Vec::is_empty), "{v}");
}

/// A FIFO message sent through a replica whose cached record predates a PurgeQueue lands in
/// the group's lane of the queue's earlier incarnation; the receive moves it into the
/// current lane. It stays the same message: its MessageId and SentTimestamp as sent, its
/// receive count counted on (checker embedded seed 441: a new MessageId, count from 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_message_sent_across_a_purge_keeps_its_message_id() {
    use std::sync::Arc;
    let a = Endpoint::start().await;
    let url = a
        .create_queue(
            "across.fifo",
            json!({"FifoQueue": "true", "ContentBasedDeduplication": "true", "VisibilityTimeout": "1"}),
        )
        .await;
    let b = a.replica_behind(Arc::new(|_: &support::Seen| None)).await;
    let url_b = url.replace(&a.url, &b.url);
    let send_b = |body: &'static str| {
        let (b, url_b) = (&b, url_b.clone());
        async move {
            b.sqs_ok(
                "SendMessage",
                json!({"QueueUrl": url_b, "MessageBody": body, "MessageGroupId": "g"}),
            )
            .await
        }
    };
    send_b("before").await; // b reads and caches the queue's record
    a.sqs_ok("PurgeQueue", json!({"QueueUrl": url})).await;
    let sent = send_b("after").await; // within b's cache: the lane of before the purge
    let attrs = json!({"AttributeNames": ["All"]});
    let first = receive_one(&a, &url, attrs.clone()).await;
    assert_eq!(first["Body"], "after", "{first}");
    assert_eq!(first["MessageId"], sent["MessageId"]);
    assert_eq!(first["Attributes"]["ApproximateReceiveCount"], "1");
    tokio::time::sleep(std::time::Duration::from_millis(1_300)).await;
    let second = receive_one(&a, &url, attrs).await;
    assert_eq!(second["MessageId"], sent["MessageId"]);
    assert_eq!(second["Attributes"]["ApproximateReceiveCount"], "2");
    assert_eq!(
        second["Attributes"]["SentTimestamp"],
        first["Attributes"]["SentTimestamp"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_action_is_named_in_the_answer_when_it_could_be_one() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("unknown-action", json!({})).await;
    let path = url.strip_prefix(&ep.url).unwrap().to_string();
    let (status, _, body) = ep
        .raw(
            "GET",
            &format!("{path}?Action=FooBar&Version=2012-11-05"),
            &[],
            Vec::new(),
        )
        .await;
    let xml = String::from_utf8_lossy(&body);
    assert_eq!(status, 400, "{xml}");
    for part in [
        "<Code>InvalidAction</Code>",
        "<Type>Sender</Type>",
        "<Message>The action FooBar is not valid for this endpoint.</Message>",
    ] {
        assert!(xml.contains(part), "{part}: {xml}");
    }
    // Markup in the name is never echoed.
    let (status, _, body) = ep
        .raw(
            "GET",
            &format!("{path}?Action=Foo%3Cb%3E&Version=2012-11-05"),
            &[],
            Vec::new(),
        )
        .await;
    let xml = String::from_utf8_lossy(&body);
    assert_eq!(status, 400, "{xml}");
    assert!(
        !xml.contains("Foo") && xml.contains("<Code>InvalidAction</Code>"),
        "{xml}"
    );
}
