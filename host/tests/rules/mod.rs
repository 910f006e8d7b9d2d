//! The validation-rule table (issue 13, item 2) and the runner that sends every row to a
//! live endpoint. A row is data: (rule id, action, input, expected answer, source). The
//! input is the action's AWS JSON 1.0 shape with `{placeholders}` for the fixtures a test
//! made (queue URLs, ARNs, receipt handles); the runner sends it over JSON and, encoded
//! the way botocore's Query serializer would, over Query.
//!
//! Sources are short references:
//! - `API_X: …` — the action's page of the service's API Reference
//!   (SQS: docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_X.html,
//!   SNS: docs.aws.amazon.com/sns/latest/api/API_X.html), the named member or section;
//! - `botocore sqs|sns: …` — botocore's service model (`botocore/data/sqs/2012-11-05/
//!   service-2.json`, `sns/2010-03-31/…`): a shape's `required` list or error list;
//! - `SQSDG: …` / `SNSDG: …` — the service's Developer Guide page named;
//! - `CommonErrors` — the API Reference's Common Errors page;
//! - `choice` — AWS's answer is not pinned down by its documentation; what this endpoint
//!   answers is recorded in `docs/divergences.md` ("Validation answers chosen").
#![allow(dead_code)]

pub mod sns_table;
pub mod sqs_messages;
pub mod sqs_queues;

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What AWS answers a row's request.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
    /// Accepted (HTTP 200): a boundary value that must not be refused.
    Ok,
    /// Refused whole with this code and HTTP status. SQS rows name botocore's error shape
    /// (the JSON `__type`; Query's `<Code>` is that shape's legacy code from the catalog);
    /// SNS rows name the Query `<Code>`.
    Error(&'static str, u16),
    /// A batch answered 200 in which exactly the entry with this Id failed with this
    /// `BatchResultErrorEntry.Code`.
    EntryFails(&'static str, &'static str),
}

#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub id: &'static str,
    pub action: &'static str,
    pub input: &'static str,
    pub expect: Expect,
    pub source: &'static str,
}

pub const fn err(
    id: &'static str,
    action: &'static str,
    input: &'static str,
    code: &'static str,
    status: u16,
    source: &'static str,
) -> Rule {
    Rule {
        id,
        action,
        input,
        expect: Expect::Error(code, status),
        source,
    }
}

pub const fn ok(
    id: &'static str,
    action: &'static str,
    input: &'static str,
    source: &'static str,
) -> Rule {
    Rule {
        id,
        action,
        input,
        expect: Expect::Ok,
        source,
    }
}

pub const fn entry(
    id: &'static str,
    action: &'static str,
    input: &'static str,
    entry_id: &'static str,
    code: &'static str,
    source: &'static str,
) -> Rule {
    Rule {
        id,
        action,
        input,
        expect: Expect::EntryFails(entry_id, code),
        source,
    }
}

/// `{name}` → the fixture's value; `{rep:S:N}` → S repeated N times; `{attrs:N}` → N
/// String message attributes `a0..` (an object's members); `{tags:N}` → N SNS tags
/// `{"Key":"k0","Value":"v"}..`; `{entries:N}` → N batch entries `e0..` carrying the
/// members every batch action needs (each action reads its own).
pub fn expand(template: &str, vars: &BTreeMap<&str, String>) -> String {
    let mut out = template.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    while let Some(start) = out.find("{rep:") {
        let end = start + out[start..].find('}').expect("closing brace of {rep:…}");
        let spec = &out[start + 5..end];
        let (s, n) = spec.rsplit_once(':').expect("{rep:S:N}");
        let n: usize = n.parse().expect("repeat count");
        out.replace_range(start..=end, &s.repeat(n));
    }
    while let Some(start) = out.find("{attrs:") {
        let end = start + out[start..].find('}').expect("closing brace of {attrs:…}");
        let n: usize = out[start + 7..end].parse().expect("attribute count");
        let items: Vec<String> = (0..n)
            .map(|i| format!(r#""a{i}":{{"DataType":"String","StringValue":"v"}}"#))
            .collect();
        out.replace_range(start..=end, &items.join(","));
    }
    while let Some(start) = out.find("{tags:") {
        let end = start + out[start..].find('}').expect("closing brace of {tags:…}");
        let n: usize = out[start + 6..end].parse().expect("tag count");
        let items: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"Key":"k{i}","Value":"v"}}"#))
            .collect();
        out.replace_range(start..=end, &items.join(","));
    }
    while let Some(start) = out.find("{entries:") {
        let end = start
            + out[start..]
                .find('}')
                .expect("closing brace of {entries:…}");
        let n: usize = out[start + 9..end].parse().expect("entry count");
        let items: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"Id":"e{i}","MessageBody":"b","ReceiptHandle":"h","VisibilityTimeout":1,"Message":"m"}}"#))
            .collect();
        out.replace_range(start..=end, &items.join(","));
    }
    out
}

