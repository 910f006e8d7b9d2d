//! The rules every SQS batch action shares: at least one entry and at most ten (two
//! DIFFERENT errors, because an SDK's batching helper branches on which), entry ids of
//! 1..80 `[A-Za-z0-9_-]`, distinct; and the per-entry failure shape.

use super::input::Input;
use crate::wire::{ApiError, ErrorCode};
use serde_json::{json, Value};
use std::collections::HashSet;

pub const MAX_ENTRIES: usize = 10;
const MAX_ID_CHARS: usize = 80;

/// The `Entries` of a batch request, each with its checked `Id`.
pub fn entries<'a>(input: &Input<'a>, what: &str) -> Result<Vec<(&'a str, Input<'a>)>, ApiError> {
    let items = input
        .opt_array("Entries")?
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if items.is_empty() {
        return Err(ApiError::new(
            ErrorCode::EmptyBatchRequest,
            format!("There should be at least one {what} in the request."),
        ));
    }
    if items.len() > MAX_ENTRIES {
        return Err(ApiError::new(
            ErrorCode::TooManyEntriesInBatchRequest,
            format!(
                "Maximum number of entries per request are {MAX_ENTRIES}. You have sent {}.",
                items.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    let mut seen = HashSet::new();
    for item in items {
        if !item.is_object() {
            return Err(super::input::invalid("Entries"));
        }
        let entry = Input(item);
        let id = entry.str("Id")?;
        if !valid_id(id) {
            return Err(ApiError::new(
                ErrorCode::InvalidBatchEntryId,
                "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
            ));
        }
        if !seen.insert(id) {
            return Err(ApiError::new(
                ErrorCode::BatchEntryIdsNotDistinct,
                format!("Id {id} repeated."),
            ));
        }
        out.push((id, entry));
    }
    Ok(out)
}

pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_CHARS
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// One `BatchResultErrorEntry`.
pub fn failed(id: &str, err: &ApiError) -> Value {
    json!({
        "Id": id,
        "Code": err.code.batch_entry_code(),
        "SenderFault": err.code.is_sender_fault(),
        "Message": err.message,
    })
}

/// `{"Successful": [...], "Failed": [...]}` from per-entry outcomes, in entry order.
pub fn answer(results: Vec<(&str, Result<Value, ApiError>)>) -> Value {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for (id, r) in results {
        match r {
            Ok(v) => ok.push(v),
            Err(e) => bad.push(failed(id, &e)),
        }
    }
    // AWS leaves an empty `Failed` out (recorded against SQS over JSON).
    let mut out = json!({ "Successful": ok });
    if !bad.is_empty() {
        out["Failed"] = Value::Array(bad);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(v: Value) -> Result<Vec<String>, ErrorCode> {
        entries(&Input(&v), "Entry")
            .map(|e| e.into_iter().map(|(id, _)| id.to_string()).collect())
            .map_err(|e| e.code)
    }

    #[test]
    fn batch_rules() {
        assert_eq!(run(json!({})), Err(ErrorCode::EmptyBatchRequest));
        assert_eq!(
            run(json!({"Entries": []})),
            Err(ErrorCode::EmptyBatchRequest)
        );
        let eleven: Vec<Value> = (0..11).map(|i| json!({"Id": format!("e{i}")})).collect();
        assert_eq!(
            run(json!({ "Entries": eleven })),
            Err(ErrorCode::TooManyEntriesInBatchRequest)
        );
        assert_eq!(
            run(json!({"Entries": [{"Id": "a"}, {"Id": "a"}]})),
            Err(ErrorCode::BatchEntryIdsNotDistinct)
        );
        for bad in ["", "a.b", "a b", &"x".repeat(81)] {
            assert_eq!(
                run(json!({"Entries": [{"Id": bad}]})),
                Err(ErrorCode::InvalidBatchEntryId),
                "{bad}"
            );
        }
        assert_eq!(
            run(json!({"Entries": [{"Id": "a-1_B"}, {"Id": "x".repeat(80)}]})).unwrap(),
            vec!["a-1_B".to_string(), "x".repeat(80)]
        );
    }
}
