//! Issue 24: SNS `http`/`https` subscriptions, against real HTTP receivers (a small server
//! of this file): confirmation by token and by a GET of `SubscribeURL`, notifications and
//! raw delivery, filter policies, unsubscribe by URL, retries by the delivery policy, the
//! dead-letter queue after the last retry, a replica gone between publish and delivery, the
//! allowed-hosts refusal, and signatures checked by OpenSSL. The host's delivery loop makes
//! the POSTs (`queen_sqs_host::serve::DeliveryLoop`).

mod sns_common;
mod sns_receiver;
mod support;

use serde_json::Value;
use sns_common::*;
use sns_receiver::Receiver;
use std::time::{Duration, Instant};
use support::{Endpoint, HANDLE_SECRET};

/// Subscribes `url` over http; answers what `Subscribe` answered.
async fn subscribe_http(
    ep: &Endpoint,
    topic: &str,
    url: &str,
    attrs: &[(&str, &str)],
) -> (u16, String) {
    let params = subscribe_params(topic, "http", url, attrs);
    sns(ep, "Subscribe", &borrowed(&params)).await
}

/// Subscribes and confirms with the token the confirmation carried; answers the ARN.
async fn subscribe_confirmed(
    ep: &Endpoint,
    topic: &str,
    r: &Receiver,
    path: &str,
    attrs: &[(&str, &str)],
) -> String {
    let before = r.got("SubscriptionConfirmation").len();
    let (status, xml) = subscribe_http(ep, topic, &r.url(path), attrs).await;
    assert_eq!(status, 200, "{xml}");
    let confirmations = r
        .wait_for(
            "SubscriptionConfirmation",
            before + 1,
            Duration::from_secs(20),
        )
        .await;
    let token = confirmations.last().unwrap().json()["Token"]
        .as_str()
        .unwrap()
        .to_string();
    let xml = sns_ok(
        ep,
        "ConfirmSubscription",
        &[("TopicArn", topic), ("Token", &token)],
    )
    .await;
    tag(&xml, "SubscriptionArn").expect("SubscriptionArn")
}

/// An endpoint (SigV4 off) with the host's delivery loop running, as the binary runs it.
async fn start() -> Endpoint {
    Endpoint::with_env(&[
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_SNS_POSTS_IN_FLIGHT", "160"),
    ])
    .await
}

/// The subscription's `ConfirmationWasAuthenticated`.
async fn confirmation_was_authenticated(ep: &Endpoint, arn: &str) -> String {
    let xml = sns_ok(ep, "GetSubscriptionAttributes", &[("SubscriptionArn", arn)]).await;
    attributes(&xml)["ConfirmationWasAuthenticated"].clone()
}

