//! `SendMessage` and `SendMessageBatch`: validate each message as SQS does, wrap it in
//! the payload envelope, and land it with ONE push for every immediate message of the
//! request (plus one timer call for the delayed ones).
//!
//! A standard queue's lane is the hash of the send's own key (`lanes::batch_lane`: the
//! request's key picks a lane and a batch's entries take consecutive ones); a FIFO queue's lane is the `MessageGroupId` and its
//! deduplication key (`MessageDeduplicationId`, or the body's SHA-256 under
//! `ContentBasedDeduplication`) is the push's `transactionId`, so a duplicate inside the
//! queue's window answers the ORIGINAL MessageId, as SQS does.
//!
//! Delays on a standard queue: the message's `DelaySeconds`, else the queue's, is a timer
//! that pushes the message when it ends. The delay is applied once, at send: a redelivery,
//! a visibility change to 0 and a later change of the queue's `DelaySeconds` do not delay a
//! message again (the broker's `delayedProcessing` would: it hides every message of a lane,
//! copies included, until its `createdAt` plus the queue's current delay). A message too
//! large for a timer cannot be delayed here (docs/divergences.md). A FIFO queue takes no
//! per-message delay, and its queue delay stays the broker's `delayedProcessing`: its
//! messages are redelivered from their lane, not re-pushed.

use super::batch;
use super::dedup;
use super::input::{missing, Input};
use super::lanes;
use super::registry::{self, QueueRecord};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::model::{
    attrs_from_api, carried, md5_of_body, md5_of_message_attributes, valid_sqs_body, AttrData,
    AttrFault, AttrValue, Attrs, Envelope,
};
use crate::queen::{PushItem, PushStatus, ScheduleOp, TimerSchedule};
use crate::wire::{ApiError, ErrorCode};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

const MAX_DELAY_SECONDS: i64 = 900;
use super::inflight::{self, TIMER_PAYLOAD_MAX};
/// SendMessageBatch's ceiling on the sum of its messages' sizes, whatever the queue's
/// MaximumMessageSize: an entry over the queue's limit fails alone, not the batch.
const MAX_BATCH_BYTES: usize = 1_048_576;
const MAX_ID_CHARS: usize = 128;

/// A validated message, ready to push.
struct Outgoing {
    envelope: Envelope,
    group: Option<String>,
    dedup: Option<String>,
    /// Seconds a timer must hold the message (0: push now).
    timer_seconds: u64,
    /// Too large for a timer: pushed to a lane of its own and held there by a lease for
    /// `timer_seconds` instead.
    solo: bool,
}

pub async fn send_message<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let msg = validate(q, &input, ctx.trace_header.as_deref())?;
    let size = message_size(&msg.envelope);
    if size > q.maximum_message_size() as usize {
        return Err(too_long(q));
    }
    let mut out = deliver(ctx, q, &[(0, &msg)]).await?;
    out.pop().unwrap_or_else(|| Err(internal()))
}

pub async fn send_message_batch<T: Transport>(
    ctx: &Ctx<'_, T>,
    input: Input<'_>,
) -> Result<Value, ApiError> {
    let stored = registry::by_url_recent(ctx, &input).await?;
    let q = &stored.record;
    let entries = batch::entries(&input, "SendMessageBatchRequestEntry")?;
    if q.fifo {
        refuse_fifo_entries_without_ids(q, &entries)?;
    }
    let max = q.maximum_message_size() as usize;
    let validated: Vec<Result<Outgoing, ApiError>> = entries
        .iter()
        .map(|(_, e)| validate(q, e, ctx.trace_header.as_deref()))
        .collect();

    // The batch as a whole has its own ceiling (AWS's, not the queue's).
    let total: usize = entries
        .iter()
        .zip(&validated)
        .map(|((_, e), v)| match v {
            Ok(m) => message_size(&m.envelope),
            Err(_) => e.opt_str("MessageBody").ok().flatten().map_or(0, str::len),
        })
        .sum();
    if total > MAX_BATCH_BYTES {
        return Err(ApiError::new(
            ErrorCode::BatchRequestTooLong,
            format!(
                "Batch requests cannot be longer than {MAX_BATCH_BYTES} bytes. You have sent {total} bytes."
            ),
        ));
    }

    let mut results: Vec<Result<Value, ApiError>> = Vec::with_capacity(entries.len());
    let mut sendable: Vec<(usize, &Outgoing)> = Vec::new();
    for (i, v) in validated.iter().enumerate() {
        match v {
            Ok(m) if message_size(&m.envelope) > max => results.push(Err(too_long(q))),
            Ok(m) => {
                sendable.push((i, m));
                results.push(Ok(Value::Null));
            }
            Err(e) => results.push(Err(e.clone())),
        }
    }
    let delivered = deliver(ctx, q, &sendable).await?;
    for ((i, _), r) in sendable.iter().zip(delivered) {
        results[*i] = r;
    }
    let tagged = entries
        .iter()
        .zip(results)
        .map(|((id, _), r)| {
            let r = r.map(|mut v| {
                v["Id"] = json!(id);
                v
            });
            (*id, r)
        })
        .collect();
    Ok(batch::answer(tagged))
}

