//! Deletes and visibility changes of FIFO claims: the entries of one claim are one
//! gesture. Handles are grouped by claim first; deletes settle through the group's record
//! (`claim_record`): a delete is recorded only while the record names the handle's lease,
//! then the longest deleted prefix is acked; a visibility change is one extension of the
//! claim's lease, or at 0 a release recorded until every message left in the claim was
//! deleted or released (SQS keeps the group blocked meanwhile).

use super::claim_record::{self, AtOnce, Lookup, Mark, Recorded, Stored};
use super::lease::{self, deleted};
use super::{not_deleted, not_inflight, Changed, Removed};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::ReceiptHandle;
use crate::queen::{Ack, AckStatus, AckVerdict, PoppedMessage};
use crate::sqs::registry::QueueRecord;
use crate::wire::ApiError;

/// Deletes on a FIFO queue, grouped by claim; one verdict per handle, in order.
pub async fn delete<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    handles: &[&ReceiptHandle],
) -> Result<Vec<Result<Removed, ApiError>>, ApiError> {
    let mut claims: Vec<(String, String)> = Vec::new();
    for h in handles {
        let c = (h.partition_id.clone(), h.lease_id.clone());
        if !claims.contains(&c) {
            claims.push(c);
        }
    }
    let lookups = claim_record::lookup(ctx, q, &claims).await?;
    let mut verdicts: Vec<Result<Removed, ApiError>> =
        handles.iter().map(|_| Ok(Removed::Done)).collect();
    let mut direct: Vec<usize> = Vec::new();
    for ((pid, lease), lookup) in claims.iter().zip(lookups) {
        let members: Vec<usize> = (0..handles.len())
            .filter(|&i| handles[i].lease_id == *lease && handles[i].partition_id == *pid)
            .collect();
        let current = match lookup {
            // A single-message claim (or one settled): acked as ever. Never a message
            // behind another of its claim: a claim of several always has a record until
            // all of it is acked, so without one such a delete is stale (or the record was
            // lost), and its ack would complete the messages before it, deleted or not.
            Lookup::Unrecorded => {
                direct.extend(members.into_iter().filter(|&i| !handles[i].behind_in_claim));
                continue;
            }
            // Never ack through a claim recorded the old way: its lease runs out instead.
            Lookup::Legacy => continue,
            Lookup::Recorded(current) => current,
        };
        // Not in the record under its lease: received again since (stale: nothing to do),
        // or already acked and pruned (an ack would be a no-op).
        let inside: Vec<usize> = members
            .into_iter()
            .filter(|&i| {
                current
                    .record
                    .as_ref()
                    .is_some_and(|r| r.lease == *lease && r.holds(&handles[i].message_id))
            })
            .collect();
        if inside.is_empty() {
            continue;
        }
        let ids: Vec<String> = inside
            .iter()
            .map(|&i| handles[i].message_id.clone())
            .collect();
        let verdict = delete_in_claim(ctx, q, pid, lease, current, &ids).await;
        for i in inside {
            verdicts[i] = verdict.clone().map(|()| Removed::Done);
        }
    }
    if !direct.is_empty() {
        let acks: Vec<Ack> = direct
            .iter()
            .map(|&i| lease::ack(handles[i], AckStatus::Completed))
            .collect();
        let answers = ctx.queen.ack_batch(&acks).await?;
        for (i, r) in direct.into_iter().zip(answers) {
            // The claim's lease is its visibility: once it ran out, SQS refuses the handle
            // as expired (recorded: test_fifo_delete_after_visibility_timeout).
            verdicts[i] = match r.verdict() {
                AckVerdict::LeaseGone => Ok(Removed::Expired),
                _ => deleted(&r).map(|()| Removed::Done),
            };
        }
    }
    Ok(verdicts)
}

/// Deletes some of a recorded claim's messages: in one transaction when they complete a
/// prefix one ack settles; otherwise record them (that is the delete), then ack the
/// deleted prefix and forget what the ack completed.
async fn delete_in_claim<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    pid: &str,
    lease: &str,
    current: Stored,
    ids: &[String],
) -> Result<(), ApiError> {
    let current = match claim_record::settle_at_once(ctx, q, pid, lease, current, ids).await? {
        AtOnce::Settled { release } => {
            release_claim(ctx, pid, lease, release).await;
            return Ok(());
        }
        AtOnce::StepByStep(current) => current,
    };
    match claim_record::record(ctx, q, pid, lease, current, ids, Mark::Deleted).await? {
        Recorded::Stale => Ok(()),
        Recorded::Pending { release } => {
            release_claim(ctx, pid, lease, release).await;
            Ok(())
        }
        Recorded::Ack { steps, release } => {
            let mut acked: Vec<String> = Vec::new();
            let mut outcome = Ok(true);
            for step in &steps {
                let r = ctx
                    .queen
                    .ack(&Ack::new(&step.txn, pid, lease, AckStatus::Completed))
                    .await;
                outcome = match r.map(|r| r.verdict()) {
                    Ok(AckVerdict::Applied) => Ok(true),
                    // Recorded: the group's next receive acks them on its way through.
                    Ok(AckVerdict::Stale | AckVerdict::LeaseGone) => Ok(false),
                    Ok(AckVerdict::Failed) => Err(not_deleted()),
                    Err(e) => Err(e.into()),
                };
                if outcome != Ok(true) {
                    break;
                }
                acked.extend(step.covers.iter().cloned());
            }
            if !acked.is_empty() {
                claim_record::forget_acked(ctx, q, pid, lease, &acked).await?;
            }
            if outcome? {
                release_claim(ctx, pid, lease, release).await;
            }
            Ok(())
        }
    }
}

