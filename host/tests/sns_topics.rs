//! SNS topics through the real host over the Query protocol: lifecycle, idempotency,
//! attributes, listing, tags, permissions, and the 404 for an unknown topic.

mod sns_common;
mod support;

use sns_common::*;
use support::Endpoint;

fn arn(name: &str) -> String {
    format!("arn:aws:sns:us-east-1:{ACCOUNT}:{name}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_is_idempotent_in_the_shapes_a_provisioner_uses() {
    let ep = Endpoint::start().await;
    let a = create_topic(&ep, "orders", &[("DisplayName", "Orders")]).await;
    assert_eq!(a, arn("orders"));
    // Same name, no attributes; same name, same attributes: the same ARN.
    assert_eq!(create_topic(&ep, "orders", &[]).await, a);
    assert_eq!(
        create_topic(&ep, "orders", &[("DisplayName", "Orders")]).await,
        a
    );
    // A JSON attribute that differs only in whitespace is the same attribute.
    let p1 = r#"{"Version":"2012-10-17","Statement":[]}"#;
    let p2 = r#"{ "Statement": [], "Version": "2012-10-17" }"#;
    create_topic(&ep, "policied", &[("Policy", p1)]).await;
    create_topic(&ep, "policied", &[("Policy", p2)]).await;
    // A supplied attribute that differs is refused, as AWS refuses it.
    let (status, code, msg) = sns_err(
        &ep,
        "CreateTopic",
        &[
            ("Name", "orders"),
            ("Attributes.entry.1.key", "DisplayName"),
            ("Attributes.entry.1.value", "Other"),
        ],
    )
    .await;
    assert_eq!((status, code.as_str()), (400, "InvalidParameter"));
    assert!(
        msg.contains("Topic already exists with different attributes"),
        "{msg}"
    );
    let xml = sns_ok(&ep, "GetTopicAttributes", &[("TopicArn", &a)]).await;
    assert_eq!(attributes(&xml)["DisplayName"], "Orders");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_and_the_fifo_suffix_must_agree_both_ways() {
    let ep = Endpoint::start().await;
    let f = create_topic(&ep, "events.fifo", &[("FifoTopic", "true")]).await;
    assert_eq!(f, arn("events.fifo"));
    let attrs = attributes(&sns_ok(&ep, "GetTopicAttributes", &[("TopicArn", &f)]).await);
    assert_eq!(attrs["FifoTopic"], "true");
    assert_eq!(attrs["ContentBasedDeduplication"], "false");
    for params in [
        // .fifo without FifoTopic=true
        vec![("Name", "a.fifo")],
        // FifoTopic=true without .fifo
        vec![
            ("Name", "plain"),
            ("Attributes.entry.1.key", "FifoTopic"),
            ("Attributes.entry.1.value", "true"),
        ],
        // bad characters, empty, too long
        vec![("Name", "has space")],
        vec![("Name", "")],
        vec![("Name", "dots.in.name")],
    ] {
        let (status, code, _) = sns_err(&ep, "CreateTopic", &params).await;
        assert_eq!(
            (status, code.as_str()),
            (400, "InvalidParameter"),
            "{params:?}"
        );
    }
    let long = "x".repeat(257);
    let (_, code, _) = sns_err(&ep, "CreateTopic", &[("Name", &long)]).await;
    assert_eq!(code, "InvalidParameter");
    create_topic(&ep, &"y".repeat(256), &[]).await;
    // ContentBasedDeduplication is a FIFO attribute.
    let (_, code, _) = sns_err(
        &ep,
        "CreateTopic",
        &[
            ("Name", "std"),
            ("Attributes.entry.1.key", "ContentBasedDeduplication"),
            ("Attributes.entry.1.value", "true"),
        ],
    )
    .await;
    assert_eq!(code, "InvalidParameter");
    // Data protection policies are not offered.
    let (_, code, msg) = sns_err(
        &ep,
        "CreateTopic",
        &[("Name", "dp"), ("DataProtectionPolicy", "{}")],
    )
    .await;
    assert_eq!(code, "InvalidParameter");
    assert!(msg.contains("DataProtectionPolicy"), "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attributes_read_and_write() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "attrs", &[]).await;
    let a = attributes(&sns_ok(&ep, "GetTopicAttributes", &[("TopicArn", &t)]).await);
    assert_eq!(a["TopicArn"], t);
    assert_eq!(a["Owner"], ACCOUNT);
    assert_eq!(a["SubscriptionsPending"], "0");
    assert_eq!(a["SubscriptionsConfirmed"], "0");
    assert_eq!(a["SubscriptionsDeleted"], "0");
    assert!(a["Policy"].contains(&t), "{}", a["Policy"]);
    assert!(a.contains_key("EffectiveDeliveryPolicy"));
    assert!(!a.contains_key("FifoTopic"));

    sns_ok(
        &ep,
        "SetTopicAttributes",
        &[
            ("TopicArn", &t),
            ("AttributeName", "DisplayName"),
            ("AttributeValue", "Hello"),
        ],
    )
    .await;
    sns_ok(
        &ep,
        "SetTopicAttributes",
        &[
            ("TopicArn", &t),
            ("AttributeName", "TracingConfig"),
            ("AttributeValue", "Active"),
        ],
    )
    .await;
    let a = attributes(&sns_ok(&ep, "GetTopicAttributes", &[("TopicArn", &t)]).await);
    assert_eq!(a["DisplayName"], "Hello");
    assert_eq!(a["TracingConfig"], "Active");

    for (name, value) in [
        ("NoSuchAttribute", "x"),
        ("FifoTopic", "true"),
        ("ContentBasedDeduplication", "true"),
        ("TracingConfig", "Sometimes"),
        ("Policy", "not json"),
        ("SignatureVersion", "3"),
    ] {
        let (status, code, _) = sns_err(
            &ep,
            "SetTopicAttributes",
            &[
                ("TopicArn", &t),
                ("AttributeName", name),
                ("AttributeValue", value),
            ],
        )
        .await;
        assert_eq!((status, code.as_str()), (400, "InvalidParameter"), "{name}");
    }
    // A FIFO topic takes ContentBasedDeduplication.
    let f = create_topic(&ep, "attrs.fifo", &[("FifoTopic", "true")]).await;
    sns_ok(
        &ep,
        "SetTopicAttributes",
        &[
            ("TopicArn", &f),
            ("AttributeName", "ContentBasedDeduplication"),
            ("AttributeValue", "true"),
        ],
    )
    .await;
    let a = attributes(&sns_ok(&ep, "GetTopicAttributes", &[("TopicArn", &f)]).await);
    assert_eq!(a["ContentBasedDeduplication"], "true");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_topic_is_not_found_404() {
    let ep = Endpoint::start().await;
    let ghost = arn("ghost");
    for (action, extra) in [
        ("GetTopicAttributes", vec![]),
        (
            "SetTopicAttributes",
            vec![("AttributeName", "DisplayName"), ("AttributeValue", "x")],
        ),
        ("ListSubscriptionsByTopic", vec![]),
        ("Publish", vec![("Message", "hi")]),
        (
            "Subscribe",
            vec![
                ("Protocol", "sqs"),
                ("Endpoint", "arn:aws:sqs:us-east-1:000000000000:q"),
            ],
        ),
        (
            "AddPermission",
            vec![
                ("Label", "l"),
                ("AWSAccountId.member.1", "111111111111"),
                ("ActionName.member.1", "Publish"),
            ],
        ),
        ("RemovePermission", vec![("Label", "l")]),
    ] {
        let mut params = vec![("TopicArn", ghost.as_str())];
        params.extend(extra);
        let (status, code, msg) = sns_err(&ep, action, &params).await;
        assert_eq!(
            (status, code.as_str()),
            (404, "NotFound"),
            "{action}: {msg}"
        );
    }
    // A malformed or foreign ARN is a bad parameter rather than a missing topic.
    for bad in [
        "orders",
        "arn:aws:sns:us-east-1:999999999999:orders",
        "arn:aws:sqs:us-east-1:000000000000:q",
    ] {
        let (status, code, _) = sns_err(&ep, "GetTopicAttributes", &[("TopicArn", bad)]).await;
        assert_eq!((status, code.as_str()), (400, "InvalidParameter"), "{bad}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_topics_pages_by_one_hundred() {
    let ep = Endpoint::start().await;
    let mut want = Vec::new();
    for i in 0..105 {
        want.push(create_topic(&ep, &format!("t{i:03}"), &[]).await);
    }
    let first = sns_ok(&ep, "ListTopics", &[]).await;
    let mut got = tags_all(&first, "TopicArn");
    assert_eq!(got.len(), 100);
    let token = tag(&first, "NextToken").expect("a second page");
    let second = sns_ok(&ep, "ListTopics", &[("NextToken", &token)]).await;
    assert!(tag(&second, "NextToken").is_none());
    got.extend(tags_all(&second, "TopicArn"));
    want.sort();
    assert_eq!(got, want);
    let (_, code, _) = sns_err(&ep, "ListTopics", &[("NextToken", "bm90LW91cnM")]).await;
    assert_eq!(code, "InvalidParameter");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_is_idempotent_and_cascades_to_subscriptions() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "doomed", &[]).await;
    let keep = create_topic(&ep, "kept", &[]).await;
    let q1 = make_queue(&ep, "dq1").await;
    let q2 = make_queue(&ep, "dq2").await;
    let s1 = subscribe(&ep, &t, &q1, &[]).await;
    subscribe(&ep, &t, &q2, &[]).await;
    let k = subscribe(&ep, &keep, &q1, &[]).await;
    let listed = sns_ok(&ep, "ListSubscriptions", &[]).await;
    assert_eq!(tags_all(&listed, "SubscriptionArn").len(), 3);

    sns_ok(&ep, "DeleteTopic", &[("TopicArn", &t)]).await;
    sns_ok(&ep, "DeleteTopic", &[("TopicArn", &t)]).await; // again: still a success
    let (status, code, _) = sns_err(&ep, "GetTopicAttributes", &[("TopicArn", &t)]).await;
    assert_eq!((status, code.as_str()), (404, "NotFound"));
    let listed = sns_ok(&ep, "ListSubscriptions", &[]).await;
    assert_eq!(tags_all(&listed, "SubscriptionArn"), vec![k]);
    let (status, code, _) = sns_err(
        &ep,
        "GetSubscriptionAttributes",
        &[("SubscriptionArn", &s1)],
    )
    .await;
    assert_eq!((status, code.as_str()), (404, "NotFound"));
    let topics = sns_ok(&ep, "ListTopics", &[]).await;
    assert_eq!(tags_all(&topics, "TopicArn"), vec![keep.clone()]);
    // Recreated under the same name, the topic starts with no subscriptions.
    let again = create_topic(&ep, "doomed", &[]).await;
    let by = sns_ok(&ep, "ListSubscriptionsByTopic", &[("TopicArn", &again)]).await;
    assert!(tags_all(&by, "SubscriptionArn").is_empty(), "{by}");
    // The queues themselves are untouched.
    assert!(broker_queues(&ep).await.contains(&"dq1".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_on_topics() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "tagged", &[]).await;
    let xml = sns_ok(
        &ep,
        "CreateTopic",
        &[
            ("Name", "born-tagged"),
            ("Tags.member.1.Key", "team"),
            ("Tags.member.1.Value", "core"),
        ],
    )
    .await;
    let born = tag(&xml, "TopicArn").unwrap();
    let listed = sns_ok(&ep, "ListTagsForResource", &[("ResourceArn", &born)]).await;
    assert_eq!(tags_all(&listed, "Key"), vec!["team"]);
    assert_eq!(tags_all(&listed, "Value"), vec!["core"]);

    sns_ok(
        &ep,
        "TagResource",
        &[
            ("ResourceArn", &t),
            ("Tags.member.1.Key", "a"),
            ("Tags.member.1.Value", "1"),
            ("Tags.member.2.Key", "b"),
            ("Tags.member.2.Value", "2"),
        ],
    )
    .await;
    sns_ok(
        &ep,
        "TagResource",
        &[
            ("ResourceArn", &t),
            ("Tags.member.1.Key", "a"),
            ("Tags.member.1.Value", "one"),
        ],
    )
    .await;
    sns_ok(
        &ep,
        "UntagResource",
        &[("ResourceArn", &t), ("TagKeys.member.1", "b")],
    )
    .await;
    let listed = sns_ok(&ep, "ListTagsForResource", &[("ResourceArn", &t)]).await;
    assert_eq!(tags_all(&listed, "Key"), vec!["a"]);
    assert_eq!(tags_all(&listed, "Value"), vec!["one"]);

    let ghost = arn("ghost");
    for action in ["ListTagsForResource", "TagResource", "UntagResource"] {
        let (status, code, _) = sns_err(
            &ep,
            action,
            &[
                ("ResourceArn", &ghost),
                ("Tags.member.1.Key", "k"),
                ("Tags.member.1.Value", "v"),
                ("TagKeys.member.1", "k"),
            ],
        )
        .await;
        assert_eq!(
            (status, code.as_str()),
            (404, "ResourceNotFound"),
            "{action}"
        );
    }
    // Key and value limits.
    let long_key = "k".repeat(129);
    let long_value = "v".repeat(257);
    for (k, v) in [
        (long_key.as_str(), "x"),
        ("ok", long_value.as_str()),
        ("aws:reserved", "x"),
    ] {
        let (_, code, _) = sns_err(
            &ep,
            "TagResource",
            &[
                ("ResourceArn", &t),
                ("Tags.member.1.Key", k),
                ("Tags.member.1.Value", v),
            ],
        )
        .await;
        assert_eq!(code, "InvalidParameter", "{k}");
    }
    // Fifty tags per resource.
    let mut params: Vec<(String, String)> = vec![("ResourceArn".into(), t.clone())];
    for i in 0..49 {
        params.push((format!("Tags.member.{}.Key", i + 1), format!("k{i}")));
        params.push((format!("Tags.member.{}.Value", i + 1), "v".into()));
    }
    let refs: Vec<(&str, &str)> = params
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    sns_ok(&ep, "TagResource", &refs).await; // a + 49 = 50
    let (status, code, _) = sns_err(
        &ep,
        "TagResource",
        &[
            ("ResourceArn", &t),
            ("Tags.member.1.Key", "one-too-many"),
            ("Tags.member.1.Value", "v"),
        ],
    )
    .await;
    assert_eq!((status, code.as_str()), (400, "TagLimitExceeded"));
    let listed = sns_ok(&ep, "ListTagsForResource", &[("ResourceArn", &t)]).await;
    assert_eq!(tags_all(&listed, "Key").len(), 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permissions_are_validated_and_enforced_by_nothing() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "perm", &[]).await;
    sns_ok(
        &ep,
        "AddPermission",
        &[
            ("TopicArn", &t),
            ("Label", "l1"),
            ("AWSAccountId.member.1", "111111111111"),
            ("ActionName.member.1", "Publish"),
        ],
    )
    .await;
    sns_ok(
        &ep,
        "RemovePermission",
        &[("TopicArn", &t), ("Label", "l1")],
    )
    .await;
    let (_, code, _) = sns_err(
        &ep,
        "AddPermission",
        &[
            ("TopicArn", &t),
            ("AWSAccountId.member.1", "111111111111"),
            ("ActionName.member.1", "Publish"),
        ],
    )
    .await;
    assert_eq!(code, "InvalidParameter");
    let (_, code, _) = sns_err(&ep, "AddPermission", &[("TopicArn", &t), ("Label", "l")]).await;
    assert_eq!(code, "InvalidParameter");
    // The SNS error dialect: the SNS namespace, and no SQS legacy code.
    let (_, xml) = sns(
        &ep,
        "RemovePermission",
        &[("TopicArn", &arn("nope")), ("Label", "l")],
    )
    .await;
    assert!(
        xml.contains("http://sns.amazonaws.com/doc/2010-03-31/"),
        "{xml}"
    );
    assert!(xml.contains("<Code>NotFound</Code>"), "{xml}");
}
