//! The SQS side: a real AWS SDK for Rust client against the facade, and the calls the
//! scenarios time.

use anyhow::{ensure, Context, Result};
use aws_config::BehaviorVersion;
use aws_sdk_sqs::config::{Credentials, Region};
use aws_sdk_sqs::types::{
    DeleteMessageBatchRequestEntry, QueueAttributeName, SendMessageBatchRequestEntry,
};
use aws_sdk_sqs::Client;

/// The shared SDK configuration, as an application would write it: static keys, a region, an
/// endpoint URL. The HTTP client is the SDK's own hyper 1 connector, built without TLS
/// (loopback http).
pub async fn config(endpoint: &str) -> aws_config::SdkConfig {
    let http = aws_smithy_http_client::Builder::new().build_http();
    aws_config::defaults(BehaviorVersion::latest())
        .http_client(http)
        .credentials_provider(Credentials::new("test", "test", None, None, "bench"))
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .load()
        .await
}

/// A standard queue with `partitions` lanes; answers its URL. With `BENCH_DEFAULT_QUEUES=1`
/// the queue is created with no attributes at all, as an application would (and as an
/// endpoint that is not queen-sqs accepts).
pub async fn create_queue(c: &Client, name: &str, partitions: u32) -> Result<String> {
    let mut req = c.create_queue().queue_name(name);
    if std::env::var("BENCH_DEFAULT_QUEUES").as_deref() != Ok("1") {
        req = req.attributes(
            QueueAttributeName::from("queen.partitions"),
            partitions.to_string(),
        );
    }
    let out = req.send().await.context("CreateQueue")?;
    out.queue_url().map(str::to_string).context("no QueueUrl")
}

/// A FIFO queue (the name must end in `.fifo`) with default attributes otherwise: the senders
/// give every message its own deduplication id, so ContentBasedDeduplication stays off.
pub async fn create_fifo_queue(c: &Client, name: &str) -> Result<String> {
    ensure!(
        name.ends_with(".fifo"),
        "a FIFO queue name ends in .fifo: {name}"
    );
    let out = c
        .create_queue()
        .queue_name(name)
        .attributes(QueueAttributeName::FifoQueue, "true")
        .send()
        .await
        .context("CreateQueue (FIFO)")?;
    out.queue_url().map(str::to_string).context("no QueueUrl")
}

/// The queue's ARN, from GetQueueAttributes (what an SNS subscription names).
pub async fn queue_arn(c: &Client, url: &str) -> Result<String> {
    let out = c
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .context("GetQueueAttributes QueueArn")?;
    out.attributes()
        .and_then(|a| a.get(&QueueAttributeName::QueueArn))
        .cloned()
        .context("no QueueArn in the answer")
}

