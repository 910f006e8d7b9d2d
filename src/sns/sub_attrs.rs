//! Subscription attributes: validation at write (a filter policy is compiled when it is
//! set, so a bad one is refused with AWS's message rather than failing every publish),
//! comparison for an idempotent `Subscribe`, and what a read reports.

use super::arn::{subscription_arn, topic_arn};
use super::errors::{invalid, invalid_because};
use super::filter::{FilterPolicy, Scope};
use super::records::SubRecord;
use crate::config::Config;
use crate::wire::{ApiError, ErrorCode};
use serde_json::Value;
use std::collections::BTreeMap;

const SETTABLE: &[&str] = &[
    "RawMessageDelivery",
    "FilterPolicy",
    "FilterPolicyScope",
    "RedrivePolicy",
    "DeliveryPolicy",
    "SubscriptionRoleArn",
];

/// Validates one attribute and writes it into `attrs` (an empty value removes it).
/// `param` names the parameter in errors (`Attributes` or `AttributeName`).
pub fn apply(
    attrs: &mut BTreeMap<String, String>,
    name: &str,
    value: &str,
    param: &str,
) -> Result<(), ApiError> {
    // SNS's wordings differ by parameter (`Subscribe`'s `Attributes`, or
    // `SetSubscriptionAttributes`' `AttributeName`), as recorded against SNS.
    let in_attributes = param == "Attributes";
    let refuse = |why: String| {
        if in_attributes {
            invalid_because(param, why)
        } else {
            invalid(why)
        }
    };
    if !SETTABLE.contains(&name) {
        return Err(if in_attributes {
            invalid_because(param, format!("Invalid attribute name: {name}"))
        } else {
            invalid(param)
        });
    }
    let v = match name {
        "RawMessageDelivery" => {
            if value.eq_ignore_ascii_case("true") {
                "true".to_string()
            } else if value.eq_ignore_ascii_case("false") {
                "false".to_string()
            } else {
                return Err(refuse(format!(
                    "RawMessageDelivery: Invalid value [{value}]. Must be true or false."
                )));
            }
        }
        "FilterPolicyScope" => match Scope::parse(value) {
            Some(s) => s.as_str().to_string(),
            None if value.is_empty() => String::new(),
            None => {
                return Err(invalid(format!(
                    "FilterPolicyScope: Invalid value [{value}]. Please use either MessageBody or MessageAttributes"
                )))
            }
        },
        // `{}` is as empty as "": no policy at all.
        "FilterPolicy" if value.trim().is_empty() || is_empty_object(value) => String::new(),
        "RedrivePolicy" if !value.is_empty() => redrive_policy(value).map_err(refuse)?,
        "DeliveryPolicy" if !value.is_empty() => match serde_json::from_str::<Value>(value) {
            Ok(Value::Object(_)) => value.to_string(),
            Ok(_) => return Err(refuse(format!("{name}: the value is not a JSON object"))),
            Err(e) => return Err(refuse(format!("{name}: failed to parse JSON. {e}"))),
        },
        _ => value.to_string(),
    };
    if v.is_empty() {
        attrs.remove(name);
    } else {
        attrs.insert(name.to_string(), v);
    }
    Ok(())
}

/// A subscription's `RedrivePolicy`: a JSON object whose `deadLetterTargetArn` is an ARN
/// (SNS's own sentences for both failures).
fn redrive_policy(value: &str) -> Result<String, String> {
    let doc = serde_json::from_str::<Value>(value)
        .map_err(|e| format!("RedrivePolicy: failed to parse JSON. {e}"))?;
    let arn = doc.get("deadLetterTargetArn").and_then(Value::as_str);
    match arn {
        Some(a) if a.starts_with("arn:") && a.split(':').count() >= 6 => Ok(value.to_string()),
        _ if !doc.is_object() => Err("RedrivePolicy: the value is not a JSON object".into()),
        _ => Err("RedrivePolicy: deadLetterTargetArn is an invalid arn".into()),
    }
}

fn is_empty_object(s: &str) -> bool {
    matches!(serde_json::from_str::<Value>(s), Ok(Value::Object(m)) if m.is_empty())
}

pub fn scope_of(attrs: &BTreeMap<String, String>) -> Scope {
    attrs
        .get("FilterPolicyScope")
        .and_then(|s| Scope::parse(s))
        .unwrap_or(Scope::MessageAttributes)
}

/// The compiled filter policy of a set of attributes; an invalid one is refused with the
/// engine's AWS message.
pub fn policy(attrs: &BTreeMap<String, String>) -> Result<Option<FilterPolicy>, ApiError> {
    match attrs.get("FilterPolicy") {
        None => Ok(None),
        Some(p) => FilterPolicy::parse(p, scope_of(attrs))
            .map(Some)
            .map_err(|m| ApiError::new(ErrorCode::InvalidParameter, m)),
    }
}

fn default_of(name: &str) -> Option<&'static str> {
    match name {
        "RawMessageDelivery" => Some("false"),
        "FilterPolicyScope" => Some("MessageAttributes"),
        _ => None,
    }
}

/// Whether the attributes a repeat `Subscribe` supplies (already applied onto an empty
/// map) all equal the subscription's; JSON documents compare as documents.
pub fn matches(existing: &BTreeMap<String, String>, supplied: &BTreeMap<String, String>) -> bool {
    supplied.iter().all(|(k, v)| {
        let current = existing.get(k).map(String::as_str).or(default_of(k));
        match current {
            Some(c) if c == v => true,
            Some(c) => match (
                serde_json::from_str::<Value>(c),
                serde_json::from_str::<Value>(v),
            ) {
                (Ok(a @ Value::Object(_)), Ok(b)) => a == b,
                _ => false,
            },
            None => false,
        }
    })
}

/// Everything `GetSubscriptionAttributes` answers. A subscription with no filter policy
/// reports no `FilterPolicyScope`, as AWS does.
pub fn report(cfg: &Config, s: &SubRecord) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = s.attributes.clone();
    if !out.contains_key("FilterPolicy") {
        out.remove("FilterPolicyScope");
    } else {
        out.entry("FilterPolicyScope".into())
            .or_insert_with(|| "MessageAttributes".into());
    }
    out.entry("RawMessageDelivery".into())
        .or_insert_with(|| "false".into());
    out.insert(
        "SubscriptionArn".into(),
        subscription_arn(cfg, &s.topic, &s.id),
    );
    out.insert("TopicArn".into(), topic_arn(cfg, &s.topic));
    out.insert("Owner".into(), cfg.account_id.clone());
    out.insert("Protocol".into(), s.protocol.clone());
    out.insert("Endpoint".into(), s.endpoint.clone());
    // An SQS subscription is confirmed by the signed `Subscribe`; an HTTP/S one by its
    // token, in a call a client made or by a GET of its `SubscribeURL`.
    let authenticated = !s.is_webhook() || s.confirmed_by_call;
    out.insert(
        "ConfirmationWasAuthenticated".into(),
        authenticated.to_string(),
    );
    out.insert(
        "SubscriptionPrincipal".into(),
        crate::sqs::naming::principal_arn(cfg),
    );
    out.insert("PendingConfirmation".into(), s.pending.to_string());
    out
}
