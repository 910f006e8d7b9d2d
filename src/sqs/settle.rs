//! `DeleteMessage`, `ChangeMessageVisibility` and their batches: open the receipt
//! handle, then act on what it names. A standard queue's message in flight is held by a
//! visibility timer (see `visibility`); what follows is about handles that name a broker
//! lease (FIFO claims, `VisibilityTimeout=0` receives, handles minted before timers).
//!
//! - Delete is ack `completed`. A stale handle (lease gone, cursor already past, nothing
//!   to resolve) deletes nothing and answers success, which is SQS's documented contract;
//!   only a handle this facade did not mint, or minted for another queue, is
//!   `ReceiptHandleIsInvalid`.
//! - A visibility change is a lease extension, or at 0 ack `retry` (released, no charge
//!   against the retry budget). A lease that is gone is `MessageNotInflight`. The broker
//!   never shortens a lease, so a timeout SHORTER than what remains keeps the longer one;
//!   only 0 makes a message visible before its lease ends. Total visibility is capped at
//!   12 hours from the receive (SQS's limit), which also bounds a FIFO claim's lease.
//!
//! FIFO: the entries of one claim are one gesture. A batch's entries are grouped by lease
//! first; deletes settle through the group's record (see `claims`): a delete is recorded
//! only while the record names the handle's lease, then the longest deleted prefix is
//! acked; a visibility change is one extension or one release.

use super::batch;
use super::claims::{self, Lookup, Recorded};
use super::hold::Hold;
use super::input::Input;
use super::receive::{visibility_param, HANDLE_LIFETIME_MS, MAX_VISIBILITY_SECONDS};
use super::registry::{self, QueueRecord};
use super::visibility;
use crate::http::Transport;
use crate::model::{open, ReceiptHandle};
use crate::queen::{Ack, AckResult, AckVerdict};
use crate::ctx::Ctx;
use crate::wire::{ApiError, ErrorCode};
use futures_util::future::join_all;
use serde_json::{json, Value};

pub async fn delete_message<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let handle = open_handle(ctx, q, input.str("ReceiptHandle")?)?;
    let mut verdicts = match Hold::of(q, &handle) {
        Hold::Claim => delete_fifo(ctx, q, &[handle]).await?,
        Hold::Timer => visibility::delete(ctx, q, &[&handle]).await?,
        Hold::Lease => vec![deleted(&ctx.queen.ack(&ack(&handle, "completed")).await?)],
    };
    verdicts.pop().unwrap_or(Ok(())).map(|_| json!({}))
}

