//! SNS notifications are signed as AWS documents it ("Verifying the signatures of Amazon
//! SNS messages"): the signature over the canonical string verifies with OpenSSL (not our
//! code) against the certificate fetched, without credentials, from `SigningCertURL`, for
//! `SignatureVersion` 1 (SHA1withRSA) and 2 (SHA256withRSA); `UnsubscribeURL` works with a
//! plain GET on an endpoint that otherwise wants SigV4.

mod sns_common;
mod support;

use serde_json::Value;
use sns_common::*;
use std::process::Command;
use support::Endpoint;

/// A notification published to a fresh queue subscribed to `topic`.
async fn notification(ep: &Endpoint, topic: &str, queue: &str) -> Value {
    make_queue(ep, queue).await;
    subscribe(ep, topic, &queue_arn(queue), &[]).await;
    publish_ok(
        ep,
        topic,
        "signed \"body\"\nwith lines",
        &[("n", "Number", "1")],
        &[("Subject", "a subject")],
    )
    .await;
    let got = drain(ep, queue).await;
    assert_eq!(got.len(), 1, "{got:?}");
    got[0].notification()
}

/// AWS's canonical string of a notification.
fn canonical(n: &Value) -> String {
    let mut out = String::new();
    for field in [
        "Message",
        "MessageId",
        "Subject",
        "Timestamp",
        "TopicArn",
        "Type",
    ] {
        if let Some(v) = n.get(field).and_then(Value::as_str) {
            out.push_str(&format!("{field}\n{v}\n"));
        }
    }
    out
}

/// GET of a URL on `ep` with no credentials: (status, body).
async fn get(ep: &Endpoint, url: &str) -> (u16, String) {
    let path = url.strip_prefix(&ep.url).unwrap_or(url);
    let (status, _, body) = ep.raw("GET", path, &[], Vec::new()).await;
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn openssl(args: &[&str]) -> (bool, String) {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .expect("the openssl CLI (scripts/test.sh installs it)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Whether OpenSSL verifies `signature` (base64) over `text` with the certificate `pem`.
fn verifies(dir: &std::path::Path, pem: &str, version: &str, text: &str, signature: &str) -> bool {
    use base64::Engine;
    let cert = dir.join("cert.pem");
    let public = dir.join("public.pem");
    let data = dir.join("data.txt");
    let sig = dir.join("sig.bin");
    std::fs::write(&cert, pem).unwrap();
    std::fs::write(&data, text).unwrap();
    let raw = base64::engine::general_purpose::STANDARD
        .decode(signature)
        .expect("the signature is base64");
    std::fs::write(&sig, raw).unwrap();
    let (ok, out) = openssl(&[
        "x509",
        "-in",
        cert.to_str().unwrap(),
        "-pubkey",
        "-noout",
        "-out",
        public.to_str().unwrap(),
    ]);
    assert!(ok, "OpenSSL reads the certificate: {out}");
    let digest = if version == "1" { "-sha1" } else { "-sha256" };
    let (ok, out) = openssl(&[
        "dgst",
        digest,
        "-verify",
        public.to_str().unwrap(),
        "-signature",
        sig.to_str().unwrap(),
        data.to_str().unwrap(),
    ]);
    ok && out.contains("Verified OK")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_verify_with_openssl_for_both_signature_versions() {
    let ep = Endpoint::start().await;
    let dir = support::fresh_dir("sns-signatures");
    std::fs::create_dir_all(&dir).unwrap();
    let mut cert_urls = Vec::new();
    for version in ["1", "2"] {
        let topic = create_topic(
            &ep,
            &format!("signed-v{version}"),
            &[("SignatureVersion", version)],
        )
        .await;
        let n = notification(&ep, &topic, &format!("signed-q{version}")).await;
        assert_eq!(n["SignatureVersion"], version, "{n}");
        let cert_url = n["SigningCertURL"]
            .as_str()
            .expect("SigningCertURL")
            .to_string();
        let (status, pem) = get(&ep, &cert_url).await;
        assert_eq!(status, 200, "{pem}");
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----\n"), "{pem}");
        let signature = n["Signature"].as_str().expect("Signature");
        let text = canonical(&n);
        assert!(
            verifies(&dir, &pem, version, &text, signature),
            "v{version} must verify: {n}"
        );
        // The wrong digest, or a changed message, does not.
        let other = if version == "1" { "2" } else { "1" };
        assert!(
            !verifies(&dir, &pem, other, &text, signature),
            "v{version} under the other digest"
        );
        let changed = text.replace("signed", "Signed");
        assert!(
            !verifies(&dir, &pem, version, &changed, signature),
            "a changed message"
        );
        cert_urls.push(cert_url);
    }
    // One key for the deployment, whatever the topic.
    assert_eq!(cert_urls[0], cert_urls[1]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_deployments_certificate_is_served() {
    let ep = Endpoint::start().await;
    let zeros = "/SimpleNotificationService-00000000000000000000000000000000.pem";
    // No key yet: nothing to serve.
    assert_eq!(get(&ep, zeros).await.0, 404);
    let topic = create_topic(&ep, "certs", &[]).await;
    let n = notification(&ep, &topic, "certs-q").await;
    let url = n["SigningCertURL"].as_str().unwrap();
    assert_eq!(get(&ep, url).await.0, 200);
    assert_eq!(get(&ep, zeros).await.0, 404, "another id is not ours");
    let (status, body) = get(&ep, "/SimpleNotificationService-../../etc/passwd.pem").await;
    assert_ne!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unsubscribe_url_unsubscribes_with_a_plain_get_where_sigv4_is_required() {
    let ep = Endpoint::start().await;
    let topic = create_topic(&ep, "unsub", &[]).await;
    let n = notification(&ep, &topic, "unsub-q").await;
    // The same deployment, as a replica that wants SigV4 of every other call.
    let signed = Endpoint::serve(
        vec![
            ("QUEEN_URL".into(), ep.broker.url()),
            (
                "QUEEN_SQS_HANDLE_SECRET".into(),
                support::HANDLE_SECRET.into(),
            ),
            ("QUEEN_SQS_AUTH".into(), "sigv4".into()),
            ("QUEEN_SQS_CREDENTIALS".into(), "test:test:".into()),
        ],
        ep.broker.clone(),
        support::fresh_dir("unsub-signed"),
    )
    .await;
    let (status, body) = get(&signed, "/?Action=ListTopics").await;
    assert_eq!(status, 403, "other unsigned calls are refused: {body}");
    let unsubscribe = n["UnsubscribeURL"].as_str().unwrap();
    let path = unsubscribe.strip_prefix(&ep.url).unwrap();
    let (status, body) = get(&signed, path).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("<UnsubscribeResponse"), "{body}");
    let listed = sns_ok(&ep, "ListSubscriptionsByTopic", &[("TopicArn", &topic)]).await;
    assert!(tags_all(&listed, "SubscriptionArn").is_empty(), "{listed}");
    // Nothing is delivered to the queue any more, once `ep`'s cached view of the topic's
    // subscriptions (up to `QUEEN_SQS_REGISTRY_CACHE_MS`, 1 s) has caught up with a change
    // made through another replica.
    tokio::time::sleep(std::time::Duration::from_millis(1_300)).await;
    publish_ok(&ep, &topic, "after", &[], &[]).await;
    assert!(drain(&ep, "unsub-q").await.is_empty());
}
