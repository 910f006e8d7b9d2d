//! `Subscribe` and the rest of a subscription's life. An SQS queue of this account is
//! confirmed when it is subscribed; an `http`/`https` endpoint is pending until it confirms
//! with the token POSTed to it (`webhook`). Every other protocol is refused by name.

use super::arn::{mint_uuid, subscription_arn, subscription_from_arn, topic_arn};
use super::errors::{bad_arn, broker, invalid, invalid_because, subscription_not_found};
use super::input::Params;
use super::paging;
use super::records::{
    decode, delete_sub_ops, endpoint_key, load_sub, sub_key, subs_of, subs_prefix, to_value,
    topic_key, SubRecord, Versioned, SUB_PREFIX,
};
use super::sub_attrs;
use super::tags::CAS_ATTEMPTS;
use super::topics::{require, topic_param};
use super::webhook;
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::queen::{KvOp, KvOutcome, Transaction, TxnOutcome};
use crate::sqs::lanes::message_key;
use crate::sqs::naming::name_from_arn;
use crate::sqs::registry::{self, QueueRecord};
use crate::wire::{ApiError, ErrorCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Every protocol SNS defines; all but `sqs`, `http` and `https` are refused by name.
const SNS_PROTOCOLS: &[&str] = &[
    "http",
    "https",
    "email",
    "email-json",
    "sms",
    "sqs",
    "application",
    "lambda",
    "firehose",
];

pub(crate) fn contended() -> ApiError {
    ApiError::new(
        ErrorCode::ConcurrentAccess,
        "Can't perform multiple operations on a subscription simultaneously. Perform the operations sequentially.",
    )
}

/// A `SubscriptionArn` parameter: malformed or foreign is `InvalidParameter`.
fn sub_param<'a>(
    cfg: &crate::config::Config,
    p: &Params<'a>,
) -> Result<(&'a str, &'a str), ApiError> {
    let arn = p.str("SubscriptionArn")?;
    subscription_from_arn(cfg, arn).ok_or_else(|| bad_arn("SubscriptionArn", arn))
}

/// A `Subscribe`'s attributes, validated (a filter policy compiled) into a map.
fn supplied_attributes(p: &Params<'_>) -> Result<BTreeMap<String, String>, ApiError> {
    let mut supplied = BTreeMap::new();
    let attrs = p.str_map("Attributes")?;
    // The scope first, so the policy is compiled under the scope it will run in.
    for (k, v) in attrs.iter().filter(|(k, _)| *k == "FilterPolicyScope") {
        sub_attrs::apply(&mut supplied, k, v, "Attributes")?;
    }
    for (k, v) in attrs.iter().filter(|(k, _)| *k != "FilterPolicyScope") {
        sub_attrs::apply(&mut supplied, k, v, "Attributes")?;
    }
    // Given at `Subscribe`, SNS names the parameter the policy came in.
    sub_attrs::policy(&supplied).map_err(|e| {
        match e.message.strip_prefix("Invalid parameter: ") {
            Some(why) => invalid_because("Attributes", why),
            None => e,
        }
    })?;
    Ok(supplied)
}

/// A protocol other than `sqs`: one of SNS's is refused by name, anything else as SNS
/// refuses an unknown protocol.
fn refused_protocol(protocol: &str) -> ApiError {
    if SNS_PROTOCOLS.contains(&protocol) {
        invalid_because(
            "Protocol",
            format!("the {protocol} protocol is not supported by this endpoint: only sqs, http and https subscriptions are"),
        )
    } else {
        invalid(format!(
            "Amazon SNS does not support this protocol string: {protocol}"
        ))
    }
}

