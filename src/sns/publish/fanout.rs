//! The fan-out: who a topic delivers to, and one transaction per published message
//! carrying one push per matched subscription, so it commits whole or not at all.

use super::message::Entry;
use super::notification::{Links, Notification};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{AttrData, AttrValue, Attrs, Envelope};
use crate::queen::{KvOp, PushItem, RollbackReason, Transaction, TxnOutcome};
use crate::sns::arn::{subscription_arn, topic_arn};
use crate::sns::errors::{broker, internal, topic_not_found};
use crate::sns::filter::FilterPolicy;
use crate::sns::records::{
    decode, dedup_key, subs_prefix, topic_recent, SubRecord, TopicRecord, MAX_SUBS_PER_TOPIC,
};
use crate::sns::signing;
use crate::sns::sub_attrs;
use crate::sns::webhook::outbox;
use crate::sqs::lanes::{message_key, push_item};
use crate::sqs::registry::{self, QueueRecord};
use crate::wire::ApiError;
use serde_json::json;

/// SNS FIFO deduplicates for five minutes.
const DEDUP_WINDOW_S: u64 = 300;

/// A subscription that takes deliveries, with its policy compiled, and the queue its
/// deliveries are pushed into: its SQS queue (or dead-letter queue), or the outbox.
pub struct Target {
    pub sub: SubRecord,
    pub queue: QueueRecord,
    pub policy: Option<FilterPolicy>,
}

/// Reads the topic and its deliverable subscriptions. On the message path, so every read
/// is one a host cache may answer, as a queue's record is read for a send: the topic's
/// record, the first page of its subscriptions and their queues' records, each up to
/// `QUEEN_SQS_REGISTRY_CACHE_MS` old. This replica's own writes are seen at once (they
/// make the host forget what they change); another replica's within that bound. A topic
/// not found is asked of the broker again, never taken from a cache.
///
/// A subscription whose queue is gone delivers to its `RedrivePolicy`'s dead-letter queue
/// instead, what it would have delivered, as SNS moves a message it cannot deliver;
/// without one (or with that queue gone too) it is left out (a publish is not refused for
/// it).
pub async fn targets<T: Transport>(
    ctx: &Ctx<'_, T>,
    topic: &str,
) -> Result<(TopicRecord, Vec<Target>), ApiError> {
    let record = topic_recent(ctx, topic)
        .await?
        .ok_or_else(topic_not_found)?;
    let prefix = subs_prefix(topic);
    let (mut rows, mut page) = ctx
        .queen
        .kv_prefix_cached(&prefix, 1000, ctx.cfg.registry_cache_ms)
        .await
        .map_err(broker)?;
    while let Some(after) = page {
        if rows.len() >= MAX_SUBS_PER_TOPIC {
            break;
        }
        let (more, next) = ctx
            .queen
            .kv_prefix(&prefix, Some(after), 1000)
            .await
            .map_err(broker)?;
        rows.extend(more);
        page = next;
    }
    // A subscription still pending gets nothing.
    let (hooks, queued): (Vec<SubRecord>, Vec<SubRecord>) = rows
        .into_iter()
        .filter_map(decode::<SubRecord>)
        .map(|v| v.record)
        .filter(|s| !s.pending)
        .partition(SubRecord::is_webhook);
    // An HTTP/S subscription's deliveries go into the outbox, as a push to a queue does.
    let mut targets: Vec<Target> = hooks
        .into_iter()
        .filter_map(|sub| target(sub, outbox::record()))
        .collect();
    if queued.is_empty() {
        return Ok((record, targets));
    }
    let mut names: Vec<String> = queued
        .iter()
        .flat_map(|s| std::iter::once(s.queue.clone()).chain(dead_letter_queue(ctx, s)))
        .collect();
    names.sort();
    names.dedup();
    let queues = queue_records(ctx, names).await?;
    targets.extend(queued.into_iter().filter_map(|sub| {
        let queue = queues
            .get(&sub.queue)
            .or_else(|| queues.get(&dead_letter_queue(ctx, &sub)?))?
            .clone();
        target(sub, queue)
    }));
    Ok((record, targets))
}