/// GET of a URL on `ep` with no credentials: (status, body).
async fn get(ep: &Endpoint, url: &str) -> (u16, String) {
    let path = url.strip_prefix(&ep.url).unwrap_or(url);
    let (status, _, body) = ep.raw("GET", path, &[], Vec::new()).await;
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_is_pending_until_confirmed_and_then_gets_notifications() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-confirm", &[]).await;
    let (status, xml) = subscribe_http(&ep, &topic, &r.url("/hook"), &[]).await;
    assert_eq!(status, 200, "{xml}");
    assert_eq!(
        tag(&xml, "SubscriptionArn").as_deref(),
        Some("pending confirmation")
    );
    let c = r
        .wait_for("SubscriptionConfirmation", 1, Duration::from_secs(20))
        .await;
    let doc = c[0].json();
    assert_eq!(doc["Type"], "SubscriptionConfirmation");
    assert_eq!(doc["TopicArn"], topic.as_str());
    assert_eq!(c[0].headers.get("x-amz-sns-topic-arn"), Some(&topic));
    assert!(
        c[0].headers["content-type"].starts_with("text/plain"),
        "{:?}",
        c[0].headers
    );
    for field in [
        "Token",
        "SubscribeURL",
        "Message",
        "MessageId",
        "Timestamp",
        "Signature",
        "SigningCertURL",
    ] {
        assert!(
            doc[field].as_str().is_some_and(|v| !v.is_empty()),
            "{field}: {doc}"
        );
    }
    // Pending: listed so, counted so, and delivered nothing.
    let listed = sns_ok(&ep, "ListSubscriptionsByTopic", &[("TopicArn", &topic)]).await;
    assert_eq!(
        tag(&listed, "SubscriptionArn").as_deref(),
        Some("PendingConfirmation")
    );
    let attrs = attributes(&sns_ok(&ep, "GetTopicAttributes", &[("TopicArn", &topic)]).await);
    assert_eq!(
        (
            attrs["SubscriptionsPending"].as_str(),
            attrs["SubscriptionsConfirmed"].as_str()
        ),
        ("1", "0")
    );
    publish_ok(&ep, &topic, "before confirmation", &[], &[]).await;
    // A token it did not issue confirms nothing.
    let (_, code, _) = sns_err(
        &ep,
        "ConfirmSubscription",
        &[("TopicArn", &topic), ("Token", "00ff")],
    )
    .await;
    assert_eq!(code, "InvalidParameter");
    let token = doc["Token"].as_str().unwrap();
    let xml = sns_ok(
        &ep,
        "ConfirmSubscription",
        &[("TopicArn", &topic), ("Token", token)],
    )
    .await;
    let arn = tag(&xml, "SubscriptionArn").unwrap();
    assert!(arn.starts_with(&format!("{topic}:")), "{arn}");
    // A repeat answers the same subscription.
    let again = sns_ok(
        &ep,
        "ConfirmSubscription",
        &[("TopicArn", &topic), ("Token", token)],
    )
    .await;
    assert_eq!(
        tag(&again, "SubscriptionArn").as_deref(),
        Some(arn.as_str())
    );
    let sub = attributes(
        &sns_ok(
            &ep,
            "GetSubscriptionAttributes",
            &[("SubscriptionArn", &arn)],
        )
        .await,
    );
    assert_eq!(sub["PendingConfirmation"], "false");
    let id = publish_ok(
        &ep,
        &topic,
        "after confirmation",
        &[("k", "String", "v")],
        &[("Subject", "s")],
    )
    .await;
    let n = r.wait_for("Notification", 1, Duration::from_secs(20)).await;
    // Settle: the message published while pending never arrives.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let n2 = r.got("Notification");
    assert_eq!(n2.len(), 1, "{n2:?}");
    let doc = n[0].json();
    assert_eq!(doc["Message"], "after confirmation");
    assert_eq!(doc["MessageId"], id.as_str());
    assert_eq!(doc["Subject"], "s");
    assert_eq!(doc["MessageAttributes"]["k"]["Value"], "v");
    assert_eq!(n[0].headers.get("x-amz-sns-message-id"), Some(&id));
    assert_eq!(n[0].headers.get("x-amz-sns-subscription-arn"), Some(&arn));
    assert_eq!(n[0].headers.get("x-amz-sns-topic-arn"), Some(&topic));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_of_the_subscribe_url_confirms_and_of_the_unsubscribe_url_ends_it() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-links", &[]).await;
    subscribe_http(&ep, &topic, &r.url("/links"), &[]).await;
    let c = r
        .wait_for("SubscriptionConfirmation", 1, Duration::from_secs(20))
        .await;
    let url = c[0].json()["SubscribeURL"].as_str().unwrap().to_string();
    assert!(url.starts_with(&ep.url), "{url}");
    let (status, body) = get(&ep, &url).await;
    assert_eq!(status, 200, "{body}");
    let arn = tag(&body, "SubscriptionArn").unwrap();
    // Confirmed by a link, not by a call.
    assert_eq!(confirmation_was_authenticated(&ep, &arn).await, "false");
    publish_ok(&ep, &topic, "one", &[], &[]).await;
    let n = r.wait_for("Notification", 1, Duration::from_secs(20)).await;
    let unsubscribe = n[0].json()["UnsubscribeURL"].as_str().unwrap().to_string();
    assert!(
        unsubscribe.contains(&arn.replace(':', "%3A")) || unsubscribe.contains(&arn),
        "{unsubscribe}"
    );
    let (status, body) = get(&ep, &unsubscribe).await;
    assert_eq!(status, 200, "{body}");
    publish_ok(&ep, &topic, "two", &[], &[]).await;
    // Removed by a link: the endpoint is told, with a link that restores it.
    let u = r
        .wait_for("UnsubscribeConfirmation", 1, Duration::from_secs(20))
        .await;
    let doc = u[0].json();
    assert_eq!(doc["Type"], "UnsubscribeConfirmation");
    assert_eq!(doc["TopicArn"], topic.as_str());
    assert!(doc["Message"].as_str().unwrap().contains(&arn), "{doc}");
    for field in [
        "Token",
        "SubscribeURL",
        "Signature",
        "SigningCertURL",
        "MessageId",
    ] {
        assert!(
            doc[field].as_str().is_some_and(|v| !v.is_empty()),
            "{field}: {doc}"
        );
    }
    assert_eq!(r.got("Notification").len(), 1);
    let listed = sns_ok(&ep, "ListSubscriptionsByTopic", &[("TopicArn", &topic)]).await;
    assert!(tag(&listed, "SubscriptionArn").is_none(), "{listed}");
    let (status, body) = get(&ep, doc["SubscribeURL"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{body}");
    // Restored under a new ARN: "two", published while it was removed, is never delivered.
    let restored = tag(&body, "SubscriptionArn").unwrap();
    assert!(
        restored.starts_with(&format!("{topic}:")) && restored != arn,
        "{restored}"
    );
    publish_ok(&ep, &topic, "three", &[], &[]).await;
    let n = r.wait_for("Notification", 2, Duration::from_secs(20)).await;
    assert_eq!(n[1].json()["Message"], "three");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        r.got("Notification").len(),
        2,
        "{:?}",
        r.got("Notification")
    );
    // Followed again, the link answers the restored subscription.
    let (status, _) = get(&ep, doc["SubscribeURL"].as_str().unwrap()).await;
    assert_eq!(
        status, 200,
        "the restored subscription confirms again as itself"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_delivery_posts_the_message_alone_and_filter_policies_apply() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-raw", &[]).await;
    let policy = r#"{"colour":["blue"]}"#;
    subscribe_confirmed(
        &ep,
        &topic,
        &r,
        "/raw",
        &[("RawMessageDelivery", "true"), ("FilterPolicy", policy)],
    )
    .await;
    publish_ok(&ep, &topic, "red one", &[("colour", "String", "red")], &[]).await;
    publish_ok(
        &ep,
        &topic,
        "{\"blue\": \"one\"}",
        &[("colour", "String", "blue")],
        &[],
    )
    .await;
    let n = r.wait_for("Notification", 1, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(r.got("Notification").len(), 1);
    assert_eq!(n[0].body, "{\"blue\": \"one\"}");
    assert_eq!(
        n[0].headers
            .get("x-amz-sns-rawdelivery")
            .map(String::as_str),
        Some("true")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_receiver_is_retried_after_the_policys_delays_until_it_takes_the_message() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-retry", &[]).await;
    let policy = r#"{"healthyRetryPolicy":{"numRetries":3,"minDelayTarget":2,"maxDelayTarget":2,"backoffFunction":"linear"}}"#;
    subscribe_confirmed(&ep, &topic, &r, "/retry", &[("DeliveryPolicy", policy)]).await;
    r.fail_notifications(2);
    publish_ok(&ep, &topic, "third time lucky", &[], &[]).await;
    let n = r.wait_for("Notification", 3, Duration::from_secs(30)).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let all = r.got("Notification");
    assert_eq!(
        all.iter().map(|x| x.status).collect::<Vec<_>>(),
        vec![500, 500, 200],
        "{all:?}"
    );
    for pair in n.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(gap >= Duration::from_millis(1800), "retried after {gap:?}");
    }
    assert_eq!(n[2].json()["Message"], "third time lucky");
    // Every attempt is the same message.
    assert!(n
        .iter()
        .all(|x| x.json()["MessageId"] == n[0].json()["MessageId"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_hangs_does_not_hold_up_another() {
    let ep = start().await;
    let (slow, quick) = (Receiver::start().await, Receiver::start().await);
    let topic = create_topic(&ep, "hooks-hang", &[]).await;
    subscribe_confirmed(&ep, &topic, &slow, "/slow", &[]).await;
    subscribe_confirmed(&ep, &topic, &quick, "/quick", &[]).await;
    slow.hang(Duration::from_secs(60));
    for round in 0..3 {
        let sent = Instant::now();
        for i in 0..12 {
            publish_ok(&ep, &topic, &format!("r{round}-{i}"), &[], &[]).await;
        }
        // The quick subscriber gets every round before the slow one's first POST could
        // have timed out (15 s): held behind it, no round would arrive sooner. (A 6 s bound
        // failed once in a fresh-clone run at load average 17, every POST on time.)
        quick
            .wait_for("Notification", 12 * (round + 1), Duration::from_secs(14))
            .await;
        let took = sent.elapsed();
        assert!(
            took < Duration::from_secs(14),
            "round {round} took {took:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_last_retry_a_notification_goes_to_the_dead_letter_queue() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-dlq", &[]).await;
    make_queue(&ep, "hooks-dlq-dead").await;
    let policy = r#"{"healthyRetryPolicy":{"numRetries":1,"minDelayTarget":1,"maxDelayTarget":1}}"#;
    let redrive = format!(
        r#"{{"deadLetterTargetArn":"{}"}}"#,
        queue_arn("hooks-dlq-dead")
    );
    subscribe_confirmed(
        &ep,
        &topic,
        &r,
        "/dlq",
        &[("DeliveryPolicy", policy), ("RedrivePolicy", &redrive)],
    )
    .await;
    r.fail_notifications(usize::MAX);
    publish_ok(&ep, &topic, "never taken", &[], &[]).await;
    r.wait_for("Notification", 2, Duration::from_secs(30)).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let dead = loop {
        let got = drain(&ep, "hooks-dlq-dead").await;
        if !got.is_empty() || Instant::now() > deadline {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0].notification()["Message"], "never taken");
    tokio::time::sleep(Duration::from_millis(2000)).await;
    // The first attempt and one retry, no more.
    assert_eq!(r.got("Notification").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_is_delivered_by_another_replica_when_the_one_that_answered_is_gone() {
    // The replica that answers the publish delivers nothing (its loop is off); it is then
    // stopped, and a replica started afterwards over the same broker delivers.
    let a = Endpoint::with_env(&[
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_SNS_POSTS_IN_FLIGHT", "0"),
    ])
    .await;
    let r = Receiver::start().await;
    let topic = create_topic(&a, "hooks-replica", &[]).await;
    // Confirmed through the route of a replica that delivers.
    let env = |in_flight: &str| {
        let mut env = vec![
            ("QUEEN_URL".to_string(), a.broker.url()),
            ("QUEEN_SQS_HANDLE_SECRET".into(), HANDLE_SECRET.into()),
            ("QUEEN_SQS_AUTH".into(), "off".into()),
            ("QUEEN_SQS_SNS_POSTS_IN_FLIGHT".into(), in_flight.into()),
        ];
        if a.broker.embedded().is_some() {
            env.push(("QUEEN_TOKEN".into(), support::BROKER_TOKEN.into()));
        }
        env
    };
    let confirmer = Endpoint::serve_remote(env("160"), a.broker.clone(), a.data_dir.clone()).await;
    subscribe_confirmed(&confirmer, &topic, &r, "/replica", &[]).await;
    drop(confirmer);
    // Its loop is stopped; a long poll of the route it had begun may still be served.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    for i in 0..5 {
        publish_ok(&a, &topic, &format!("m{i}"), &[], &[]).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        r.got("Notification").is_empty(),
        "{:?}",
        r.got("Notification")
    );
    let (broker, data_dir, env_b) = (a.broker.clone(), a.data_dir.clone(), env("160"));
    drop(a);
    let b = Endpoint::serve_remote(env_b, broker, data_dir).await;
    let n = r.wait_for("Notification", 5, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut bodies: Vec<String> = r
        .got("Notification")
        .iter()
        .map(|x| x.json()["Message"].as_str().unwrap().to_string())
        .collect();
    bodies.sort();
    assert_eq!(
        bodies,
        (0..5).map(|i| format!("m{i}")).collect::<Vec<_>>(),
        "{n:?}"
    );
    // Counted by the replica that made them, by type and outcome (never by subscriber).
    let (status, _, metrics) = b.raw("GET", "/metrics", &[], Vec::new()).await;
    assert_eq!(status, 200);
    let metrics = String::from_utf8_lossy(&metrics);
    assert!(
        metrics.contains("queen_sqs_sns_http_posts_total{type=\"Notification\",outcome=\"2xx\"} 5"),
        "{metrics}"
    );
    assert!(
        !metrics.contains("replica"),
        "a subscriber's path in the metrics: {metrics}"
    );
    drop(b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_allowed_hosts_can_be_subscribed() {
    let ep = start().await;
    let topic = create_topic(&ep, "hooks-allowed", &[]).await;
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1:8080/",
        "http://127.0.0.1@evil.example/",
    ] {
        let (status, xml) = subscribe_http(&ep, &topic, url, &[]).await;
        assert_eq!(status, 400, "{url}: {xml}");
        assert_eq!(
            tag(&xml, "Code").as_deref(),
            Some("InvalidParameter"),
            "{xml}"
        );
    }
    // An endpoint not of the protocol is SNS's own refusal.
    let (status, xml) = subscribe_http(&ep, &topic, "https://127.0.0.1/", &[]).await;
    assert_eq!(status, 400, "{xml}");
    assert!(
        xml.contains("Endpoint must match the specified protocol"),
        "{xml}"
    );
    // The operator's list replaces the loopback default.
    let narrow = Endpoint::with_env(&[
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_SNS_POSTS_IN_FLIGHT", "160"),
        ("QUEEN_SQS_SNS_HTTP_ALLOWED_HOSTS", "hooks.example"),
    ])
    .await;
    let topic = create_topic(&narrow, "hooks-narrow", &[]).await;
    let (status, xml) = subscribe_http(&narrow, &topic, "http://127.0.0.1:9/", &[]).await;
    assert_eq!(status, 400, "{xml}");
    let (status, xml) = subscribe_http(&narrow, &topic, "http://hooks.example/x", &[]).await;
    assert_eq!(status, 200, "{xml}");
    // `ReturnSubscriptionArn` answers the pending subscription's ARN instead.
    let params = [
        ("TopicArn", topic.as_str()),
        ("Protocol", "http"),
        ("Endpoint", "http://hooks.example/y"),
        ("ReturnSubscriptionArn", "true"),
    ];
    let xml = sns_ok(&narrow, "Subscribe", &params).await;
    let arn = tag(&xml, "SubscriptionArn").unwrap();
    assert!(arn.starts_with(&format!("{topic}:")), "{arn}");
    let sub = attributes(
        &sns_ok(
            &narrow,
            "GetSubscriptionAttributes",
            &[("SubscriptionArn", &arn)],
        )
        .await,
    );
    assert_eq!(sub["PendingConfirmation"], "true");
    // Nothing was subscribed by the refusals.
    let listed = sns_ok(&ep, "ListSubscriptions", &[]).await;
    assert!(!listed.contains("169.254"), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_route_answers_only_its_token() {
    let ep = Endpoint::with_env(&[
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_DELIVERY_TOKEN", "route-token-1234"),
    ])
    .await;
    let route = "/_queen-sqs/sns/deliveries";
    let (status, _, _) = ep.raw("POST", route, &[], Vec::new()).await;
    assert_eq!(status, 404);
    let (status, _, _) = ep
        .raw(
            "POST",
            route,
            &[("x-queen-sqs-delivery-token", "route-token-1235")],
            Vec::new(),
        )
        .await;
    assert_eq!(status, 404);
    let (status, _, _) = ep
        .raw(
            "GET",
            route,
            &[("x-queen-sqs-delivery-token", "route-token-1234")],
            Vec::new(),
        )
        .await;
    assert_eq!(status, 404);
    let (status, _, body) = ep
        .raw(
            "POST",
            route,
            &[("x-queen-sqs-delivery-token", "route-token-1234")],
            Vec::new(),
        )
        .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let worked: Value = serde_json::from_slice(&body).unwrap();
    assert!(worked["delivered"].is_u64(), "{worked}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_subscriptions_and_confirmations_are_refused_with_a_4xx() {
    let ep = start().await;
    let topic = create_topic(&ep, "hooks-hostile", &[]).await;
    let long = format!("http://127.0.0.1/{}", "a".repeat(3000));
    for url in [
        long.as_str(),
        "http://127.0.0.1/\r\nX-Injected: 1",
        "http://127.0.0.1:99999999/",
        "",
    ] {
        let (status, xml) = subscribe_http(&ep, &topic, url, &[]).await;
        assert_eq!(status, 400, "{url:.40}: {xml}");
        assert_eq!(
            tag(&xml, "Code").as_deref(),
            Some("InvalidParameter"),
            "{xml}"
        );
    }
    let huge = "f".repeat(100_000);
    let (status, code, _) = sns_err(
        &ep,
        "ConfirmSubscription",
        &[("TopicArn", &topic), ("Token", &huge)],
    )
    .await;
    assert_eq!((status, code.as_str()), (400, "InvalidParameter"));
    // Shaped like a token, issued by nobody (no subscription, no removed one).
    let (status, code, _) = sns_err(
        &ep,
        "ConfirmSubscription",
        &[("TopicArn", &topic), ("Token", &"a".repeat(64))],
    )
    .await;
    assert_eq!((status, code.as_str()), (400, "InvalidParameter"));
    let missing = topic.replace("hooks-hostile", "hooks-missing");
    // A topic that does not exist issued no token, as SNS answers it.
    let (status, code, msg) = sns_err(
        &ep,
        "ConfirmSubscription",
        &[("TopicArn", &missing), ("Token", "ab")],
    )
    .await;
    assert_eq!(
        (status, code.as_str(), msg.as_str()),
        (400, "InvalidParameter", "Invalid parameter: Token")
    );
    // A FIFO topic delivers to SQS queues only, as SNS's does.
    let fifo = create_topic(&ep, "hooks-hostile.fifo", &[("FifoTopic", "true")]).await;
    let (status, xml) = subscribe_http(&ep, &fifo, "http://127.0.0.1:9/", &[]).await;
    assert_eq!(status, 400, "{xml}");
    let listed = sns_ok(&ep, "ListSubscriptions", &[]).await;
    assert!(tags_all(&listed, "SubscriptionArn").is_empty(), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_subscribe_while_pending_sends_the_same_token_again() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-repeat", &[]).await;
    for _ in 0..2 {
        let (status, xml) = subscribe_http(&ep, &topic, &r.url("/again"), &[]).await;
        assert_eq!(status, 200, "{xml}");
    }
    let c = r
        .wait_for("SubscriptionConfirmation", 2, Duration::from_secs(20))
        .await;
    assert_eq!(c[0].json()["Token"], c[1].json()["Token"]);
    let listed = sns_ok(&ep, "ListSubscriptionsByTopic", &[("TopicArn", &topic)]).await;
    assert_eq!(tags_all(&listed, "SubscriptionArn").len(), 1, "{listed}");
    // Different attributes for the same endpoint are refused, as for a queue.
    let (status, xml) = subscribe_http(
        &ep,
        &topic,
        &r.url("/again"),
        &[("RawMessageDelivery", "true")],
    )
    .await;
    assert_eq!(status, 400, "{xml}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsubscribed_endpoint_gets_no_more_retries() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-gone", &[]).await;
    let policy =
        r#"{"healthyRetryPolicy":{"numRetries":10,"minDelayTarget":1,"maxDelayTarget":1}}"#;
    let arn = subscribe_confirmed(&ep, &topic, &r, "/gone", &[("DeliveryPolicy", policy)]).await;
    r.fail_notifications(usize::MAX);
    publish_ok(&ep, &topic, "retried until unsubscribed", &[], &[]).await;
    r.wait_for("Notification", 2, Duration::from_secs(20)).await;
    sns_ok(&ep, "Unsubscribe", &[("SubscriptionArn", &arn)]).await;
    // One attempt may already be on its way; none after it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let settled = r.got("Notification").len();
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert_eq!(r.got("Notification").len(), settled);
}

/// A fast policy: three retries one second apart.
const FAST_RETRIES: &str = r#"{"healthyRetryPolicy":{"numRetries":3,"minDelayTarget":1,"maxDelayTarget":1,"backoffFunction":"linear"}}"#;

/// A 3xx is not a delivery (SNS follows no redirect): the POST is retried by the policy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_is_a_failed_delivery_and_is_retried() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-redirect", &[]).await;
    subscribe_confirmed(
        &ep,
        &topic,
        &r,
        "/moved",
        &[("DeliveryPolicy", FAST_RETRIES)],
    )
    .await;
    r.answer_notifications(302, 0);
    publish_ok(&ep, &topic, "moved away", &[], &[]).await;
    let n = r.wait_for("Notification", 2, Duration::from_secs(20)).await;
    assert!(n.iter().all(|x| x.status == 302), "{n:?}");
    assert_eq!(n[1].json()["MessageId"], n[0].json()["MessageId"]);
}

/// A 2xx with a body far larger than anything read of it (8 MiB) is one delivery: the
/// answer is judged by its status, and the POST is not made again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_answer_is_one_delivery() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-huge", &[]).await;
    subscribe_confirmed(
        &ep,
        &topic,
        &r,
        "/huge",
        &[("DeliveryPolicy", FAST_RETRIES)],
    )
    .await;
    r.answer_notifications(200, 8 << 20);
    publish_ok(&ep, &topic, "talkative", &[], &[]).await;
    r.wait_for("Notification", 1, Duration::from_secs(20)).await;
    // Past two of the policy's retry delays: nothing more.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert_eq!(
        r.got("Notification").len(),
        1,
        "{:?}",
        r.got("Notification")
    );
    // The endpoint still answers.
    publish_ok(&ep, &topic, "again", &[], &[]).await;
    r.wait_for("Notification", 2, Duration::from_secs(20)).await;
}

/// The delivery route with its broker unreachable answers 503 `ServiceUnavailable`, as any
/// action does (the host's loop then pauses before it calls again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_delivery_route_answers_503_while_the_broker_is_down() {
    let a = start().await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let env = vec![
        (
            "QUEEN_URL".to_string(),
            format!("http://127.0.0.1:{closed}"),
        ),
        ("QUEEN_SQS_HANDLE_SECRET".into(), HANDLE_SECRET.into()),
        ("QUEEN_SQS_AUTH".into(), "off".into()),
        ("QUEEN_SQS_SNS_POSTS_IN_FLIGHT".into(), "0".into()),
        ("QUEEN_SQS_DELIVERY_TOKEN".into(), "down-token-1234".into()),
    ];
    let b = Endpoint::serve_remote(env, a.broker.clone(), support::fresh_dir("down")).await;
    let (status, _, body) = b
        .raw(
            "POST",
            "/_queen-sqs/sns/deliveries?wait=0",
            &[("x-queen-sqs-delivery-token", "down-token-1234")],
            Vec::new(),
        )
        .await;
    let body = String::from_utf8_lossy(&body);
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("ServiceUnavailable"), "{body}");
}

/// `ConfirmSubscription` called with `AuthenticateOnUnsubscribe=true`: the confirmation was
/// authenticated, and the notification's `UnsubscribeURL` no longer removes the
/// subscription (403 `AuthorizationError`); a call still does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_confirmed_to_authenticate_unsubscribes_refuses_the_unsubscribe_link() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-auth-unsub", &[]).await;
    subscribe_http(&ep, &topic, &r.url("/guarded"), &[]).await;
    let c = r
        .wait_for("SubscriptionConfirmation", 1, Duration::from_secs(20))
        .await;
    let token = c[0].json()["Token"].as_str().unwrap().to_string();
    let xml = sns_ok(
        &ep,
        "ConfirmSubscription",
        &[
            ("TopicArn", &topic),
            ("Token", &token),
            ("AuthenticateOnUnsubscribe", "true"),
        ],
    )
    .await;
    let arn = tag(&xml, "SubscriptionArn").unwrap();
    assert_eq!(confirmation_was_authenticated(&ep, &arn).await, "true");
    publish_ok(&ep, &topic, "one", &[], &[]).await;
    let n = r.wait_for("Notification", 1, Duration::from_secs(20)).await;
    let unsubscribe = n[0].json()["UnsubscribeURL"].as_str().unwrap().to_string();
    let (status, body) = get(&ep, &unsubscribe).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("AuthorizationError"), "{body}");
    publish_ok(&ep, &topic, "two", &[], &[]).await;
    r.wait_for("Notification", 2, Duration::from_secs(20)).await;
    // A call removes it.
    sns_ok(&ep, "Unsubscribe", &[("SubscriptionArn", &arn)]).await;
    publish_ok(&ep, &topic, "three", &[], &[]).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(r.got("Notification").len(), 2);
    // The owner's own call: no UnsubscribeConfirmation.
    assert!(r.got("UnsubscribeConfirmation").is_empty());
}

/// `throttlePolicy.maxReceivesPerSecond`: at most that many notifications a second (the
/// rest wait, and are not counted as attempts: with no retries allowed, none is lost).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_gets_no_more_notifications_a_second_than_its_throttle_policy_allows() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-paced", &[]).await;
    let policy =
        r#"{"throttlePolicy":{"maxReceivesPerSecond":1},"healthyRetryPolicy":{"numRetries":0}}"#;
    subscribe_confirmed(&ep, &topic, &r, "/paced", &[("DeliveryPolicy", policy)]).await;
    for i in 0..4 {
        publish_ok(&ep, &topic, &format!("p{i}"), &[], &[]).await;
    }
    let n = r.wait_for("Notification", 4, Duration::from_secs(30)).await;
    let span = n[3].at - n[0].at;
    assert!(
        span >= Duration::from_millis(2000),
        "4 notifications in {span:?}"
    );
    let mut got: Vec<String> = n
        .iter()
        .map(|x| x.json()["Message"].as_str().unwrap().to_string())
        .collect();
    got.sort();
    assert_eq!(got, ["p0", "p1", "p2", "p3"]);
}

/// `requestPolicy.headerContentType` sets the POSTs' `Content-Type`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_policy_sets_the_content_type() {
    let ep = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&ep, "hooks-json", &[]).await;
    let policy = r#"{"requestPolicy":{"headerContentType":"application/json"}}"#;
    subscribe_confirmed(&ep, &topic, &r, "/json", &[("DeliveryPolicy", policy)]).await;
    publish_ok(&ep, &topic, "typed", &[], &[]).await;
    let n = r.wait_for("Notification", 1, Duration::from_secs(20)).await;
    assert_eq!(
        n[0].headers.get("content-type").map(String::as_str),
        Some("application/json")
    );
}

/// Cluster lane (2026-12-07): a subscription confirmed through another replica a moment
/// after this one POSTed its confirmation. This replica's cached record still said pending,
/// and the first notification was dropped; a drop is now decided on the broker's record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_right_after_a_confirmation_through_another_replica_is_delivered() {
    let a = start().await;
    let r = Receiver::start().await;
    let topic = create_topic(&a, "hooks-two-replicas", &[]).await;
    let (status, xml) = subscribe_http(&a, &topic, &r.url("/two"), &[]).await;
    assert_eq!(status, 200, "{xml}");
    let c = r
        .wait_for("SubscriptionConfirmation", 1, Duration::from_secs(20))
        .await;
    let token = c[0].json()["Token"].as_str().unwrap().to_string();
    let mut env = vec![
        ("QUEEN_URL".to_string(), a.broker.url()),
        ("QUEEN_SQS_HANDLE_SECRET".into(), HANDLE_SECRET.into()),
        ("QUEEN_SQS_AUTH".into(), "off".into()),
        ("QUEEN_SQS_SNS_POSTS_IN_FLIGHT".into(), "0".into()),
    ];
    if a.broker.embedded().is_some() {
        env.push(("QUEEN_TOKEN".into(), support::BROKER_TOKEN.into()));
    }
    let b = Endpoint::serve_remote(env, a.broker.clone(), support::fresh_dir("two")).await;
    sns_ok(
        &b,
        "ConfirmSubscription",
        &[("TopicArn", &topic), ("Token", &token)],
    )
    .await;
    publish_ok(&a, &topic, "right after", &[], &[]).await;
    let n = r.wait_for("Notification", 1, Duration::from_secs(20)).await;
    assert_eq!(n[0].json()["Message"], "right after");
}