pub async fn subscribe<T: Transport>(ctx: &Ctx<'_, T>, p: Params<'_>) -> Result<Value, ApiError> {
    let topic = topic_param(ctx.cfg, &p)?;
    let protocol = p.str("Protocol")?;
    let supplied = supplied_attributes(&p)?;
    if matches!(protocol, "http" | "https") {
        return subscribe_webhook(ctx, topic, protocol, &p, supplied).await;
    }
    if protocol != "sqs" {
        // As SNS answers: a missing topic is `NotFound` and bad attributes are refused
        // whatever the protocol; only then is the protocol (refused here) judged.
        require(ctx, topic).await?;
        return Err(refused_protocol(protocol));
    }
    let endpoint = p.opt_str("Endpoint")?.unwrap_or("");
    let queue = name_from_arn(ctx.cfg, endpoint).ok_or_else(|| invalid("SQS endpoint ARN"))?;

    for _ in 0..CAS_ATTEMPTS {
        let t = require(ctx, topic).await?;
        // A queue that does not exist (yet) is subscribed, as SNS subscribes it: nothing
        // is delivered to it until it does (or its dead-letter queue takes the messages).
        let fifo = match load_queue(ctx, queue).await? {
            Some(q) => q.fifo,
            None => queue.ends_with(".fifo"),
        };
        if fifo && !t.record.fifo {
            // SNS's own sentence, its doubled prefix included (recorded against SNS).
            return Err(invalid(
                "Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics",
            ));
        }
        let index = endpoint_key(topic, protocol, endpoint);
        if let Some(row) = ctx.queen.kv_get(&index).await.map_err(broker)? {
            if let Some(id) = row.value.as_str() {
                if let Some(existing) = load_sub(ctx, topic, id).await? {
                    if !sub_attrs::matches(&existing.record.attributes, &supplied) {
                        return Err(invalid_because(
                            "Attributes",
                            "Subscription already exists with different attributes",
                        ));
                    }
                    let arn = subscription_arn(ctx.cfg, topic, id);
                    return Ok(json!({"SubscriptionArn": arn}));
                }
            }
        }
        let id = mint_uuid(&format!("{}/subscription", ctx.request_id));
        let record = SubRecord {
            id: id.clone(),
            topic: topic.to_string(),
            protocol: protocol.to_string(),
            endpoint: endpoint.to_string(),
            queue: queue.to_string(),
            attributes: supplied.clone(),
            created: ctx.now_s(),
            token: None,
            pending: false,
            confirmed_by_call: false,
            unsubscribe_by_call_only: false,
        };
        // Rewriting the topic under its version fences a concurrent DeleteTopic: either
        // this lands first and the delete's walk sees it, or the delete wins and this fails.
        let ops = vec![
            KvOp::put(topic_key(topic), to_value(&t.record), Some(t.version)).required(),
            KvOp::put(sub_key(topic, &id), to_value(&record), Some(0)).required(),
            KvOp::put(index, json!(id), Some(0)).required(),
        ];
        if let KvOutcome::Done(_) = ctx.queen.kv(ops).await.map_err(broker)? {
            let arn = subscription_arn(ctx.cfg, topic, &id);
            return Ok(json!({"SubscriptionArn": arn}));
        }
    }
    Err(contended())
}

/// A FIFO queue subscribed to a FIFO topic dead-letters into a FIFO queue only, as SNS
/// refuses otherwise (recorded: test_validations_for_fifo); a standard queue subscribed to
/// a FIFO topic may have a standard one.
fn fifo_subscriptions_take_fifo_dead_letter_queues<T>(
    ctx: &Ctx<'_, T>,
    topic: &str,
    record: &SubRecord,
) -> Result<(), ApiError> {
    let target = record
        .attr("RedrivePolicy")
        .and_then(|v| serde_json::from_str::<Value>(v).ok())
        .and_then(|v| v.get("deadLetterTargetArn")?.as_str().map(str::to_string));
    let (Some(target), true, true) = (
        target,
        topic.ends_with(".fifo"),
        record.queue.ends_with(".fifo"),
    ) else {
        return Ok(());
    };
    match name_from_arn(ctx.cfg, &target) {
        Some(dlq) if !dlq.ends_with(".fifo") => Err(invalid(
            "RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic.",
        )),
        _ => Ok(()),
    }
}