/// A subscription delivering into `queue`, with its policy compiled. A policy that no
/// longer compiles matches nothing rather than everything: the subscription is left out.
fn target(sub: SubRecord, queue: QueueRecord) -> Option<Target> {
    let policy = sub_attrs::policy(&sub.attributes).ok()?;
    Some(Target { sub, queue, policy })
}

/// The queue a subscription's `RedrivePolicy` names (ours, by its ARN), if any.
fn dead_letter_queue<T>(ctx: &Ctx<'_, T>, sub: &SubRecord) -> Option<String> {
    let policy: serde_json::Value = serde_json::from_str(sub.attr("RedrivePolicy")?).ok()?;
    let arn = policy.get("deadLetterTargetArn")?.as_str()?;
    crate::sqs::naming::name_from_arn(ctx.cfg, arn).map(str::to_string)
}

/// A GET of which unsubscribes `sub`.
fn unsubscribe_url<T>(ctx: &Ctx<'_, T>, sub: &SubRecord) -> String {
    format!(
        "{}/?Action=Unsubscribe&SubscriptionArn={}",
        ctx.base_url,
        subscription_arn(ctx.cfg, &sub.topic, &sub.id)
    )
}

/// What a publish came to.
pub enum Outcome {
    Delivered,
    /// A repeat inside the deduplication window: nothing written, answered as a success.
    Duplicate,
}

/// One message of a publish, as delivered.
pub struct Published<'a> {
    pub entry: &'a Entry,
    pub message_id: &'a str,
    /// Distinguishes the entries of one request.
    pub index: usize,
    /// A FIFO topic's sequence number for it.
    pub sequence_number: Option<&'a str>,
}