/// Deletes on a FIFO queue, grouped by claim; one verdict per handle, in order.
async fn delete_fifo<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    handles: &[ReceiptHandle],
) -> Result<Vec<Result<(), ApiError>>, ApiError> {
    let mut claims: Vec<(String, String)> = Vec::new();
    for h in handles {
        let c = (h.partition_id.clone(), h.lease_id.clone());
        if !claims.contains(&c) {
            claims.push(c);
        }
    }
    let lookups = claims::lookup(ctx, q, &claims).await?;
    let mut verdicts: Vec<Result<(), ApiError>> = handles.iter().map(|_| Ok(())).collect();
    let mut direct: Vec<usize> = Vec::new();
    for ((pid, lease), lookup) in claims.iter().zip(lookups) {
        let members: Vec<usize> = (0..handles.len())
            .filter(|&i| handles[i].lease_id == *lease && handles[i].partition_id == *pid)
            .collect();
        let current = match lookup {
            // A single-message claim (or one settled): acked as ever.
            Lookup::Unrecorded => {
                direct.extend(members);
                continue;
            }
            // Never ack through a claim recorded the old way: its lease runs out instead.
            Lookup::Legacy => continue,
            Lookup::Recorded(current) => current,
        };
        let held = |i: &usize| {
            current
                .record
                .as_ref()
                .is_some_and(|r| r.lease == *lease && r.holds(&handles[*i].message_id))
        };
        let (inside, outside): (Vec<usize>, Vec<usize>) = members.into_iter().partition(held);
        // Not in the record under its lease: received again since (stale: nothing to do),
        // or already acked and pruned (an ack would be a no-op).
        drop(outside);
        if inside.is_empty() {
            continue;
        }
        let ids: Vec<String> = inside
            .iter()
            .map(|&i| handles[i].message_id.clone())
            .collect();
        let verdict = delete_in_claim(ctx, q, pid, lease, current, &ids).await;
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

/// Deletes some of a recorded claim's messages: record them (that is the delete), then
/// ack the deleted prefix and forget what the ack completed.
async fn delete_in_claim<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    pid: &str,
    lease: &str,
    current: claims::Stored,
    ids: &[String],
) -> Result<(), ApiError> {
    match claims::record(ctx, q, pid, lease, current, ids, claims::Mark::Deleted).await? {
        Recorded::Stale => Ok(()),
        Recorded::Pending { release } => {
            release_claim(ctx, pid, lease, release).await;
            Ok(())
        }
        Recorded::Ack {
            txn,
            covers,
            release,
        } => {
            let r = ctx
                .queen
                .ack(&claims::ack(&txn, pid, lease, "completed"))
                .await?;
            match r.verdict() {
                AckVerdict::Applied => {
                    claims::forget_acked(ctx, q, pid, lease, &covers).await?;
                    release_claim(ctx, pid, lease, release).await;
                    Ok(())
                }
                // Recorded: the group's next receive acks them on its way through.
                AckVerdict::Stale => Ok(()),
                AckVerdict::Failed => Err(not_deleted()),
            }
        }
    }
}

/// Releases a FIFO claim whose messages left were all given a visibility of 0 (ack
/// `retry` at the first of them). A release that fails leaves the lease to run out.
async fn release_claim<T: Transport>(ctx: &Ctx<'_, T>, pid: &str, lease: &str, at: Option<String>) {
    if let Some(txn) = at {
        let _lease_runs_out_otherwise =
            ctx.queen.ack(&claims::ack(&txn, pid, lease, "retry")).await;
    }
}

/// A FIFO visibility change to 0 of some messages of ONE claim. SQS keeps a group blocked
/// while any of its messages is in flight, so the claim's lease is released only once
/// every message left in it was deleted or released; until then the release is recorded.
async fn release_in_claim<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    handles: &[&ReceiptHandle],
) -> Result<(), ApiError> {
    let Some(h) = handles.first() else {
        return Ok(());
    };
    let claim = [(h.partition_id.clone(), h.lease_id.clone())];
    let Some(Lookup::Recorded(current)) = claims::lookup(ctx, q, &claim).await?.pop() else {
        // A claim of one message (or settled): its release is the whole claim's.
        return change(ctx, h, 0).await;
    };
    let ids: Vec<String> = handles.iter().map(|h| h.message_id.clone()).collect();
    let held = current
        .record
        .as_ref()
        .is_some_and(|r| r.lease == h.lease_id && ids.iter().all(|id| r.holds(id)));
    if !held {
        return Err(not_inflight());
    }
    match claims::record(
        ctx,
        q,
        &h.partition_id,
        &h.lease_id,
        current,
        &ids,
        claims::Mark::Released,
    )
    .await?
    {
        Recorded::Stale => Err(not_inflight()),
        Recorded::Pending { release } | Recorded::Ack { release, .. } => match release {
            Some(_) => change(ctx, h, 0).await,
            None => Ok(()),
        },
    }
}