/// ApproximateNumberOfMessages + ApproximateNumberOfMessagesNotVisible.
pub async fn queue_depth(c: &Client, url: &str) -> Result<u64> {
    let out = c
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
        .send()
        .await
        .context("GetQueueAttributes ApproximateNumberOfMessages")?;
    let get = |k: QueueAttributeName| {
        out.attributes()
            .and_then(|a| a.get(&k))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Ok(get(QueueAttributeName::ApproximateNumberOfMessages)
        + get(QueueAttributeName::ApproximateNumberOfMessagesNotVisible))
}

pub async fn delete_queue(c: &Client, url: &str) {
    let _ = c.delete_queue().queue_url(url).send().await;
}

pub fn body(n: u64) -> String {
    format!("benchmark message {n:>10} -- 64 bytes of text in every body....")
}

pub async fn send(c: &Client, url: &str, n: u64) -> Result<u64> {
    c.send_message()
        .queue_url(url)
        .message_body(body(n))
        .send()
        .await
        .context("SendMessage")?;
    Ok(1)
}

pub async fn send_batch(c: &Client, url: &str, n: u64) -> Result<u64> {
    let mut req = c.send_message_batch().queue_url(url);
    for i in 0..10u64 {
        req = req.entries(
            SendMessageBatchRequestEntry::builder()
                .id(format!("e{i}"))
                .message_body(body(n * 10 + i))
                .build()?,
        );
    }
    let out = req.send().await.context("SendMessageBatch")?;
    ensure!(
        out.failed().is_empty(),
        "SendMessageBatch failed entries: {:?}",
        out.failed()
    );
    Ok(out.successful().len() as u64)
}

/// SendMessageBatch of 10 to a FIFO queue: message `k` of the batch goes to group
/// `k mod groups` with its own deduplication id.
pub async fn send_batch_fifo(c: &Client, url: &str, n: u64, groups: u64) -> Result<u64> {
    let mut req = c.send_message_batch().queue_url(url);
    for i in 0..10u64 {
        let k = n * 10 + i;
        req = req.entries(
            SendMessageBatchRequestEntry::builder()
                .id(format!("e{i}"))
                .message_body(body(k))
                .message_group_id(format!("g{}", k % groups.max(1)))
                .message_deduplication_id(format!("m{k}"))
                .build()?,
        );
    }
    let out = req.send().await.context("SendMessageBatch (FIFO)")?;
    ensure!(
        out.failed().is_empty(),
        "SendMessageBatch failed entries: {:?}",
        out.failed()
    );
    Ok(out.successful().len() as u64)
}

/// One ReceiveMessage of up to `max`, then one DeleteMessageBatch (or DeleteMessage for one).
/// Answers the number of messages deleted.
pub async fn receive_delete(c: &Client, url: &str, max: i32, wait: i32) -> Result<u64> {
    let out = c
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(max)
        .wait_time_seconds(wait)
        .send()
        .await
        .context("ReceiveMessage")?;
    let handles: Vec<&str> = out
        .messages()
        .iter()
        .filter_map(|m| m.receipt_handle())
        .collect();
    match handles.len() {
        0 => Ok(0),
        1 => {
            c.delete_message()
                .queue_url(url)
                .receipt_handle(handles[0])
                .send()
                .await
                .context("DeleteMessage")?;
            Ok(1)
        }
        n => {
            let mut req = c.delete_message_batch().queue_url(url);
            for (i, h) in handles.iter().enumerate() {
                req = req.entries(
                    DeleteMessageBatchRequestEntry::builder()
                        .id(format!("d{i}"))
                        .receipt_handle(*h)
                        .build()?,
                );
            }
            let out = req.send().await.context("DeleteMessageBatch")?;
            ensure!(
                out.failed().is_empty(),
                "DeleteMessageBatch failed entries: {:?}",
                out.failed()
            );
            Ok(n as u64)
        }
    }
}

/// One ReceiveMessage of one message, no wait: answers its receipt handle.
pub async fn receive_one(c: &Client, url: &str) -> Result<Option<String>> {
    let out = c
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(1)
        .wait_time_seconds(0)
        .send()
        .await
        .context("ReceiveMessage")?;
    Ok(out
        .messages()
        .first()
        .and_then(|m| m.receipt_handle())
        .map(str::to_string))
}

pub async fn delete_one(c: &Client, url: &str, handle: &str) -> Result<()> {
    c.delete_message()
        .queue_url(url)
        .receipt_handle(handle)
        .send()
        .await
        .context("DeleteMessage")?;
    Ok(())
}

/// The SNS side: a topic and its publishes, on the same SDK configuration as the SQS client.
pub mod sns {
    use anyhow::{Context, Result};
    use aws_sdk_sns::Client;

    /// A standard topic; answers its ARN.
    pub async fn create_topic(c: &Client, name: &str) -> Result<String> {
        let out = c
            .create_topic()
            .name(name)
            .send()
            .await
            .context("CreateTopic")?;
        out.topic_arn().map(str::to_string).context("no TopicArn")
    }

    /// Subscribes an SQS queue by its ARN (with `raw`, RawMessageDelivery=true: the message
    /// alone, no signed JSON envelope); answers the subscription ARN.
    pub async fn subscribe_queue(
        c: &Client,
        topic: &str,
        queue_arn: &str,
        raw: bool,
    ) -> Result<String> {
        let mut req = c
            .subscribe()
            .topic_arn(topic)
            .protocol("sqs")
            .endpoint(queue_arn)
            .return_subscription_arn(true);
        if raw {
            req = req.attributes("RawMessageDelivery", "true");
        }
        let out = req.send().await.context("Subscribe")?;
        out.subscription_arn()
            .map(str::to_string)
            .context("no SubscriptionArn")
    }

    pub async fn delete_topic(c: &Client, topic: &str) {
        let _ = c.delete_topic().topic_arn(topic).send().await;
    }

    /// A 256-byte message body.
    pub fn body(n: u64) -> String {
        let head = format!("sns benchmark message {n:>10} ");
        format!("{head}{}", ".".repeat(256 - head.len()))
    }

    /// One Publish of a 256-byte message.
    pub async fn publish(c: &Client, topic: &str, n: u64) -> Result<u64> {
        c.publish()
            .topic_arn(topic)
            .message(body(n))
            .send()
            .await
            .context("Publish")?;
        Ok(1)
    }
}
