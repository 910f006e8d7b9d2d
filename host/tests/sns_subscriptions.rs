//! SNS subscriptions through the real host: sqs (http/https in `sns_http`), the other
//! protocols refused by name, the
//! endpoint rules, idempotency both ways, attributes and filter-policy validation,
//! confirmation refusal, unsubscribe, listings.

mod sns_common;
mod support;

use sns_common::*;
use support::Endpoint;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqs_is_accepted_and_protocols_without_a_delivery_are_refused_by_name() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "t", &[]).await;
    let q = make_queue(&ep, "q").await;
    // http and https take a URL of their own scheme, not a queue's ARN.
    for protocol in ["http", "https"] {
        let (status, code, msg) = sns_err(
            &ep,
            "Subscribe",
            &[("TopicArn", &t), ("Protocol", protocol), ("Endpoint", &q)],
        )
        .await;
        assert_eq!((status, code.as_str()), (400, "InvalidParameter"));
        assert!(
            msg.contains("Endpoint must match the specified protocol"),
            "{protocol}: {msg}"
        );
    }
    for protocol in ["email", "lambda", "sms", "carrier-pigeon"] {
        let (status, code, msg) = sns_err(
            &ep,
            "Subscribe",
            &[("TopicArn", &t), ("Protocol", protocol), ("Endpoint", &q)],
        )
        .await;
        assert_eq!((status, code.as_str()), (400, "InvalidParameter"));
        assert!(msg.contains(protocol), "{protocol}: {msg}");
    }
    let arn = subscribe(&ep, &t, &q, &[]).await;
    assert!(arn.starts_with(&format!("{t}:")), "{arn}");
    let a = attributes(
        &sns_ok(
            &ep,
            "GetSubscriptionAttributes",
            &[("SubscriptionArn", &arn)],
        )
        .await,
    );
    assert_eq!(a["SubscriptionArn"], arn);
    assert_eq!(a["TopicArn"], t);
    assert_eq!(a["Protocol"], "sqs");
    assert_eq!(a["Endpoint"], q);
    assert_eq!(a["Owner"], ACCOUNT);
    assert_eq!(a["PendingConfirmation"], "false");
    assert_eq!(a["ConfirmationWasAuthenticated"], "true");
    assert_eq!(a["RawMessageDelivery"], "false");
    assert!(
        !a.contains_key("FilterPolicy") && !a.contains_key("FilterPolicyScope"),
        "{a:?}"
    );
    let ta = attributes(&sns_ok(&ep, "GetTopicAttributes", &[("TopicArn", &t)]).await);
    assert_eq!(ta["SubscriptionsConfirmed"], "1");
    assert_eq!(ta["SubscriptionsPending"], "0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_endpoint_must_be_a_queue_arn_of_ours() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "t", &[]).await;
    for endpoint in [
        "not-an-arn",
        "arn:aws:sqs:us-east-1:999999999999:q", // another account
        "",
    ] {
        let (status, code, _) = sns_err(
            &ep,
            "Subscribe",
            &[
                ("TopicArn", &t),
                ("Protocol", "sqs"),
                ("Endpoint", endpoint),
            ],
        )
        .await;
        assert_eq!(
            (status, code.as_str()),
            (400, "InvalidParameter"),
            "{endpoint}"
        );
    }
    // A standard topic refuses a FIFO queue, and says why; a FIFO topic takes both kinds.
    let fq = make_queue(&ep, "q.fifo").await;
    let sq = make_queue(&ep, "std").await;
    let (_, code, msg) = sns_err(
        &ep,
        "Subscribe",
        &[("TopicArn", &t), ("Protocol", "sqs"), ("Endpoint", &fq)],
    )
    .await;
    assert_eq!(code, "InvalidParameter");
    assert!(msg.contains("FIFO"), "{msg}");
    let ft = create_topic(&ep, "t.fifo", &[("FifoTopic", "true")]).await;
    subscribe(&ep, &ft, &fq, &[]).await;
    subscribe(&ep, &ft, &sq, &[]).await;
    // A queue that does not exist yet is subscribed, as SNS subscribes it (recorded:
    // test_subscribe_unknown_sqs_queue): nothing is delivered until it exists, then it is.
    let later = subscribe(&ep, &t, "arn:aws:sqs:us-east-1:000000000000:later", &[]).await;
    assert!(later.starts_with(&t), "{later}");
    publish_ok(&ep, &t, "before", &[], &[]).await;
    make_queue(&ep, "later").await;
    assert!(drain(&ep, "later").await.is_empty());
    publish_ok(&ep, &t, "after", &[], &[]).await;
    let got = drain(&ep, "later").await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].notification()["Message"], "after");
    // A FIFO queue's name still cannot subscribe to a standard topic, existing or not.
    let (_, code, _) = sns_err(
        &ep,
        "Subscribe",
        &[
            ("TopicArn", &t),
            ("Protocol", "sqs"),
            ("Endpoint", "arn:aws:sqs:us-east-1:000000000000:later.fifo"),
        ],
    )
    .await;
    assert_eq!(code, "InvalidParameter");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_is_idempotent_per_topic_and_endpoint_both_ways() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "t", &[]).await;
    let q = make_queue(&ep, "q").await;
    let policy = r#"{"kind":["a"]}"#;
    let first = subscribe(
        &ep,
        &t,
        &q,
        &[("RawMessageDelivery", "true"), ("FilterPolicy", policy)],
    )
    .await;
    // The same attributes, or none, or a subset: the existing ARN.
    assert_eq!(
        subscribe(
            &ep,
            &t,
            &q,
            &[("RawMessageDelivery", "true"), ("FilterPolicy", policy)]
        )
        .await,
        first
    );
    assert_eq!(subscribe(&ep, &t, &q, &[]).await, first);
    assert_eq!(
        subscribe(&ep, &t, &q, &[("FilterPolicy", r#"{ "kind": [ "a" ] }"#)]).await,
        first
    );
    // Different attributes: AWS's refusal.
    for (k, v) in [
        ("RawMessageDelivery", "false"),
        ("FilterPolicy", r#"{"kind":["b"]}"#),
    ] {
        let (status, code, msg) = sns_err(
            &ep,
            "Subscribe",
            &[
                ("TopicArn", &t),
                ("Protocol", "sqs"),
                ("Endpoint", &q),
                ("Attributes.entry.1.key", k),
                ("Attributes.entry.1.value", v),
            ],
        )
        .await;
        assert_eq!((status, code.as_str()), (400, "InvalidParameter"));
        assert_eq!(msg, "Invalid parameter: Attributes Reason: Subscription already exists with different attributes");
    }
    let listed = sns_ok(&ep, "ListSubscriptionsByTopic", &[("TopicArn", &t)]).await;
    assert_eq!(tags_all(&listed, "SubscriptionArn"), vec![first.clone()]);
    // After an unsubscribe the same endpoint subscribes afresh, under a new ARN.
    sns_ok(&ep, "Unsubscribe", &[("SubscriptionArn", &first)]).await;
    let second = subscribe(&ep, &t, &q, &[]).await;
    assert_ne!(second, first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirm_subscription_always_fails_naming_the_token() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "t", &[]).await;
    let (status, code, msg) = sns_err(
        &ep,
        "ConfirmSubscription",
        &[("TopicArn", &t), ("Token", "abc")],
    )
    .await;
    assert_eq!((status, code.as_str()), (400, "InvalidParameter"));
    assert!(msg.contains("Token"), "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscription_attributes_and_filter_policy_validation() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "t", &[]).await;
    let q = make_queue(&ep, "q").await;
    let s = subscribe(&ep, &t, &q, &[]).await;
    let set = |name: &'static str, value: String| {
        let s = s.clone();
        let ep = &ep;
        async move {
            sns(
                ep,
                "SetSubscriptionAttributes",
                &[
                    ("SubscriptionArn", &s),
                    ("AttributeName", name),
                    ("AttributeValue", &value),
                ],
            )
            .await
        }
    };
    let get = || async {
        attributes(&sns_ok(&ep, "GetSubscriptionAttributes", &[("SubscriptionArn", &s)]).await)
    };

    assert_eq!(set("RawMessageDelivery", "true".into()).await.0, 200);
    assert_eq!(get().await["RawMessageDelivery"], "true");
    let (status, xml) = set("RawMessageDelivery", "maybe".into()).await;
    assert_eq!(status, 400, "{xml}");

    assert_eq!(
        set("FilterPolicy", r#"{"color":["red"]}"#.into()).await.0,
        200
    );
    let a = get().await;
    assert_eq!(a["FilterPolicy"], r#"{"color":["red"]}"#);
    assert_eq!(a["FilterPolicyScope"], "MessageAttributes");
    // Invalid policies are refused at write, with the engine's AWS message.
    for bad in [
        r#"{"color":"red"}"#,
        "not json",
        r#"{"n":[{"numeric":[">"]}]}"#,
    ] {
        let (status, xml) = set("FilterPolicy", bad.into()).await;
        assert_eq!(status, 400, "{bad}");
        assert!(
            tag(&xml, "Message")
                .unwrap()
                .starts_with("Invalid parameter: "),
            "{xml}"
        );
    }
    assert_eq!(get().await["FilterPolicy"], r#"{"color":["red"]}"#);
    // A nested policy needs the body scope: refused under attributes, accepted after.
    let nested = r#"{"order":{"kind":["x"]}}"#.to_string();
    assert_eq!(set("FilterPolicy", nested.clone()).await.0, 400);
    assert_eq!(set("FilterPolicyScope", "MessageBody".into()).await.0, 200);
    assert_eq!(set("FilterPolicy", nested.clone()).await.0, 200);
    assert_eq!(get().await["FilterPolicyScope"], "MessageBody");
    // ...and the scope cannot go back while the nested policy is there.
    assert_eq!(
        set("FilterPolicyScope", "MessageAttributes".into()).await.0,
        400
    );
    assert_eq!(set("FilterPolicyScope", "Elsewhere".into()).await.0, 400);
    // An empty policy removes it, and with it the reported scope.
    assert_eq!(set("FilterPolicy", "".into()).await.0, 200);
    let a = get().await;
    assert!(
        !a.contains_key("FilterPolicy") && !a.contains_key("FilterPolicyScope"),
        "{a:?}"
    );

    assert_eq!(
        set(
            "RedrivePolicy",
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq"}"#.into()
        )
        .await
        .0,
        200
    );
    assert_eq!(
        set("DeliveryPolicy", r#"{"healthyRetryPolicy":{}}"#.into())
            .await
            .0,
        200
    );
    let a = get().await;
    assert!(a["RedrivePolicy"].contains("dlq"));
    assert!(a.contains_key("DeliveryPolicy"));
    assert_eq!(set("Unknown", "x".into()).await.0, 400);
    // Subscribe validates its attributes the same way.
    let q2 = make_queue(&ep, "q2").await;
    let (_, code, _) = sns_err(
        &ep,
        "Subscribe",
        &[
            ("TopicArn", &t),
            ("Protocol", "sqs"),
            ("Endpoint", &q2),
            ("Attributes.entry.1.key", "FilterPolicy"),
            ("Attributes.entry.1.value", "[1]"),
        ],
    )
    .await;
    assert_eq!(code, "InvalidParameter");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsubscribe_and_unknown_subscriptions() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "t", &[]).await;
    let q = make_queue(&ep, "q").await;
    let s = subscribe(&ep, &t, &q, &[]).await;
    sns_ok(&ep, "Unsubscribe", &[("SubscriptionArn", &s)]).await;
    // Gone: reads are NotFound, a second unsubscribe is still a success.
    let (status, code, _) =
        sns_err(&ep, "GetSubscriptionAttributes", &[("SubscriptionArn", &s)]).await;
    assert_eq!((status, code.as_str()), (404, "NotFound"));
    let (status, code, _) = sns_err(
        &ep,
        "SetSubscriptionAttributes",
        &[
            ("SubscriptionArn", &s),
            ("AttributeName", "RawMessageDelivery"),
            ("AttributeValue", "true"),
        ],
    )
    .await;
    assert_eq!((status, code.as_str()), (404, "NotFound"));
    sns_ok(&ep, "Unsubscribe", &[("SubscriptionArn", &s)]).await;
    for bad in [
        t.as_str(),
        "nonsense",
        "arn:aws:sns:us-east-1:000000000000:t:not-a-uuid",
    ] {
        let (status, code, _) = sns_err(&ep, "Unsubscribe", &[("SubscriptionArn", bad)]).await;
        assert_eq!((status, code.as_str()), (400, "InvalidParameter"), "{bad}");
    }
    // The queue is untouched.
    assert!(broker_queues(&ep).await.contains(&"q".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listings_page_by_one_hundred() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "wide", &[]).await;
    let other = create_topic(&ep, "other", &[]).await;
    let names: Vec<String> = (0..103).map(|i| format!("w{i:03}")).collect();
    make_queues(&ep, &names, 1).await;
    let mut want = Vec::new();
    for n in &names {
        want.push(subscribe(&ep, &t, &queue_arn(n), &[]).await);
    }
    let o = subscribe(&ep, &other, &queue_arn("w000"), &[]).await;

    let mut got = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut params = vec![("TopicArn", t.as_str())];
        if let Some(tk) = &token {
            params.push(("NextToken", tk.as_str()));
        }
        let xml = sns_ok(&ep, "ListSubscriptionsByTopic", &params).await;
        got.extend(tags_all(&xml, "SubscriptionArn"));
        for e in tags_all(&xml, "TopicArn").iter().skip(1) {
            assert_eq!(e, &t);
        }
        pages += 1;
        token = tag(&xml, "NextToken");
        if token.is_none() {
            break;
        }
    }
    assert_eq!(pages, 2);
    got.sort();
    want.sort();
    assert_eq!(got, want);

    let first = sns_ok(&ep, "ListSubscriptions", &[]).await;
    let mut all = tags_all(&first, "SubscriptionArn");
    assert_eq!(all.len(), 100);
    let second = sns_ok(
        &ep,
        "ListSubscriptions",
        &[("NextToken", &tag(&first, "NextToken").unwrap())],
    )
    .await;
    all.extend(tags_all(&second, "SubscriptionArn"));
    assert_eq!(all.len(), 104);
    assert!(all.contains(&o));
    assert!(tags_all(&first, "Protocol").iter().all(|p| p == "sqs"));
}
