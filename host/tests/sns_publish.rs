//! SNS publishing through the real host: fan-out, the notification document, raw
//! delivery, MessageStructure, filter policies in both scopes, FIFO order and
//! deduplication, PublishBatch, and what a publish refuses.

mod sns_common;
mod support;

use serde_json::json;
use sns_common::*;
use support::Endpoint;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fan_out_to_three_queues_in_the_notification_envelope() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "fan", &[]).await;
    for q in ["a", "b", "c"] {
        let arn = make_queue(&ep, q).await;
        subscribe(&ep, &t, &arn, &[]).await;
    }
    let id = publish_ok(
        &ep,
        &t,
        "hello \"world\"\n",
        &[
            ("kind", "String", "order"),
            ("n", "Number", "42"),
            ("blob", "Binary", "AAEC"),
        ],
        &[("Subject", "Greetings")],
    )
    .await;
    assert_eq!(id.len(), 36, "{id}");
    for q in ["a", "b", "c"] {
        let got = drain(&ep, q).await;
        assert_eq!(got.len(), 1, "{q}: {got:?}");
        // The SQS envelope carries the notification as its body and no attributes.
        assert!(got[0].payload.get("a").is_none(), "{:?}", got[0].payload);
        let n = got[0].notification();
        assert_eq!(n["Type"], "Notification");
        assert_eq!(n["MessageId"], id.as_str());
        assert_eq!(n["TopicArn"], t.as_str());
        assert_eq!(n["Subject"], "Greetings");
        assert_eq!(n["Message"], "hello \"world\"\n");
        assert_eq!(n["SignatureVersion"], "1");
        let ts = n["Timestamp"].as_str().unwrap();
        assert!(
            ts.len() == 24 && ts.ends_with('Z') && ts.as_bytes()[19] == b'.',
            "{ts}"
        );
        assert_eq!(
            n["MessageAttributes"],
            json!({
                "blob": {"Type": "Binary", "Value": "AAEC"},
                "kind": {"Type": "String", "Value": "order"},
                "n": {"Type": "Number", "Value": "42"}
            })
        );
        assert!(n.get("SequenceNumber").is_none(), "{n}");
        // Signed as AWS signs (`sns_signatures.rs` verifies it): the signature, the
        // certificate on this endpoint, and an unsubscribe URL naming this subscription.
        let sig = n["Signature"].as_str().unwrap_or("");
        assert_eq!(sig.len(), 344, "base64 of 256 bytes: {n}");
        let cert = n["SigningCertURL"].as_str().unwrap_or("");
        assert!(
            cert.starts_with(&format!("{}/SimpleNotificationService-", ep.url))
                && cert.ends_with(".pem"),
            "{n}"
        );
        let unsubscribe = n["UnsubscribeURL"].as_str().unwrap_or("");
        assert!(
            unsubscribe.starts_with(&format!(
                "{}/?Action=Unsubscribe&SubscriptionArn={t}:",
                ep.url
            )),
            "{n}"
        );
        // AWS's key order, which some consumers hash or log verbatim.
        let body = got[0].body();
        let order: Vec<usize> = [
            "\"Type\"",
            "\"MessageId\"",
            "\"TopicArn\"",
            "\"Subject\"",
            "\"Message\"",
            "\"Timestamp\"",
            "\"SignatureVersion\"",
            "\"Signature\"",
            "\"SigningCertURL\"",
            "\"UnsubscribeURL\"",
            "\"MessageAttributes\"",
        ]
        .iter()
        .map(|k| body.find(k).unwrap())
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{body}");
    }
    // No subject, no attributes: neither key is written.
    publish_ok(&ep, &t, "plain", &[], &[]).await;
    let n = drain(&ep, "a").await;
    let n = n.last().unwrap().notification();
    assert!(
        n.get("Subject").is_none() && n.get("MessageAttributes").is_none(),
        "{n}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_delivery_is_the_body_with_the_attributes_as_sqs_attributes() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "raw", &[]).await;
    let q = make_queue(&ep, "rawq").await;
    subscribe(&ep, &t, &q, &[("RawMessageDelivery", "true")]).await;
    publish_ok(
        &ep,
        &t,
        "{\"id\": 7}",
        &[
            ("kind", "String", "x"),
            ("tags", "String.Array", "[\"a\",1]"),
            ("bin", "Binary", "AAEC"),
        ],
        &[],
    )
    .await;
    let got = drain(&ep, "rawq").await;
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].payload,
        json!({"b": "{\"id\": 7}", "a": {
            "bin": {"t": "Binary", "v": "AAEC"},
            "kind": {"t": "String", "v": "x"},
            "tags": {"t": "String.Array", "v": "[\"a\",1]"}
        }})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_structure_json_picks_the_sqs_entry_or_the_default() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "ms", &[]).await;
    let q = make_queue(&ep, "msq").await;
    subscribe(&ep, &t, &q, &[("RawMessageDelivery", "true")]).await;
    let structure = [("MessageStructure", "json")];
    publish_ok(
        &ep,
        &t,
        r#"{"default":"for everyone","sqs":"for queues","email":"x"}"#,
        &[],
        &structure,
    )
    .await;
    publish_ok(&ep, &t, r#"{"default":"only default"}"#, &[], &structure).await;
    let bodies: Vec<String> = drain(&ep, "msq")
        .await
        .iter()
        .map(|d| d.body().to_string())
        .collect();
    let mut sorted = bodies.clone();
    sorted.sort();
    assert_eq!(sorted, vec!["for queues", "only default"]);
    for (message, fragment) in [
        (r#"{"sqs":"no default"}"#, "No default entry"),
        ("not json", "failed to parse"),
    ] {
        let (status, xml) = publish(&ep, &t, message, &[], &structure).await;
        assert_eq!(status, 400, "{xml}");
        assert_eq!(tag(&xml, "Code").unwrap(), "InvalidParameter");
        assert!(tag(&xml, "Message").unwrap().contains(fragment), "{xml}");
    }
    let (status, _) = publish(&ep, &t, "x", &[], &[("MessageStructure", "xml")]).await;
    assert_eq!(status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filter_policies_in_both_scopes() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "filtered", &[]).await;
    let all = make_queue(&ep, "all").await;
    let attrs = make_queue(&ep, "by-attr").await;
    let body = make_queue(&ep, "by-body").await;
    subscribe(&ep, &t, &all, &[]).await;
    subscribe(
        &ep,
        &t,
        &attrs,
        &[(
            "FilterPolicy",
            r#"{"kind":["order"],"n":[{"numeric":[">",10]}]}"#,
        )],
    )
    .await;
    subscribe(
        &ep,
        &t,
        &body,
        &[
            ("FilterPolicyScope", "MessageBody"),
            ("FilterPolicy", r#"{"order":{"status":["paid"]}}"#),
        ],
    )
    .await;

    // Matches the attribute policy only.
    publish_ok(
        &ep,
        &t,
        "m1",
        &[("kind", "String", "order"), ("n", "Number", "11")],
        &[],
    )
    .await;
    // Attribute policy: numeric fails.
    publish_ok(
        &ep,
        &t,
        "m2",
        &[("kind", "String", "order"), ("n", "Number", "5")],
        &[],
    )
    .await;
    // Matches the body policy only.
    publish_ok(&ep, &t, r#"{"order":{"status":"paid"}}"#, &[], &[]).await;
    // Body policy: the value differs.
    publish_ok(
        &ep,
        &t,
        r#"{"order":{"status":"new"}}"#,
        &[("kind", "String", "order")],
        &[],
    )
    .await;

    let messages = |v: Vec<Delivered>| {
        let mut m: Vec<String> = v
            .iter()
            .map(|d| d.notification()["Message"].as_str().unwrap().to_string())
            .collect();
        m.sort();
        m
    };
    assert_eq!(messages(drain(&ep, "all").await).len(), 4);
    assert_eq!(messages(drain(&ep, "by-attr").await), vec!["m1"]);
    assert_eq!(
        messages(drain(&ep, "by-body").await),
        vec![r#"{"order":{"status":"paid"}}"#]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_subscriber_queue_is_skipped_and_not_recreated() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "skip", &[]).await;
    let live = make_queue(&ep, "live").await;
    let gone = make_queue(&ep, "gone").await;
    subscribe(&ep, &t, &live, &[]).await;
    subscribe(&ep, &t, &gone, &[]).await;
    drop_queue(&ep, "gone").await;
    publish_ok(&ep, &t, "still delivered", &[], &[]).await;
    assert_eq!(drain(&ep, "live").await.len(), 1);
    assert!(!broker_queues(&ep).await.contains(&"gone".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_topic_keeps_each_group_in_order_for_every_subscriber() {
    let ep = Endpoint::start().await;
    let t = create_topic(
        &ep,
        "ordered.fifo",
        &[("FifoTopic", "true"), ("ContentBasedDeduplication", "true")],
    )
    .await;
    let q1 = make_queue(&ep, "s1.fifo").await;
    let q2 = make_queue(&ep, "s2.fifo").await;
    subscribe(&ep, &t, &q1, &[("RawMessageDelivery", "true")]).await;
    subscribe(&ep, &t, &q2, &[]).await;
    let mut sent = Vec::new();
    for i in 0..12 {
        let group = ["g1", "g2", "g3"][i % 3];
        let body = format!("{group}-{i}");
        publish_ok(&ep, &t, &body, &[], &[("MessageGroupId", group)]).await;
        sent.push((group.to_string(), body));
    }
    for (q, raw) in [("s1.fifo", true), ("s2.fifo", false)] {
        let got = drain(&ep, q).await;
        assert_eq!(got.len(), 12, "{q}");
        for g in ["g1", "g2", "g3"] {
            let want: Vec<&str> = sent
                .iter()
                .filter(|(gg, _)| gg == g)
                .map(|(_, b)| b.as_str())
                .collect();
            let seen: Vec<String> = got
                .iter()
                .filter(|d| d.partition == g)
                .map(|d| {
                    if raw {
                        d.body().to_string()
                    } else {
                        d.notification()["Message"].as_str().unwrap().to_string()
                    }
                })
                .collect();
            assert_eq!(seen, want, "{q} {g}");
        }
        // The dedup key travels as the push's transactionId (the SHA-256 of the body here).
        assert!(got.iter().all(|d| d.transaction_id.len() == 64), "{q}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_deduplication_delivers_once_and_answers_success() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "dedup.fifo", &[("FifoTopic", "true")]).await;
    let fq = make_queue(&ep, "d.fifo").await;
    let sq = make_queue(&ep, "d-standard").await;
    subscribe(&ep, &t, &fq, &[]).await;
    subscribe(&ep, &t, &sq, &[]).await;
    let first = publish_ok(
        &ep,
        &t,
        "once",
        &[],
        &[("MessageGroupId", "g"), ("MessageDeduplicationId", "d-1")],
    )
    .await;
    let again = publish_ok(
        &ep,
        &t,
        "once",
        &[],
        &[("MessageGroupId", "g"), ("MessageDeduplicationId", "d-1")],
    )
    .await;
    // A repeat inside the window: a success with a new id (the contract's unsettled
    // entry), and nothing delivered twice, to the FIFO queue or the standard one.
    assert_ne!(first, again);
    // Topic-wide scope: the same id in another group is a repeat too.
    publish_ok(
        &ep,
        &t,
        "once",
        &[],
        &[
            ("MessageGroupId", "other"),
            ("MessageDeduplicationId", "d-1"),
        ],
    )
    .await;
    publish_ok(
        &ep,
        &t,
        "twice",
        &[],
        &[("MessageGroupId", "g"), ("MessageDeduplicationId", "d-2")],
    )
    .await;
    for q in ["d.fifo", "d-standard"] {
        let got: Vec<String> = drain(&ep, q)
            .await
            .iter()
            .map(|d| d.notification()["Message"].as_str().unwrap().to_string())
            .collect();
        let mut got = got;
        got.sort();
        assert_eq!(got, vec!["once", "twice"], "{q}");
    }
    // What a FIFO publish must carry.
    let (status, xml) = publish(&ep, &t, "x", &[], &[("MessageDeduplicationId", "d-3")]).await;
    assert_eq!(status, 400);
    assert!(
        tag(&xml, "Message").unwrap().contains("MessageGroupId"),
        "{xml}"
    );
    let (status, xml) = publish(&ep, &t, "x", &[], &[("MessageGroupId", "g")]).await;
    assert_eq!(status, 400);
    assert!(
        tag(&xml, "Message")
            .unwrap()
            .contains("ContentBasedDeduplication"),
        "{xml}"
    );
    // A standard topic takes no deduplication id.
    let s = create_topic(&ep, "std", &[]).await;
    let (status, _) = publish(&ep, &s, "x", &[], &[("MessageDeduplicationId", "d")]).await;
    assert_eq!(status, 400);
    // MessageGroupId scope narrows deduplication to the group.
    let scoped = create_topic(
        &ep,
        "scoped.fifo",
        &[
            ("FifoTopic", "true"),
            ("FifoThroughputScope", "MessageGroup"),
        ],
    )
    .await;
    let sq2 = make_queue(&ep, "scoped-q").await;
    subscribe(&ep, &scoped, &sq2, &[("RawMessageDelivery", "true")]).await;
    for g in ["a", "b", "a"] {
        publish_ok(
            &ep,
            &scoped,
            g,
            &[],
            &[("MessageGroupId", g), ("MessageDeduplicationId", "same")],
        )
        .await;
    }
    assert_eq!(drain(&ep, "scoped-q").await.len(), 2);
}

/// A FIFO subscriber queue that already holds the deduplication id (sent to it directly)
/// drops its own copy; every other subscriber still gets the publish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_fan_out_when_one_subscriber_already_holds_the_deduplication_id() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "fan.fifo", &[("FifoTopic", "true")]).await;
    let held = make_queue(&ep, "held.fifo").await;
    let other = make_queue(&ep, "other.fifo").await;
    let plain = make_queue(&ep, "plain-std").await;
    for q in [&held, &other, &plain] {
        subscribe(&ep, &t, q, &[("RawMessageDelivery", "true")]).await;
    }
    // The same deduplication id, sent straight to one subscriber queue first.
    let (status, _, _) = ep
        .broker
        .handle(
            "POST",
            "/api/v1/push",
            serde_json::json!({"items": [{"queue": "held.fifo", "partition": "g",
                "transactionId": "dup-1", "payload": {"b": "direct"}}]})
            .to_string()
            .into(),
        )
        .await;
    assert!(status < 300, "push {status}");
    publish_ok(
        &ep,
        &t,
        "published",
        &[],
        &[("MessageGroupId", "g"), ("MessageDeduplicationId", "dup-1")],
    )
    .await;
    let bodies = |d: Vec<Delivered>| d.iter().map(|x| x.body().to_string()).collect::<Vec<_>>();
    assert_eq!(bodies(drain(&ep, "held.fifo").await), vec!["direct"]);
    assert_eq!(bodies(drain(&ep, "other.fifo").await), vec!["published"]);
    assert_eq!(bodies(drain(&ep, "plain-std").await), vec!["published"]);
    // The topic still deduplicates a repeat of the publish.
    publish_ok(
        &ep,
        &t,
        "published",
        &[],
        &[("MessageGroupId", "g"), ("MessageDeduplicationId", "dup-1")],
    )
    .await;
    assert!(drain(&ep, "other.fifo").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_refusals() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "refuse", &[]).await;
    let q = make_queue(&ep, "rq").await;
    subscribe(&ep, &t, &q, &[]).await;
    let big = "x".repeat(262_145);
    let long_subject = "s".repeat(101);
    let cases: Vec<(Vec<(String, String)>, &str)> = vec![
        (
            vec![
                (
                    "TargetArn".into(),
                    "arn:aws:sns:us-east-1:000000000000:endpoint/APNS/app/1".into(),
                ),
                ("Message".into(), "x".into()),
            ],
            "TargetArn",
        ),
        (
            vec![
                ("PhoneNumber".into(), "+15555550100".into()),
                ("Message".into(), "x".into()),
            ],
            "PhoneNumber",
        ),
        (publish_params(&t, &big, &[], &[]), "too long"),
        (publish_params(&t, "", &[], &[]), "Empty message"),
        (
            publish_params(&t, "x", &[], &[("Subject", &long_subject)]),
            "Subject",
        ),
        (
            publish_params(&t, "x", &[], &[("Subject", "line\nbreak")]),
            "Subject",
        ),
        (
            publish_params(&t, "x", &[("bad name!", "String", "v")], &[]),
            "message attribute",
        ),
        (
            publish_params(&t, "x", &[("n", "Number", "abc")], &[]),
            "message attribute",
        ),
        (
            publish_params(&t, "x", &[("n", "Text", "abc")], &[]),
            "message attribute",
        ),
        (
            publish_params(&t, "x", &[("arr", "String.Array", "not an array")], &[]),
            "String.Array",
        ),
    ];
    for (params, fragment) in cases {
        let refs: Vec<(&str, &str)> = params
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let (status, xml) = sns(&ep, "Publish", &refs).await;
        assert_eq!(status, 400, "{fragment}: {xml}");
        // A bad message attribute is SNS's ParameterValueInvalid, anything else InvalidParameter.
        let code = if ["message attribute", "String.Array"].contains(&fragment) {
            "ParameterValueInvalid"
        } else {
            "InvalidParameter"
        };
        assert_eq!(tag(&xml, "Code").unwrap(), code, "{xml}");
        assert!(
            tag(&xml, "Message").unwrap().contains(fragment),
            "{fragment}: {xml}"
        );
    }
    // Eleven attributes are one too many for an SQS delivery.
    let eleven: Vec<(String, String, String)> = (0..11)
        .map(|i| (format!("a{i}"), "String".into(), "v".into()))
        .collect();
    let refs: Vec<(&str, &str, &str)> = eleven
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    let (status, _) = publish(&ep, &t, "x", &refs, &[]).await;
    assert_eq!(status, 400);
    // Exactly at the ceiling is fine.
    publish_ok(&ep, &t, &"y".repeat(262_144), &[], &[]).await;
    let got = drain(&ep, "rq").await;
    assert_eq!(got.len(), 1, "nothing refused was delivered");
}

fn batch_params(
    topic: &str,
    entries: &[(&str, &str)],
    extra: &[(usize, &str, &str)],
) -> Vec<(String, String)> {
    let mut p = vec![("TopicArn".to_string(), topic.to_string())];
    for (i, (id, msg)) in entries.iter().enumerate() {
        p.push((
            format!("PublishBatchRequestEntries.member.{}.Id", i + 1),
            id.to_string(),
        ));
        p.push((
            format!("PublishBatchRequestEntries.member.{}.Message", i + 1),
            msg.to_string(),
        ));
    }
    for (i, k, v) in extra {
        p.push((
            format!("PublishBatchRequestEntries.member.{i}.{k}"),
            v.to_string(),
        ));
    }
    p
}

async fn batch(ep: &Endpoint, params: Vec<(String, String)>) -> (u16, String) {
    let refs: Vec<(&str, &str)> = params
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    sns(ep, "PublishBatch", &refs).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_batch_partial_failure_and_batch_errors() {
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "batch", &[]).await;
    let q = make_queue(&ep, "bq").await;
    subscribe(&ep, &t, &q, &[("RawMessageDelivery", "true")]).await;
    // An entry SNS refuses fails the whole request, as SNS answers it, and nothing of the
    // batch is delivered.
    let (status, xml) = batch(
        &ep,
        batch_params(
            &t,
            &[("ok1", "first"), ("bad", "x"), ("ok2", "second")],
            &[(2, "MessageStructure", "json")],
        ),
    )
    .await;
    assert_eq!(status, 400, "{xml}");
    assert_eq!(tag(&xml, "Code").unwrap(), "InvalidParameter", "{xml}");
    assert!(drain(&ep, "bq").await.is_empty());
    // A delivery that fails fails its entry alone: a replica whose second delivery's
    // transaction the broker refuses.
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen_calls = calls.clone();
    let hook: support::Hook = std::sync::Arc::new(move |seen: &support::Seen| {
        let txn = seen.path_and_query.starts_with("/api/v1/transaction");
        (txn && seen_calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 1)
            .then(|| (503, br#"{"error":"unavailable"}"#.to_vec()))
    });
    let replica = ep.replica_behind(hook).await;
    let (status, xml) = batch(
        &replica,
        batch_params(
            &t,
            &[("ok1", "first"), ("lost", "x"), ("ok2", "second")],
            &[],
        ),
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    let successful = xml.split("<Failed>").next().unwrap();
    assert_eq!(tags_all(successful, "Id"), vec!["ok1", "ok2"]);
    let failed = xml.split("<Failed>").nth(1).unwrap();
    assert_eq!(tags_all(failed, "Id"), vec!["lost"]);
    assert_eq!(tag(failed, "SenderFault").unwrap(), "false", "{xml}");
    let mut bodies: Vec<String> = drain(&ep, "bq")
        .await
        .iter()
        .map(|d| d.body().to_string())
        .collect();
    bodies.sort();
    assert_eq!(bodies, vec!["first", "second"]);

    let eleven: Vec<(String, String)> = (0..11)
        .map(|i| (format!("e{i}"), "m".to_string()))
        .collect();
    let eleven: Vec<(&str, &str)> = eleven
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let big = "z".repeat(140_000);
    for (params, code) in [
        (batch_params(&t, &[], &[]), "EmptyBatchRequest"),
        (
            batch_params(&t, &eleven, &[]),
            "TooManyEntriesInBatchRequest",
        ),
        (
            batch_params(&t, &[("same", "a"), ("same", "b")], &[]),
            "BatchEntryIdsNotDistinct",
        ),
        (
            batch_params(&t, &[("no spaces allowed", "a")], &[]),
            "InvalidBatchEntryId",
        ),
        (
            batch_params(&t, &[("a", &big), ("b", &big)], &[]),
            "BatchRequestTooLong",
        ),
    ] {
        let (status, xml) = batch(&ep, params).await;
        assert_eq!(status, 400, "{code}: {xml}");
        assert_eq!(tag(&xml, "Code").unwrap(), code, "{xml}");
    }
    let ghost = format!("arn:aws:sns:us-east-1:{ACCOUNT}:ghost");
    let (status, xml) = batch(&ep, batch_params(&ghost, &[("a", "b")], &[])).await;
    assert_eq!(status, 404, "{xml}");
    assert!(drain(&ep, "bq").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_batch_on_a_fifo_topic_keeps_entry_order() {
    let ep = Endpoint::start().await;
    let t = create_topic(
        &ep,
        "batch.fifo",
        &[("FifoTopic", "true"), ("ContentBasedDeduplication", "true")],
    )
    .await;
    let q = make_queue(&ep, "bf.fifo").await;
    subscribe(&ep, &t, &q, &[("RawMessageDelivery", "true")]).await;
    let entries: Vec<(String, String)> = (0..10)
        .map(|i| (format!("e{i}"), format!("m{i}")))
        .collect();
    let refs: Vec<(&str, &str)> = entries
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let groups: Vec<(usize, &str, &str)> = (1..=10).map(|i| (i, "MessageGroupId", "g")).collect();
    let mut params = batch_params(&t, &refs, &groups);
    // Entry 4 lacks nothing but repeats entry 1's body: deduplicated, still Successful.
    params.retain(|(k, _)| k != "PublishBatchRequestEntries.member.4.Message");
    params.push((
        "PublishBatchRequestEntries.member.4.Message".into(),
        "m0".into(),
    ));
    let (status, xml) = batch(&ep, params).await;
    assert_eq!(status, 200, "{xml}");
    assert_eq!(tags_all(&xml, "MessageId").len(), 10);
    let got: Vec<String> = drain(&ep, "bf.fifo")
        .await
        .iter()
        .map(|d| d.body().to_string())
        .collect();
    assert_eq!(
        got,
        vec!["m0", "m1", "m2", "m4", "m5", "m6", "m7", "m8", "m9"]
    );
}

/// Issue 21, item 9: the two-step fan-out (a subscriber already holding the deduplication
/// id) stopped between its steps: the topic's claim written, the FIFO subscribers' pushes
/// and the claim's withdrawal never made (a crash, a cancelled request). The client's
/// retry was answered as a duplicate and the other FIFO subscriber never got the publish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_publish_retried_after_a_crash_between_its_two_steps_reaches_every_subscriber() {
    use std::sync::Arc;
    let ep = Endpoint::start().await;
    let t = create_topic(&ep, "crash.fifo", &[("FifoTopic", "true")]).await;
    let held = make_queue(&ep, "held2.fifo").await;
    let other = make_queue(&ep, "other2.fifo").await;
    for q in [&held, &other] {
        subscribe(&ep, &t, q, &[("RawMessageDelivery", "true")]).await;
    }
    let (status, _, _) = ep
        .broker
        .handle(
            "POST",
            "/api/v1/push",
            json!({"items": [{"queue": "held2.fifo", "partition": "g",
                "transactionId": "dup-2", "payload": {"b": "direct"}}]})
            .to_string()
            .into(),
        )
        .await;
    assert!(status < 300, "push {status}");
    // The replica that "crashes": after the claim, neither the pushes nor the withdrawal
    // of the claim reach the broker.
    let crashing = ep
        .replica_behind(Arc::new(|seen: &support::Seen| {
            let body = String::from_utf8_lossy(seen.body);
            let push = seen.path_and_query.starts_with("/api/v1/push");
            let withdraw =
                seen.path_and_query.starts_with("/api/v1/kv") && body.contains("\"delete\"");
            (push || withdraw).then(|| (503, b"{\"error\":\"gone\"}".to_vec()))
        }))
        .await;
    let extra = [("MessageGroupId", "g"), ("MessageDeduplicationId", "dup-2")];
    let (status, xml) = publish(&crashing, &t, "published", &[], &extra).await;
    assert_ne!(
        status, 200,
        "the crashed publish is not answered success: {xml}"
    );
    // The client retries, through a healthy replica.
    publish_ok(&ep, &t, "published", &[], &extra).await;
    let bodies = |d: Vec<Delivered>| d.iter().map(|x| x.body().to_string()).collect::<Vec<_>>();
    assert_eq!(bodies(drain(&ep, "other2.fifo").await), vec!["published"]);
    assert_eq!(bodies(drain(&ep, "held2.fifo").await), vec!["direct"]);
    // And still once: a third publish of the id delivers nothing more.
    publish_ok(&ep, &t, "published", &[], &extra).await;
    assert!(drain(&ep, "other2.fifo").await.is_empty());
}
