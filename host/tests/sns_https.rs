//! Issue 24: SNS `https` subscriptions delivered by our host over TLS, against a receiver
//! whose certificate a throwaway CA issued (trusted through `QUEEN_SQS_TLS_CA_FILE`); and a
//! receiver the host does not trust, which gets nothing.

mod sns_common;
mod sns_receiver;
mod support;

use sns_common::*;
use sns_receiver::{Receiver, TestCerts};
use std::time::Duration;
use support::Endpoint;

async fn start(ca_file: Option<&str>) -> Endpoint {
    let mut env = vec![
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_SNS_POSTS_IN_FLIGHT", "160"),
    ];
    if let Some(f) = ca_file {
        env.push(("QUEEN_SQS_TLS_CA_FILE", f));
    }
    Endpoint::with_env(&env).await
}

async fn subscribe_https(ep: &Endpoint, topic: &str, url: &str) -> String {
    let params = subscribe_params(topic, "https", url, &[]);
    let (status, xml) = sns(ep, "Subscribe", &borrowed(&params)).await;
    assert_eq!(status, 200, "{xml}");
    xml
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_subscriber_is_confirmed_and_notified_over_tls() {
    let certs = TestCerts::make(support::fresh_dir("certs"));
    let ep = start(Some(&certs.ca_file())).await;
    let r = Receiver::start_tls(&certs).await;
    let topic = create_topic(&ep, "hooks-tls", &[]).await;
    let xml = subscribe_https(&ep, &topic, &r.url("/hook")).await;
    assert_eq!(
        tag(&xml, "SubscriptionArn").as_deref(),
        Some("pending confirmation")
    );
    let c = r
        .wait_for("SubscriptionConfirmation", 1, Duration::from_secs(20))
        .await;
    let token = c[0].json()["Token"].as_str().unwrap().to_string();
    sns_ok(
        &ep,
        "ConfirmSubscription",
        &[("TopicArn", &topic), ("Token", &token)],
    )
    .await;
    sns_ok(
        &ep,
        "Publish",
        &[("TopicArn", &topic), ("Message", "over tls")],
    )
    .await;
    let n = r.wait_for("Notification", 1, Duration::from_secs(20)).await;
    assert_eq!(n[0].json()["Message"], "over tls");
    assert_eq!(
        n[0].headers.get("host").map(String::as_str),
        Some(r.url("").trim_start_matches("https://"))
    );
}

/// A certificate the host does not trust (no `QUEEN_SQS_TLS_CA_FILE`): the host connects,
/// the handshake fails, and no request reaches the receiver.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_subscriber_with_an_untrusted_certificate_gets_nothing() {
    let certs = TestCerts::make(support::fresh_dir("certs"));
    let ep = start(None).await;
    let r = Receiver::start_tls(&certs).await;
    let topic = create_topic(&ep, "hooks-untrusted", &[]).await;
    subscribe_https(&ep, &topic, &r.url("/hook")).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while r.connections() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the host never tried to deliver the confirmation"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        r.got("SubscriptionConfirmation").is_empty(),
        "a request passed an untrusted certificate"
    );
}

/// A CA file that cannot be read is refused when the host starts, not at the first POST.
#[test]
fn an_unreadable_ca_file_is_refused() {
    let err = queen_sqs_host::serve::Outgoing::new(None)
        .with_tls_ca(Some("/nonexistent/ca.pem"))
        .err()
        .expect("refused");
    assert!(err.contains("QUEEN_SQS_TLS_CA_FILE"), "{err}");
    let dir = support::fresh_dir("no-pem");
    let empty = dir.join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let err = queen_sqs_host::serve::Outgoing::new(None)
        .with_tls_ca(Some(&empty.display().to_string()))
        .err()
        .expect("refused");
    assert!(err.contains("no PEM certificate"), "{err}");
}
