//! `ReceiveMessage`.
//!
//! On a standard queue (`VisibilityTimeout` > 0) ONE wide pop claims up to
//! `MaxNumberOfMessages` messages across lanes and ONE transaction takes them out of their
//! lanes, each held by a visibility timer (see `visibility`): lanes do not bound what is in
//! flight, and a message in flight blocks nothing. `ApproximateReceiveCount` is carried in
//! the message (its redelivery copy) plus the broker's attempts at it.
//!
//! At `VisibilityTimeout=0` the message must stay visible: it is popped under a 1 s lease
//! and released (ack `retry`, which charges nothing) after all pops of the request are
//! done, so one answer never holds the same message twice. Its handle then names a lease
//! that is gone: deleting with it answers success and deletes nothing, since the message
//! was never in flight.
//!
//! On a FIFO queue, sequential pops each claim a RUN of one group (batch = the budget left)
//! under one lease, as SQS hands out several messages of a group at once; on a FIFO queue a
//! lane is a message group, and the broker skips a lane with a live lease, which is exactly
//! SQS's "a group is blocked while a message of it is in flight". `ApproximateReceiveCount`
//! is each message's own (the KV counter, on both brokers), and `claims` keeps what the
//! later verbs need to treat a claim as one gesture.
//!
//! - `WaitTimeSeconds` is the broker's long poll.
//! - `ReceiveRequestAttemptId` is accepted and ignored: a retried receive claims afresh,
//!   and the messages the lost answer held become visible again when their visibility ends.
//! - A message whose receive count exceeds the queue's `maxReceiveCount` is not returned
//!   but moved to the dead-letter queue (see `redrive`). Its slot is not refilled, so a
//!   receive may answer fewer messages than were claimable, or none after a long poll
//!   whose one find was moved; SQS itself promises no more than "up to".

use super::claims;
use super::input::Input;
use super::message_attrs::{select_message_attributes, SystemSelection};
use super::naming;
use super::receive_counts;
use super::redrive::{self, Moved};
use super::registry::{self, QueueRecord};
use super::visibility::{self, Fate};
pub use crate::calendar::parse_iso_ms;
use crate::http::Transport;
use crate::model::{
    attrs_to_api, md5_of_body, md5_of_message_attributes, mint, Attrs, Envelope, ReceiptHandle,
};
use crate::queen::{Ack, PopOptions, Popped, PoppedMessage, Transaction, TxnOutcome};
use crate::service::Ctx;
use crate::wire::{ApiError, ErrorCode};
use futures_util::future::join_all;
use serde_json::{json, Map, Value};

/// SQS's in-flight ceiling: a receipt handle is good for twelve hours.
pub const HANDLE_LIFETIME_MS: i64 = 12 * 3600 * 1000;
pub const MAX_VISIBILITY_SECONDS: i64 = 43_200;
const MAX_WAIT_SECONDS: i64 = 20;

