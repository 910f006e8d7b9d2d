//! `DeleteMessage`, `ChangeMessageVisibility` and their batches: open the receipt
//! handle, then act under the lease it names.
//!
//! - Delete is ack `completed`. A stale handle (lease gone, cursor already past, nothing
//!   to resolve) deletes nothing and answers success, which is SQS's documented contract;
//!   only a handle this facade did not mint, or minted for another queue, is
//!   `ReceiptHandleIsInvalid`.
//! - A visibility change is a lease extension, or at 0 ack `retry` (released, no charge
//!   against the retry budget). A lease that is gone is `MessageNotInflight`. The broker
//!   never shortens a lease, so a timeout SHORTER than what remains keeps the longer one;
//!   only 0 makes a message visible before its lease ends.
//!
//! FIFO claim grouping and the out-of-order delete-set. The contract groups a FIFO batch's
//! entries by claim and keeps deletes that arrive out of order in a KV delete-set. Both
//! exist for claims holding SEVERAL messages of one group. Every pop this facade issues is
//! `batch=1`, so every claim (lease) holds exactly one message: grouping by lease is the
//! identity, no delete can be "out of order" inside a claim, and a delete-set would never
//! hold anything. They are deliberately not built; should receives ever claim runs, this
//! is where they belong.

use super::batch;
use super::input::Input;
use super::receive::visibility_param;
use super::registry::{self, QueueRecord};
use crate::http::Transport;
use crate::model::{open, ReceiptHandle};
use crate::queen::{Ack, AckResult};
use crate::service::Ctx;
use crate::wire::{ApiError, ErrorCode};
use futures_util::future::join_all;
use serde_json::{json, Value};

pub async fn delete_message<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let handle = open_handle(ctx, &stored.record, input.str("ReceiptHandle")?)?;
    let r = ctx.queen.ack(&ack(&handle, "completed")).await?;
    deleted(&r)?;
    Ok(json!({}))
}

/// One `POST /ack/batch` for every well-formed handle; each claim is its own lease, so
/// the items are independent of one another.
pub async fn delete_message_batch<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let entries = batch::entries(&input, "DeleteMessageBatchRequestEntry")?;
    let mut results: Vec<(&str, Result<Value, ApiError>)> = Vec::new();
    let mut acks = Vec::new();
    let mut slot_of = Vec::new();
    for (id, e) in &entries {
        let opened = e
            .str("ReceiptHandle")
            .and_then(|h| open_handle(ctx, &stored.record, h));
        match opened {
            Ok(h) => {
                slot_of.push(results.len());
                acks.push(ack(&h, "completed"));
                results.push((id, Ok(json!({ "Id": id }))));
            }
            Err(err) => results.push((id, Err(err))),
        }
    }
    if !acks.is_empty() {
        let answers = ctx.queen.ack_batch(&acks).await?;
        for (slot, r) in slot_of.into_iter().zip(answers) {
            if let Err(e) = deleted(&r) {
                results[slot].1 = Err(e);
            }
        }
    }
    Ok(batch::answer(results))
}

pub async fn change_message_visibility<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let handle = open_handle(ctx, &stored.record, input.str("ReceiptHandle")?)?;
    let seconds = visibility_param(&input)?;
    change(ctx, &handle, seconds).await?;
    Ok(json!({}))
}

/// Per entry, concurrently.
pub async fn change_message_visibility_batch<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url(ctx, &input).await?;
    let q = &stored.record;
    let entries = batch::entries(&input, "ChangeMessageVisibilityBatchRequestEntry")?;
    let outcomes = join_all(entries.iter().map(|(id, e)| async move {
        let handle = open_handle(ctx, q, e.str("ReceiptHandle")?)?;
        let seconds = visibility_param(e)?;
        change(ctx, &handle, seconds).await?;
        Ok(json!({ "Id": id }))
    }))
    .await;
    let results = entries
        .iter()
        .zip(outcomes)
        .map(|((id, _), r)| (*id, r))
        .collect();
    Ok(batch::answer(results))
}

async fn change<T: Transport>(
    ctx: &Ctx<'_, T>,
    h: &ReceiptHandle,
    seconds: u64,
) -> Result<(), ApiError> {
    if seconds == 0 {
        let r = ctx.queen.ack(&ack(h, "retry")).await?;
        if r.success && !r.noop {
            return Ok(());
        }
        return Err(not_inflight());
    }
    let r = ctx.queen.extend(&h.lease_id, seconds).await?;
    if r.renewed > 0 {
        Ok(())
    } else {
        Err(not_inflight())
    }
}

/// The handle's claims, checked: minted by us (the MAC) and for this queue.
fn open_handle<T>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    text: &str,
) -> Result<ReceiptHandle, ApiError> {
    match open(text, &ctx.cfg.handle_secret) {
        Ok(h) if h.queue == q.name => Ok(h),
        _ => Err(ApiError::new(
            ErrorCode::ReceiptHandleIsInvalid,
            format!(
                "The input receipt handle \"{}\" is not a valid receipt handle.",
                clip(text)
            ),
        )),
    }
}

fn ack(h: &ReceiptHandle, status: &'static str) -> Ack {
    Ack {
        transaction_id: h.transaction_id.clone(),
        partition_id: h.partition_id.clone(),
        status,
        lease_id: Some(h.lease_id.clone()),
    }
}

/// A delete's verdict: applied, or stale (success to the client), or a broker failure.
fn deleted(r: &AckResult) -> Result<(), ApiError> {
    const STALE: &[&str] = &[
        "invalid or expired lease",
        "consumer not found",
        "already committed",
        "unresolvable",
        "unresolved",
        "no leased batch",
        "position beyond leased batch",
    ];
    let err = r.error.as_deref().unwrap_or("");
    if r.success || STALE.iter().any(|p| err.starts_with(p)) {
        Ok(())
    } else {
        Err(ApiError::new(
            ErrorCode::InternalError,
            "The message could not be deleted; try again.",
        ))
    }
}

fn not_inflight() -> ApiError {
    ApiError::new(
        ErrorCode::MessageNotInflight,
        "Message does not exist or is not available for visibility timeout change.",
    )
}

/// Enough of a client's token to recognise it in an error, never the whole of a huge one.
fn clip(s: &str) -> String {
    s.chars().take(128).collect()
}
