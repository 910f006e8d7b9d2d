//! Subscriptions removed by a link and restored by one: a GET of a notification's
//! `UnsubscribeURL` (anyone holding the notification may follow it) removes the
//! subscription and tells its endpoint, whose `SubscribeURL` then restores it, as SNS does.
//! A removal by a call (`Unsubscribe` signed by a client) is `subscriptions`' alone.

use crate::ctx::Ctx;
use crate::http::Transport;
use crate::queen::{KvOp, Transaction, TxnOutcome};
use crate::sns::arn::{mint_uuid, subscription_arn};
use crate::sns::errors::broker;
use crate::sns::records::{
    delete_sub_ops, endpoint_key, gone_key, load_topic, sub_key, to_value, topic_key, SubRecord,
};
use crate::sns::subscriptions::{contended, PENDING_LIFETIME_S};
use crate::sns::topics::require;
use crate::sqs::lanes::message_key;
use crate::wire::ApiError;
use serde_json::{json, Value};

/// A GET of an `UnsubscribeURL` (anyone holding a notification may follow it): the
/// subscription removed, kept restorable by its token, and an `UnsubscribeConfirmation`
/// sent to the endpoint, whose `SubscribeURL` restores it, as SNS does; in one transaction.
pub async fn unsubscribe<T: Transport>(ctx: &Ctx<'_, T>, s: &SubRecord) -> Result<(), ApiError> {
    let topic = load_topic(ctx, &s.topic).await?;
    let signature = topic
        .as_ref()
        .and_then(|t| t.record.attr("SignatureVersion"));
    let job = super::confirm::unsubscribed(ctx, s, signature).await?;
    super::outbox::ensure(ctx).await?;
    let mut txn = Transaction::default();
    txn.kv.extend(delete_sub_ops(s));
    if let Some(token) = &s.token {
        let op = KvOp::put_ttl(
            gone_key(&s.topic, token),
            to_value(s),
            PENDING_LIFETIME_S as u64,
            None,
        );
        txn.kv.push(op);
    }
    txn.pushes.push(job.push(&message_key(ctx.request_id, 0)));
    match ctx.queen.transaction(&txn).await.map_err(broker)? {
        TxnOutcome::Committed(_) => Ok(()),
        TxnOutcome::RolledBack { .. } => Err(contended()),
    }
}

/// A token of an `UnsubscribeConfirmation`: the subscription it removed written back,
/// confirmed, while its topic stands and nothing took its endpoint since. Under a new ARN:
/// a notification published while it was removed, still in the outbox for the old one,
/// finds no subscription and is dropped, as it would have been without the restore.
pub async fn restore<T: Transport>(
    ctx: &Ctx<'_, T>,
    topic: &str,
    token: &str,
) -> Result<Option<Value>, ApiError> {
    if !super::confirm::is_token_shaped(token) {
        return Ok(None);
    }
    let key = gone_key(topic, token);
    let Some(row) = ctx.queen.kv_get(&key).await.map_err(broker)? else {
        return Ok(None);
    };
    let Ok(mut record) = serde_json::from_value::<SubRecord>(row.value) else {
        return Ok(None);
    };
    record.id = mint_uuid(&format!("{}/restored", ctx.request_id));
    let t = require(ctx, topic).await?;
    let mut txn = Transaction::default();
    txn.kv
        .push(KvOp::put(sub_key(topic, &record.id), to_value(&record), Some(0)).required());
    let index = endpoint_key(topic, &record.protocol, &record.endpoint);
    txn.kv
        .push(KvOp::put(index, json!(record.id), Some(0)).required());
    txn.kv
        .push(KvOp::put(topic_key(topic), to_value(&t.record), Some(t.version)).required());
    txn.kv.push(KvOp::delete(key, Some(row.version)).required());
    match ctx.queen.transaction(&txn).await.map_err(broker)? {
        TxnOutcome::Committed(_) => {
            let arn = subscription_arn(ctx.cfg, topic, &record.id);
            Ok(Some(json!({"SubscriptionArn": arn})))
        }
        // Restored already, or the endpoint subscribed anew since: the token is spent.
        TxnOutcome::RolledBack { .. } => Ok(None),
    }
}
