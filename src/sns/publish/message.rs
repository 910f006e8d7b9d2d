//! One publish entry (a `Publish` request or one `PublishBatch` entry), validated with
//! SNS's rules into what the fan-out needs.

use crate::model::{attrs_from_api, AttrData, Attrs};
use crate::sns::arn::sha256_hex;
use crate::sns::errors::{invalid, invalid_because};
use crate::sns::input::Params;
use crate::sns::records::TopicRecord;
use crate::wire::{ApiError, ErrorCode};
use serde_json::Value;

/// SNS's payload ceiling: the message plus its attributes.
pub const MAX_BYTES: usize = 262_144;
const MAX_SUBJECT: usize = 100;
const MAX_ID: usize = 128;

pub struct Entry {
    /// What an SQS subscriber gets: the `sqs` (or `default`) entry under MessageStructure=json.
    pub message: String,
    pub subject: Option<String>,
    pub attrs: Attrs,
    /// FIFO topics only.
    pub group: Option<String>,
    /// FIFO topics only: explicit, or the SHA-256 of the message under ContentBasedDeduplication.
    pub dedup: Option<String>,
}

impl Entry {
    /// The attributes as the filter engine reads them: (name, DataType, value).
    pub fn filter_attrs(&self) -> Vec<(String, String, String)> {
        self.attrs
            .iter()
            .map(|(n, a)| {
                let v = match &a.value {
                    AttrData::String(s) | AttrData::Binary(s) => s.clone(),
                };
                (n.clone(), a.data_type.clone(), v)
            })
            .collect()
    }
}

/// The size SNS counts for an entry before anything else is checked (batch total).
pub fn raw_size(p: &Params<'_>) -> usize {
    let message = p.get("Message").and_then(Value::as_str).map_or(0, str::len);
    let attrs = p
        .get("MessageAttributes")
        .and_then(Value::as_object)
        .map_or(0, |m| {
            m.iter()
                .map(|(k, v)| {
                    k.len()
                        + ["DataType", "StringValue", "BinaryValue"]
                            .iter()
                            .filter_map(|f| v.get(*f).and_then(Value::as_str))
                            .map(str::len)
                            .sum::<usize>()
                })
                .sum()
        });
    message + attrs
}

/// `entry`: a `PublishBatch` entry's position (from 1), `None` for `Publish`.
pub fn prepare(
    topic: &TopicRecord,
    p: &Params<'_>,
    entry: Option<usize>,
) -> Result<Entry, ApiError> {
    let published = match p.get("Message") {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        Some(Value::String(_)) | None => return Err(invalid("Empty message")),
        Some(_) => return Err(invalid("Message")),
    };
    // A message reaches an SQS queue, whose bodies are XML 1.0 characters only (and raw
    // delivery answers it in XML to Query clients): refused here, where the client can read why.
    if !crate::model::valid_sqs_body(published) {
        return Err(invalid_because(
            "Message",
            "Message contains characters outside the allowed set (#x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF)",
        ));
    }
    let size = raw_size(p);
    if size > MAX_BYTES {
        return Err(invalid("Message too long"));
    }
    let subject = match p.opt_str("Subject")? {
        None => None,
        Some(s) => {
            let ok = !s.is_empty()
                && s.chars().count() <= MAX_SUBJECT
                && s.chars().all(|c| c.is_ascii() && !c.is_ascii_control())
                && !s.starts_with(' ');
            if !ok {
                return Err(invalid("Subject"));
            }
            Some(s.to_string())
        }
    };
    let message = match p.opt_str("MessageStructure")? {
        None => published.to_string(),
        Some("json") => per_protocol(published)?,
        Some(_) => return Err(invalid("MessageStructure")),
    };
    // SNS answers a bad message attribute `ParameterValueInvalid`, not `InvalidParameter`.
    let attrs = attrs_from_api(p.get("MessageAttributes").unwrap_or(&Value::Null))
        .map_err(|f| crate::sns::errors::attribute(&f, entry))?;
    for (name, a) in &attrs {
        if a.data_type == "String.Array" {
            let is_array = match &a.value {
                AttrData::String(s) => {
                    matches!(serde_json::from_str::<Value>(s), Ok(Value::Array(_)))
                }
                AttrData::Binary(_) => false,
            };
            if !is_array {
                return Err(ApiError::new(
                    ErrorCode::SnsInvalidParameterValue,
                    format!("The message attribute '{name}' of type 'String.Array' must be a JSON array"),
                ));
            }
        }
    }
    let group = p.opt_str("MessageGroupId")?;
    let dedup_id = p.opt_str("MessageDeduplicationId")?;
    let (group, dedup) = if topic.fifo {
        let group = group
            .ok_or_else(|| invalid("The MessageGroupId parameter is required for FIFO topics"))?;
        check_id("MessageGroupId", group)?;
        let dedup = match dedup_id {
            Some(d) => {
                check_id("MessageDeduplicationId", d)?;
                d.to_string()
            }
            None if topic.content_based_dedup() => sha256_hex(published.as_bytes()),
            None => {
                return Err(invalid(
                    "The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                ))
            }
        };
        (Some(group.to_string()), Some(dedup))
    } else {
        if dedup_id.is_some() {
            return Err(invalid_because(
                "MessageDeduplicationId",
                "The request includes MessageDeduplicationId parameter that is not valid for this topic type",
            ));
        }
        // A standard topic's MessageGroupId orders nothing; a standard queue subscribed to
        // it answers it back, as SNS passes it on (fair queues).
        if let Some(g) = group {
            check_id("MessageGroupId", g)?;
        }
        (group.map(str::to_string), None)
    };
    Ok(Entry {
        message,
        subject,
        attrs,
        group,
        dedup,
    })
}

/// MessageStructure=json: an object with a `default` string; an SQS subscriber gets the
/// `sqs` entry when there is one.
fn per_protocol(published: &str) -> Result<String, ApiError> {
    let Ok(Value::Object(m)) = serde_json::from_str::<Value>(published) else {
        return Err(invalid(
            "Message Structure - JSON message body failed to parse",
        ));
    };
    let Some(Value::String(default)) = m.get("default") else {
        return Err(invalid(
            "Message Structure - No default entry in JSON message body",
        ));
    };
    Ok(match m.get("sqs") {
        Some(Value::String(s)) => s.clone(),
        _ => default.clone(),
    })
}

/// Group and deduplication ids: 1..128 of alphanumerics and ASCII punctuation, as SQS.
fn check_id(name: &str, v: &str) -> Result<(), ApiError> {
    let ok = !v.is_empty()
        && v.len() <= MAX_ID
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b.is_ascii_punctuation());
    if ok {
        Ok(())
    } else {
        Err(invalid_because(
            name,
            format!("{name} must be 1 to {MAX_ID} characters of alphanumerics and punctuation"),
        ))
    }
}
