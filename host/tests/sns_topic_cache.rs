//! Issue 22: a `Publish` reads its topic, the topic's subscriptions and their queues as a
//! send reads its queue's record: through the host's cache, at most once per
//! `QUEEN_SQS_REGISTRY_CACHE_MS` per replica. A replica's own subscription changes are
//! seen by its next publish at once; another replica's within the bound.

mod sns_common;
mod support;

use serde_json::json;
use sns_common::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use support::{Endpoint, HANDLE_SECRET};

/// A replica of `a` whose broker calls pass a proxy counting the KV reads it forwards.
async fn counted_replica(a: &Endpoint, cache_ms: &str) -> (Endpoint, Arc<AtomicUsize>) {
    let reads = Arc::new(AtomicUsize::new(0));
    let proxy = support::kv_read_counting_proxy(a.broker.url(), reads.clone()).await;
    let env = vec![
        ("QUEEN_URL".to_string(), format!("http://{proxy}")),
        ("QUEEN_SQS_HANDLE_SECRET".into(), HANDLE_SECRET.into()),
        ("QUEEN_SQS_AUTH".into(), "off".into()),
        ("QUEEN_SQS_REGISTRY_CACHE_MS".into(), cache_ms.into()),
    ];
    let b = Endpoint::serve_remote(env, a.broker.clone(), a.data_dir.clone()).await;
    (b, reads)
}

fn bodies(delivered: &[Delivered]) -> Vec<String> {
    let mut out: Vec<String> = delivered.iter().map(|d| d.body().to_string()).collect();
    out.sort();
    out
}

async fn unsubscribe(ep: &Endpoint, sub_arn: &str) {
    sns_ok(ep, "Unsubscribe", &[("SubscriptionArn", sub_arn)]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publishes_read_the_topic_and_its_subscriptions_once_per_bound() {
    let a = Endpoint::start().await;
    let topic = create_topic(&a, "cached-fanout", &[]).await;
    let queues: Vec<String> = (0..3).map(|i| format!("cached-fanout-{i}")).collect();
    for q in &queues {
        make_queue(&a, q).await;
        subscribe(&a, &topic, &queue_arn(q), &[("RawMessageDelivery", "true")]).await;
    }
    let (b, reads) = counted_replica(&a, "60000").await;
    for i in 0..30 {
        publish_ok(&b, &topic, &format!("m{i:02}"), &[], &[]).await;
    }
    let expected: Vec<String> = (0..30).map(|i| format!("m{i:02}")).collect();
    for q in &queues {
        assert_eq!(bodies(&drain(&a, q).await), expected, "queue {q}");
    }
    // The topic, its subscriptions and their queues' records: three reads for thirty
    // publishes (two a publish, sixty in all, before the cache).
    let n = reads.load(Ordering::SeqCst);
    assert!(n <= 3, "{n} KV reads for 30 publishes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replicas_own_subscription_changes_are_seen_by_its_next_publish() {
    let a = Endpoint::start().await;
    let (b, _) = counted_replica(&a, "60000").await;
    let topic = create_topic(&b, "own-changes", &[]).await;
    for q in ["own-changes-1", "own-changes-2"] {
        make_queue(&a, q).await;
    }
    let raw = [("RawMessageDelivery", "true")];
    let first = subscribe(&b, &topic, &queue_arn("own-changes-1"), &raw).await;
    publish_ok(&b, &topic, "one", &[], &[]).await;
    // Subscribed through the replica that just cached the topic's subscriptions.
    let second = subscribe(&b, &topic, &queue_arn("own-changes-2"), &raw).await;
    publish_ok(&b, &topic, "two", &[], &[]).await;
    unsubscribe(&b, &first).await;
    publish_ok(&b, &topic, "three", &[], &[]).await;
    let policy = json!({"k": ["yes"]}).to_string();
    sns_ok(
        &b,
        "SetSubscriptionAttributes",
        &[
            ("SubscriptionArn", second.as_str()),
            ("AttributeName", "FilterPolicy"),
            ("AttributeValue", policy.as_str()),
        ],
    )
    .await;
    publish_ok(&b, &topic, "four", &[("k", "String", "no")], &[]).await;
    assert_eq!(bodies(&drain(&a, "own-changes-1").await), ["one", "two"]);
    assert_eq!(bodies(&drain(&a, "own-changes-2").await), ["three", "two"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_replicas_subscribe_is_seen_within_the_bound() {
    let a = Endpoint::start().await;
    let (b, _) = counted_replica(&a, "1000").await;
    let topic = create_topic(&a, "other-replica", &[]).await;
    make_queue(&a, "other-replica-1").await;
    let raw = [("RawMessageDelivery", "true")];
    // B caches the topic with no subscription at all.
    publish_ok(&b, &topic, "before", &[], &[]).await;
    subscribe(&a, &topic, &queue_arn("other-replica-1"), &raw).await;
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    publish_ok(&b, &topic, "after", &[], &[]).await;
    assert_eq!(bodies(&drain(&a, "other-replica-1").await), ["after"]);
    // A topic deleted through A is gone for B within the bound too.
    sns_ok(&a, "DeleteTopic", &[("TopicArn", topic.as_str())]).await;
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    let (status, xml) = publish(&b, &topic, "late", &[], &[]).await;
    assert_eq!(status, 404, "{xml}");
    assert!(xml.contains("NotFound"), "{xml}");
}