/// SQS's Query names for JSON members that travel under another name (all flattened).
fn sqs_wire(action: &str, member: &str) -> String {
    match member {
        "Attributes" => "Attribute".into(),
        "tags" | "Tags" => "Tag".into(),
        "MessageAttributes" => "MessageAttribute".into(),
        "MessageSystemAttributes" => "MessageSystemAttribute".into(),
        "AttributeNames" => "AttributeName".into(),
        "MessageSystemAttributeNames" => "MessageSystemAttributeName".into(),
        "MessageAttributeNames" => "MessageAttributeName".into(),
        "TagKeys" => "TagKey".into(),
        "AWSAccountIds" => "AWSAccountId".into(),
        "Actions" => "ActionName".into(),
        "Entries" => format!("{action}RequestEntry"),
        other => other.into(),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An SQS request as botocore's Query serializer writes it: lists and maps flattened,
/// map entries `Name`/`Value` (tags `Key`/`Value`), indices from 1.
pub fn sqs_query(action: &str, input: &Value) -> Vec<(String, String)> {
    let mut out = vec![
        ("Action".to_string(), action.to_string()),
        ("Version".to_string(), "2012-11-05".to_string()),
    ];
    if let Some(obj) = input.as_object() {
        sqs_members(action, obj, "", &mut out);
    }
    out
}

fn sqs_members(
    action: &str,
    obj: &Map<String, Value>,
    prefix: &str,
    out: &mut Vec<(String, String)>,
) {
    for (k, v) in obj {
        let name = format!("{prefix}{}", sqs_wire(action, k));
        match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let p = format!("{name}.{}", i + 1);
                    match item {
                        Value::Object(m) => sqs_members(action, m, &format!("{p}."), out),
                        other => out.push((p, scalar(other))),
                    }
                }
            }
            Value::Object(m) if is_sqs_map(k) => {
                let key_name = if k == "tags" || k == "Tags" {
                    "Key"
                } else {
                    "Name"
                };
                for (i, (mk, mv)) in m.iter().enumerate() {
                    let p = format!("{name}.{}", i + 1);
                    out.push((format!("{p}.{key_name}"), mk.clone()));
                    match mv {
                        Value::Object(inner) => {
                            sqs_members(action, inner, &format!("{p}.Value."), out)
                        }
                        other => out.push((format!("{p}.Value"), scalar(other))),
                    }
                }
            }
            Value::Object(m) => sqs_members(action, m, &format!("{name}."), out),
            Value::Null => {}
            other => out.push((name, scalar(other))),
        }
    }
}

fn is_sqs_map(member: &str) -> bool {
    matches!(
        member,
        "Attributes" | "tags" | "Tags" | "MessageAttributes" | "MessageSystemAttributes"
    )
}

/// An SNS request as botocore's Query serializer writes it: lists `X.member.N`, maps
/// `X.entry.N.key/value` (message attributes `Name`/`Value`).
pub fn sns_query(action: &str, input: &Value) -> Vec<(String, String)> {
    let mut out = vec![
        ("Action".to_string(), action.to_string()),
        ("Version".to_string(), "2010-03-31".to_string()),
    ];
    if let Some(obj) = input.as_object() {
        sns_members(obj, "", &mut out);
    }
    out
}

