//! The AWS SDK for Rust against a running queen-sqs endpoint (`QUEEN_SQS_ENDPOINT`), set
//! up as its documentation shows for a custom endpoint: one config, `endpoint_url`, static
//! credentials. SQS speaks AWS JSON 1.0 here and SNS the Query protocol. The Rust SDK does
//! not check the MD5 digests it is answered, so these tests do.

use aws_credential_types::Credentials;
use aws_sdk_sns as sns;
use aws_sdk_sqs as sqs;
use aws_types::region::Region;
use md5::{Digest, Md5};
use sqs::primitives::Blob;
use sqs::types::{
    MessageAttributeValue, MessageSystemAttributeName, MessageSystemAttributeNameForSends,
    MessageSystemAttributeValue, QueueAttributeName, SendMessageBatchRequestEntry,
};
use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn endpoint() -> String {
    std::env::var("QUEEN_SQS_ENDPOINT")
        .expect("QUEEN_SQS_ENDPOINT is not set (scripts/compat.sh sets it)")
}

fn sqs_client() -> sqs::Client {
    let config = sqs::Config::builder()
        .behavior_version(sqs::config::BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "static"))
        .endpoint_url(endpoint())
        .build();
    sqs::Client::from_conf(config)
}

fn sns_client() -> sns::Client {
    let config = sns::Config::builder()
        .behavior_version(sns::config::BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "static"))
        .endpoint_url(endpoint())
        .build();
    sns::Client::from_conf(config)
}

fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{nanos}")
}

