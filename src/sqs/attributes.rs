//! Queue attributes: which names exist, what values they take, the defaults a new
//! queue gets, and the values GetQueueAttributes answers. Validation is SQS's: an
//! unknown or unsettable name is `InvalidAttributeName`, an out-of-range value
//! `InvalidAttributeValue`, a malformed redrive policy `InvalidParameterValue`.

use super::naming;
use super::registry::{self, QueueRecord};
use crate::config::{Config, MAX_PARTITIONS};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::wire::{ApiError, ErrorCode};
use serde_json::Value;
use std::collections::BTreeMap;

pub const PARTITIONS: &str = "queen.partitions";
pub const DEDUP_WINDOW: &str = "queen.dedupWindowSeconds";
/// The prefix of every timer key the send path schedules for a delayed message.
pub const DELAY_TIMER_PREFIX: &str = "sqs.";

/// Answered by GetQueueAttributes, computed on read, never stored.
pub const COMPUTED: &[&str] = &[
    "QueueArn",
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
];

/// Attributes only a FIFO queue has.
const FIFO_ONLY: &[&str] = &[
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
    DEDUP_WINDOW,
];

/// Every name GetQueueAttributes recognises (besides `All`).
const READABLE: &[&str] = &[
    "Policy",
    "VisibilityTimeout",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "DelaySeconds",
    "ReceiveMessageWaitTimeSeconds",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    PARTITIONS,
    DEDUP_WINDOW,
];

const MAX_SOURCE_QUEUE_ARNS: usize = 10;
const MAX_DEDUP_WINDOW_SECONDS: u64 = 31_536_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Create,
    Set,
}

/// What a CreateQueue or SetQueueAttributes asks for, validated and in canonical form.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// Canonical value by name; `None` unsets an optional attribute (an empty value).
    pub set: BTreeMap<String, Option<String>>,
    /// `queen.partitions` (CreateQueue of a standard queue only).
    pub partitions: Option<u32>,
}

pub fn unknown(name: &str) -> ApiError {
    ApiError::new(
        ErrorCode::InvalidAttributeName,
        format!("Unknown Attribute {name}."),
    )
}

/// A FIFO queue's attribute named for a standard queue: SQS says which, where it has a
/// sentence for it (recorded against SQS), and calls it unknown otherwise.
fn fifo_only(name: &str) -> ApiError {
    match name {
        "DeduplicationScope" | "FifoThroughputLimit" => ApiError::new(
            ErrorCode::InvalidAttributeName,
            format!("You can specify the {name} only when FifoQueue is set to true."),
        ),
        _ => unknown(name),
    }
}

fn bad_value(name: &str) -> ApiError {
    ApiError::new(
        ErrorCode::InvalidAttributeValue,
        format!("Invalid value for the parameter {name}."),
    )
}

fn bad_policy(name: &str, value: &str, reason: &str) -> ApiError {
    ApiError::new(
        ErrorCode::InvalidParameterValue,
        format!("Value {value} for parameter {name} is invalid. Reason: {reason}"),
    )
}

/// SQS's own sentence for a queue name that breaks the naming rule.
pub fn bad_queue_name(fifo: bool) -> ApiError {
    let msg = if fifo {
        "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length."
    } else {
        "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
    };
    ApiError::new(ErrorCode::InvalidParameterValue, msg)
}

fn int_in(name: &str, value: &str, lo: u64, hi: u64) -> Result<u64, ApiError> {
    if value.is_empty() || value.len() > 12 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad_value(name));
    }
    let n: u64 = value.parse().map_err(|_| bad_value(name))?;
    if n < lo || n > hi {
        return Err(bad_value(name));
    }
    Ok(n)
}

fn boolean(name: &str, value: &str) -> Result<&'static str, ApiError> {
    if value.eq_ignore_ascii_case("true") {
        Ok("true")
    } else if value.eq_ignore_ascii_case("false") {
        Ok("false")
    } else {
        Err(bad_value(name))
    }
}

fn one_of(name: &str, value: &str, allowed: &[&str]) -> Result<String, ApiError> {
    if allowed.contains(&value) {
        Ok(value.to_string())
    } else {
        Err(bad_value(name))
    }
}