fn sns_members(obj: &Map<String, Value>, prefix: &str, out: &mut Vec<(String, String)>) {
    for (k, v) in obj {
        let name = format!("{prefix}{k}");
        match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let p = format!("{name}.member.{}", i + 1);
                    match item {
                        Value::Object(m) => sns_members(m, &format!("{p}."), out),
                        other => out.push((p, scalar(other))),
                    }
                }
            }
            Value::Object(m) if k == "Attributes" || k == "MessageAttributes" => {
                let (kn, vn) = if k == "Attributes" {
                    ("key", "value")
                } else {
                    ("Name", "Value")
                };
                for (i, (mk, mv)) in m.iter().enumerate() {
                    let p = format!("{name}.entry.{}", i + 1);
                    out.push((format!("{p}.{kn}"), mk.clone()));
                    match mv {
                        Value::Object(inner) => sns_members(inner, &format!("{p}.{vn}."), out),
                        other => out.push((format!("{p}.{vn}"), scalar(other))),
                    }
                }
            }
            Value::Object(m) => sns_members(m, &format!("{name}."), out),
            Value::Null => {}
            other => out.push((name, scalar(other))),
        }
    }
}

/// What came back, in protocol-neutral form.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// The error code as the protocol spells it (JSON `__type` suffix, Query `<Code>`).
    pub code: String,
    /// (Id, Code) of every failed batch entry.
    pub failed: Vec<(String, String)>,
    pub body: String,
}

pub fn from_json(status: u16, body: &Value) -> Answer {
    let code = body["__type"]
        .as_str()
        .unwrap_or("")
        .rsplit('#')
        .next()
        .unwrap_or("")
        .to_string();
    let failed = body["Failed"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["Id"].as_str().unwrap_or("").to_string(),
                        e["Code"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Answer {
        status,
        code,
        failed,
        body: body.to_string(),
    }
}

/// The text of every `<name>…</name>` (elements without children of the same name).
pub fn tags_all(xml: &str, name: &str) -> Vec<String> {
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let Some(j) = after.find(&close) else { break };
        out.push(after[..j].to_string());
        rest = &after[j + close.len()..];
    }
    out
}

pub fn from_xml(status: u16, xml: &str) -> Answer {
    let code = tags_all(xml, "Code")
        .into_iter()
        .next()
        .filter(|_| status != 200)
        .unwrap_or_default();
    let mut failed = Vec::new();
    for wrapper in ["BatchResultErrorEntry", "member"] {
        for e in tags_all(xml, wrapper) {
            let (id, c) = (tags_all(&e, "Id"), tags_all(&e, "Code"));
            if let (Some(id), Some(c)) = (id.first(), c.first()) {
                failed.push((id.clone(), c.clone()));
            }
        }
    }
    Answer {
        status,
        code,
        failed,
        body: xml.to_string(),
    }
}

/// Checks one answer against the row; `code_of` turns the row's code into the one this
/// protocol spells. Answers a line describing the difference, if any.
pub fn check(rule: &Rule, a: &Answer, code_of: impl Fn(&str) -> String) -> Option<String> {
    let clip: String = a.body.chars().take(300).collect();
    let diff = match rule.expect {
        Expect::Ok if a.status == 200 => return None,
        Expect::Ok => format!("want 200, got {} {}", a.status, a.code),
        Expect::Error(code, status) => {
            let want = code_of(code);
            if a.status == status && a.code == want {
                return None;
            }
            format!("want {status} {want}, got {} {}", a.status, a.code)
        }
        Expect::EntryFails(id, code) => {
            if a.status == 200 && a.failed.len() == 1 && a.failed[0] == (id.into(), code.into()) {
                return None;
            }
            format!(
                "want 200 with only entry {id} failed {code}, got {} {:?}",
                a.status, a.failed
            )
        }
    };
    Some(format!("{} {}: {diff} | {clip}", rule.id, rule.action))
}

/// Rows per action, for the report a run prints.
pub fn per_action(rules: &[Rule]) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for r in rules {
        *m.entry(r.action).or_insert(0) += 1;
    }
    m
}

/// Every row id is unique and every row names a source.
pub fn check_table(rules: &[Rule]) {
    let mut seen = std::collections::BTreeSet::new();
    for r in rules {
        assert!(seen.insert(r.id), "duplicate rule id {}", r.id);
        assert!(!r.source.is_empty(), "{} names no source", r.id);
    }
}
