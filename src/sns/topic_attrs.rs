//! Topic attributes: which exist, how each is validated, and what a read reports.

use super::arn::topic_arn;
use super::errors::{invalid, invalid_because};
use super::records::TopicRecord;
use crate::config::Config;
use crate::wire::ApiError;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Delivery-status logging attributes: stored and reported, never acted on (nothing here
/// writes to CloudWatch), accepted because provisioners send them.
const FEEDBACK: &[&str] = &[
    "ApplicationSuccessFeedbackRoleArn",
    "ApplicationSuccessFeedbackSampleRate",
    "ApplicationFailureFeedbackRoleArn",
    "HTTPSuccessFeedbackRoleArn",
    "HTTPSuccessFeedbackSampleRate",
    "HTTPFailureFeedbackRoleArn",
    "LambdaSuccessFeedbackRoleArn",
    "LambdaSuccessFeedbackSampleRate",
    "LambdaFailureFeedbackRoleArn",
    "FirehoseSuccessFeedbackRoleArn",
    "FirehoseSuccessFeedbackSampleRate",
    "FirehoseFailureFeedbackRoleArn",
    "SQSSuccessFeedbackRoleArn",
    "SQSSuccessFeedbackSampleRate",
    "SQSFailureFeedbackRoleArn",
];

/// When an attribute may be written.
#[derive(PartialEq)]
pub enum When {
    Create,
    Set,
}

const KNOWN: &[&str] = &[
    "DisplayName",
    "KmsMasterKeyId",
    "Policy",
    "DeliveryPolicy",
    "ArchivePolicy",
    "FifoTopic",
    "ContentBasedDeduplication",
    "SignatureVersion",
    "TracingConfig",
    "FifoThroughputScope",
];

/// Validates one supplied attribute and answers its canonical stored form; an empty value
/// of a settable attribute answers "" (cleared: the default applies again).
pub fn normalize(name: &str, value: &str, fifo: bool, when: When) -> Result<String, ApiError> {
    if !KNOWN.contains(&name) && !FEEDBACK.contains(&name) {
        return Err(invalid_because(
            "AttributeName",
            format!("Unknown attribute {name}"),
        ));
    }
    if value.is_empty() && name != "FifoTopic" {
        return Ok(String::new());
    }
    let fifo_only = |what: &str| {
        if fifo {
            Ok(())
        } else {
            Err(invalid_because(
                name,
                format!("{what} can only be set on a FIFO topic"),
            ))
        }
    };
    match name {
        "DisplayName" | "KmsMasterKeyId" if !crate::model::valid_sqs_body(value) => Err(
            invalid_because(name, "contains characters XML 1.0 does not allow"),
        ),
        "DisplayName" | "KmsMasterKeyId" => Ok(value.to_string()),
        "Policy" | "DeliveryPolicy" => json_object(name, value),
        "ArchivePolicy" => {
            fifo_only("ArchivePolicy")?;
            json_object(name, value)
        }
        "FifoTopic" => {
            if when == When::Set {
                // AWS names only the parameter.
                return Err(invalid("AttributeName"));
            }
            boolean(name, value)
        }
        "ContentBasedDeduplication" => {
            let v = boolean(name, value)?;
            if v == "true" {
                fifo_only("ContentBasedDeduplication")?;
            }
            Ok(v)
        }
        "SignatureVersion" => match value {
            "1" | "2" => Ok(value.to_string()),
            _ => Err(invalid_because(name, "SignatureVersion must be 1 or 2")),
        },
        "TracingConfig" => match value {
            "PassThrough" | "Active" => Ok(value.to_string()),
            _ => Err(invalid_because(
                name,
                "TracingConfig must be PassThrough or Active",
            )),
        },
        "FifoThroughputScope" => {
            fifo_only("FifoThroughputScope")?;
            match value {
                "Topic" | "MessageGroup" => Ok(value.to_string()),
                _ => Err(invalid_because(
                    name,
                    "FifoThroughputScope must be Topic or MessageGroup",
                )),
            }
        }
        _ => Ok(value.to_string()), // the feedback attributes: stored as given
    }
}

fn boolean(name: &str, value: &str) -> Result<String, ApiError> {
    if value.eq_ignore_ascii_case("true") {
        Ok("true".into())
    } else if value.eq_ignore_ascii_case("false") {
        Ok("false".into())
    } else {
        Err(invalid_because(name, "must be true or false"))
    }
}

fn json_object(name: &str, value: &str) -> Result<String, ApiError> {
    match serde_json::from_str::<Value>(value) {
        Ok(Value::Object(_)) => Ok(value.to_string()),
        _ => Err(invalid(format!("{name}: the value is not a JSON object"))),
    }
}

/// The value a topic has for `name` when nothing set it, as AWS reports it.
fn default_of(t: &TopicRecord, name: &str) -> Option<String> {
    match name {
        "DisplayName" => Some(String::new()),
        "FifoTopic" => Some(t.fifo.to_string()),
        "ContentBasedDeduplication" => Some("false".into()),
        "SignatureVersion" => Some("1".into()),
        "TracingConfig" => Some("PassThrough".into()),
        "FifoThroughputScope" => Some("Topic".into()),
        _ => None,
    }
}

/// Whether a supplied (normalised) value equals what the topic has; JSON documents
/// compare as documents, so whitespace and key order do not count as a difference.
pub fn same(t: &TopicRecord, name: &str, supplied: &str) -> bool {
    if supplied.is_empty() {
        return t.attributes.get(name).is_none_or(|v| v.is_empty());
    }
    let current = t
        .attributes
        .get(name)
        .cloned()
        .or_else(|| default_of(t, name));
    match current {
        None => supplied.is_empty(),
        Some(c) if c == supplied => true,
        Some(c) => match (
            serde_json::from_str::<Value>(&c),
            serde_json::from_str::<Value>(supplied),
        ) {
            (Ok(a @ Value::Object(_)), Ok(b)) => a == b,
            _ => false,
        },
    }
}

/// The `Policy` AWS gives a topic nobody wrote one for: the owner may do everything.
pub fn default_policy(cfg: &Config, arn: &str) -> String {
    json!({
        "Version": "2008-10-17",
        "Id": "__default_policy_ID",
        "Statement": [{
            "Sid": "__default_statement_ID",
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": [
                "SNS:GetTopicAttributes", "SNS:SetTopicAttributes", "SNS:AddPermission",
                "SNS:RemovePermission", "SNS:DeleteTopic", "SNS:Subscribe",
                "SNS:ListSubscriptionsByTopic", "SNS:Publish"
            ],
            "Resource": arn,
            "Condition": {"StringEquals": {"AWS:SourceOwner": cfg.account_id}}
        }]
    })
    .to_string()
}