pub async fn receive_message<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let max = range(
        &input,
        "MaxNumberOfMessages",
        1,
        1,
        10,
        "Must be between 1 and 10, if provided.",
    )?;
    let wait = range(
        &input,
        "WaitTimeSeconds",
        q.receive_wait_seconds() as i64,
        0,
        MAX_WAIT_SECONDS,
        "Must be >= 0 and <= 20, if provided.",
    )?;
    let visibility = range(
        &input,
        "VisibilityTimeout",
        q.visibility_timeout() as i64,
        0,
        MAX_VISIBILITY_SECONDS,
        "Must be >= 0 and <= 43200, if provided.",
    )?;
    // Accepted and not acted on (docs/divergences.md), but held to SQS's format.
    if let Some(attempt) = input.opt_str("ReceiveRequestAttemptId")? {
        super::send::check_id("ReceiveRequestAttemptId", attempt)?;
    }
    let mut system_names = input.str_list("AttributeNames")?;
    system_names.extend(input.str_list("MessageSystemAttributeNames")?);
    let selection = SystemSelection::new(system_names);
    let user_names = input.str_list("MessageAttributeNames")?;

    let lease = if visibility == 0 {
        1
    } else {
        visibility as u64
    };
    let view = View {
        q,
        selection: &selection,
        user_names: &user_names,
    };
    if !q.fifo && visibility > 0 {
        return receive_held(ctx, &view, max as usize, wait as u64, visibility as u64).await;
    }
    if q.fifo {
        return receive_fifo(
            ctx,
            &view,
            max as usize,
            wait as u64,
            lease,
            visibility == 0,
        )
        .await;
    }
    let mut popped = pop_many(ctx, &q.name, max as usize, wait as u64, lease).await?;
    let mut all: Vec<&mut PoppedMessage> = popped
        .iter_mut()
        .flat_map(|p| p.messages.iter_mut())
        .collect();
    receive_counts::fill(ctx, q, &mut all).await;

    let mut dlq: Option<Option<QueueRecord>> = None;
    let mut out = Vec::new();
    let mut releases = Vec::new();
    for p in &popped {
        for m in &p.messages {
            let lease_id = m.lease_id.clone().unwrap_or_else(|| p.lease_id.clone());
            let envelope = Envelope::from_stored(&m.data);
            let count = m.delivery_attempt.unwrap_or(1) + redrive::carried_count(&envelope);
            if let Some((dlq_name, max_receives)) = q.redrive(ctx.cfg) {
                if count > max_receives {
                    if dlq.is_none() {
                        dlq = Some(
                            registry::load_recent(ctx, &dlq_name)
                                .await?
                                .map(|s| s.record),
                        );
                    }
                    // A dead-letter target that no longer exists moves nothing: the message
                    // is delivered rather than lost.
                    if let Some(Some(target)) = &dlq {
                        let sent = sent_ms(&envelope, m);
                        let copy = redrive::dead_letter_copy(
                            envelope.clone(),
                            &q.name,
                            &m.id,
                            count - 1,
                            sent,
                        );
                        match redrive::move_message(ctx, m, &lease_id, target, &copy).await {
                            Ok(Moved::Yes) | Ok(Moved::LeaseLost) => continue,
                            // The message stays leased and comes back; the rest are answered.
                            Err(_) => continue,
                        }
                    }
                }
            }
            if visibility == 0 {
                releases.push(Ack {
                    transaction_id: m.transaction_id.clone(),
                    partition_id: m.partition_id.clone(),
                    status: "retry",
                    lease_id: Some(lease_id.clone()),
                });
            }
            out.push(render(
                ctx,
                &view,
                m,
                lease_handle(ctx, q, m, &lease_id),
                &envelope,
                count,
                None,
            ));
        }
    }
    release_all(ctx, &releases).await;
    // SQS leaves `Messages` out of an empty answer; clients test for the key.
    if out.is_empty() {
        return Ok(json!({}));
    }
    Ok(json!({ "Messages": out }))
}