/// The registry record of a queue, answered in SNS's error dialect.
pub async fn load_queue<T: Transport>(
    ctx: &Ctx<'_, T>,
    name: &str,
) -> Result<Option<QueueRecord>, ApiError> {
    let row = ctx
        .queen
        .kv_get(&registry::key(name))
        .await
        .map_err(broker)?;
    Ok(row.and_then(|r| serde_json::from_value(r.value).ok()))
}

/// Removes the subscription record; the queue is untouched. An ARN of ours that names
/// no subscription is a success: the end state the caller asked for already holds.
pub async fn unsubscribe<T: Transport>(ctx: &Ctx<'_, T>, p: Params<'_>) -> Result<Value, ApiError> {
    let (topic, id) = sub_param(ctx.cfg, &p)?;
    if let Some(s) = load_sub(ctx, topic, id).await? {
        if s.record.unsubscribe_by_call_only && !ctx.signed {
            return Err(ApiError::new(
                ErrorCode::AuthorizationError,
                "This subscription requires authentication to unsubscribe (it was confirmed with AuthenticateOnUnsubscribe).",
            ));
        }
        if !ctx.signed && s.record.is_webhook() && !s.record.pending {
            webhook::links::unsubscribe(ctx, &s.record).await?;
            return Ok(json!({}));
        }
        ctx.queen
            .kv_results(delete_sub_ops(&s.record))
            .await
            .map_err(broker)?;
    }
    Ok(json!({}))
}

/// How long an unconfirmed subscription waits for its confirmation, as SNS's does.
pub(crate) const PENDING_LIFETIME_S: i64 = 3 * 24 * 3600;

/// A pending subscription past its three days: it no longer exists to any reader.
fn expired(s: &SubRecord, now_s: i64) -> bool {
    s.pending && now_s - s.created > PENDING_LIFETIME_S
}

/// An `http`/`https` subscription: the endpoint checked against the allowed hosts, the
/// record written pending with its token, and the `SubscriptionConfirmation` put in the
/// outbox, all in one transaction. A repeat of a confirmed subscription answers its ARN;
/// of a pending one, sends the confirmation again.
async fn subscribe_webhook<T: Transport>(
    ctx: &Ctx<'_, T>,
    topic: &str,
    protocol: &str,
    p: &Params<'_>,
    supplied: BTreeMap<String, String>,
) -> Result<Value, ApiError> {
    let endpoint = p.opt_str("Endpoint")?.unwrap_or("");
    // A boolean of the model: decoded as one from either protocol.
    let return_arn = p.get("ReturnSubscriptionArn") == Some(&Value::Bool(true));
    for _ in 0..CAS_ATTEMPTS {
        let t = require(ctx, topic).await?;
        webhook::endpoint::check(ctx.cfg, protocol, endpoint)?;
        if t.record.fifo {
            return Err(invalid_because(
                "Protocol",
                format!("a FIFO topic delivers to SQS queues only, not {protocol}"),
            ));
        }
        let index = endpoint_key(topic, protocol, endpoint);
        let index_row = ctx.queen.kv_get(&index).await.map_err(broker)?;
        let existing = match index_row.as_ref().and_then(|row| row.value.as_str()) {
            Some(id) => load_sub(ctx, topic, id).await?,
            None => None,
        };
        let mut txn = Transaction::default();
        let record = match existing.filter(|e| !expired(&e.record, ctx.now_s())) {
            Some(e) if !sub_attrs::matches(&e.record.attributes, &supplied) => {
                return Err(invalid_because(
                    "Attributes",
                    "Subscription already exists with different attributes",
                ));
            }
            Some(e) if !e.record.pending => {
                let arn = subscription_arn(ctx.cfg, topic, &e.record.id);
                return Ok(json!({"SubscriptionArn": arn}));
            }
            // Pending: the same record (under its version), its confirmation sent again.
            Some(e) => {
                let key = sub_key(topic, &e.record.id);
                let op = KvOp::put(key, to_value(&e.record), Some(e.version));
                txn.kv.push(op.required());
                e.record
            }
            None => {
                let record = new_pending(ctx, topic, protocol, endpoint, supplied.clone());
                // An expired twin's index is taken over under the version read.
                let index_version = Some(index_row.as_ref().map_or(0, |row| row.version));
                let key = sub_key(topic, &record.id);
                txn.kv
                    .push(KvOp::put(key, to_value(&record), Some(0)).required());
                let op = KvOp::put(index.clone(), json!(record.id), index_version);
                txn.kv.push(op.required());
                record
            }
        };
        // Fences a concurrent DeleteTopic, as `subscribe` does.
        txn.kv
            .push(KvOp::put(topic_key(topic), to_value(&t.record), Some(t.version)).required());
        webhook::outbox::ensure(ctx).await?;
        let job =
            webhook::confirm::confirmation(ctx, &record, t.record.attr("SignatureVersion")).await?;
        txn.pushes.push(job.push(&message_key(ctx.request_id, 0)));
        if let TxnOutcome::Committed(_) = ctx.queen.transaction(&txn).await.map_err(broker)? {
            let arn = subscription_arn(ctx.cfg, topic, &record.id);
            let answer = if return_arn { arn } else { PENDING.to_string() };
            return Ok(json!({"SubscriptionArn": answer}));
        }
    }
    Err(contended())
}