/// Every well-formed handle, sorted by how its message is held: FIFO claims through their
/// groups' records, timers in one timers call, leases in one `POST /ack/batch`.
pub async fn delete_message_batch<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let entries = batch::entries(&input, "DeleteMessageBatchRequestEntry")?;
    let mut results: Vec<(&str, Result<Value, ApiError>)> = Vec::new();
    // Per kind of hold: the handles and their entries' slots in `results`.
    let mut held: [(Vec<ReceiptHandle>, Vec<usize>); 3] = Default::default();
    for (id, e) in &entries {
        match e.str("ReceiptHandle").and_then(|h| open_handle(ctx, q, h)) {
            Ok(h) => {
                let (handles, slots) = &mut held[Hold::of(q, &h) as usize];
                slots.push(results.len());
                handles.push(h);
                results.push((id, Ok(json!({ "Id": id }))));
            }
            Err(err) => results.push((id, Err(err))),
        }
    }
    for (kind, (handles, slots)) in Hold::ALL.into_iter().zip(held) {
        if handles.is_empty() {
            continue;
        }
        let verdicts = match kind {
            Hold::Claim => delete_fifo(ctx, q, &handles).await?,
            Hold::Timer => {
                let refs: Vec<&ReceiptHandle> = handles.iter().collect();
                visibility::delete(ctx, q, &refs).await?
            }
            Hold::Lease => {
                let acks: Vec<Ack> = handles.iter().map(|h| ack(h, "completed")).collect();
                ctx.queen
                    .ack_batch(&acks)
                    .await?
                    .iter()
                    .map(deleted)
                    .collect()
            }
        };
        for (slot, v) in slots.into_iter().zip(verdicts) {
            if let Err(e) = v {
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
    check_total_visibility(ctx, &handle, seconds)?;
    let q = &stored.record;
    match Hold::of(q, &handle) {
        Hold::Timer => {
            let changed = visibility::change(ctx, q, &handle, seconds).await?;
            answer_timed_change(changed, input.str("ReceiptHandle")?)?
        }
        Hold::Claim if seconds == 0 => release_in_claim(ctx, q, &[&handle]).await?,
        Hold::Claim | Hold::Lease => change(ctx, &handle, seconds).await?,
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
        check_total_visibility(ctx, &handle, seconds)?;
        match Hold::of(q, &handle) {
            Hold::Timer => {
                let changed = visibility::change(ctx, q, &handle, seconds).await?;
                answer_timed_change(changed, e.str("ReceiptHandle")?)?
            }
            // A FIFO batch is grouped by claim first (`change_batch_fifo`).
            Hold::Claim | Hold::Lease => change(ctx, &handle, seconds).await?,
        }
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
    let mut groups: Vec<(Vec<ReceiptHandle>, u64, Vec<usize>)> = Vec::new();
    for (id, e) in entries {
        let opened = e
            .str("ReceiptHandle")
            .and_then(|h| open_handle(ctx, q, h))
            .and_then(|h| visibility_param(e).map(|s| (h, s)))
            .and_then(|(h, s)| check_total_visibility(ctx, &h, s).map(|_| (h, s)));
        match opened {
            Ok((h, s)) => {
                let slot = results.len();
                results.push((id, Ok(json!({ "Id": id }))));
                match groups
                    .iter_mut()
                    .find(|(g, gs, _)| g[0].lease_id == h.lease_id && *gs == s)
                {
                    Some((hs, _, slots)) => {
                        hs.push(h);
                        slots.push(slot);
                    }
                    None => groups.push((vec![h], s, vec![slot])),
                }
            }
            Err(err) => results.push((id, Err(err))),
        }
    }
    for (hs, s, slots) in groups {
        let verdict = if s == 0 {
            let refs: Vec<&ReceiptHandle> = hs.iter().collect();
            release_in_claim(ctx, q, &refs).await
        } else {
            change(ctx, &hs[0], s).await
        };
        for slot in slots {
            if let Err(e) = &verdict {
                results[slot].1 = Err(e.clone());
            }
        }
    }
    Ok(batch::answer(results))
}

/// What SQS answers a change of a timed delivery: success while the message exists (a
/// change after the visibility ended changes nothing), the handle refused once deleted.
/// `text` opened as one of ours, so it is of a size we mint and is quoted whole, as SQS does.
fn answer_timed_change(changed: visibility::Changed, text: &str) -> Result<(), ApiError> {
    match changed {
        visibility::Changed::Applied | visibility::Changed::Visible => Ok(()),
        visibility::Changed::Deleted => Err(ApiError::new(
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
/// group's record (`claims`) outlives it. The receive time is read off the handle.
fn check_total_visibility<T>(
    ctx: &Ctx<'_, T>,
    h: &ReceiptHandle,
    seconds: u64,
) -> Result<(), ApiError> {
    let received_ms = h.expiry_unix_ms - HANDLE_LIFETIME_MS;
    if seconds == 0 || ctx.now_ms + seconds as i64 * 1000 <= received_ms + HANDLE_LIFETIME_MS {
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

/// One extension, or at 0 one release, of the lease the handle names: on a FIFO queue that
/// is the whole claim, and its record is left as it is (the group's next receive rewrites
/// it; deletes recorded meanwhile are still honoured).
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

/// A delete's verdict: applied or stale (success to the client), or a broker failure.
fn deleted(r: &AckResult) -> Result<(), ApiError> {
    match r.verdict() {
        AckVerdict::Applied | AckVerdict::Stale => Ok(()),
        AckVerdict::Failed => Err(not_deleted()),
    }
}

fn not_deleted() -> ApiError {
    ApiError::new(
        ErrorCode::InternalError,
        "The message could not be deleted; try again.",
    )
}

pub(crate) fn not_inflight() -> ApiError {
    ApiError::new(
        ErrorCode::MessageNotInflight,
        "Message does not exist or is not available for visibility timeout change.",
    )
}

/// Enough of a client's token to recognise it in an error, never the whole of a huge one.
fn clip(s: &str) -> String {
    s.chars().take(128).collect()
}
