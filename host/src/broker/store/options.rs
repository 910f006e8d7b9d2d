//! The queue option bag (`012_configure.sql`): names, defaults, the engine's typed view,
//! and how a configure bag is applied over a stored one.

use super::queues::QueueRow;
use serde_json::{json, Map, Value};

enum Kind {
    Int,
    Bool,
    Str,
}

/// Every option column with its default (`012_configure.sql`), in echo order.
const OPTIONS: &[(&str, Kind)] = &[
    ("priority", Kind::Int),
    ("leaseTime", Kind::Int),
    ("retryLimit", Kind::Int),
    ("retryDelay", Kind::Int),
    ("maxSize", Kind::Int),
    ("ttl", Kind::Int),
    ("deadLetterQueue", Kind::Bool),
    ("dlqAfterMaxRetries", Kind::Bool),
    ("delayedProcessing", Kind::Int),
    ("windowBuffer", Kind::Int),
    ("retentionSeconds", Kind::Int),
    ("completedRetentionSeconds", Kind::Int),
    ("retentionEnabled", Kind::Bool),
    ("encryptionEnabled", Kind::Bool),
    ("maxWaitTimeSeconds", Kind::Int),
    ("minPopWaitTime", Kind::Int),
    ("dedupWindowSeconds", Kind::Int),
    ("retentionSinkHold", Kind::Str),
    ("retentionSinkHoldMaxSeconds", Kind::Int),
];

fn default_of(name: &str) -> Value {
    match name {
        "leaseTime" => json!(300),
        "retryLimit" => json!(3),
        "retryDelay" => json!(1000),
        "ttl" => json!(3600),
        "deadLetterQueue" | "dlqAfterMaxRetries" => json!(true),
        "retentionEnabled" | "encryptionEnabled" => json!(false),
        "dedupWindowSeconds" => json!(3600),
        "retentionSinkHold" => json!(""),
        "retentionSinkHoldMaxSeconds" => json!(604_800),
        _ => json!(0),
    }
}

pub fn default_options() -> Map<String, Value> {
    OPTIONS
        .iter()
        .map(|(n, _)| (n.to_string(), default_of(n)))
        .collect()
}

/// The options the engine acts on, read from the stored bag.
#[derive(Clone, Debug)]
pub struct QueueOpts {
    pub lease_time: i64,
    pub retry_limit: i64,
    pub dlq_enabled: bool,
    pub delayed_processing: i64,
    pub window_buffer: i64,
    pub retention_enabled: bool,
    pub retention_seconds: i64,
    pub completed_retention_seconds: i64,
    pub dedup_window: i64,
}

impl QueueOpts {
    pub fn from_map(m: &Map<String, Value>) -> QueueOpts {
        let int = |k: &str| {
            m.get(k)
                .and_then(Value::as_i64)
                .or_else(|| default_of(k).as_i64())
                .unwrap_or(0)
        };
        let boolean = |k: &str| {
            m.get(k)
                .and_then(Value::as_bool)
                .or_else(|| default_of(k).as_bool())
                .unwrap_or(false)
        };
        QueueOpts {
            lease_time: int("leaseTime"),
            retry_limit: int("retryLimit"),
            dlq_enabled: boolean("deadLetterQueue") || boolean("dlqAfterMaxRetries"),
            delayed_processing: int("delayedProcessing"),
            window_buffer: int("windowBuffer"),
            retention_enabled: boolean("retentionEnabled"),
            retention_seconds: int("retentionSeconds"),
            completed_retention_seconds: int("completedRetentionSeconds"),
            dedup_window: int("dedupWindowSeconds").max(0),
        }
    }
}

/// A refused option: (sentence, option name).
pub type OptionError = (String, String);

/// Applies the bag over `base`: a value sets, `null` resets to the default.
pub fn apply_bag(
    base: &mut Map<String, Value>,
    bag: &Map<String, Value>,
) -> Result<(), OptionError> {
    for (name, kind) in OPTIONS {
        let Some(v) = bag.get(*name) else { continue };
        let bad = |what: &str| (format!("option {name} must be {what}"), name.to_string());
        let val = match (v, kind) {
            (Value::Null, _) => default_of(name),
            (Value::Number(n), Kind::Int) => match n.as_i64() {
                Some(i) => json!(i),
                None => match n.as_f64() {
                    Some(f) if f.is_finite() => json!(f.trunc() as i64),
                    _ => return Err(bad("an integer")),
                },
            },
            (Value::String(s), Kind::Int) => match s.trim().parse::<i64>() {
                Ok(i) => json!(i),
                Err(_) => return Err(bad("an integer")),
            },
            (Value::Bool(b), Kind::Bool) => json!(b),
            (Value::String(s), Kind::Bool) if s == "true" || s == "false" => json!(s == "true"),
            (Value::String(s), Kind::Str) => json!(s),
            (_, Kind::Int) => return Err(bad("an integer")),
            (_, Kind::Bool) => return Err(bad("a boolean")),
            (_, Kind::Str) => return Err(bad("a string")),
        };
        base.insert(name.to_string(), val);
    }
    // Clamps and refusals of 012_configure.sql.
    let get = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_i64).unwrap_or(0);
    let mpw = get(base, "minPopWaitTime").clamp(0, 60_000);
    base.insert("minPopWaitTime".into(), json!(mpw));
    let dw = get(base, "dedupWindowSeconds").max(0);
    base.insert("dedupWindowSeconds".into(), json!(dw));
    let hold_max = get(base, "retentionSinkHoldMaxSeconds");
    if !(60..=31_536_000).contains(&hold_max) {
        return Err((
            "retentionSinkHoldMaxSeconds must be between 60 and 31536000".into(),
            "retentionSinkHoldMaxSeconds".into(),
        ));
    }
    let hold = base
        .get("retentionSinkHold")
        .and_then(Value::as_str)
        .unwrap_or("");
    if hold.len() > 64
        || !hold
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
    {
        return Err((
            "retentionSinkHold must match [A-Za-z0-9._-]{0,64}".into(),
            "retentionSinkHold".into(),
        ));
    }
    Ok(())
}

/// The configure answer: the effective row in the option order of the real broker.
pub fn render_configured(q: &QueueRow) -> Value {
    let mut opts = Map::new();
    for (name, _) in OPTIONS {
        opts.insert(
            name.to_string(),
            q.options
                .get(*name)
                .cloned()
                .unwrap_or_else(|| default_of(name)),
        );
    }
    json!({"configured": true, "queueId": q.uuid, "partitionId": null, "queue": q.name,
           "namespace": q.namespace, "task": q.task, "storage": "segments", "options": opts})
}