/// A FIFO batch entry with no `MessageGroupId`, or no deduplication id on a queue without
/// content-based deduplication, fails the whole batch (`InvalidParameterValue`), as SQS
/// answers it; other entry errors fail their entry alone.
fn refuse_fifo_entries_without_ids(
    q: &QueueRecord,
    entries: &[(&str, Input<'_>)],
) -> Result<(), ApiError> {
    for (_, e) in entries {
        if e.get("MessageGroupId").is_none() {
            return Err(ApiError::new(
                ErrorCode::InvalidParameterValue,
                "The request must contain the parameter MessageGroupId.",
            ));
        }
        if e.get("MessageDeduplicationId").is_none() && !q.content_based_dedup() {
            return Err(ApiError::new(
                ErrorCode::InvalidParameterValue,
                "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
            ));
        }
    }
    Ok(())
}

/// Reads and checks one message's fields (a `SendMessage` input or a batch entry).
fn validate(q: &QueueRecord, e: &Input, trace: Option<&str>) -> Result<Outgoing, ApiError> {
    let body = match e.opt_str("MessageBody")? {
        Some(b) if !b.is_empty() => b,
        _ => return Err(missing("MessageBody")),
    };
    if !valid_sqs_body(body) {
        return Err(ApiError::new(
            ErrorCode::InvalidMessageContents,
            "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
        ));
    }
    let attrs = attrs_from_api(e.get("MessageAttributes").unwrap_or(&Value::Null))
        .map_err(attribute_error)?;
    let system = system_attributes(e.get("MessageSystemAttributes"), trace)?;

    let delay = match e.opt_int("DelaySeconds")? {
        None => None,
        Some(d) if (0..=MAX_DELAY_SECONDS).contains(&d) => Some(d as u64),
        Some(d) => {
            return Err(ApiError::new(
                ErrorCode::InvalidParameterValue,
                format!("Value {d} for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= {MAX_DELAY_SECONDS}."),
            ))
        }
    };
    let group = e.opt_str("MessageGroupId")?;
    let dedup = e.opt_str("MessageDeduplicationId")?;
    if let Some(g) = group {
        check_id("MessageGroupId", g)?;
    }
    if let Some(d) = dedup {
        check_id("MessageDeduplicationId", d)?;
    }

    let envelope = Envelope {
        body: body.to_string(),
        attrs,
        system,
        original_id: None,
    };
    if q.fifo {
        let group = group.ok_or_else(|| missing("MessageGroupId"))?;
        if delay.is_some_and(|d| d > 0) {
            return Err(not_for_queue_type(
                "DelaySeconds",
                &delay.unwrap_or(0).to_string(),
            ));
        }
        let dedup = match dedup {
            Some(d) => d.to_string(),
            None if q.content_based_dedup() => hex(&Sha256::digest(body.as_bytes())),
            None => {
                return Err(ApiError::new(
                    ErrorCode::InvalidParameterValue,
                    "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                ))
            }
        };
        Ok(Outgoing {
            envelope,
            group: Some(group.to_string()),
            dedup: Some(dedup),
            timer_seconds: 0,
            solo: false,
        })
    } else {
        if let Some(d) = dedup {
            return Err(not_for_queue_type("MessageDeduplicationId", d));
        }
        // Since fair queues, a standard queue accepts a MessageGroupId: it orders nothing
        // here, and is answered back as the message's `MessageGroupId` attribute, as SQS
        // answers it (carried, not a system attribute of the send's MD5).
        let mut envelope = envelope;
        if let Some(g) = group {
            carried::set_group(&mut envelope, g);
        }
        let timer_seconds = delay.unwrap_or(q.delay_seconds());
        let solo = timer_seconds > 0 && envelope.to_json().to_string().len() > TIMER_PAYLOAD_MAX;
        Ok(Outgoing {
            envelope,
            group: None,
            dedup: None,
            timer_seconds,
            solo,
        })
    }
}

/// Lands `msgs` (entry index, message): one push for the immediate ones, one timer call
/// for the delayed ones, run together. Answers per message, in `msgs` order.
async fn deliver<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    msgs: &[(usize, &Outgoing)],
) -> Result<Vec<Result<Value, ApiError>>, ApiError> {
    deliver_under(ctx, q, msgs, false).await
}

/// [`deliver`] under the record `q`; `restarted` once it started again after a purge.
async fn deliver_under<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    msgs: &[(usize, &Outgoing)],
    restarted: bool,
) -> Result<Vec<Result<Value, ApiError>>, ApiError> {
    registry::heal_unfinished_purge(ctx, q).await?;
    let mut pushes: Vec<PushItem> = Vec::new();
    let mut push_of: Vec<Option<usize>> = Vec::with_capacity(msgs.len());
    let mut timers: Vec<TimerSchedule> = Vec::new();
    let mut timer_of: Vec<Option<usize>> = Vec::with_capacity(msgs.len());
    for (index, m) in msgs {
        let key = lanes::message_key(ctx.request_id, *index);
        if m.timer_seconds > 0 && !m.solo {
            let text = m.envelope.to_json().to_string();
            timer_of.push(Some(timers.len()));
            push_of.push(None);
            timers.push(TimerSchedule {
                op: ScheduleOp::Schedule,
                queue: q.name.clone(),
                timer_key: format!("sqs.{key}"),
                partition: lanes::batch_lane(ctx.request_id, *index, q.partitions),
                delay_ms: m.timer_seconds * 1000,
                txn: key,
                payload: STANDARD.encode(text.as_bytes()),
            });
        } else {
            push_of.push(Some(pushes.len()));
            timer_of.push(None);
            let payload = if m.solo {
                let mut stamped = m.envelope.clone();
                carried::stamp_visible_at(&mut stamped, ctx.now_ms, m.timer_seconds);
                stamped.to_json()
            } else {
                m.envelope.to_json()
            };
            let mut item =
                lanes::push_item(q, payload, m.group.as_deref(), m.dedup.as_deref(), &key);
            if m.solo {
                item.partition = inflight::solo_lane(&key);
            } else if !q.fifo {
                item.partition = lanes::batch_lane(ctx.request_id, *index, q.partitions);
            }
            // A standard message's own transaction id (SQS deduplicates nothing, and no
            // client sees it): a push made again after the broker spooled the first
            // (`push_again`) and the spool's replay are then one message, whichever lands
            // second being a duplicate within the lanes' window (checker, engine seed 513).
            if !q.fifo {
                item.transaction_id = Some(key.clone());
            }
            pushes.push(item);
        }
    }
    if dedup::queue_scoped(q) {
        if let Some(now) = dedup::route(ctx, q, &mut pushes).await? {
            // Purged while it waited on another group's claim: the send starts again
            // under the new incarnation (once; a purge has a 60 s cooldown).
            if !restarted {
                return Box::pin(deliver_under(ctx, &now, msgs, true)).await;
            }
        }
    }
    let push_call = async {
        if pushes.is_empty() {
            Ok(Vec::new())
        } else {
            ctx.queen.push(&pushes).await
        }
    };
    let timer_call = async {
        if timers.is_empty() {
            Ok(Vec::new())
        } else {
            ctx.queen.schedule(&timers).await
        }
    };
    let (pushed, scheduled) = futures_util::future::join(push_call, timer_call).await;
    let (mut pushed, scheduled) = (pushed?, scheduled?);
    push_again(ctx, &pushes, &mut pushed).await;
    hold_back(ctx, q, msgs, &push_of, &pushes, &pushed).await;

    let mut out = Vec::with_capacity(msgs.len());
    for (i, (_, m)) in msgs.iter().enumerate() {
        let mut answer = digests(&m.envelope);
        // Still `buffered` after `push_again`: the released engine keeps failing to write
        // to its database and spooled the message for a later replay. Not stored yet and
        // the broker is in trouble, so the client is told to retry (a replay plus a retry
        // is a duplicate, which at-least-once allows; never a message acknowledged and lost).
        let retry = push_of[i]
            .and_then(|j| pushed.get(j))
            .and_then(|p| match &p.status {
                PushStatus::NotStored(s) if s == "buffered" => {
                    Some("The broker could not store the message now; it was not sent.")
                }
                _ => None,
            });
        let landed = if let Some(p) = push_of[i].and_then(|j| pushed.get(j)) {
            match p.status {
                // A duplicate the broker still does not name after `push_again` is
                // answered as the broker said (the nil id; docs/divergences.md): stored once,
                // so a success, where a retryable error would fail the producer for good.
                PushStatus::Queued | PushStatus::Duplicate | PushStatus::DuplicateUnnamed => {
                    answer["MessageId"] = json!(p.message_id);
                    if q.fifo {
                        if let Some(n) = crate::model::sequence::from_message_id(&p.message_id) {
                            answer["SequenceNumber"] = json!(n);
                        }
                    }
                    true
                }
                PushStatus::NotStored(_) => false,
            }
        } else if let Some(t) = timer_of[i].and_then(|j| scheduled.get(j)) {
            match (&t.ok, &t.message_id) {
                (true, Some(id)) => {
                    answer["MessageId"] = json!(id);
                    true
                }
                _ => false,
            }
        } else {
            false
        };
        out.push(match (landed, retry) {
            (true, _) => Ok(answer),
            (false, Some(why)) => Err(ApiError::new(ErrorCode::ServiceUnavailable, why)),
            (false, None) => Err(internal()),
        });
    }
    Ok(out)
}

/// Pushes again, after a pause, what the broker answered without storing it plainly, with
/// the same transaction ids (so a second write of one message is a duplicate):
/// - duplicates answered without their original's id (the released engine under load): a
///   duplicate again writes nothing, and may name it then;
/// - items the released engine spooled (`buffered`) because its database write failed,
///   as it does when a PurgeQueue deletes the queue under the push: stored now, the send
///   succeeds; the spool's later replay is the duplicate at-least-once allows. Only what is
///   still spooled after the last pause is answered `ServiceUnavailable`.
async fn push_again<T: Transport>(
    ctx: &Ctx<'_, T>,
    pushes: &[PushItem],
    pushed: &mut [crate::queen::PushResult],
) {
    let again_wanted = |status: &PushStatus| match status {
        PushStatus::DuplicateUnnamed => true,
        PushStatus::NotStored(s) => s == "buffered",
        _ => false,
    };
    for pause_ms in [50, 250, 1_000] {
        let pending: Vec<usize> = (0..pushed.len())
            .filter(|&j| again_wanted(&pushed[j].status))
            .collect();
        if pending.is_empty() {
            return;
        }
        ctx.queen.transport().pause(pause_ms).await;
        let again: Vec<PushItem> = pending.iter().map(|&j| pushes[j].clone()).collect();
        let Ok(answers) = ctx.queen.push(&again).await else {
            return;
        };
        for (&j, answer) in pending.iter().zip(answers) {
            pushed[j] = answer;
        }
    }
}

/// Holds each delayed message too large for a timer in its own lane for its delay (a
/// lease on the lane). Not atomic with the push: a receive that pops the message in
/// between sees its `VISIBLE_AT` stamp and holds it back itself.
async fn hold_back<T: Transport>(
    ctx: &Ctx<'_, T>,
    q: &QueueRecord,
    msgs: &[(usize, &Outgoing)],
    push_of: &[Option<usize>],
    pushes: &[PushItem],
    pushed: &[crate::queen::PushResult],
) {
    let lanes: Vec<(String, u64)> = msgs
        .iter()
        .zip(push_of)
        .filter_map(|((_, m), j)| {
            let j = (*j)?;
            let landed = pushed.get(j)?.status == PushStatus::Queued;
            (m.solo && landed).then(|| (pushes[j].partition.clone(), m.timer_seconds))
        })
        .collect();
    if !lanes.is_empty() {
        inflight::hold_lanes(ctx, q, &lanes).await;
    }
}

/// The three MD5s a send answers (attribute digests only when there are attributes).
fn digests(e: &Envelope) -> Value {
    let mut m = Map::new();
    m.insert("MD5OfMessageBody".into(), json!(md5_of_body(&e.body)));
    if let Some(d) = md5_of_message_attributes(&e.attrs) {
        m.insert("MD5OfMessageAttributes".into(), json!(d));
    }
    let system: Attrs = e
        .system
        .iter()
        .filter(|(name, _)| !carried::is_internal(name))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(d) = md5_of_message_attributes(&system) {
        m.insert("MD5OfMessageSystemAttributes".into(), json!(d));
    }
    Value::Object(m)
}

/// SQS's size: the body's bytes plus every attribute's name, type and value bytes.
fn message_size(e: &Envelope) -> usize {
    e.body.len() + attrs_size(&e.attrs)
}

fn attrs_size(a: &Attrs) -> usize {
    a.iter()
        .map(|(name, v)| {
            let value = match &v.value {
                AttrData::String(s) => s.len(),
                AttrData::Binary(b) => STANDARD.decode(b).map_or(b.len(), |d| d.len()),
            };
            name.len() + v.data_type.len() + value
        })
        .sum()
}

/// SQS's name for the X-Ray trace header a message carries.
const TRACE_ATTRIBUTE: &str = "AWSTraceHeader";

/// `MessageSystemAttributes`: SQS defines exactly one, `AWSTraceHeader`, a String. Without
/// it, the request's `X-Amzn-Trace-Id` header is taken, as SQS takes it.
fn system_attributes(v: Option<&Value>, trace: Option<&str>) -> Result<Attrs, ApiError> {
    let Some(v) = v else {
        let mut attrs = Attrs::new();
        if let Some(t) = trace {
            attrs.insert(
                TRACE_ATTRIBUTE.to_string(),
                AttrValue {
                    data_type: "String".into(),
                    value: AttrData::String(t.to_string()),
                },
            );
        }
        return Ok(attrs);
    };
    let attrs = attrs_from_api(v).map_err(attribute_error)?;
    for (name, a) in &attrs {
        if name != TRACE_ATTRIBUTE {
            return Err(ApiError::new(
                ErrorCode::InvalidParameterValue,
                format!("Message system attribute name '{name}' is invalid."),
            ));
        }
        if a.data_type != "String" {
            return Err(ApiError::new(
                ErrorCode::InvalidParameterValue,
                "The message system attribute 'AWSTraceHeader' must be of type String.",
            ));
        }
    }
    Ok(attrs)
}

/// Attribute errors are `InvalidParameterValue`, a value with characters outside SQS's
/// allowed set included (as recorded against SQS; only a body's are `InvalidMessageContents`).
fn attribute_error(fault: AttrFault) -> ApiError {
    ApiError::new(ErrorCode::InvalidParameterValue, fault.to_string())
}

/// `MessageGroupId` / `MessageDeduplicationId` (and a receive's
/// `ReceiveRequestAttemptId`): 1..128 characters, alphanumerics and punctuation
/// ``!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~`` (printable ASCII without space).
pub(crate) fn check_id(name: &str, v: &str) -> Result<(), ApiError> {
    if v.is_empty() || v.len() > MAX_ID_CHARS || !v.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ApiError::new(
            ErrorCode::InvalidParameterValue,
            format!("Value {v} for parameter {name} is invalid. Reason: {name} can only include alphanumeric and punctuation characters. 1 to {MAX_ID_CHARS} in length."),
        ));
    }
    Ok(())
}