/// Whether a CreateQueue's attributes ask for a FIFO queue: `FifoQueue=true`. Checked
/// before the name is judged by it: a value that is not a boolean is
/// `InvalidAttributeValue`, and `false` is `InvalidAttributeName`, as SQS answers it.
pub fn fifo_requested(supplied: &[(&str, &str)]) -> Result<bool, ApiError> {
    match supplied.iter().find(|(k, _)| *k == "FifoQueue") {
        None => Ok(false),
        Some((name, value)) if boolean(name, value)? == "true" => Ok(true),
        Some((name, _)) => Err(unknown(name)),
    }
}

/// Validates the attributes of a CreateQueue (for a queue whose name says `fifo` or
/// not) or a SetQueueAttributes, into canonical values.
pub fn parse(fifo: bool, phase: Phase, supplied: &[(&str, &str)]) -> Result<Changes, ApiError> {
    let mut out = Changes::default();
    for &(name, value) in supplied {
        if !fifo && FIFO_ONLY.contains(&name) {
            return Err(fifo_only(name));
        }
        let canonical: Option<String> = match name {
            "DelaySeconds" => Some(int_in(name, value, 0, 900)?.to_string()),
            "MaximumMessageSize" => Some(int_in(name, value, 1024, 1_048_576)?.to_string()),
            "MessageRetentionPeriod" => Some(int_in(name, value, 60, 1_209_600)?.to_string()),
            "ReceiveMessageWaitTimeSeconds" => Some(int_in(name, value, 0, 20)?.to_string()),
            "VisibilityTimeout" => Some(int_in(name, value, 0, 43_200)?.to_string()),
            "KmsDataKeyReusePeriodSeconds" => Some(int_in(name, value, 60, 86_400)?.to_string()),
            "KmsMasterKeyId" => (!value.is_empty()).then(|| value.to_string()),
            "SqsManagedSseEnabled" => Some(boolean(name, value)?.to_string()),
            "Policy" => {
                if value.is_empty() {
                    None
                } else {
                    // Stored as sent and never enforced; it must still be a JSON document.
                    match serde_json::from_str::<Value>(value) {
                        Ok(Value::Object(_)) => Some(value.to_string()),
                        _ => return Err(bad_value(name)),
                    }
                }
            }
            "RedrivePolicy" => {
                if value.is_empty() {
                    None
                } else {
                    Some(redrive_policy(value)?)
                }
            }
            "RedriveAllowPolicy" => {
                if value.is_empty() {
                    None
                } else {
                    Some(redrive_allow_policy(value)?)
                }
            }
            "ContentBasedDeduplication" => Some(boolean(name, value)?.to_string()),
            "DeduplicationScope" => Some(one_of(name, value, &["messageGroup", "queue"])?),
            "FifoThroughputLimit" => Some(one_of(name, value, &["perQueue", "perMessageGroupId"])?),
            DEDUP_WINDOW => Some(int_in(name, value, 300, MAX_DEDUP_WINDOW_SECONDS)?.to_string()),
            "FifoQueue" if phase == Phase::Set => {
                // The queue's kind is fixed: a FIFO queue may be told it is one (a no-op),
                // as SQS answers it; a standard queue knows no such attribute.
                if !fifo {
                    return Err(unknown(name));
                }
                if boolean(name, value)? == "false" {
                    return Err(ApiError::new(
                        ErrorCode::InvalidAttributeValue,
                        "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.",
                    ));
                }
                continue;
            }
            "FifoQueue" => {
                // At create only `true`: SQS itself answers FifoQueue=false as an
                // unknown attribute.
                if boolean(name, value)? == "false" {
                    return Err(unknown(name));
                }
                if !fifo {
                    return Err(bad_queue_name(true));
                }
                continue;
            }
            PARTITIONS => {
                if phase == Phase::Set || fifo {
                    return Err(unknown(name));
                }
                let n = int_in(name, value, 1, u64::from(MAX_PARTITIONS))?;
                out.partitions = u32::try_from(n).ok();
                continue;
            }
            // What GetQueueAttributes answers, CreateQueue accepts back; nobody sets it.
            _ if COMPUTED.contains(&name) && phase == Phase::Create => continue,
            _ => return Err(unknown(name)),
        };
        out.set.insert(name.to_string(), canonical);
    }
    // SSE-KMS and SSE-SQS are exclusive: naming a key turns SQS-managed SSE off.
    let key = out.set.get("KmsMasterKeyId").cloned();
    let sse = out.set.get("SqsManagedSseEnabled").cloned().flatten();
    match (key, sse.as_deref()) {
        (Some(Some(_)), Some("true")) => return Err(bad_value("SqsManagedSseEnabled")),
        (Some(Some(_)), None) => {
            out.set
                .insert("SqsManagedSseEnabled".into(), Some("false".into()));
        }
        (None, Some("true")) if phase == Phase::Set => {
            out.set.insert("KmsMasterKeyId".into(), None);
            out.set.insert("KmsDataKeyReusePeriodSeconds".into(), None);
        }
        _ => {}
    }
    Ok(out)
}