/// A standard receive that holds what it answers: one wide pop, then one transaction
/// (see `visibility`). Late-deleted copies are dropped and messages past
/// `maxReceiveCount` dead-lettered in that same transaction.
async fn receive_held<T: Transport>(
    ctx: &Ctx<'_, T>,
    v: &View<'_>,
    max: usize,
    wait_s: u64,
    visibility_s: u64,
) -> Result<Value, ApiError> {
    let q = v.q;
    let wait_ms = (wait_s > 0).then_some(wait_s * 1000);
    let opts = PopOptions {
        wait_ms,
        lease_seconds: Some(visibility::POP_LEASE_SECONDS),
    };
    let Some(popped) = ctx
        .queen
        .pop_wide(&q.name, opts, max as u32, max as u32)
        .await?
    else {
        return Ok(json!({}));
    };
    let envelopes: Vec<Envelope> = popped
        .messages
        .iter()
        .map(|m| Envelope::from_stored(&m.data))
        .collect();
    let copies: Vec<(usize, String, u32)> = popped
        .messages
        .iter()
        .zip(&envelopes)
        .enumerate()
        .filter(|(_, (_, e))| e.system.contains_key(visibility::MESSAGE_ID))
        .map(|(i, (m, e))| (i, visibility::message_id(e, m), redrive::carried_count(e)))
        .collect();
    let dropped = visibility::deleted_late(ctx, q, &copies).await;

    let mut dlq = DeadLetter::Unresolved;
    let mut fates: Vec<(&PoppedMessage, String, Fate)> = Vec::new();
    let mut answered: Vec<(usize, String, Envelope, u32, i64)> = Vec::new();
    for (i, (m, e)) in popped.messages.iter().zip(envelopes).enumerate() {
        let lease = m
            .lease_id
            .clone()
            .unwrap_or_else(|| popped.lease_id.clone());
        if dropped.contains(&i) {
            fates.push((m, lease, Fate::Drop));
            continue;
        }
        let id = visibility::message_id(&e, m);
        let count = redrive::carried_count(&e) + m.delivery_attempt.unwrap_or(1);
        let sent = sent_ms(&e, m);
        if let Some((dest, max_receives)) = dlq.target(ctx, q).await? {
            if count > *max_receives {
                let copy = redrive::dead_letter_copy(e, &q.name, &id, count - 1, sent);
                let push = redrive::copy_push(m, dest, copy.to_json(), false);
                fates.push((m, lease, Fate::DeadLetter(push)));
                continue;
            }
        }
        let first = visibility::first_receive(&e).unwrap_or(ctx.now_ms);
        let timer_key = visibility::timer_key(&id, count);
        let copy = visibility::redelivery_copy(e.clone(), &id, count, sent, first);
        answered.push((fates.len(), timer_key.clone(), e, count, first));
        fates.push((m, lease, Fate::Hold { timer_key, copy }));
    }
    // What was not taken (a rolled-back transaction, a failed ack) stays with its pop's
    // lease and comes back when that runs out; it is not answered.
    let taken = visibility::settle_receive(ctx, q, &fates, visibility_s).await?;
    let out: Vec<Value> = answered
        .into_iter()
        .filter(|(slot, ..)| taken.get(*slot).copied().unwrap_or(false))
        .map(|(slot, timer_key, e, count, first)| {
            let m = fates[slot].0;
            let handle = ReceiptHandle {
                queue: q.name.clone(),
                partition: m.partition.clone(),
                partition_id: String::new(),
                transaction_id: String::new(),
                lease_id: String::new(),
                message_id: visibility::message_id(&e, m),
                timer_key: Some(timer_key),
                expiry_unix_ms: ctx.now_ms + HANDLE_LIFETIME_MS,
            };
            render(ctx, v, m, handle, &e, count, Some(first))
        })
        .collect();
    if out.is_empty() {
        return Ok(json!({}));
    }
    Ok(json!({ "Messages": out }))
}

/// A handle naming the broker lease a message is held under.
fn lease_handle<T>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    m: &PoppedMessage,
    lease_id: &str,
) -> ReceiptHandle {
    ReceiptHandle {
        queue: q.name.clone(),
        partition: m.partition.clone(),
        partition_id: m.partition_id.clone(),
        transaction_id: m.transaction_id.clone(),
        lease_id: lease_id.to_string(),
        message_id: m.id.clone(),
        timer_key: None,
        expiry_unix_ms: ctx.now_ms + HANDLE_LIFETIME_MS,
    }
}

/// What a receive renders with.
struct View<'a> {
    q: &'a QueueRecord,
    selection: &'a SystemSelection,
    user_names: &'a [&'a str],
}

