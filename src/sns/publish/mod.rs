//! `Publish` and `PublishBatch`: read the topic and its subscriptions, evaluate filter
//! policies, then one transaction per message with one push per matched subscription.
//!
//! MessageIds are minted here (UUID form, from the request id and the entry's index):
//! the broker mints one id per push and a fan-out has N of them.
//!
//! A repeated `MessageDeduplicationId` inside the window delivers nothing and answers a
//! NEW MessageId (the contract's unsettled entry, kept: the original's id is not stored
//! anywhere a rolled-back transaction can read it back from).
//!
//! A FIFO topic's messages are numbered as AWS numbers them: a `SequenceNumber` that
//! grows with every publish to the topic (so within every group), answered by `Publish`
//! and per entry by `PublishBatch` and carried by the notifications. A request reserves its
//! numbers with one KV increment of the topic's counter before it delivers; a number of a
//! publish that fails is not used again (AWS's are not consecutive either).

mod fanout;
mod message;
mod notification;

pub use notification::iso8601_ms;

use super::arn::mint_uuid;
use super::errors::{invalid, invalid_because};
use super::input::Params;
use super::topics::topic_param;
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::wire::{ApiError, ErrorCode};
use serde_json::{json, Value};
use std::collections::BTreeSet;

const MAX_BATCH: usize = 10;
const MAX_ENTRY_ID: usize = 80;

/// SNS publishes to topics only here: an endpoint ARN or a phone number has nothing to
/// deliver to.
/// The topic a `Publish` names: its `TopicArn`, or a `TargetArn` that is a topic's ARN (as
/// SNS accepts it). A `TargetArn` naming anything else names no endpoint this endpoint has.
fn publish_topic<'a>(cfg: &crate::config::Config, p: &Params<'a>) -> Result<&'a str, ApiError> {
    if p.get("TopicArn").is_some() {
        if p.get("TargetArn").is_some() {
            return Err(invalid_because(
                "TopicArn",
                "only one of TopicArn and TargetArn may be given",
            ));
        }
        return topic_param(cfg, p);
    }
    let Some(target) = p.opt_str("TargetArn")? else {
        return Err(invalid(
            "TopicArn or TargetArn Reason: no value for required parameter",
        ));
    };
    crate::sns::arn::topic_from_arn(cfg, target).ok_or_else(|| {
        invalid_because(
            "TargetArn",
            "No endpoint found for the target arn specified",
        )
    })
}

fn refuse_other_targets(p: &Params<'_>) -> Result<(), ApiError> {
    if p.get("PhoneNumber").is_some() {
        return Err(invalid_because(
            "PhoneNumber",
            "this endpoint does not send SMS, use TopicArn",
        ));
    }
    Ok(())
}

fn message_id(ctx_request_id: &str, index: usize) -> String {
    mint_uuid(&format!("{ctx_request_id}/message/{index}"))
}

pub async fn publish<T: Transport>(ctx: &Ctx<'_, T>, p: Params<'_>) -> Result<Value, ApiError> {
    refuse_other_targets(&p)?;
    let topic = publish_topic(ctx.cfg, &p)?;
    let (record, targets) = fanout::targets(ctx, topic).await?;
    let entry = message::prepare(&record, &p, None)?;
    let id = message_id(ctx.request_id, 0);
    let sequence = sequence_numbers(ctx, &record, 1).await?;
    let published = fanout::Published {
        entry: &entry,
        message_id: &id,
        index: 0,
        sequence_number: sequence.first().map(String::as_str),
    };
    let mut signing = crate::sns::signing::Lazy::default();
    fanout::deliver(ctx, &record, &targets, &published, &mut signing).await?;
    let mut answer = json!({"MessageId": id});
    if let Some(n) = published.sequence_number {
        answer["SequenceNumber"] = json!(n);
    }
    Ok(answer)
}

