//! SNS answers as AWS gave them in recordings against the real service (LocalStack's
//! AWS-validated snapshots, issue 20): the wording of its `InvalidParameter` family and
//! of its batch errors. Each test pins one behaviour that differed before.

mod sns_common;
mod support;

use serde_json::json;
use sns_common::*;
use support::Endpoint;

/// (code, message) of an error answer.
async fn refused(ep: &Endpoint, action: &str, params: &[(&str, &str)]) -> (String, String) {
    let (_, code, message) = sns_err(ep, action, params).await;
    (code, message)
}

fn invalid(message: &str) -> (String, String) {
    ("InvalidParameter".to_string(), message.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arn_that_is_no_arn_says_how_many_elements_it_has() {
    let ep = Endpoint::start().await;
    for (arn, n) in [
        ("test-topic", 1),
        ("randomstring:1", 2),
        ("", 1),
        ("arn:aws:sns:us-east-1:random", 5),
    ] {
        assert_eq!(
            refused(&ep, "GetTopicAttributes", &[("TopicArn", arn)]).await,
            invalid(&format!(
                "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not {n}"
            )),
            "{arn:?}"
        );
    }
    assert_eq!(
        refused(
            &ep,
            "Publish",
            &[("TopicArn", "randomstring"), ("Message", "m")]
        )
        .await,
        invalid("Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1")
    );
    assert_eq!(
        refused(&ep, "Unsubscribe", &[("SubscriptionArn", "arn:aws:sns:us-east-1:random")]).await,
        invalid("Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 5")
    );
    assert_eq!(
        refused(
            &ep,
            "Unsubscribe",
            &[(
                "SubscriptionArn",
                "arn:aws:sns:us-east-1:111111111111:random"
            )]
        )
        .await,
        invalid("Invalid parameter: SubscriptionId")
    );
    assert_eq!(
        refused(&ep, "Unsubscribe", &[]).await,
        invalid("Invalid parameter: SubscriptionArn Reason: no value for required parameter")
    );
    // A well-formed ARN of ours that names no topic is still NotFound.
    let (status, code, _) = sns_err(
        &ep,
        "GetTopicAttributes",
        &[(
            "TopicArn",
            &format!("arn:aws:sns:us-east-1:{ACCOUNT}:absent"),
        )],
    )
    .await;
    assert_eq!((status, code.as_str()), (404, "NotFound"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_and_subscription_refusals_are_worded_as_sns_words_them() {
    let ep = Endpoint::start().await;
    assert_eq!(
        refused(
            &ep,
            "CreateTopic",
            &[
                ("Name", "plain"),
                ("Attributes.entry.1.key", "FifoTopic"),
                ("Attributes.entry.1.value", "true")
            ]
        )
        .await,
        invalid("Invalid parameter: Topic Name")
    );
    let topic = create_topic(&ep, "words", &[]).await;
    assert_eq!(
        refused(
            &ep,
            "SetTopicAttributes",
            &[
                ("TopicArn", &topic),
                ("AttributeName", "FifoTopic"),
                ("AttributeValue", "false")
            ]
        )
        .await,
        invalid("Invalid parameter: AttributeName")
    );
    assert_eq!(
        refused(
            &ep,
            "TagResource",
            &[
                ("ResourceArn", &topic),
                ("Tags.member.1.Key", "k2"),
                ("Tags.member.1.Value", "a"),
                ("Tags.member.2.Key", "k2"),
                ("Tags.member.2.Value", "b")
            ]
        )
        .await,
        invalid("Invalid parameter: Duplicated keys are not allowed.")
    );
    assert_eq!(
        refused(
            &ep,
            "ConfirmSubscription",
            &[("TopicArn", &topic), ("Token", "x")]
        )
        .await,
        invalid("Invalid parameter: Token")
    );
    make_queue(&ep, "sub.fifo").await;
    assert_eq!(
        refused(
            &ep,
            "Subscribe",
            &[("TopicArn", &topic), ("Protocol", "sqs"), ("Endpoint", &queue_arn("sub.fifo"))]
        )
        .await,
        invalid(
            "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_batch_errors_are_worded_as_sns_words_them() {
    let ep = Endpoint::start().await;
    let topic = create_topic(&ep, "batch", &[]).await;
    let batch = |ids: &[&str]| -> Vec<(String, String)> {
        let mut p = vec![("TopicArn".to_string(), topic.clone())];
        for (i, id) in ids.iter().enumerate() {
            p.push((
                format!("PublishBatchRequestEntries.member.{}.Id", i + 1),
                id.to_string(),
            ));
            p.push((
                format!("PublishBatchRequestEntries.member.{}.Message", i + 1),
                "m".into(),
            ));
        }
        p
    };
    let long = "a".repeat(81);
    let cases = [
        (vec!["msg@123#test"], "InvalidBatchEntryId", "The Id of a batch entry in the batch request contains an impermissible character: msg@123#test".to_string()),
        (vec![long.as_str()], "InvalidBatchEntryId", format!("The Id of a batch entry in the batch request is too long: {long}")),
        (vec!["1", "1"], "BatchEntryIdsNotDistinct", "Two or more batch entries in the request have the same Id.".to_string()),
        (vec!["1"; 11], "TooManyEntriesInBatchRequest", "The batch request contains more entries than permissible.".to_string()),
    ];
    for (ids, code, message) in cases {
        let params = batch(&ids);
        let refs: Vec<(&str, &str)> = params
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(
            refused(&ep, "PublishBatch", &refs).await,
            (code.to_string(), message),
            "{ids:?}"
        );
    }
}

/// A refused message attribute in SNS's words, for `Publish` and for a `PublishBatch` entry
/// (recorded: test_empty_or_wrong_message_attributes). SQS words the same refusals its own
/// way (host/tests/sqs_fidelity.rs): one fault, two renderings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_attribute_refusals_are_worded_as_sns_words_them() {
    let ep = Endpoint::start().await;
    let topic = create_topic(&ep, "attrs", &[]).await;
    let bad = "ParameterValueInvalid";
    let long = "a".repeat(257);
    // (name, DataType, StringValue, BinaryValue (base64)), code, message.
    type Case<'a> = (
        (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>),
        &'a str,
        String,
    );
    let cases: Vec<Case> = vec![
        (("attr1", Some("String"), Some(""), None), bad, "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'String'.".into()),
        (("attr1", Some("String"), None, None), bad, "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'String'.".into()),
        (("attr1", None, Some("value"), None), "ValidationError", "1 validation error detected: Value null at '{at}messageAttributes.attr1.member.dataType' failed to satisfy constraint: Member must not be null".into()),
        (("attr1", Some("Binary"), None, Some("")), bad, "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'Binary'.".into()),
        (("attr1", Some("String"), None, Some("MTIz")), bad, "The message attribute 'attr1' with type 'String' must use field 'String'.".into()),
        (("attr1", Some("Number"), None, Some("MTIz")), bad, "The message attribute 'attr1' with type 'Number' must use field 'String'.".into()),
        (("attr1", Some("Binary"), Some("123"), None), bad, "The message attribute 'attr1' with type 'Binary' must use field 'Binary'.".into()),
        (("attr1", Some("InvalidType"), Some("123"), None), bad, "The message attribute 'attr1' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.".into()),
        ((long.as_str(), Some("String"), Some("123"), None), bad, "Length of message attribute name must be less than 256 bytes.".into()),
        (("a^*?", Some("String"), Some("123"), None), bad, "Invalid non-alphanumeric character '#x5E' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots.".into()),
        ((".abc", Some("String"), Some("123"), None), bad, "Invalid message attribute name starting with character '.' was found.".into()),
        (("abc.", Some("String"), Some("123"), None), bad, "Invalid message attribute name ending with character '.' was found.".into()),
        (("a..bc", Some("String"), Some("123"), None), bad, "Message attribute name can not have successive '.' character.".into()),
    ];
    for ((name, data_type, string, binary), code, message) in cases {
        let attribute = |prefix: &str| {
            let mut p = vec![(
                format!("{prefix}MessageAttributes.entry.1.Name"),
                name.to_string(),
            )];
            let fields = [
                ("DataType", data_type),
                ("StringValue", string),
                ("BinaryValue", binary),
            ];
            for (field, v) in fields {
                if let Some(v) = v {
                    p.push((
                        format!("{prefix}MessageAttributes.entry.1.Value.{field}"),
                        v.to_string(),
                    ));
                }
            }
            p
        };
        let mut publish = vec![
            ("TopicArn".to_string(), topic.clone()),
            ("Message".into(), "test message".into()),
        ];
        publish.extend(attribute(""));
        let mut batch = vec![("TopicArn".to_string(), topic.clone())];
        let entry = "PublishBatchRequestEntries.member";
        batch.push((format!("{entry}.1.Id"), "1".into()));
        batch.push((format!("{entry}.1.Message"), "test-batch".into()));
        batch.extend(attribute(&format!("{entry}.1.")));
        batch.push((format!("{entry}.2.Id"), "3".into()));
        batch.push((format!("{entry}.2.Message"), "valid-batch".into()));
        for (action, params, at) in [
            ("Publish", publish, ""),
            (
                "PublishBatch",
                batch,
                "publishBatchRequestEntries.1.member.",
            ),
        ] {
            let refs: Vec<(&str, &str)> = params
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            assert_eq!(
                refused(&ep, action, &refs).await,
                (code.to_string(), message.replace("{at}", at)),
                "{action} {name:?} {data_type:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscription_attributes_are_checked_and_reported_as_sns_does() {
    let ep = Endpoint::start().await;
    let topic = create_topic(&ep, "subs", &[]).await;
    let queue = make_queue(&ep, "subscriber").await;
    let (_, code, message) = sns_err(
        &ep,
        "Subscribe",
        &[
            ("TopicArn", &topic),
            ("Protocol", "sqs"),
            ("Endpoint", &queue),
            ("Attributes.entry.1.key", "InvalidKey"),
            ("Attributes.entry.1.value", "x"),
        ],
    )
    .await;
    assert_eq!(
        (code, message),
        invalid("Invalid parameter: Attributes Reason: Invalid attribute name: InvalidKey")
    );
    let sub = subscribe(&ep, &topic, &queue, &[]).await;
    let set = |name: &'static str, value: &'static str| {
        let sub = sub.clone();
        let ep = &ep;
        async move {
            refused(
                ep,
                "SetSubscriptionAttributes",
                &[
                    ("SubscriptionArn", &sub),
                    ("AttributeName", name),
                    ("AttributeValue", value),
                ],
            )
            .await
        }
    };
    assert_eq!(
        set("FakeAttribute", "v").await,
        invalid("Invalid parameter: AttributeName")
    );
    assert_eq!(
        set("RawMessageDelivery", "test-ValUe").await,
        invalid("Invalid parameter: RawMessageDelivery: Invalid value [test-ValUe]. Must be true or false.")
    );
    assert_eq!(
        set("RedrivePolicy", r#"{"deadLetterTargetArn": "fake-arn"}"#).await,
        invalid("Invalid parameter: RedrivePolicy: deadLetterTargetArn is an invalid arn")
    );
    let (_, message) = set("RedrivePolicy", "{invalidjson}").await;
    assert!(
        message.starts_with("Invalid parameter: RedrivePolicy: failed to parse JSON."),
        "{message}"
    );
    let a = attributes(
        &sns_ok(
            &ep,
            "GetSubscriptionAttributes",
            &[("SubscriptionArn", &sub)],
        )
        .await,
    );
    assert_eq!(
        a["SubscriptionPrincipal"],
        format!("arn:aws:iam::{ACCOUNT}:user/queen-sqs")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_permission_grants_are_statements_of_the_topic_policy() {
    let ep = Endpoint::start().await;
    let topic = create_topic(&ep, "granted", &[]).await;
    let policy = |xml: String| -> serde_json::Value {
        serde_json::from_str(&attributes(&xml)["Policy"]).unwrap()
    };
    let grant = |label: &'static str, action: &'static str| {
        let topic = topic.clone();
        move || {
            vec![
                ("TopicArn".to_string(), topic.clone()),
                ("Label".to_string(), label.to_string()),
                ("AWSAccountId.member.1".to_string(), ACCOUNT.to_string()),
                ("ActionName.member.1".to_string(), action.to_string()),
            ]
        }
    };
    let call = |params: Vec<(String, String)>| {
        let ep = &ep;
        async move {
            let refs: Vec<(&str, &str)> = params
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            sns(ep, "AddPermission", &refs).await
        }
    };
    let (status, _) = call(grant("test", "Publish")()).await;
    assert_eq!(status, 200);
    let doc = policy(sns_ok(&ep, "GetTopicAttributes", &[("TopicArn", &topic)]).await);
    assert_eq!(doc["Statement"][0]["Sid"], "__default_statement_ID");
    assert_eq!(
        doc["Statement"][1],
        serde_json::json!({"Sid": "test", "Effect": "Allow",
            "Principal": {"AWS": format!("arn:aws:iam::{ACCOUNT}:root")},
            "Action": "SNS:Publish", "Resource": topic})
    );
    let (_, xml) = call(grant("test", "AddPermission")()).await;
    assert!(
        xml.contains("<Message>Invalid parameter: Statement already exists</Message>"),
        "{xml}"
    );
    let (_, xml) = call(grant("other", "InvalidAction")()).await;
    assert!(
        xml.contains(
            "<Message>Invalid parameter: Policy statement action out of service scope!</Message>"
        ),
        "{xml}"
    );
    sns_ok(
        &ep,
        "RemovePermission",
        &[("TopicArn", &topic), ("Label", "test")],
    )
    .await;
    let doc = policy(sns_ok(&ep, "GetTopicAttributes", &[("TopicArn", &topic)]).await);
    assert_eq!(doc["Statement"].as_array().map(Vec::len), Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_arn_given_as_target_arn_publishes_to_the_topic() {
    let ep = Endpoint::start().await;
    let topic = create_topic(&ep, "targeted", &[]).await;
    let queue = make_queue(&ep, "target-sub").await;
    subscribe(&ep, &topic, &queue, &[("RawMessageDelivery", "true")]).await;
    sns_ok(
        &ep,
        "Publish",
        &[("TargetArn", &topic), ("Message", "via target")],
    )
    .await;
    let got = drain(&ep, "target-sub").await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body(), "via target");
    assert_eq!(
        refused(
            &ep,
            "Publish",
            &[
                (
                    "TargetArn",
                    "arn:aws:sns:us-east-1:000000000000:endpoint/APNS/app/1"
                ),
                ("Message", "m")
            ]
        )
        .await,
        invalid(
            "Invalid parameter: TargetArn Reason: No endpoint found for the target arn specified"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_type_label_may_hold_any_printable_text() {
    let ep = Endpoint::start().await;
    let topic = create_topic(&ep, "labels", &[]).await;
    for (ty, ok) in [
        ("String.prefixed", true),
        ("String.  prefixed.", true),
        ("String.", false),
        ("Stringprefixed", false),
    ] {
        let (status, xml) = publish(&ep, &topic, "m", &[("attr1", ty, "prefixed-1")], &[]).await;
        assert_eq!(status == 200, ok, "{ty:?}: {xml}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_judges_the_topic_and_the_attributes_before_the_protocol() {
    let ep = Endpoint::start().await;
    let topic = create_topic(&ep, "order", &[]).await;
    let (status, code, _) = sns_err(
        &ep,
        "Subscribe",
        &[
            ("TopicArn", &format!("{topic}aaa")),
            ("Protocol", "email"),
            ("Endpoint", "someone@example.com"),
        ],
    )
    .await;
    assert_eq!((status, code.as_str()), (404, "NotFound"));
    let (_, code, message) = sns_err(
        &ep,
        "Subscribe",
        &[
            ("TopicArn", &topic),
            ("Protocol", "sms"),
            ("Endpoint", "+15551234567"),
            ("Attributes.entry.1.key", "FilterPolicy"),
            (
                "Attributes.entry.1.value",
                r#"{"attr": [{"numeric": [">="]}]}"#,
            ),
        ],
    )
    .await;
    assert_eq!(code, "InvalidParameter");
    assert!(
        message.starts_with("Invalid parameter: Attributes Reason: FilterPolicy:"),
        "{message}"
    );
}

/// A publish's `X-Amzn-Trace-Id` header reaches every subscribed queue as the message's
/// `AWSTraceHeader` (recorded: `test_publish_sqs_from_sns_with_xray_propagation`), in the
/// envelope and in a raw delivery alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publishs_trace_header_reaches_its_queues() {
    let ep = Endpoint::start().await;
    let topic = create_topic(&ep, "traced", &[]).await;
    make_queue(&ep, "traced-env").await;
    make_queue(&ep, "traced-raw").await;
    subscribe(&ep, &topic, &queue_arn("traced-env"), &[]).await;
    subscribe(
        &ep,
        &topic,
        &queue_arn("traced-raw"),
        &[("RawMessageDelivery", "true")],
    )
    .await;
    let trace = "Root=1-3152b799-8954dae64eda91bc9a23a7e8;Parent=7fa8c0f79203be72;Sampled=1";
    let body = [
        ("Action", "Publish"),
        ("Version", "2010-03-31"),
        ("TopicArn", topic.as_str()),
        ("Message", "m"),
    ]
    .iter()
    .map(|(k, v)| format!("{}={}", support::form_encode(k), support::form_encode(v)))
    .collect::<Vec<_>>()
    .join("&");
    let (status, _, answer) = ep
        .raw(
            "POST",
            "/",
            &[
                ("content-type", "application/x-www-form-urlencoded"),
                ("x-amzn-trace-id", trace),
            ],
            body,
        )
        .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    for q in ["traced-env", "traced-raw"] {
        let got = drain(&ep, q).await;
        assert_eq!(got.len(), 1, "{q}: {got:?}");
        assert_eq!(
            got[0].payload["s"]["AWSTraceHeader"]["v"], trace,
            "{q}: {got:?}"
        );
    }
    // Without the header, nothing is added.
    publish_ok(&ep, &topic, "plain", &[], &[]).await;
    let got = drain(&ep, "traced-env").await;
    assert!(got[0].payload.get("s").is_none(), "{got:?}");
}

/// A FIFO topic numbers its messages as SNS does (recorded:
/// `test_publish_batch_messages_from_fifo_topic_to_fifo_queue`, `test_message_to_fifo_sqs`):
/// `Publish` answers a `SequenceNumber`, `PublishBatch` one per entry, each larger than the
/// one before; the notification carries it after its MessageId and, as AWS writes a FIFO
/// topic's, no signature fields, only the `UnsubscribeURL`. A standard topic answers none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_topic_numbers_its_messages_and_its_notifications_carry_the_number() {
    let ep = Endpoint::start().await;
    let t = create_topic(
        &ep,
        "numbered.fifo",
        &[("FifoTopic", "true"), ("ContentBasedDeduplication", "true")],
    )
    .await;
    make_queue(&ep, "numbered-q.fifo").await;
    subscribe(&ep, &t, &queue_arn("numbered-q.fifo"), &[]).await;
    let xml = publish_ok_xml(&ep, &t, "one", &[("MessageGroupId", "g")]).await;
    let first = tag(&xml, "SequenceNumber").expect("Publish answers a SequenceNumber");
    assert_eq!(first.len(), 20, "{xml}");
    let batch = sns_ok(
        &ep,
        "PublishBatch",
        &[
            ("TopicArn", &t),
            ("PublishBatchRequestEntries.member.1.Id", "a"),
            ("PublishBatchRequestEntries.member.1.Message", "two"),
            ("PublishBatchRequestEntries.member.1.MessageGroupId", "g"),
            ("PublishBatchRequestEntries.member.2.Id", "b"),
            ("PublishBatchRequestEntries.member.2.Message", "three"),
            ("PublishBatchRequestEntries.member.2.MessageGroupId", "h"),
        ],
    )
    .await;
    let numbers = tags_all(&batch, "SequenceNumber");
    assert_eq!(numbers.len(), 2, "{batch}");
    let all: Vec<u128> = std::iter::once(&first)
        .chain(numbers.iter())
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");
    let got = drain(&ep, "numbered-q.fifo").await;
    assert_eq!(got.len(), 3, "{got:?}");
    for d in &got {
        let n = d.notification();
        let number: u128 = n["SequenceNumber"].as_str().unwrap().parse().unwrap();
        assert!(all.contains(&number), "{n}");
        for absent in ["SignatureVersion", "Signature", "SigningCertURL"] {
            assert!(n.get(absent).is_none(), "{absent} in {n}");
        }
        assert!(
            n["UnsubscribeURL"]
                .as_str()
                .unwrap()
                .contains("?Action=Unsubscribe&SubscriptionArn="),
            "{n}"
        );
        let body = d.body();
        assert!(body.find("\"MessageId\"").unwrap() < body.find("\"SequenceNumber\"").unwrap());
        assert!(body.find("\"SequenceNumber\"").unwrap() < body.find("\"TopicArn\"").unwrap());
    }
    // A standard topic answers none.
    let s = create_topic(&ep, "unnumbered", &[]).await;
    let xml = publish_ok_xml(&ep, &s, "x", &[]).await;
    assert!(tag(&xml, "SequenceNumber").is_none(), "{xml}");
}

/// `Publish` answered 200, whole.
async fn publish_ok_xml(
    ep: &Endpoint,
    topic: &str,
    message: &str,
    extra: &[(&str, &str)],
) -> String {
    let (status, xml) = publish(ep, topic, message, &[], extra).await;
    assert_eq!(status, 200, "{xml}");
    xml
}

/// A subscription whose queue is gone delivers to its `RedrivePolicy`'s dead-letter queue
/// what it would have delivered, enveloped or raw (recorded:
/// `test_redrive_policy_sqs_queue_subscription`, `test_subscription_after_failure_to_deliver`);
/// without a policy nothing is delivered for it, and other subscribers are served as ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_whose_queue_is_gone_delivers_to_its_dead_letter_queue() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "redriven", &[]).await;
    for q in ["gone-env", "gone-raw", "gone-bare", "alive", "sub-dlq"] {
        make_queue(&ep, q).await;
    }
    let policy = format!(r#"{{"deadLetterTargetArn":"{}"}}"#, queue_arn("sub-dlq"));
    subscribe(
        &ep,
        &t,
        &queue_arn("gone-env"),
        &[("RedrivePolicy", &policy)],
    )
    .await;
    subscribe(
        &ep,
        &t,
        &queue_arn("gone-raw"),
        &[("RedrivePolicy", &policy), ("RawMessageDelivery", "true")],
    )
    .await;
    subscribe(&ep, &t, &queue_arn("gone-bare"), &[]).await;
    subscribe(&ep, &t, &queue_arn("alive"), &[]).await;
    // Delivered normally while the queues exist: nothing in the dead-letter queue.
    publish_ok(&ep, &t, "before", &[], &[]).await;
    assert!(drain(&ep, "sub-dlq").await.is_empty());
    for q in ["gone-env", "gone-raw", "gone-bare"] {
        assert_eq!(drain(&ep, q).await.len(), 1, "{q}");
        // Through the endpoint, whose publishes then see the queue gone at once (a delete
        // made behind its back is seen within `QUEEN_SQS_REGISTRY_CACHE_MS`).
        let url = ep.sqs_ok("GetQueueUrl", json!({"QueueName": q})).await["QueueUrl"].clone();
        ep.sqs_ok("DeleteQueue", json!({"QueueUrl": url})).await;
    }
    assert_eq!(drain(&ep, "alive").await.len(), 1);
    publish_ok(&ep, &t, "after", &[("n", "Number", "111")], &[]).await;
    let mut dead = drain(&ep, "sub-dlq").await;
    assert_eq!(
        dead.len(),
        2,
        "one per subscription with a policy: {dead:?}"
    );
    dead.sort_by_key(|d| d.body().starts_with('{'));
    assert_eq!(
        dead[0].body(),
        "after",
        "the raw delivery, as the queue would have had it"
    );
    assert_eq!(
        dead[0].payload["a"]["n"]["v"], "111",
        "{:?}",
        dead[0].payload
    );
    let n = dead[1].notification();
    assert_eq!(n["Message"], "after");
    assert!(
        n["UnsubscribeURL"].as_str().unwrap().contains(":"),
        "the notification names its own subscription: {n}"
    );
    assert_eq!(
        drain(&ep, "alive").await.len(),
        1,
        "other subscribers served as ever"
    );
}

/// A FIFO queue subscribed to a FIFO topic dead-letters into a FIFO queue only (recorded:
/// test_validations_for_fifo, SNS's sentence); a standard queue subscribed to a FIFO topic
/// may name a standard one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_subscription_of_a_fifo_topic_takes_only_a_fifo_dead_letter_queue() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "dlq-rules.fifo", &[("FifoTopic", "true")]).await;
    for q in ["sub.fifo", "sub-std", "dlq-std", "dlq.fifo"] {
        make_queue(&ep, q).await;
    }
    let fifo_sub = subscribe(&ep, &t, &queue_arn("sub.fifo"), &[]).await;
    let std_sub = subscribe(&ep, &t, &queue_arn("sub-std"), &[]).await;
    let policy = |q: &str| format!(r#"{{"deadLetterTargetArn":"{}"}}"#, queue_arn(q));
    let set = |sub: String, value: String| {
        let ep = &ep;
        async move {
            sns(
                ep,
                "SetSubscriptionAttributes",
                &[
                    ("SubscriptionArn", &sub),
                    ("AttributeName", "RedrivePolicy"),
                    ("AttributeValue", &value),
                ],
            )
            .await
        }
    };
    let (status, xml) = set(fifo_sub.clone(), policy("dlq-std")).await;
    assert_eq!(status, 400, "{xml}");
    assert_eq!(
        tag(&xml, "Message").unwrap(),
        "Invalid parameter: RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic."
    );
    assert_eq!(set(fifo_sub, policy("dlq.fifo")).await.0, 200);
    assert_eq!(set(std_sub, policy("dlq-std")).await.0, 200);
}

/// A standard topic passes a publish's `MessageGroupId` on to a standard queue, which
/// answers it back (recorded: test_publish_message_group_id).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standard_topic_passes_the_message_group_id_to_its_queues() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "grouped", &[]).await;
    make_queue(&ep, "grouped-q").await;
    subscribe(&ep, &t, &queue_arn("grouped-q"), &[]).await;
    publish_ok(&ep, &t, "m", &[], &[("MessageGroupId", "my-group-id-1")]).await;
    let got = drain(&ep, "grouped-q").await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        got[0].payload["s"]["queen.groupId"]["v"], "my-group-id-1",
        "{got:?}"
    );
    // A FIFO topic's group is not passed on to a standard queue (recorded:
    // test_fifo_topic_to_regular_sqs).
    let f = create_topic(
        &ep,
        "grouped.fifo",
        &[("FifoTopic", "true"), ("ContentBasedDeduplication", "true")],
    )
    .await;
    subscribe(&ep, &f, &queue_arn("grouped-q"), &[]).await;
    publish_ok(&ep, &f, "f", &[], &[("MessageGroupId", "g")]).await;
    let got = drain(&ep, "grouped-q").await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].payload.get("s").is_none(), "{got:?}");
}