/// A FIFO receive: sequential claims, each a run of ONE group under one lease, until `max`
/// messages are claimed or nothing more is claimable. Each claim is then opened against
/// its group's record (see `claims`): deleted messages acked through or withheld, a head
/// past `maxReceiveCount` dead-lettered, the record rewritten for the new lease; what is
/// left is answered.
async fn receive_fifo<T: Transport>(
    ctx: &Ctx<'_, T>,
    v: &View<'_>,
    max: usize,
    wait_s: u64,
    lease_s: u64,
    release: bool,
) -> Result<Value, ApiError> {
    let q = v.q;
    let mut popped = pop_claims(ctx, &q.name, max, wait_s, lease_s).await?;
    if popped.is_empty() {
        return Ok(json!({}));
    }
    // Per message, on both brokers: the embedded broker's `deliveryAttempt` belongs to
    // the claim, and a claim may hold messages never delivered before.
    let mut all: Vec<&mut PoppedMessage> = popped
        .iter_mut()
        .flat_map(|p| p.messages.iter_mut())
        .collect();
    for m in all.iter_mut() {
        m.delivery_attempt = None;
    }
    receive_counts::fill(ctx, q, &mut all).await;

    let partitions: Vec<String> = popped
        .iter()
        .filter_map(|p| p.messages.first().map(|m| m.partition_id.clone()))
        .collect();
    let records = claims::load_groups(ctx, q, &partitions).await?;
    let mut dlq = DeadLetter::Unresolved;
    let mut out = Vec::new();
    let mut releases: Vec<Ack> = Vec::new();
    for (p, current) in popped.iter().zip(records) {
        let Some(head) = p.messages.first() else {
            continue;
        };
        let lease = head.lease_id.clone().unwrap_or_else(|| p.lease_id.clone());
        let pid = head.partition_id.clone();
        let opening = claims::open(current.record.as_ref(), &p.messages);
        let mut acked: Vec<String> = Vec::new();
        let mut from = 0;
        if opening.lead > 0 {
            let last = &p.messages[opening.lead - 1];
            let r = ctx
                .queen
                .ack(&claims::ack(
                    &last.transaction_id,
                    &pid,
                    &lease,
                    "completed",
                ))
                .await?;
            if !r.success {
                // The claim is not ours any more (its lease ran out meanwhile).
                continue;
            }
            acked.extend(p.messages[..opening.lead].iter().map(|m| m.id.clone()));
            from = opening.lead;
        }
        match dead_letter_head(
            ctx,
            q,
            &mut dlq,
            &p.messages[from..],
            &opening.withheld,
            &lease,
        )
        .await?
        {
            Head::Kept => {}
            Head::Moved(n) => {
                acked.extend(p.messages[from..from + n].iter().map(|m| m.id.clone()));
                from += n;
            }
            // Moved by nobody (the move failed: the claim stays leased and comes back), or
            // the lease is someone else's: none of it is answered.
            Head::Held | Head::LeaseLost => continue,
        }
        let rest = &p.messages[from..];
        let claim = claims::Claim {
            lease: lease.clone(),
            partition_id: pid.clone(),
            messages: rest,
            acked,
        };
        let record = claims::write_reopened(ctx, q, &claim, current).await?;
        let deleted: &[String] = record.as_ref().map_or(&[], |r| r.deleted.as_slice());
        if release && !rest.is_empty() {
            releases.push(claims::ack(&rest[0].transaction_id, &pid, &lease, "retry"));
        }
        for m in rest.iter().filter(|m| !deleted.contains(&m.id)) {
            let e = Envelope::from_stored(&m.data);
            let count = m.delivery_attempt.unwrap_or(1) + redrive::carried_count(&e);
            out.push(render(
                ctx,
                v,
                m,
                lease_handle(ctx, q, m, &lease),
                &e,
                count,
                None,
            ));
        }
    }
    release_all(ctx, &releases).await;
    if out.is_empty() {
        return Ok(json!({}));
    }
    Ok(json!({ "Messages": out }))
}