const DEFAULT_DELIVERY_POLICY: &str = r#"{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}"#;

/// Everything `GetTopicAttributes` answers: what is stored, the defaults AWS reports,
/// and the read-only counts.
pub fn report(
    cfg: &Config,
    t: &TopicRecord,
    (confirmed, pending): (usize, usize),
) -> BTreeMap<String, String> {
    let arn = topic_arn(cfg, &t.name);
    let mut out: BTreeMap<String, String> = t
        .attributes
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    out.insert("TopicArn".into(), arn.clone());
    out.insert("Owner".into(), cfg.account_id.clone());
    out.entry("Policy".into())
        .or_insert_with(|| default_policy(cfg, &arn));
    out.entry("DisplayName".into()).or_default();
    out.insert("SubscriptionsConfirmed".into(), confirmed.to_string());
    out.insert("SubscriptionsPending".into(), pending.to_string());
    out.insert("SubscriptionsDeleted".into(), "0".into());
    let effective = t
        .attr("DeliveryPolicy")
        .filter(|p| !p.is_empty())
        .unwrap_or(DEFAULT_DELIVERY_POLICY);
    out.insert("EffectiveDeliveryPolicy".into(), effective.to_string());
    if t.fifo {
        out.insert("FifoTopic".into(), "true".into());
        out.entry("ContentBasedDeduplication".into())
            .or_insert_with(|| "false".into());
    }
    out
}