/// `{"deadLetterTargetArn": <one of our queue ARNs>, "maxReceiveCount": 1..1000}`,
/// canonical (the count a number). A queue naming itself is a live-lock and refused.
fn redrive_policy(value: &str) -> Result<String, ApiError> {
    const NAME: &str = "RedrivePolicy";
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(value) else {
        return Err(bad_policy(NAME, value, "Invalid JSON."));
    };
    if map
        .keys()
        .any(|k| k != "deadLetterTargetArn" && k != "maxReceiveCount")
    {
        return Err(bad_policy(
            NAME,
            value,
            "Only following attributes are supported: [deadLetterTargetArn, maxReceiveCount].",
        ));
    }
    let Some(arn) = map.get("deadLetterTargetArn").and_then(Value::as_str) else {
        return Err(bad_policy(
            NAME,
            value,
            "Redrive policy does not contain mandatory attribute: deadLetterTargetArn.",
        ));
    };
    let count = match map.get("maxReceiveCount") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.parse::<u64>().ok(),
        None => {
            return Err(bad_policy(
                NAME,
                value,
                "Redrive policy does not contain mandatory attribute: maxReceiveCount.",
            ))
        }
        _ => None,
    };
    let count = match count {
        Some(c) if (1..=1000).contains(&c) => c,
        _ => return Err(bad_policy(
            NAME,
            value,
            "Invalid value for maxReceiveCount, valid values are from 1 to 1000 both inclusive.",
        )),
    };
    if !arn.starts_with("arn:") || arn.split(':').count() != 6 {
        return Err(bad_policy(
            NAME,
            value,
            "Invalid value for deadLetterTargetArn.",
        ));
    }
    // A queue may name itself: SQS accepts that (LocalStack's AWS-validated
    // test_set_empty_redrive_policy). Its messages are then never moved (`receive`).
    Ok(serde_json::json!({"deadLetterTargetArn": arn, "maxReceiveCount": count}).to_string())
}