/// Sequential claims of one group each, until `max` messages: one long poll first, the
/// rest without waiting.
async fn pop_claims<T: Transport>(
    ctx: &Ctx<'_, T>,
    queue: &str,
    max: usize,
    wait_s: u64,
    lease_s: u64,
) -> Result<Vec<Popped>, ApiError> {
    let mut popped: Vec<Popped> = Vec::new();
    let mut claimed = 0;
    while claimed < max {
        let wait_ms = (popped.is_empty() && wait_s > 0).then_some(wait_s * 1000);
        let opts = PopOptions {
            wait_ms,
            lease_seconds: Some(lease_s),
        };
        match ctx
            .queen
            .pop_run(queue, None, opts, (max - claimed) as u32)
            .await
        {
            Ok(Some(p)) => {
                claimed += p.messages.len();
                popped.push(p);
            }
            Ok(None) => break,
            // Claims already made are answered; only a receive with none reports it.
            Err(e) if popped.is_empty() => return Err(e.into()),
            Err(_) => break,
        }
    }
    Ok(popped)
}

/// A receive's releases (`VisibilityTimeout=0`). A release that fails leaves its lease
/// to run out (one second): the message is visible again then, so nothing is reported.
async fn release_all<T: Transport>(ctx: &Ctx<'_, T>, releases: &[Ack]) {
    if releases.is_empty() {
        return;
    }
    if let Err(e) = ctx.queen.ack_batch(releases).await {
        let _one_second_lease_runs_out = e;
    }
}

/// The dead-letter queue of a receive, looked up once.
enum DeadLetter {
    Unresolved,
    /// None: no redrive policy, or its target no longer exists (nothing is moved then: a
    /// message is delivered rather than lost).
    Resolved(Option<(QueueRecord, u32)>),
}

impl DeadLetter {
    async fn target<T: Transport>(
        &mut self,
        ctx: &Ctx<'_, T>,
        q: &QueueRecord,
    ) -> Result<Option<&(QueueRecord, u32)>, ApiError> {
        if let DeadLetter::Unresolved = self {
            let target = match q.redrive(ctx.cfg) {
                Some((name, max)) => registry::load_recent(ctx, &name)
                    .await?
                    .map(|s| (s.record, max)),
                None => None,
            };
            *self = DeadLetter::Resolved(target);
        }
        Ok(match self {
            DeadLetter::Resolved(t) => t.as_ref(),
            DeadLetter::Unresolved => None,
        })
    }
}

/// What dead-lettering did to the head of a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Head {
    /// Nothing at the head is past `maxReceiveCount`.
    Kept,
    /// The first n messages left the claim (moved, or deleted ones acked with them).
    Moved(usize),
    /// The move failed: the claim stays leased and comes back when its lease ends.
    Held,
    /// The lease was gone: the claim is someone else's.
    LeaseLost,
}

