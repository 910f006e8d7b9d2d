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
//! FIFO: the entries of one claim are one gesture. A batch's entries are grouped by lease
//! first; a claim of several messages settles through its record (see `claims`): deletes
//! ack the longest deleted prefix, a visibility change is one extension or one release.

use super::batch;
use super::claims::{self, Stored};
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
    let stored = registry::by_url_recent(ctx, &input).await?;
    let handle = open_handle(ctx, &stored.record, input.str("ReceiptHandle")?)?;
    if stored.record.fifo {
        let mut r = delete_fifo(ctx, &stored.record, &[handle]).await?;
        return r.pop().unwrap_or(Ok(())).map(|_| json!({}));
    }
    let r = ctx.queen.ack(&ack(&handle, "completed")).await?;
    deleted(&r)?;
    Ok(json!({}))
}

/// Deletes on a FIFO queue, grouped by claim; one verdict per handle, in order.
async fn delete_fifo<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    handles: &[ReceiptHandle],
) -> Result<Vec<Result<(), ApiError>>, ApiError> {
    let mut leases: Vec<String> = Vec::new();
    for h in handles {
        if !leases.contains(&h.lease_id) {
            leases.push(h.lease_id.clone());
        }
    }
    let records = claims::load(ctx, &leases).await?;
    let mut verdicts: Vec<Result<(), ApiError>> = handles.iter().map(|_| Ok(())).collect();
    let mut direct: Vec<usize> = Vec::new();
    for (lease, record) in leases.iter().zip(records) {
        let members: Vec<usize> = (0..handles.len())
            .filter(|&i| &handles[i].lease_id == lease)
            .collect();
        let Some(rec) = record else {
            // A single-message claim (or one already settled): acked as ever.
            direct.extend(members);
            continue;
        };
        let (inside, outside): (Vec<usize>, Vec<usize>) = members
            .into_iter()
            .partition(|&i| rec.record.holds(&handles[i].message_id));
        direct.extend(outside);
        if inside.is_empty() {
            continue;
        }
        let verdict = delete_in_claim(
            ctx,
            q,
            lease,
            rec,
            &inside
                .iter()
                .map(|&i| handles[i].clone())
                .collect::<Vec<_>>(),
        )
        .await;
        for i in inside {
            verdicts[i] = verdict.clone();
        }
    }
    if !direct.is_empty() {
        let acks: Vec<Ack> = direct
            .iter()
            .map(|&i| ack(&handles[i], "completed"))
            .collect();
        let answers = ctx.queen.ack_batch(&acks).await?;
        for (i, r) in direct.into_iter().zip(answers) {
            verdicts[i] = deleted(&r);
        }
    }
    Ok(verdicts)
}

/// Deletes some of a recorded claim's messages: record them, ack the deleted prefix, keep
/// the partition's delete-set in step.
async fn delete_in_claim<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    lease: &str,
    rec: Stored,
    handles: &[ReceiptHandle],
) -> Result<(), ApiError> {
    let pid = rec.record.partition_id.clone();
    let ids: Vec<String> = handles.iter().map(|h| h.message_id.clone()).collect();
    let Some(plan) = claims::record_deletes(ctx, lease, rec, &ids).await? else {
        return Ok(());
    };
    if let Some(txn) = &plan.ack_txn {
        let r = ctx
            .queen
            .ack(&claims::ack(txn, &pid, lease, "completed"))
            .await?;
        deleted(&r)?;
    }
    let added: Vec<String> = plan
        .pending
        .iter()
        .filter(|id| ids.contains(id))
        .cloned()
        .collect();
    claims::update_deleted_set(
        ctx,
        &q.name,
        &pid,
        &added,
        &plan.covered,
        q.retention_seconds(),
    )
    .await
}

/// One `POST /ack/batch` for every well-formed handle; each claim is its own lease, so
/// the items are independent of one another.
pub async fn delete_message_batch<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let entries = batch::entries(&input, "DeleteMessageBatchRequestEntry")?;
    if stored.record.fifo {
        let mut results: Vec<(&str, Result<Value, ApiError>)> = Vec::new();
        let mut handles = Vec::new();
        let mut slot_of = Vec::new();
        for (id, e) in &entries {
            match e
                .str("ReceiptHandle")
                .and_then(|h| open_handle(ctx, &stored.record, h))
            {
                Ok(h) => {
                    slot_of.push(results.len());
                    handles.push(h);
                    results.push((id, Ok(json!({ "Id": id }))));
                }
                Err(err) => results.push((id, Err(err))),
            }
        }
        if !handles.is_empty() {
            let verdicts = delete_fifo(ctx, &stored.record, &handles).await?;
            for (slot, v) in slot_of.into_iter().zip(verdicts) {
                if let Err(e) = v {
                    results[slot].1 = Err(e);
                }
            }
        }
        return Ok(batch::answer(results));
    }
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
    let stored = registry::by_url_recent(ctx, &input).await?;
    let handle = open_handle(ctx, &stored.record, input.str("ReceiptHandle")?)?;
    let seconds = visibility_param(&input)?;
    if stored.record.fifo {
        change_claim(ctx, &handle, seconds).await?;
    } else {
        change(ctx, &handle, seconds).await?;
    }
    Ok(json!({}))
}

/// Per entry, concurrently.
pub async fn change_message_visibility_batch<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let entries = batch::entries(&input, "ChangeMessageVisibilityBatchRequestEntry")?;
    if q.fifo {
        return change_batch_fifo(ctx, q, &entries).await;
    }
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

/// A FIFO batch grouped by (claim, timeout): one extension or one release per group,
/// its verdict given to every entry of it. Groups run in entry order.
async fn change_batch_fifo<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    entries: &[(&str, Input<'_>)],
) -> Result<Value, ApiError> {
    let mut results: Vec<(&str, Result<Value, ApiError>)> = Vec::new();
    let mut groups: Vec<(ReceiptHandle, u64, Vec<usize>)> = Vec::new();
    for (id, e) in entries {
        let opened = e
            .str("ReceiptHandle")
            .and_then(|h| open_handle(ctx, q, h))
            .and_then(|h| visibility_param(e).map(|s| (h, s)));
        match opened {
            Ok((h, s)) => {
                let slot = results.len();
                results.push((id, Ok(json!({ "Id": id }))));
                match groups
                    .iter_mut()
                    .find(|(g, gs, _)| g.lease_id == h.lease_id && *gs == s)
                {
                    Some((_, _, slots)) => slots.push(slot),
                    None => groups.push((h, s, vec![slot])),
                }
            }
            Err(err) => results.push((id, Err(err))),
        }
    }
    for (h, s, slots) in groups {
        let verdict = change_claim(ctx, &h, s).await;
        for slot in slots {
            if let Err(e) = &verdict {
                results[slot].1 = Err(e.clone());
            }
        }
    }
    Ok(batch::answer(results))
}

/// A visibility change of a whole FIFO claim: the lease covers every message of it.
async fn change_claim<T: Transport>(
    ctx: &Ctx<'_, T>,
    h: &ReceiptHandle,
    seconds: u64,
) -> Result<(), ApiError> {
    let record = claims::load(ctx, std::slice::from_ref(&h.lease_id))
        .await?
        .pop()
        .flatten();
    change(ctx, h, seconds).await?;
    match record {
        Some(_) if seconds == 0 => claims::forget(ctx, &h.lease_id).await,
        Some(r) => claims::refresh(ctx, &h.lease_id, &r, seconds).await,
        None => {}
    }
    Ok(())
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