/// `n` sequence numbers of a FIFO topic, in order (none for a standard topic): AWS's
/// shape, 20 digits.
async fn sequence_numbers<T: Transport>(
    ctx: &Ctx<'_, T>,
    topic: &super::records::TopicRecord,
    n: usize,
) -> Result<Vec<String>, ApiError> {
    if !topic.fifo || n == 0 {
        return Ok(Vec::new());
    }
    let op = crate::queen::KvOp::incr_forever(super::records::sequence_key(&topic.name), n as i64);
    let results = ctx.queen.kv_results(vec![op]).await?;
    let last = results
        .first()
        .filter(|r| r.applied())
        .and_then(|r| r.value.as_u64())
        .ok_or_else(super::errors::internal)?;
    let first = last + 1 - n as u64;
    Ok((first..=last)
        .map(|v| (10_000_000_000_000_000_000u64 + v).to_string())
        .collect())
}

fn valid_entry_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ENTRY_ID
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

pub async fn publish_batch<T: Transport>(
    ctx: &Ctx<'_, T>,
    p: Params<'_>,
) -> Result<Value, ApiError> {
    let topic = topic_param(ctx.cfg, &p)?;
    let entries: &[Value] = match p.get("PublishBatchRequestEntries") {
        None => &[],
        Some(Value::Array(a)) => a,
        Some(_) => return Err(invalid("PublishBatchRequestEntries")),
    };
    if entries.is_empty() {
        return Err(ApiError::new(
            ErrorCode::SnsEmptyBatchRequest,
            "The batch request doesn't contain any entries",
        ));
    }
    if entries.len() > MAX_BATCH {
        return Err(ApiError::new(
            ErrorCode::SnsTooManyEntriesInBatchRequest,
            "The batch request contains more entries than permissible.",
        ));
    }
    let mut ids = BTreeSet::new();
    let mut total = 0;
    for e in entries {
        let id = e.get("Id").and_then(Value::as_str).unwrap_or("");
        if !valid_entry_id(id) {
            // SNS's two sentences, naming the Id (as recorded against SNS).
            let why = if id.len() > MAX_ENTRY_ID {
                "is too long"
            } else {
                "contains an impermissible character"
            };
            return Err(ApiError::new(
                ErrorCode::SnsInvalidBatchEntryId,
                format!("The Id of a batch entry in the batch request {why}: {id}"),
            ));
        }
        if !ids.insert(id) {
            return Err(ApiError::new(
                ErrorCode::SnsBatchEntryIdsNotDistinct,
                "Two or more batch entries in the request have the same Id.",
            ));
        }
        total += message::raw_size(&Params(e));
    }
    if total > message::MAX_BYTES {
        return Err(ApiError::new(
            ErrorCode::SnsBatchRequestTooLong,
            "The length of all the messages put together is more than the limit.",
        ));
    }
    let (record, targets) = fanout::targets(ctx, topic).await?;
    // Every entry is checked before any is delivered: an entry SNS refuses fails the whole
    // request with that entry's error, as SNS answers it (recorded:
    // test_publish_batch_exceptions, test_empty_or_wrong_message_attributes).
    let prepared: Vec<message::Entry> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| message::prepare(&record, &Params(e), Some(i + 1)))
        .collect::<Result<_, _>>()?;
    let sequence = sequence_numbers(ctx, &record, entries.len()).await?;
    let mut successful = Vec::new();
    let mut failed = Vec::new();
    let mut signing = crate::sns::signing::Lazy::default();
    // In order, one transaction each: a FIFO group's entries land in the order given. A
    // delivery that fails fails its entry alone.
    for (i, (e, entry)) in entries.iter().zip(&prepared).enumerate() {
        let entry_id = e.get("Id").and_then(Value::as_str).unwrap_or("");
        let mid = message_id(ctx.request_id, i);
        let published = fanout::Published {
            entry,
            message_id: &mid,
            index: i,
            sequence_number: sequence.get(i).map(String::as_str),
        };
        match fanout::deliver(ctx, &record, &targets, &published, &mut signing).await {
            Ok(_) => {
                let mut ok = json!({"Id": entry_id, "MessageId": mid});
                if let Some(n) = sequence.get(i) {
                    ok["SequenceNumber"] = json!(n);
                }
                successful.push(ok)
            }
            Err(err) => {
                let err = super::errors::sns_flavour(err);
                failed.push(json!({
                    "Id": entry_id,
                    "Code": err.code.batch_entry_code(),
                    "Message": err.message,
                    "SenderFault": err.code.is_sender_fault(),
                }))
            }
        }
    }
    Ok(json!({"Successful": successful, "Failed": failed}))
}