/// Dead-letters the messages at the head of a claim whose OWN receive count passed
/// `maxReceiveCount`, as SQS does: one message each, never the messages behind them. Acks
/// are cumulative, so only a leading run can move (deleted messages inside it are acked
/// with it, not copied); a message further in moves once it reaches the head. One
/// transaction: the copies and the ack `completed` of the run's last message.
async fn dead_letter_head<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    dlq: &mut DeadLetter,
    messages: &[PoppedMessage],
    deleted: &[String],
    lease_id: &str,
) -> Result<Head, ApiError> {
    let Some((dest, max_receives)) = dlq.target(ctx, q).await?.cloned() else {
        return Ok(Head::Kept);
    };
    let count_of = |m: &PoppedMessage| {
        m.delivery_attempt.unwrap_or(1) + redrive::carried_count(&Envelope::from_stored(&m.data))
    };
    let exceeded = |m: &PoppedMessage| !deleted.contains(&m.id) && count_of(m) > max_receives;
    let run = messages
        .iter()
        .take_while(|m| deleted.contains(&m.id) || exceeded(m))
        .count();
    // Trailing deleted messages are left to the claim: the run ends at its last move.
    let Some(n) = messages[..run].iter().rposition(exceeded).map(|i| i + 1) else {
        return Ok(Head::Kept);
    };
    let moving: Vec<&PoppedMessage> = messages[..n].iter().filter(|m| exceeded(m)).collect();
    let last = &messages[n - 1];
    // First keyed by transaction id; on a dedup collision, once more by message id.
    for by_id in [false, true] {
        let pushes = moving
            .iter()
            .map(|m| {
                let e = Envelope::from_stored(&m.data);
                let copy = redrive::dead_letter_copy(
                    e.clone(),
                    &q.name,
                    &m.id,
                    count_of(m) - 1,
                    sent_ms(&e, m),
                );
                redrive::copy_push(m, &dest, copy.to_json(), by_id)
            })
            .collect();
        let txn = Transaction {
            pushes,
            acks: vec![claims::ack(
                &last.transaction_id,
                &last.partition_id,
                lease_id,
                "completed",
            )],
            kv: Vec::new(),
            timers: Vec::new(),
        };
        match ctx.queen.transaction(&txn).await? {
            TxnOutcome::Committed(_) => return Ok(Head::Moved(n)),
            TxnOutcome::RolledBack { reason, .. } if reason == "duplicate" && !by_id => continue,
            TxnOutcome::RolledBack { reason, .. } if reason == "ack_rejected" => {
                return Ok(Head::LeaseLost)
            }
            TxnOutcome::RolledBack { .. } => return Ok(Head::Held),
        }
    }
    Ok(Head::Held)
}

/// `n` single-message pops. With a wait, one long poll goes first and the rest follow
/// without waiting once it has found something.
async fn pop_many<T: Transport>(
    ctx: &Ctx<'_, T>,
    queue: &str,
    n: usize,
    wait_s: u64,
    lease_s: u64,
) -> Result<Vec<Popped>, ApiError> {
    let now = PopOptions {
        wait_ms: None,
        lease_seconds: Some(lease_s),
    };
    let mut got = Vec::new();
    let mut remaining = n;
    if wait_s > 0 {
        let first = ctx
            .queen
            .pop_one(
                queue,
                None,
                PopOptions {
                    wait_ms: Some(wait_s * 1000),
                    lease_seconds: Some(lease_s),
                },
            )
            .await?;
        match first {
            Some(p) => got.push(p),
            None => return Ok(got),
        }
        remaining -= 1;
    }
    let results = join_all((0..remaining).map(|_| ctx.queen.pop_one(queue, None, now))).await;
    let mut first_error = None;
    for r in results {
        match r {
            Ok(Some(p)) => got.push(p),
            Ok(None) => {}
            Err(e) => first_error = first_error.or(Some(e)),
        }
    }
    // Messages already claimed are answered even if a sibling pop failed; only a receive
    // that claimed nothing reports the failure.
    match first_error {
        Some(e) if got.is_empty() => Err(e.into()),
        _ => Ok(got),
    }
}

fn render<T>(
    ctx: &Ctx<'_, T>,
    v: &View<'_>,
    m: &PoppedMessage,
    handle: ReceiptHandle,
    e: &Envelope,
    count: u32,
    first_receive_ms: Option<i64>,
) -> Value {
    let q = v.q;
    let mut out = Map::new();
    out.insert("MessageId".into(), json!(handle.message_id));
    let handle = mint(&handle, &ctx.cfg.handle_secret);
    out.insert("ReceiptHandle".into(), json!(handle));
    out.insert("MD5OfBody".into(), json!(md5_of_body(&e.body)));
    out.insert("Body".into(), json!(e.body));

    let attrs = system_attributes(ctx, q, m, e, (count, first_receive_ms), v.selection);
    if !attrs.is_empty() {
        out.insert("Attributes".into(), Value::Object(attrs));
    }
    let selected: Attrs = select_message_attributes(&e.attrs, v.user_names);
    if let Some(d) = md5_of_message_attributes(&selected) {
        out.insert("MD5OfMessageAttributes".into(), json!(d));
        out.insert("MessageAttributes".into(), attrs_to_api(&selected));
    }
    Value::Object(out)
}