/// Delivers one entry.
pub async fn deliver<T: Transport>(
    ctx: &Ctx<'_, T>,
    topic: &TopicRecord,
    targets: &[Target],
    published: &Published<'_>,
    signing: &mut signing::Lazy,
) -> Result<Outcome, ApiError> {
    let Published {
        entry,
        message_id,
        index,
        sequence_number,
    } = *published;
    let filter_attrs = entry.filter_attrs();
    let arn = topic_arn(ctx.cfg, &topic.name);
    let version = signing::Version::of(topic.attr("SignatureVersion"));
    let notification = Notification {
        message_id,
        sequence_number,
        topic_arn: &arn,
        subject: entry.subject.as_deref(),
        message: &entry.message,
        now_ms: ctx.now_ms,
        // A FIFO topic's notifications are not signed, as AWS's are not.
        signature_version: (!topic.fifo).then_some(version.as_str()),
        attrs: &entry.attrs,
    };
    let matched: Vec<&Target> = targets
        .iter()
        .filter(|t| {
            t.policy
                .as_ref()
                .is_none_or(|p| p.matches(&filter_attrs, &entry.message))
        })
        .collect();
    // Signed once for every enveloped delivery; only the unsubscribe URL differs.
    let signature = if !topic.fifo && matched.iter().any(|t| !t.sub.raw()) {
        let signer = signing.get(ctx).await?;
        let signature = signer.sign(version, &notification.canonical())?;
        Some((signature, signer.cert_url(&ctx.base_url)))
    } else {
        None
    };
    let key = message_key(ctx.request_id, index);
    // The publish's X-Ray trace header travels to every queue as `AWSTraceHeader`.
    let system: Attrs = ctx
        .trace_header
        .iter()
        .map(|t| {
            let v = AttrValue {
                data_type: "String".into(),
                value: AttrData::String(t.clone()),
            };
            ("AWSTraceHeader".to_string(), v)
        })
        .collect();
    let mut txn = Transaction::default();
    for t in matched.iter().filter(|t| !t.sub.is_webhook()) {
        crate::sqs::registry::heal_unfinished_purge(ctx, &t.queue).await?;
    }
    for t in matched {
        if t.sub.is_webhook() {
            let body = if t.sub.raw() {
                entry.message.clone()
            } else {
                let unsubscribe_url = unsubscribe_url(ctx, &t.sub);
                let links = Links {
                    signature: signature.as_ref().map(|(s, c)| (s.as_str(), c.as_str())),
                    unsubscribe_url: &unsubscribe_url,
                };
                notification.to_json(Some(&links))
            };
            let job = outbox::Job {
                kind: outbox::Kind::Notification,
                topic: t.sub.topic.clone(),
                sub: t.sub.id.clone(),
                message_id: message_id.to_string(),
                body,
                raw: t.sub.raw(),
                gone: None,
            };
            txn.pushes.push(job.push(&key));
            continue;
        }
        let mut envelope = if t.sub.raw() {
            Envelope {
                body: entry.message.clone(),
                attrs: entry.attrs.clone(),
                system: system.clone(),
                ..Envelope::default()
            }
        } else {
            let unsubscribe_url = unsubscribe_url(ctx, &t.sub);
            let links = Links {
                signature: signature.as_ref().map(|(s, c)| (s.as_str(), c.as_str())),
                unsubscribe_url: &unsubscribe_url,
            };
            Envelope {
                body: notification.to_json(Some(&links)),
                attrs: Attrs::new(),
                system: system.clone(),
                ..Envelope::default()
            }
        };
        // A standard queue answers back the MessageGroupId a publish to a standard topic
        // carried (a FIFO topic's groups stay the topic's, as SNS delivers them).
        if let (false, false, Some(g)) = (topic.fifo, t.queue.fifo, &entry.group) {
            crate::model::carried::set_group(&mut envelope, g);
        }
        txn.pushes.push(push_item(
            &t.queue,
            envelope.to_json(),
            entry.group.as_deref(),
            entry.dedup.as_deref(),
            &key,
        ));
    }
    // A FIFO topic deduplicates at the topic, whoever is subscribed (a standard queue
    // subscriber has no window of its own, and a topic may have no subscriber at all);
    // the FIFO pushes carry the id as their transactionId as well.
    if let (true, Some(dedup)) = (topic.fifo, &entry.dedup) {
        let scope = match (&entry.group, topic.dedup_per_group()) {
            (Some(g), true) => format!("{g}\n{dedup}"),
            _ => dedup.clone(),
        };
        txn.kv.push(
            KvOp::put_ttl(
                dedup_key(&topic.name, &scope),
                json!({"messageId": message_id, "group": entry.group}),
                DEDUP_WINDOW_S,
                Some(0),
            )
            .required(),
        );
    }
    if txn.pushes.is_empty() && txn.kv.is_empty() {
        return Ok(Outcome::Delivered);
    }
    match ctx.queen.transaction(&txn).await.map_err(broker)? {
        TxnOutcome::Committed(_) => Ok(Outcome::Delivered),
        TxnOutcome::RolledBack {
            reason: RollbackReason::KvPrecondition,
            ..
        } => repeat(ctx, &txn, txn.pushes.clone(), entry.group.as_deref()).await,
        // A FIFO subscriber queue holds the deduplication id already (sent to it
        // directly): that queue drops its copy, the others must still get theirs.
        TxnOutcome::RolledBack {
            reason: RollbackReason::Duplicate,
            ..
        } => deliver_past_a_subscriber_duplicate(ctx, txn, entry.group.as_deref()).await,
        TxnOutcome::RolledBack { .. } => Err(internal()),
    }
}