/// A new `http`/`https` subscription, pending, with its confirmation token.
fn new_pending<T>(
    ctx: &Ctx<'_, T>,
    topic: &str,
    protocol: &str,
    endpoint: &str,
    attributes: BTreeMap<String, String>,
) -> SubRecord {
    SubRecord {
        id: mint_uuid(&format!("{}/subscription", ctx.request_id)),
        topic: topic.to_string(),
        protocol: protocol.to_string(),
        endpoint: endpoint.to_string(),
        queue: String::new(),
        attributes,
        created: ctx.now_s(),
        token: Some(webhook::confirm::mint_token(
            &ctx.cfg.handle_secret,
            ctx.request_id,
        )),
        pending: true,
        confirmed_by_call: false,
        unsubscribe_by_call_only: false,
    }
}

/// What SNS answers and lists for a subscription not yet confirmed.
const PENDING: &str = "pending confirmation";
const PENDING_LISTED: &str = "PendingConfirmation";

/// Confirms the pending subscription of the topic whose token this is (signed or not: a
/// GET of the `SubscribeURL` is this call). A confirmed one answers its ARN again.
pub async fn confirm_subscription<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let topic = topic_param(ctx.cfg, &p)?;
    let token = p.str("Token")?;
    // A string in SNS's model ("true"/"false"), case-insensitive as SNS reads it.
    let authenticate_on_unsubscribe = p
        .opt_str("AuthenticateOnUnsubscribe")?
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    // A topic that does not exist has issued no token: `InvalidParameter`, not `NotFound`
    // (recorded: test_sns_confirm_subscription_wrong_token).
    for _ in 0..CAS_ATTEMPTS {
        let found = subs_of(ctx, topic).await?.into_iter().find(|s| {
            s.record
                .token
                .as_deref()
                .is_some_and(|t| webhook::confirm::same_token(t, token))
                && !expired(&s.record, ctx.now_s())
        });
        // SNS's answer to a token it did not issue (or one expired), unless it is an
        // `UnsubscribeConfirmation`'s.
        let Some(found) = found else {
            return match webhook::links::restore(ctx, topic, token).await? {
                Some(answer) => Ok(answer),
                None => Err(invalid("Token")),
            };
        };
        let arn = subscription_arn(ctx.cfg, topic, &found.record.id);
        if !found.record.pending {
            return Ok(json!({"SubscriptionArn": arn}));
        }
        let mut record = found.record.clone();
        record.pending = false;
        // AWS: the flag counts only on a signed confirmation.
        record.confirmed_by_call = ctx.signed;
        record.unsubscribe_by_call_only = ctx.signed && authenticate_on_unsubscribe;
        let op = KvOp::put(
            sub_key(topic, &record.id),
            to_value(&record),
            Some(found.version),
        );
        if let KvOutcome::Done(r) = ctx.queen.kv(vec![op]).await.map_err(broker)? {
            if r.first().is_some_and(|r| r.applied()) {
                return Ok(json!({"SubscriptionArn": arn}));
            }
        }
    }
    Err(contended())
}