fn md5_hex(bytes: &[u8]) -> String {
    Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn queue(q: &sqs::Client, name: &str, attrs: &[(QueueAttributeName, &str)]) -> String {
    let mut create = q.create_queue().queue_name(name);
    for (k, v) in attrs {
        create = create.attributes(k.clone(), *v);
    }
    create.send().await.expect("CreateQueue").queue_url.unwrap()
}

async fn arn_of(q: &sqs::Client, url: &str) -> String {
    let got = q
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .unwrap();
    got.attributes.unwrap()[&QueueAttributeName::QueueArn].clone()
}

/// Sends a receive and answers its messages (none is an empty list).
trait ReceiveMessages {
    async fn send_for_messages(self) -> Vec<sqs::types::Message>;
}

impl ReceiveMessages for sqs::operation::receive_message::builders::ReceiveMessageFluentBuilder {
    async fn send_for_messages(self) -> Vec<sqs::types::Message> {
        self.send().await.expect("ReceiveMessage").messages.unwrap_or_default()
    }
}

/// Deletes one received message.
async fn delete(q: &sqs::Client, url: &str, m: &sqs::types::Message) {
    q.delete_message()
        .queue_url(url)
        .receipt_handle(m.receipt_handle.clone().unwrap())
        .send()
        .await
        .expect("DeleteMessage");
}

fn string_attr(v: &str) -> MessageAttributeValue {
    MessageAttributeValue::builder()
        .data_type("String")
        .string_value(v)
        .build()
        .unwrap()
}

#[tokio::test]
async fn queues_and_their_attributes_and_a_typed_missing_queue() {
    let q = sqs_client();
    let name = unique("rust-q");
    let url = queue(&q, &name, &[(QueueAttributeName::VisibilityTimeout, "45")]).await;
    let got = q.get_queue_url().queue_name(&name).send().await.unwrap();
    assert_eq!(got.queue_url.as_deref(), Some(url.as_str()));
    let attrs = q
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    assert_eq!(attrs[&QueueAttributeName::VisibilityTimeout], "45");
    assert!(attrs[&QueueAttributeName::QueueArn].ends_with(&name));
    q.set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::DelaySeconds, "2")
        .send()
        .await
        .unwrap();
    // Creating it again with other attributes is refused by name.
    let again = q
        .create_queue()
        .queue_name(&name)
        .attributes(QueueAttributeName::VisibilityTimeout, "46")
        .send()
        .await;
    let err = again.expect_err("a different VisibilityTimeout");
    assert!(
        err.as_service_error().is_some_and(|e| e.is_queue_name_exists()),
        "{err:?}"
    );
    q.delete_queue().queue_url(&url).send().await.unwrap();
    let missing = q.get_queue_url().queue_name(unique("rust-none")).send().await;
    let err = missing.expect_err("no such queue");
    assert!(
        err.as_service_error().is_some_and(|e| e.is_queue_does_not_exist()),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_message_with_every_attribute_type_round_trips_with_its_digests() {
    let q = sqs_client();
    let url = queue(&q, &unique("rust-msgs"), &[]).await;
    let body = "héllo from Rust ✓ <&> \"quoted\"";
    let binary = vec![0u8, 1, 2, 254, 255];
    let sent = q
        .send_message()
        .queue_url(&url)
        .message_body(body)
        .message_attributes("s", string_attr("text"))
        .message_attributes(
            "n",
            MessageAttributeValue::builder()
                .data_type("Number")
                .string_value("42.5")
                .build()
                .unwrap(),
        )
        .message_attributes(
            "b",
            MessageAttributeValue::builder()
                .data_type("Binary")
                .binary_value(Blob::new(binary.clone()))
                .build()
                .unwrap(),
        )
        .message_attributes(
            "c",
            MessageAttributeValue::builder()
                .data_type("String.custom")
                .string_value("x")
                .build()
                .unwrap(),
        )
        .message_system_attributes(
            MessageSystemAttributeNameForSends::AwsTraceHeader,
            MessageSystemAttributeValue::builder()
                .data_type("String")
                .string_value("Root=1-5759e988-bd862e3fe1be46a994272793")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(sent.md5_of_message_body.as_deref(), Some(md5_hex(body.as_bytes()).as_str()));
    let attrs_md5 = sent.md5_of_message_attributes.clone().expect("attributes digest");
    assert!(sent.md5_of_message_system_attributes.is_some());

    let got = q
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .wait_time_seconds(2)
        .message_attribute_names("All")
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send_for_messages()
        .await;
    let messages = got;
    assert_eq!(messages.len(), 1);
    let m = &messages[0];
    assert_eq!(m.message_id, sent.message_id);
    assert_eq!(m.body.as_deref(), Some(body));
    assert_eq!(m.md5_of_body.as_deref(), Some(md5_hex(body.as_bytes()).as_str()));
    assert_eq!(m.md5_of_message_attributes.as_deref(), Some(attrs_md5.as_str()));
    let attrs = m.message_attributes.as_ref().unwrap();
    assert_eq!(attrs["b"].binary_value.as_ref().unwrap().as_ref(), &binary[..]);
    assert_eq!(attrs["n"].string_value.as_deref(), Some("42.5"));
    assert_eq!(attrs["c"].data_type, "String.custom");
    let system = m.attributes.as_ref().unwrap();
    assert_eq!(system[&MessageSystemAttributeName::ApproximateReceiveCount], "1");
    assert!(system.contains_key(&MessageSystemAttributeName::AwsTraceHeader));

    delete(&q, &url, m).await;
    // A handle this endpoint never minted is the typed error, never a 5xx.
    let bad = q
        .delete_message()
        .queue_url(&url)
        .receipt_handle("bm90IGEgaGFuZGxl")
        .send()
        .await;
    let err = bad.expect_err("a forged handle");
    assert!(
        err.as_service_error().is_some_and(|e| e.is_receipt_handle_is_invalid()),
        "{err:?}"
    );
}

/// The largest body SQS takes by default (1 MiB) goes through whole; one byte more is
/// refused with a typed error before anything is stored.
#[tokio::test]
async fn the_largest_body_round_trips_and_one_byte_more_is_refused() {
    let q = sqs_client();
    let url = queue(&q, &unique("rust-big"), &[]).await;
    let body: String = (0..1024 * 1024).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let sent = q
        .send_message()
        .queue_url(&url)
        .message_body(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(sent.md5_of_message_body.as_deref(), Some(md5_hex(body.as_bytes()).as_str()));
    let too_big = q
        .send_message()
        .queue_url(&url)
        .message_body(format!("{body}x"))
        .send()
        .await;
    let err = too_big.expect_err("a body over 1 MiB");
    let code = err.as_service_error().and_then(|e| e.meta().code()).map(str::to_string);
    assert!(
        matches!(code.as_deref(), Some("InvalidParameterValue")),
        "{err:?}"
    );
    let got = q
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .wait_time_seconds(2)
        .send_for_messages()
        .await;
    let messages = got;
    assert_eq!(messages.len(), 1, "only the message within the limit");
    assert_eq!(messages[0].body.as_deref().map(str::len), Some(body.len()));
    assert_eq!(messages[0].md5_of_body.as_deref(), Some(md5_hex(body.as_bytes()).as_str()));
}

#[tokio::test]
async fn batches_and_their_typed_errors() {
    let q = sqs_client();
    let url = queue(&q, &unique("rust-batch"), &[]).await;
    let entries: Vec<_> = (0..10)
        .map(|i| {
            SendMessageBatchRequestEntry::builder()
                .id(format!("e{i}"))
                .message_body(format!("m{i}"))
                .build()
                .unwrap()
        })
        .collect();
    let out = q
        .send_message_batch()
        .queue_url(&url)
        .set_entries(Some(entries))
        .send()
        .await
        .unwrap();
    assert_eq!(out.successful.len(), 10);
    assert!(out.failed.is_empty());
    for ok in &out.successful {
        let i: usize = ok.id[1..].parse().unwrap();
        assert_eq!(ok.md5_of_message_body, md5_hex(format!("m{i}").as_bytes()));
    }

    let empty = q.send_message_batch().queue_url(&url).send().await;
    let err = empty.expect_err("no entries");
    assert!(
        err.as_service_error().is_some_and(|e| e.is_empty_batch_request()),
        "{err:?}"
    );
    let twice = SendMessageBatchRequestEntry::builder()
        .id("same")
        .message_body("x")
        .build()
        .unwrap();
    let repeated = q
        .send_message_batch()
        .queue_url(&url)
        .entries(twice.clone())
        .entries(twice)
        .send()
        .await;
    let err = repeated.expect_err("repeated ids");
    assert!(
        err.as_service_error().is_some_and(|e| e.is_batch_entry_ids_not_distinct()),
        "{err:?}"
    );

    let mut deleted = 0;
    for _ in 0..10 {
        let got = q
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send_for_messages()
            .await;
        if got.is_empty() {
            break;
        }
        let mut del = q.delete_message_batch().queue_url(&url);
        for (i, m) in got.iter().enumerate() {
            del = del.entries(
                sqs::types::DeleteMessageBatchRequestEntry::builder()
                    .id(format!("d{i}"))
                    .receipt_handle(m.receipt_handle.clone().unwrap())
                    .build()
                    .unwrap(),
            );
        }
        let res = del.send().await.unwrap();
        assert!(res.failed.is_empty(), "{res:?}");
        deleted += res.successful.len();
    }
    assert_eq!(deleted, 10);
}

#[tokio::test]
async fn a_fifo_queue_keeps_order_and_deduplicates() {
    let q = sqs_client();
    let url = queue(
        &q,
        &format!("{}.fifo", unique("rust-fifo")),
        &[(QueueAttributeName::FifoQueue, "true")],
    )
    .await;
    let mut sequence = Vec::new();
    let mut first_id = None;
    for i in 0..5 {
        let sent = q
            .send_message()
            .queue_url(&url)
            .message_body(format!("m{i}"))
            .message_group_id("g")
            .message_deduplication_id(format!("d{i}"))
            .send()
            .await
            .unwrap();
        if i == 0 {
            first_id = sent.message_id.clone();
        }
        sequence.push(sent.sequence_number.unwrap());
    }
    for pair in sequence.windows(2) {
        assert_eq!(pair[1].len(), 20, "{sequence:?}");
        assert!(pair[1] > pair[0], "sequence numbers increase: {sequence:?}");
    }
    let again = q
        .send_message()
        .queue_url(&url)
        .message_body("m0 again")
        .message_group_id("g")
        .message_deduplication_id("d0")
        .send()
        .await
        .unwrap();
    assert_eq!(again.message_id, first_id, "a repeated deduplication id answers the original");

    let mut bodies = Vec::new();
    while bodies.len() < 5 {
        let got = q
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(2)
            .wait_time_seconds(2)
            .send_for_messages()
            .await;
        assert!(!got.is_empty(), "stalled after {bodies:?}");
        for m in &got {
            bodies.push(m.body.clone().unwrap());
            delete(&q, &url, m).await;
        }
    }
    assert_eq!(bodies, ["m0", "m1", "m2", "m3", "m4"]);
}

#[tokio::test]
async fn a_message_never_deleted_reaches_the_dead_letter_queue_with_its_count() {
    let q = sqs_client();
    let dlq = queue(&q, &unique("rust-dlq"), &[]).await;
    let policy = format!(
        r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":"2"}}"#,
        arn_of(&q, &dlq).await
    );
    let src = queue(&q, &unique("rust-src"), &[(QueueAttributeName::RedrivePolicy, &policy)]).await;
    q.send_message()
        .queue_url(&src)
        .message_body("poison")
        .send()
        .await
        .unwrap();
    let mut delivered = 0;
    for _ in 0..3 {
        let got = q
            .receive_message()
            .queue_url(&src)
            .visibility_timeout(0)
            .wait_time_seconds(2)
            .send_for_messages()
            .await;
        delivered += got.len();
    }
    assert_eq!(delivered, 2, "two deliveries before the move");
    let got = q
        .receive_message()
        .queue_url(&dlq)
        .wait_time_seconds(2)
        .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
        .send_for_messages()
        .await;
    let messages = got;
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].body.as_deref(), Some("poison"));
    let count: u32 = messages[0].attributes.as_ref().unwrap()
        [&MessageSystemAttributeName::ApproximateReceiveCount]
        .parse()
        .unwrap();
    assert!(count >= 3, "a dead-lettered copy carries its count: {count}");
    let sources = q
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .unwrap();
    assert_eq!(sources.queue_urls, vec![src]);
}

/// A message whose visibility ends comes back with its count raised; a visibility change
/// keeps it hidden past its first timeout.
#[tokio::test]
async fn visibility_ends_and_is_changed() {
    let q = sqs_client();
    let url = queue(&q, &unique("rust-vis"), &[]).await;
    q.send_message().queue_url(&url).message_body("v").send().await.unwrap();
    let first = q
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(1)
        .wait_time_seconds(2)
        .send_for_messages()
        .await;
    assert_eq!(first.len(), 1);
    q.change_message_visibility()
        .queue_url(&url)
        .receipt_handle(first[0].receipt_handle.clone().unwrap())
        .visibility_timeout(3)
        .send()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let hidden = q
        .receive_message()
        .queue_url(&url)
        .send_for_messages()
        .await;
    assert!(hidden.is_empty(), "still hidden by the change");
    let back = q
        .receive_message()
        .queue_url(&url)
        .wait_time_seconds(5)
        .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
        .send_for_messages()
        .await;
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].message_id, first[0].message_id);
    assert_eq!(
        back[0].attributes.as_ref().unwrap()[&MessageSystemAttributeName::ApproximateReceiveCount],
        "2"
    );
    // The first delivery's handle no longer changes anything it could hide.
    let stale = q
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle("bm90IGEgaGFuZGxl")
        .visibility_timeout(10)
        .send()
        .await;
    let err = stale.expect_err("a forged handle");
    assert!(
        err.as_service_error().is_some_and(|e| e.is_receipt_handle_is_invalid()),
        "{err:?}"
    );
}