/// A publish repeating a deduplication id the topic holds. The topic's claim was written
/// with every push that carries no deduplication id, but the FIFO subscribers' pushes may
/// follow it in a second step (`deliver_past_a_subscriber_duplicate`) that a crash or a
/// cancelled request can stop short of. So they are made again when the claim is of this
/// message group: each FIFO queue then holds the id in that group's lane for at least as
/// long as the topic holds its claim, and drops a copy it already has. (A repeat from
/// another group, under the topic-wide scope, would be new to the queue: it is not made.)
async fn repeat<T: Transport>(
    ctx: &Ctx<'_, T>,
    txn: &Transaction,
    pushes: Vec<PushItem>,
    group: Option<&str>,
) -> Result<Outcome, ApiError> {
    let keyed: Vec<PushItem> = pushes
        .into_iter()
        .filter(|p| p.transaction_id.is_some())
        .collect();
    let claims: Vec<KvOp> = txn
        .kv
        .iter()
        .filter_map(|op| op.key.clone())
        .map(KvOp::get)
        .collect();
    if keyed.is_empty() || claims.is_empty() {
        return Ok(Outcome::Duplicate);
    }
    let found = ctx.queen.kv_results(claims).await.map_err(broker)?;
    let same_group = found
        .iter()
        .filter_map(|r| r.row())
        .all(|row| row.value.get("group").and_then(|g| g.as_str()) == group);
    if same_group {
        ctx.queen.push(&keyed).await.map_err(broker)?;
    }
    Ok(Outcome::Duplicate)
}

/// The fan-out again in two steps: the topic's deduplication claim with the pushes that
/// carry no deduplication id, in one transaction; then the deduplicated pushes in one push
/// call, which answers each queue's duplicate on its own instead of failing the rest.
/// Should that call fail, the claim is withdrawn so that a retried publish delivers.
async fn deliver_past_a_subscriber_duplicate<T: Transport>(
    ctx: &Ctx<'_, T>,
    mut txn: Transaction,
    group: Option<&str>,
) -> Result<Outcome, ApiError> {
    let (keyed, unkeyed): (Vec<PushItem>, Vec<PushItem>) = std::mem::take(&mut txn.pushes)
        .into_iter()
        .partition(|p| p.transaction_id.is_some());
    txn.pushes = unkeyed;
    let claims: Vec<String> = txn.kv.iter().filter_map(|op| op.key.clone()).collect();
    if !txn.pushes.is_empty() || !txn.kv.is_empty() {
        match ctx.queen.transaction(&txn).await.map_err(broker)? {
            TxnOutcome::Committed(_) => {}
            TxnOutcome::RolledBack {
                reason: RollbackReason::KvPrecondition,
                ..
            } => return repeat(ctx, &txn, keyed, group).await,
            TxnOutcome::RolledBack { .. } => return Err(internal()),
        }
    }
    if let Err(e) = ctx.queen.push(&keyed).await {
        let withdraw = claims.into_iter().map(|k| KvOp::delete(k, None)).collect();
        let _ = ctx.queen.kv_results(withdraw).await;
        return Err(broker(e));
    }
    Ok(Outcome::Delivered)
}

/// The records of the named queues that exist, read together; a name missing from a cached
/// answer is asked again of the broker (a queue made through another replica is found).
async fn queue_records<T: Transport>(
    ctx: &Ctx<'_, T>,
    names: Vec<String>,
) -> Result<std::collections::BTreeMap<String, QueueRecord>, ApiError> {
    let mut queues = std::collections::BTreeMap::new();
    let mut found = |rows: Vec<crate::queen::KvRow>| {
        for row in rows {
            if let Some(q) = registry::parse(row.value) {
                queues.insert(q.name.clone(), q);
            }
        }
    };
    let cache_ms = ctx.cfg.registry_cache_ms;
    for chunk in names.chunks(1000) {
        let keys: Vec<String> = chunk.iter().map(|q| registry::key(q)).collect();
        let rows = ctx
            .queen
            .kv_get_many_cached(keys, registry::QUEUE_PREFIX, cache_ms)
            .await
            .map_err(broker)?;
        let cached_all = rows.len() == chunk.len();
        found(rows);
        if cache_ms > 0 && !cached_all {
            let keys: Vec<String> = chunk.iter().map(|q| registry::key(q)).collect();
            let rows = ctx
                .queen
                .kv_get_many_cached(keys, "", 0)
                .await
                .map_err(broker)?;
            found(rows);
        }
    }
    Ok(queues)
}