/// Releases a FIFO claim whose messages left were all given a visibility of 0 (ack
/// `retry` at the first of them). A release that fails leaves the lease to run out.
async fn release_claim<T: Transport>(ctx: &Ctx<'_, T>, pid: &str, lease: &str, at: Option<String>) {
    if let Some(txn) = at {
        let _lease_runs_out_otherwise = ctx
            .queen
            .ack(&Ack::new(&txn, pid, lease, AckStatus::Retry))
            .await;
    }
}

/// Visibility changes grouped by (claim, timeout): one extension or one release per group,
/// its verdict given to every change of it. Groups run in the order of their first change.
pub async fn change<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    changes: &[(ReceiptHandle, u64)],
) -> Vec<Result<Changed, ApiError>> {
    let mut groups: Vec<(Vec<&ReceiptHandle>, u64, Vec<usize>)> = Vec::new();
    for (slot, (h, s)) in changes.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|(g, gs, _)| g[0].lease_id == h.lease_id && *gs == *s)
        {
            Some((hs, _, slots)) => {
                hs.push(h);
                slots.push(slot);
            }
            None => groups.push((vec![h], *s, vec![slot])),
        }
    }
    let mut verdicts: Vec<Result<Changed, ApiError>> =
        changes.iter().map(|_| Ok(Changed::Applied)).collect();
    for (hs, s, slots) in groups {
        let group_verdicts = if s == 0 {
            release_in_claim(ctx, q, &hs).await
        } else {
            let verdict = lease::change(ctx, hs[0], s).await;
            hs.iter().map(|_| verdict.clone()).collect()
        };
        for (slot, verdict) in slots.into_iter().zip(group_verdicts) {
            verdicts[slot] = verdict;
        }
    }
    verdicts
}

/// A visibility change to 0 of some messages of ONE claim, a verdict per handle. SQS keeps
/// a group blocked while any of its messages is in flight, so the claim's lease is
/// released only once every message left in it was deleted or released; until then the
/// release is recorded. A handle whose message the claim no longer holds (deleted since)
/// is refused alone: the others of its batch are still released (checker engine seed 808:
/// a batch naming a message deleted a moment before refused every entry).
async fn release_in_claim<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    handles: &[&ReceiptHandle],
) -> Vec<Result<Changed, ApiError>> {
    let Some(h) = handles.first() else {
        return Vec::new();
    };
    let claim = [(h.partition_id.clone(), h.lease_id.clone())];
    let current = match claim_record::lookup(ctx, q, &claim).await {
        Ok(mut found) => found.pop(),
        Err(e) => return handles.iter().map(|_| Err(e.clone())).collect(),
    };
    let Some(Lookup::Recorded(current)) = current else {
        // A claim of one message (or settled): its release is the whole claim's.
        let verdict = lease::change(ctx, h, 0).await;
        return handles.iter().map(|_| verdict.clone()).collect();
    };
    let held: Vec<bool> = handles
        .iter()
        .map(|x| {
            current
                .record
                .as_ref()
                .is_some_and(|r| r.lease == h.lease_id && r.holds(&x.message_id))
        })
        .collect();
    let ids: Vec<String> = handles
        .iter()
        .zip(&held)
        .filter(|(_, held)| **held)
        .map(|(x, _)| x.message_id.clone())
        .collect();
    // The release acks at a handle the claim holds, as before a batch could mix them.
    let verdict = match handles.iter().zip(&held).find(|(_, held)| **held) {
        Some((first_held, _)) => record_release(ctx, q, first_held, current, &ids).await,
        None => Err(not_inflight()),
    };
    held.iter()
        .map(|&held| {
            if held {
                verdict.clone()
            } else {
                Err(not_inflight())
            }
        })
        .collect()
}

/// Records the release of `ids` (all held by the claim of `h`), and releases the lease
/// when nothing of the claim is held any more.
async fn record_release<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    h: &ReceiptHandle,
    current: Stored,
    ids: &[String],
) -> Result<Changed, ApiError> {
    let recorded = claim_record::record(
        ctx,
        q,
        &h.partition_id,
        &h.lease_id,
        current,
        ids,
        Mark::Released,
    );
    match recorded.await? {
        Recorded::Stale => Err(not_inflight()),
        Recorded::Pending { release } | Recorded::Ack { release, .. } => match release {
            Some(_) => lease::change(ctx, h, 0).await,
            None => Ok(Changed::Applied),
        },
    }
}

/// Whether a popped FIFO message was deleted by a consumer: its group's claim record lists
/// it (deletes of a claim's later messages are recorded there until the claim's front is
/// deleted too, and the message stays in its lane meanwhile).
pub async fn deleted_in_claim<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    m: &PoppedMessage,
) -> Result<bool, ApiError> {
    let partition = std::slice::from_ref(&m.partition_id);
    let records = claim_record::load_groups(ctx, q, partition).await?;
    Ok(records
        .first()
        .and_then(|s| s.record.as_ref())
        .is_some_and(|r| r.deleted.contains(&m.id)))
}