#[tokio::test]
async fn sns_fans_out_to_queues_raw_and_enveloped_and_batches() {
    let q = sqs_client();
    let n = sns_client();
    let topic = n
        .create_topic()
        .name(unique("rust-topic"))
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let raw = queue(&q, &unique("rust-raw"), &[]).await;
    let enveloped = queue(&q, &unique("rust-env"), &[]).await;
    for (url, is_raw) in [(&raw, "true"), (&enveloped, "false")] {
        n.subscribe()
            .topic_arn(&topic)
            .protocol("sqs")
            .endpoint(arn_of(&q, url).await)
            .attributes("RawMessageDelivery", is_raw)
            .send()
            .await
            .unwrap();
    }
    let published = n
        .publish()
        .topic_arn(&topic)
        .message("to everyone")
        .message_attributes(
            "kind",
            sns::types::MessageAttributeValue::builder()
                .data_type("String")
                .string_value("greeting")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let message_id = published.message_id.unwrap();
    let got = q
        .receive_message()
        .queue_url(&raw)
        .wait_time_seconds(2)
        .message_attribute_names("All")
        .send_for_messages()
        .await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body.as_deref(), Some("to everyone"));
    assert_eq!(
        got[0].message_attributes.as_ref().unwrap()["kind"].string_value.as_deref(),
        Some("greeting")
    );
    let got = q
        .receive_message()
        .queue_url(&enveloped)
        .wait_time_seconds(2)
        .send_for_messages()
        .await;
    assert_eq!(got.len(), 1);
    let envelope: serde_json::Value =
        serde_json::from_str(got[0].body.as_deref().unwrap()).expect("a JSON envelope");
    assert_eq!(envelope["Type"], "Notification");
    assert_eq!(envelope["MessageId"], message_id.as_str());
    assert_eq!(envelope["TopicArn"], topic.as_str());
    assert_eq!(envelope["Message"], "to everyone");
    assert_eq!(envelope["MessageAttributes"]["kind"]["Value"], "greeting");

    let batch = n
        .publish_batch()
        .topic_arn(&topic)
        .publish_batch_request_entries(
            sns::types::PublishBatchRequestEntry::builder()
                .id("a")
                .message("one")
                .build()
                .unwrap(),
        )
        .publish_batch_request_entries(
            sns::types::PublishBatchRequestEntry::builder()
                .id("b")
                .message("two")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(batch.successful.unwrap_or_default().len(), 2);
    let mut bodies = Vec::new();
    for _ in 0..5 {
        let got = q
            .receive_message()
            .queue_url(&raw)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send_for_messages()
            .await;
        bodies.extend(got.into_iter().filter_map(|m| m.body));
        if bodies.len() >= 2 {
            break;
        }
    }
    bodies.sort();
    assert_eq!(bodies, ["one", "two"]);

    // SNS's own typed error: an unknown topic is NotFound.
    let missing = n
        .publish()
        .topic_arn("arn:aws:sns:us-east-1:000000000000:nope")
        .message("x")
        .send()
        .await;
    let err = missing.expect_err("no such topic");
    assert!(
        err.as_service_error().is_some_and(|e| e.is_not_found_exception()),
        "{err:?}"
    );
}

/// Attributes are not mixed up between messages of one receive (each digest is checked).
#[tokio::test]
async fn each_message_of_a_receive_carries_its_own_attributes() {
    let q = sqs_client();
    let url = queue(&q, &unique("rust-many"), &[]).await;
    let mut want = HashMap::new();
    for i in 0..10 {
        let value = "v".repeat(i + 1);
        q.send_message()
            .queue_url(&url)
            .message_body(format!("m{i}"))
            .message_attributes("a", string_attr(&value))
            .send()
            .await
            .unwrap();
        want.insert(format!("m{i}"), value);
    }
    let mut seen = 0;
    for _ in 0..10 {
        let got = q
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .message_attribute_names("All")
            .send_for_messages()
            .await;
        for m in &got {
            let body = m.body.as_deref().unwrap();
            let value = m.message_attributes.as_ref().unwrap()["a"].string_value.as_deref();
            assert_eq!(value, want.get(body).map(String::as_str), "{body}");
            delete(&q, &url, m).await;
            seen += 1;
        }
        if seen == 10 {
            break;
        }
    }
    assert_eq!(seen, 10);
}