fn not_for_queue_type(name: &str, value: &str) -> ApiError {
    ApiError::new(
        ErrorCode::InvalidParameterValue,
        format!("Value {value} for parameter {name} is invalid. Reason: The request include parameter that is not valid for this queue type."),
    )
}

fn too_long(q: &QueueRecord) -> ApiError {
    ApiError::new(
        ErrorCode::InvalidParameterValue,
        format!(
            "One or more parameters are invalid. Reason: Message must be shorter than {} bytes.",
            q.maximum_message_size()
        ),
    )
}

fn internal() -> ApiError {
    ApiError::new(
        ErrorCode::InternalError,
        "The message could not be stored; it was not sent.",
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn queue(fifo: bool, attrs: &[(&str, &str)]) -> QueueRecord {
        QueueRecord {
            name: if fifo { "q.fifo".into() } else { "q".into() },
            fifo,
            partitions: if fifo { 0 } else { 8 },
            attributes: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            tags: BTreeMap::new(),
            created: 0,
            modified: 0,
            purged: 0,
            queue_dedup: None,
            purging: None,
            deleting: None,
        }
    }

    fn check(q: &QueueRecord, v: Value) -> Result<Outgoing, ErrorCode> {
        validate(q, &Input(&v), None).map_err(|e| e.code)
    }

    #[test]
    fn fifo_rules() {
        let q = queue(true, &[]);
        assert_eq!(
            check(
                &q,
                json!({"MessageBody": "x", "MessageDeduplicationId": "d"})
            )
            .err(),
            Some(ErrorCode::MissingParameter)
        );
        assert_eq!(
            check(&q, json!({"MessageBody": "x", "MessageGroupId": "g"})).err(),
            Some(ErrorCode::InvalidParameterValue)
        );
        assert_eq!(
            check(&q, json!({"MessageBody": "x", "MessageGroupId": "g", "MessageDeduplicationId": "d", "DelaySeconds": 5})).err(),
            Some(ErrorCode::InvalidParameterValue)
        );
        let cbd = queue(true, &[("ContentBasedDeduplication", "true")]);
        let m = check(&cbd, json!({"MessageBody": "abc", "MessageGroupId": "g"})).unwrap();
        assert_eq!(
            m.dedup.as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert_eq!(
            check(
                &q,
                json!({"MessageBody": "x", "MessageGroupId": "a b", "MessageDeduplicationId": "d"})
            )
            .err(),
            Some(ErrorCode::InvalidParameterValue)
        );
        assert_eq!(
            check(&q, json!({"MessageBody": "x", "MessageGroupId": "g".repeat(129), "MessageDeduplicationId": "d"})).err(),
            Some(ErrorCode::InvalidParameterValue)
        );
    }

    #[test]
    fn standard_rules() {
        let q = queue(false, &[("DelaySeconds", "10")]);
        assert!(check(&q, json!({"MessageBody": "x", "MessageGroupId": "g"})).is_ok());
        assert_eq!(
            check(
                &q,
                json!({"MessageBody": "x", "MessageDeduplicationId": "d"})
            )
            .err(),
            Some(ErrorCode::InvalidParameterValue)
        );
        assert_eq!(
            check(&q, json!({"MessageBody": "x", "DelaySeconds": 901})).err(),
            Some(ErrorCode::InvalidParameterValue)
        );
        assert_eq!(
            check(&q, json!({"MessageBody": "x", "DelaySeconds": 25}))
                .unwrap()
                .timer_seconds,
            25
        );
        // A message's own delay replaces the queue's, shorter or longer.
        assert_eq!(
            check(&q, json!({"MessageBody": "x", "DelaySeconds": 5}))
                .unwrap()
                .timer_seconds,
            5
        );
        assert_eq!(
            check(&q, json!({"MessageBody": "x", "DelaySeconds": 0}))
                .unwrap()
                .timer_seconds,
            0
        );
        assert_eq!(
            check(&q, json!({"MessageBody": "x"}))
                .unwrap()
                .timer_seconds,
            10
        );
        // A delayed message too large for a timer is held in a lane of its own.
        let big = queue(
            false,
            &[("DelaySeconds", "10"), ("MaximumMessageSize", "1048576")],
        );
        let m = check(&big, json!({"MessageBody": "\"".repeat(600_000)})).unwrap();
        assert!(m.solo && m.timer_seconds == 10);
        assert!(!check(&big, json!({"MessageBody": "small"})).unwrap().solo);
        assert_eq!(
            check(&q, json!({"MessageBody": ""})).err(),
            Some(ErrorCode::MissingParameter)
        );
        assert_eq!(
            check(&q, json!({"MessageBody": "a\u{1}b"})).err(),
            Some(ErrorCode::InvalidMessageContents)
        );
        assert_eq!(
            check(&q, json!({"MessageBody": "x", "MessageSystemAttributes": {"Other": {"DataType": "String", "StringValue": "v"}}})).err(),
            Some(ErrorCode::InvalidParameterValue)
        );
        assert!(check(&q, json!({"MessageBody": "x", "MessageSystemAttributes": {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-a"}}})).is_ok());
    }

    #[test]
    fn size_counts_attributes() {
        let q = queue(false, &[]);
        let m = check(&q, json!({"MessageBody": "abcd", "MessageAttributes": {"n": {"DataType": "Binary", "BinaryValue": "AAEC"}}})).unwrap();
        assert_eq!(message_size(&m.envelope), 4 + 1 + 6 + 3);
    }
}