/// `{"redrivePermission": allowAll|denyAll|byQueue, "sourceQueueArns": [..]}`; byQueue
/// names 1..10 source ARNs, the other two name none.
fn redrive_allow_policy(value: &str) -> Result<String, ApiError> {
    const NAME: &str = "RedriveAllowPolicy";
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(value) else {
        return Err(bad_policy(NAME, value, "Invalid JSON."));
    };
    if map
        .keys()
        .any(|k| k != "redrivePermission" && k != "sourceQueueArns")
    {
        return Err(bad_policy(
            NAME,
            value,
            "Only following attributes are supported: [redrivePermission, sourceQueueArns].",
        ));
    }
    let permission = map.get("redrivePermission").and_then(Value::as_str);
    let arns: Vec<&str> = match map.get("sourceQueueArns") {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            let mut out = Vec::new();
            for item in items {
                match item.as_str() {
                    Some(a) if a.starts_with("arn:") && a.split(':').count() == 6 => out.push(a),
                    _ => {
                        return Err(bad_policy(
                            NAME,
                            value,
                            "Invalid value for sourceQueueArns.",
                        ))
                    }
                }
            }
            out
        }
        Some(_) => {
            return Err(bad_policy(
                NAME,
                value,
                "Invalid value for sourceQueueArns.",
            ))
        }
    };
    match permission {
        Some("allowAll") | Some("denyAll") if arns.is_empty() => {}
        Some("allowAll") | Some("denyAll") => {
            return Err(bad_policy(
                NAME,
                value,
                "sourceQueueArns is only allowed when redrivePermission is byQueue.",
            ))
        }
        Some("byQueue") if (1..=MAX_SOURCE_QUEUE_ARNS).contains(&arns.len()) => {}
        Some("byQueue") => {
            return Err(bad_policy(
                NAME,
                value,
                "byQueue needs between 1 and 10 sourceQueueArns.",
            ))
        }
        _ => {
            return Err(bad_policy(
                NAME,
                value,
                "redrivePermission must be one of allowAll, denyAll, byQueue.",
            ))
        }
    }
    let mut canonical = serde_json::Map::new();
    canonical.insert(
        "redrivePermission".into(),
        Value::String(permission.unwrap_or_default().to_string()),
    );
    if !arns.is_empty() {
        canonical.insert("sourceQueueArns".into(), serde_json::json!(arns));
    }
    Ok(Value::Object(canonical).to_string())
}

/// A new queue's stored attributes: SQS's defaults, then what the request supplied.
pub fn initial(fifo: bool, changes: &Changes) -> BTreeMap<String, String> {
    let mut attrs: BTreeMap<String, String> = registry::DEFAULTS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if fifo {
        for (k, v) in [
            ("ContentBasedDeduplication", "false"),
            ("DeduplicationScope", "queue"),
            ("FifoThroughputLimit", "perQueue"),
        ] {
            attrs.insert(k.into(), v.into());
        }
    }
    apply(&mut attrs, changes);
    attrs
}

/// Merges validated changes onto stored attributes.
pub fn apply(attrs: &mut BTreeMap<String, String>, changes: &Changes) {
    for (k, v) in &changes.set {
        match v {
            Some(v) => {
                attrs.insert(k.clone(), v.clone());
            }
            None => {
                attrs.remove(k);
            }
        }
    }
}

/// The value a stored (not computed) attribute has now, as GetQueueAttributes answers it.
pub fn effective(record: &QueueRecord, name: &str) -> Option<String> {
    match name {
        "FifoQueue" => record.fifo.then(|| "true".to_string()),
        PARTITIONS => (!record.fifo).then(|| record.partitions.to_string()),
        DEDUP_WINDOW => record
            .fifo
            .then(|| record.dedup_window_seconds().to_string()),
        _ => record.attr(name).map(str::to_string),
    }
}

/// The first supplied attribute whose value differs from the queue's: CreateQueue
/// over an existing queue is idempotent unless one does.
pub fn first_difference(record: &QueueRecord, changes: &Changes) -> Option<String> {
    if let Some(p) = changes.partitions {
        if p != record.partitions {
            return Some(PARTITIONS.to_string());
        }
    }
    changes
        .set
        .iter()
        .find(|(name, value)| effective(record, name) != **value)
        .map(|(name, _)| name.clone())
}