fn listing(ctx_cfg: &crate::config::Config, s: &SubRecord) -> Value {
    let arn = if s.pending {
        PENDING_LISTED.to_string()
    } else {
        subscription_arn(ctx_cfg, &s.topic, &s.id)
    };
    json!({
        "SubscriptionArn": arn,
        "Owner": ctx_cfg.account_id,
        "Protocol": s.protocol,
        "Endpoint": s.endpoint,
        "TopicArn": topic_arn(ctx_cfg, &s.topic),
    })
}

async fn list_under<T: Transport>(
    ctx: &Ctx<'_, T>,
    prefix: &str,
    token: Option<&str>,
) -> Result<Value, ApiError> {
    let (rows, next) = paging::page(ctx, prefix, token).await?;
    let subs: Vec<Value> = rows
        .into_iter()
        .filter_map(decode::<SubRecord>)
        .filter(|s| !expired(&s.record, ctx.now_s()))
        .map(|s| listing(ctx.cfg, &s.record))
        .collect();
    let mut out = json!({"Subscriptions": subs});
    if let Some(n) = next {
        out["NextToken"] = json!(n);
    }
    Ok(out)
}

pub async fn list_subscriptions<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    list_under(ctx, SUB_PREFIX, p.opt_str("NextToken")?).await
}

/// An unknown topic is `NotFound`, never an empty list.
pub async fn list_subscriptions_by_topic<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let topic = topic_param(ctx.cfg, &p)?;
    require(ctx, topic).await?;
    list_under(ctx, &subs_prefix(topic), p.opt_str("NextToken")?).await
}

async fn require_sub<T: Transport>(
    ctx: &Ctx<'_, T>,
    topic: &str,
    id: &str,
) -> Result<Versioned<SubRecord>, ApiError> {
    load_sub(ctx, topic, id)
        .await?
        .ok_or_else(subscription_not_found)
}

pub async fn get_subscription_attributes<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let (topic, id) = sub_param(ctx.cfg, &p)?;
    let s = require_sub(ctx, topic, id).await?;
    Ok(json!({"Attributes": sub_attrs::report(ctx.cfg, &s.record)}))
}

pub async fn set_subscription_attributes<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let (topic, id) = sub_param(ctx.cfg, &p)?;
    let name = p.str("AttributeName")?;
    let value = p.opt_str("AttributeValue")?.unwrap_or("");
    for _ in 0..CAS_ATTEMPTS {
        let stored = require_sub(ctx, topic, id).await?;
        let mut record = stored.record.clone();
        sub_attrs::apply(&mut record.attributes, name, value, "AttributeName")?;
        // A new scope re-validates the policy already there, and a new policy runs
        // under the scope already there.
        sub_attrs::policy(&record.attributes)?;
        if name == "RedrivePolicy" {
            fifo_subscriptions_take_fifo_dead_letter_queues(ctx, topic, &record)?;
        }
        if record == stored.record {
            return Ok(json!({}));
        }
        let op = KvOp::put(sub_key(topic, id), to_value(&record), Some(stored.version));
        if let KvOutcome::Done(r) = ctx.queen.kv(vec![op]).await.map_err(broker)? {
            if r.first().is_some_and(|r| r.applied()) {
                return Ok(json!({}));
            }
        }
    }
    Err(contended())
}
