//! Input that would come back in an XML answer is validated as AWS validates it, so every
//! Query/XML answer stays well-formed: tags (SQS and SNS), a topic's DisplayName, and an
//! SNS message (which a raw subscription hands to SQS and on to Query clients as XML).

mod sns_common;
mod support;

use serde_json::json;
use sns_common::*;
use support::Endpoint;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_tags_outside_awss_characters_are_refused() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("tagged", json!({})).await;
    for (k, v) in [
        ("ok", "bad\u{1}value"),
        ("bad\u{0}key", "v"),
        ("semi;colon", "v"),
    ] {
        let (status, ty) = ep
            .sqs_err("TagQueue", json!({"QueueUrl": url, "Tags": {k: v}}))
            .await;
        assert_eq!(
            (status, ty.as_str()),
            (400, "InvalidParameterValueException"),
            "{k:?}={v:?}"
        );
    }
    let (_, ty) = ep
        .sqs_err(
            "CreateQueue",
            json!({"QueueName": "t2", "tags": {"x": "\u{7}"}}),
        )
        .await;
    assert_eq!(ty, "InvalidParameterValueException");
    ep.sqs_ok(
        "TagQueue",
        json!({"QueueUrl": url, "Tags": {"team:eu/1": "ops = core@x"}}),
    )
    .await;
    let (status, xml) = ep
        .query(
            "/",
            &[
                ("Action", "ListQueueTags"),
                ("QueueUrl", &url),
                ("Version", "2012-11-05"),
            ],
        )
        .await;
    assert_eq!(status, 200, "{xml}");
    assert!(xml.contains("ops = core@x"), "{xml}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_tags_display_names_and_messages_with_forbidden_characters_are_refused() {
    let ep = Endpoint::start().await;
    let arn = create_topic(&ep, "plain", &[]).await;
    let (status, xml) = sns(
        &ep,
        "TagResource",
        &[
            ("ResourceArn", &arn),
            ("Tags.member.1.Key", "k"),
            ("Tags.member.1.Value", "a\u{1}b"),
        ],
    )
    .await;
    assert_eq!(status, 400, "{xml}");
    assert!(xml.contains("<Code>InvalidParameter</Code>"), "{xml}");

    let (status, xml) = sns(
        &ep,
        "SetTopicAttributes",
        &[
            ("TopicArn", &arn),
            ("AttributeName", "DisplayName"),
            ("AttributeValue", "x\u{0}y"),
        ],
    )
    .await;
    assert_eq!(status, 400, "{xml}");
    assert!(xml.contains("<Code>InvalidParameter</Code>"), "{xml}");

    let (status, xml) = sns(
        &ep,
        "Publish",
        &[("TopicArn", &arn), ("Message", "bell\u{7}")],
    )
    .await;
    assert_eq!(status, 400, "{xml}");
    assert!(xml.contains("<Code>InvalidParameter</Code>"), "{xml}");

    // What was accepted reads back as well-formed XML.
    sns_ok(
        &ep,
        "SetTopicAttributes",
        &[
            ("TopicArn", &arn),
            ("AttributeName", "DisplayName"),
            ("AttributeValue", "Ops & <Alerts>"),
        ],
    )
    .await;
    let xml = sns_ok(&ep, "GetTopicAttributes", &[("TopicArn", &arn)]).await;
    assert!(xml.contains("Ops &amp; &lt;Alerts&gt;"), "{xml}");
}