/// The names GetQueueAttributes is asked for, resolved: `All` is every AWS attribute.
/// The `queen.*` extensions are answered only when named: `All` is what AWS answers,
/// and a tool that diffs it against AWS's (a provisioner, a test recorded there) sees
/// nothing of ours.
pub fn requested(names: &[&str]) -> Result<Vec<String>, ApiError> {
    let mut out: Vec<String> = Vec::new();
    for &name in names {
        if name == "All" {
            out.extend(COMPUTED.iter().map(|s| s.to_string()));
            out.extend(
                READABLE
                    .iter()
                    .filter(|s| !s.starts_with("queen."))
                    .map(|s| s.to_string()),
            );
        } else if COMPUTED.contains(&name) || READABLE.contains(&name) {
            out.push(name.to_string());
        } else {
            return Err(unknown(name));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Checks a RedrivePolicy's target against the registry: it must exist (SQS answers
/// `QueueDoesNotExist`), be of the source's kind, and let the source in by its
/// RedriveAllowPolicy.
pub async fn check_redrive_target<T: Transport>(
    ctx: &Ctx<'_, T>,
    source: &str,
    fifo: bool,
    changes: &Changes,
) -> Result<(), ApiError> {
    let Some(Some(policy)) = changes.set.get("RedrivePolicy") else {
        return Ok(());
    };
    let arn = serde_json::from_str::<Value>(policy)
        .ok()
        .and_then(|v| v.get("deadLetterTargetArn")?.as_str().map(str::to_string))
        .unwrap_or_default();
    let missing = || {
        ApiError::new(
            ErrorCode::QueueDoesNotExist,
            format!(
                "Value {policy} for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist."
            ),
        )
    };
    let Some(target) = naming::name_from_arn(ctx.cfg, &arn) else {
        return Err(missing());
    };
    let Some(dlq) = registry::load(ctx, target).await? else {
        return Err(missing());
    };
    if dlq.record.fifo != fifo {
        return Err(bad_policy(
            "RedrivePolicy",
            policy,
            "Dead-letter queue must be same type of queue as the source.",
        ));
    }
    if !allows_source(ctx.cfg, &dlq.record, source) {
        return Err(bad_policy(
            "RedrivePolicy",
            policy,
            "The dead-letter queue's RedriveAllowPolicy does not allow this source queue.",
        ));
    }
    Ok(())
}

fn allows_source(cfg: &Config, dlq: &QueueRecord, source: &str) -> bool {
    let Some(policy) = dlq
        .attr("RedriveAllowPolicy")
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
    else {
        return true;
    };
    match policy.get("redrivePermission").and_then(Value::as_str) {
        Some("denyAll") => false,
        Some("byQueue") => {
            let arn = naming::queue_arn(cfg, source);
            policy
                .get("sourceQueueArns")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(arn.as_str())))
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<Changes, ApiError>) -> ErrorCode {
        r.unwrap_err().code
    }

    #[test]
    fn ranges_are_sqs_ranges() {
        for (name, lo, hi) in [
            ("DelaySeconds", 0u64, 900u64),
            ("MaximumMessageSize", 1024, 1_048_576),
            ("MessageRetentionPeriod", 60, 1_209_600),
            ("ReceiveMessageWaitTimeSeconds", 0, 20),
            ("VisibilityTimeout", 0, 43_200),
        ] {
            for ok in [lo, hi] {
                let v = ok.to_string();
                let ch = parse(false, Phase::Set, &[(name, &v)]).unwrap();
                assert_eq!(ch.set[name].as_deref(), Some(v.as_str()));
            }
            let over = (hi + 1).to_string();
            assert_eq!(
                code(parse(false, Phase::Set, &[(name, &over)])),
                ErrorCode::InvalidAttributeValue
            );
            if lo > 0 {
                let under = (lo - 1).to_string();
                assert_eq!(
                    code(parse(false, Phase::Set, &[(name, &under)])),
                    ErrorCode::InvalidAttributeValue
                );
            }
            for junk in ["", "-1", "1.5", "ten", " 5"] {
                assert_eq!(
                    code(parse(false, Phase::Set, &[(name, junk)])),
                    ErrorCode::InvalidAttributeValue,
                    "{name}={junk:?}"
                );
            }
        }
    }

    #[test]
    fn fifo_queue_attribute_agrees_with_the_name() {
        assert!(parse(true, Phase::Create, &[("FifoQueue", "true")]).is_ok());
        assert_eq!(
            code(parse(false, Phase::Create, &[("FifoQueue", "true")])),
            ErrorCode::InvalidParameterValue
        );
        assert_eq!(
            code(parse(false, Phase::Create, &[("FifoQueue", "false")])),
            ErrorCode::InvalidAttributeName
        );
        assert_eq!(
            code(parse(true, Phase::Create, &[("FifoQueue", "maybe")])),
            ErrorCode::InvalidAttributeValue
        );
        // A FIFO queue may be told it is one; it may not be made standard.
        assert!(parse(true, Phase::Set, &[("FifoQueue", "true")])
            .unwrap()
            .set
            .is_empty());
        assert_eq!(
            code(parse(true, Phase::Set, &[("FifoQueue", "false")])),
            ErrorCode::InvalidAttributeValue
        );
        assert_eq!(
            code(parse(
                false,
                Phase::Create,
                &[("ContentBasedDeduplication", "true")]
            )),
            ErrorCode::InvalidAttributeName
        );
    }

    #[test]
    fn the_kind_is_the_fifo_queue_attribute() {
        assert_eq!(fifo_requested(&[]), Ok(false));
        assert_eq!(fifo_requested(&[("FifoQueue", "TRUE")]), Ok(true));
        for (value, want) in [
            ("false", ErrorCode::InvalidAttributeName),
            ("maybe", ErrorCode::InvalidAttributeValue),
        ] {
            assert_eq!(
                fifo_requested(&[("FifoQueue", value)]).unwrap_err().code,
                want
            );
        }
    }

    #[test]
    fn redrive_policy_is_canonical_and_checked() {
        let arn = "arn:aws:sqs:us-east-1:000000000000:dlq";
        let ch = parse(
            false,
            Phase::Set,
            &[(
                "RedrivePolicy",
                &format!(r#"{{"maxReceiveCount":"5","deadLetterTargetArn":"{arn}"}}"#),
            )],
        )
        .unwrap();
        assert_eq!(
            ch.set["RedrivePolicy"].as_deref(),
            Some(format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":5}}"#).as_str())
        );
        for bad in [
            "nope".to_string(),
            format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":0}}"#),
            format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":1001}}"#),
            format!(r#"{{"deadLetterTargetArn":"{arn}"}}"#),
            r#"{"maxReceiveCount":3}"#.to_string(),
            format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":3,"x":1}}"#),
        ] {
            assert_eq!(
                code(parse(false, Phase::Set, &[("RedrivePolicy", &bad)])),
                ErrorCode::InvalidParameterValue,
                "{bad}"
            );
        }
    }

    #[test]
    fn redrive_allow_policy_shapes() {
        let a = "arn:aws:sqs:us-east-1:000000000000:src";
        assert!(parse(
            false,
            Phase::Set,
            &[("RedriveAllowPolicy", r#"{"redrivePermission":"allowAll"}"#)]
        )
        .is_ok());
        assert!(parse(
            false,
            Phase::Set,
            &[(
                "RedriveAllowPolicy",
                &format!(r#"{{"redrivePermission":"byQueue","sourceQueueArns":["{a}"]}}"#)
            )]
        )
        .is_ok());
        let eleven: Vec<String> = (0..11).map(|i| format!("\"{a}{i}\"")).collect();
        for bad in [
            r#"{"redrivePermission":"byQueue"}"#.to_string(),
            r#"{"redrivePermission":"sometimes"}"#.to_string(),
            format!(r#"{{"redrivePermission":"denyAll","sourceQueueArns":["{a}"]}}"#),
            format!(
                r#"{{"redrivePermission":"byQueue","sourceQueueArns":[{}]}}"#,
                eleven.join(",")
            ),
        ] {
            assert_eq!(
                code(parse(false, Phase::Set, &[("RedriveAllowPolicy", &bad)])),
                ErrorCode::InvalidParameterValue,
                "{bad}"
            );
        }
    }

    #[test]
    fn computed_names_come_back_on_create_only() {
        assert!(parse(false, Phase::Create, &[("QueueArn", "x")])
            .unwrap()
            .set
            .is_empty());
        assert_eq!(
            code(parse(false, Phase::Set, &[("QueueArn", "x")])),
            ErrorCode::InvalidAttributeName
        );
        assert_eq!(
            code(parse(false, Phase::Create, &[("Nope", "x")])),
            ErrorCode::InvalidAttributeName
        );
        assert_eq!(
            requested(&["Nope"]).unwrap_err().code,
            ErrorCode::InvalidAttributeName
        );
        let all = requested(&["All"]).unwrap();
        assert!(all.contains(&"MaximumMessageSize".to_string()));
        assert!(!all.iter().any(|n| n.starts_with("queen.")), "{all:?}");
        assert_eq!(
            requested(&[PARTITIONS]).unwrap(),
            vec![PARTITIONS.to_string()]
        );
    }
}
