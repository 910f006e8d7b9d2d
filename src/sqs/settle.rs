//! `DeleteMessage`, `ChangeMessageVisibility` and their batches: open each receipt handle
//! (minted by us and for this queue, or `ReceiptHandleIsInvalid`), check the timeout, and
//! hand the deliveries to the room that holds them (`inflight`), which answers a verdict
//! per handle.
//!
//! - A stale handle deletes nothing and answers success, SQS's documented contract.
//! - A visibility change after the visibility ended answers success and changes nothing;
//!   a change of a message deleted or purged since is `InvalidParameterValue` in SQS's
//!   words; of a lease or claim that is gone, `MessageNotInflight`.
//! - Total visibility is capped at 12 hours from the receive (SQS's limit), which also
//!   bounds a FIFO claim's lease.

use super::batch;
use super::inflight::{self, Changed, Removed, MAX_VISIBILITY_SECONDS};
use super::input::Input;
use super::receive::visibility_param;
use super::registry::{self, QueueRecord};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{open, ReceiptHandle};
use crate::wire::{ApiError, ErrorCode};
use serde_json::{json, Value};

pub async fn delete_message<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let text = input.str("ReceiptHandle")?;
    let handle = open_handle(ctx, q, text)?;
    let mut verdicts = inflight::delete(ctx, q, &[handle]).await?;
    answer_delete(verdicts.pop().unwrap_or(Ok(Removed::Done)), text)?;
    Ok(json!({}))
}

/// What SQS answers a delete: success (stale handles included), but a FIFO handle whose
/// visibility ended is refused as expired, quoted whole as SQS quotes it.
fn answer_delete(verdict: Result<Removed, ApiError>, text: &str) -> Result<(), ApiError> {
    match verdict? {
        Removed::Done => Ok(()),
        Removed::Expired => Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            format!("Value {text} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired."),
        )),
    }
}

pub async fn delete_message_batch<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let entries = batch::entries(&input, "DeleteMessageBatchRequestEntry")?;
    let mut results: Vec<(&str, Result<Value, ApiError>)> = Vec::new();
    let mut handles: Vec<ReceiptHandle> = Vec::new();
    let mut opened: Vec<(usize, &str)> = Vec::new();
    for (id, e) in &entries {
        let handle = e
            .str("ReceiptHandle")
            .and_then(|text| Ok((text, open_handle(ctx, q, text)?)));
        match handle {
            Ok((text, h)) => {
                opened.push((results.len(), text));
                handles.push(h);
                results.push((id, Ok(json!({ "Id": id }))));
            }
            Err(err) => results.push((id, Err(err))),
        }
    }
    if !handles.is_empty() {
        let verdicts = inflight::delete(ctx, q, &handles).await?;
        for ((slot, text), v) in opened.into_iter().zip(verdicts) {
            if let Err(e) = answer_delete(v, text) {
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
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let text = input.str("ReceiptHandle")?;
    let change = opened_change(ctx, q, text, &input)?;
    let verdict = inflight::change(ctx, q, &[change]).await.pop();
    answer_change(verdict.unwrap_or(Ok(Changed::Applied)), text)?;
    Ok(json!({}))
}

/// Every well-formed entry handed over at once; a verdict per entry.
pub async fn change_message_visibility_batch<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let entries = batch::entries(&input, "ChangeMessageVisibilityBatchRequestEntry")?;
    let mut results: Vec<(&str, Result<Value, ApiError>)> = Vec::new();
    let mut changes: Vec<(ReceiptHandle, u64)> = Vec::new();
    let mut opened: Vec<(usize, &str)> = Vec::new();
    for (id, e) in &entries {
        let change = e
            .str("ReceiptHandle")
            .and_then(|text| Ok((text, opened_change(ctx, q, text, e)?)));
        match change {
            Ok((text, c)) => {
                opened.push((results.len(), text));
                changes.push(c);
                results.push((id, Ok(json!({ "Id": id }))));
            }
            Err(err) => results.push((id, Err(err))),
        }
    }
    let verdicts = inflight::change(ctx, q, &changes).await;
    for ((slot, _), verdict) in opened.into_iter().zip(verdicts) {
        if let Err(e) = answer_change_entry(verdict) {
            results[slot].1 = Err(e);
        }
    }
    Ok(batch::answer(results))
}

/// A batch entry's answer differs from the single call's in one case: a deleted message's
/// entry fails `ReceiptHandleIsInvalid`, unquoted (recorded on AWS by the Go CDK's
/// conformance suite; its driver drops exactly that code from a nack's failures).
fn answer_change_entry(verdict: Result<Changed, ApiError>) -> Result<(), ApiError> {
    match verdict? {
        Changed::Applied | Changed::Visible => Ok(()),
        Changed::Deleted => Err(ApiError::new(
            ErrorCode::ReceiptHandleIsInvalid,
            "Message does not exist or is not available for visibility timeout change",
        )),
    }
}

/// One change's handle opened and its timeout checked.
fn opened_change<T>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    text: &str,
    input: &Input,
) -> Result<(ReceiptHandle, u64), ApiError> {
    let handle = open_handle(ctx, q, text)?;
    let seconds = visibility_param(input)?;
    check_total_visibility(ctx, &handle, seconds)?;
    Ok((handle, seconds))
}

/// What SQS answers a change: success while the message exists (a change after the
/// visibility ended changes nothing), the handle refused once deleted. `text` opened as
/// one of ours, so it is of a size we mint and is quoted whole, as SQS does.
fn answer_change(verdict: Result<Changed, ApiError>, text: &str) -> Result<(), ApiError> {
    match verdict? {
        Changed::Applied | Changed::Visible => Ok(()),
        Changed::Deleted => Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            format!(
                "Value {} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.",
                text
            ),
        )),
    }
}

/// SQS's cap: a message stays invisible at most 12 hours from its receive, however often
/// its visibility is changed. It is also what bounds a FIFO claim's lease, so that the
/// group's record (`inflight::claim_record`) outlives it.
fn check_total_visibility<T>(
    ctx: &Ctx<'_, T>,
    h: &ReceiptHandle,
    seconds: u64,
) -> Result<(), ApiError> {
    let ends_ms = inflight::received_ms(h) + MAX_VISIBILITY_SECONDS * 1000;
    if seconds == 0 || ctx.now_ms + seconds as i64 * 1000 <= ends_ms {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorCode::InvalidParameterValue,
        format!(
            "Value {seconds} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [{} seconds]",
            MAX_VISIBILITY_SECONDS
        ),
    ))
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

/// Enough of a client's token to recognise it in an error, never the whole of a huge one.
fn clip(s: &str) -> String {
    s.chars().take(128).collect()
}