/// The system attributes asked for. `SenderId` is never answered: nothing records who
/// sent a message. `ApproximateFirstReceiveTimestamp` is answered where a message in
/// flight carries it (standard queues held by visibility timers).
fn system_attributes<T>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    m: &PoppedMessage,
    e: &Envelope,
    (count, first_receive_ms): (u32, Option<i64>),
    sel: &SystemSelection,
) -> Map<String, Value> {
    let mut a = Map::new();
    if sel.is_empty() {
        return a;
    }
    let mut add = |name: &str, v: Option<String>| {
        if let Some(v) = v {
            if sel.wants(name) {
                a.insert(name.to_string(), Value::String(v));
            }
        }
    };
    add("ApproximateReceiveCount", Some(count.to_string()));
    add(
        "ApproximateFirstReceiveTimestamp",
        first_receive_ms.map(|ms| ms.to_string()),
    );
    add("SentTimestamp", sent_ms(e, m).map(|ms| ms.to_string()));
    if q.fifo {
        add(
            "SequenceNumber",
            crate::model::sequence::from_message_id(&m.id),
        );
        add("MessageGroupId", Some(m.partition.clone()));
        add("MessageDeduplicationId", Some(m.transaction_id.clone()));
    }
    for (name, v) in &e.system {
        if !redrive::is_internal(name) {
            if let crate::model::AttrData::String(s) = &v.value {
                add(name, Some(s.clone()));
            }
        }
    }
    if let Some(source) = redrive::source_queue(e) {
        add(
            "DeadLetterQueueSourceArn",
            Some(naming::queue_arn(ctx.cfg, source)),
        );
        add(redrive::SOURCE_QUEUE, Some(source.to_string()));
    }
    add(redrive::ORIGINAL_MESSAGE_ID, e.original_id.clone());
    a
}

/// When the message was first sent: carried on a dead-lettered copy, else its `createdAt`.
fn sent_ms(e: &Envelope, m: &PoppedMessage) -> Option<i64> {
    redrive::sent_timestamp(e).or_else(|| m.created_at.as_deref().and_then(parse_iso_ms))
}

/// An integer parameter within `lo..=hi`, `default` when absent.
fn range(
    input: &Input,
    name: &str,
    default: i64,
    lo: i64,
    hi: i64,
    why: &str,
) -> Result<i64, ApiError> {
    match input.opt_int(name)? {
        None => Ok(default),
        Some(v) if (lo..=hi).contains(&v) => Ok(v),
        Some(v) => Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            format!("Value {v} for parameter {name} is invalid. Reason: {why}"),
        )),
    }
}

/// The `VisibilityTimeout` of a visibility change: 0..=43200.
pub fn visibility_param(input: &Input) -> Result<u64, ApiError> {
    match input.opt_int("VisibilityTimeout")? {
        None => Err(super::input::missing("VisibilityTimeout")),
        Some(v) if (0..=MAX_VISIBILITY_SECONDS).contains(&v) => Ok(v as u64),
        Some(v) => Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            format!("Value {v} for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided."),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_timestamps() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_iso_ms("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(
            parse_iso_ms("2026-11-30T10:00:00.123456Z"),
            Some(1_796_032_800_123)
        );
        assert_eq!(
            parse_iso_ms("2026-11-30T11:00:00.123+01:00"),
            Some(1_796_032_800_123)
        );
        assert_eq!(parse_iso_ms("2000-02-29T00:00:00Z"), Some(951_782_400_000));
        assert_eq!(parse_iso_ms("nonsense"), None);
        assert_eq!(parse_iso_ms("2020-13-01T00:00:00Z"), None);
    }
}
