//! The SQS side: a real AWS SDK for Rust client against the facade, and the calls the
//! scenarios time.

use anyhow::{ensure, Context, Result};
use aws_config::BehaviorVersion;
use aws_sdk_sqs::config::{Credentials, Region};
use aws_sdk_sqs::types::{
    DeleteMessageBatchRequestEntry, QueueAttributeName, SendMessageBatchRequestEntry,
};
use aws_sdk_sqs::Client;

/// A client configured as an application would: static keys, a region, an endpoint URL.
/// The HTTP client is the SDK's own hyper 1 connector, built without TLS (loopback http).
pub async fn client(endpoint: &str) -> Client {
    let http = aws_smithy_http_client::Builder::new().build_http();
    let conf = aws_config::defaults(BehaviorVersion::latest())
        .http_client(http)
        .credentials_provider(Credentials::new("test", "test", None, None, "bench"))
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .load()
        .await;
    Client::new(&conf)
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
