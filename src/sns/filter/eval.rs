//! Evaluating a compiled policy against a message's attributes or its JSON body.

use serde_json::Value;

use super::compile::{Condition, Group};
use super::pattern::Val;

/// Where a policy's keys find their values.
pub trait Event {
    /// Calls `visit` on each value at `path` until one call returns true, and says whether
    /// one did. Arrays give each of their elements.
    fn any_value(&self, path: &[String], visit: &mut dyn FnMut(Val<'_>) -> bool) -> bool;
}

pub fn group_matches(group: &Group, event: &dyn Event) -> bool {
    group.conditions.iter().all(|c| condition_matches(c, event))
        && group
            .ors
            .iter()
            .all(|branches| branches.iter().any(|b| group_matches(b, event)))
}

fn condition_matches(condition: &Condition, event: &dyn Event) -> bool {
    let mut present = false;
    let hit = event.any_value(&condition.path, &mut |value| {
        present = true;
        condition.patterns.iter().any(|p| p.matches(value))
    });
    // With no hit every value was visited, so `present` is exact here.
    hit || (condition.wants_absent && !present)
}

/// MessageAttributes scope: `(name, DataType, StringValue)` triples.
pub struct Attributes<'a>(pub &'a [(String, String, String)]);

impl Event for Attributes<'_> {
    fn any_value(&self, path: &[String], visit: &mut dyn FnMut(Val<'_>) -> bool) -> bool {
        let [name] = path else { return false };
        let Some((_, data_type, value)) = self.0.iter().find(|(n, _, _)| n == name) else {
            return false;
        };
        if data_type == "String.Array" {
            // The value is a JSON array; objects and nested arrays in it match nothing.
            let Ok(Value::Array(items)) = serde_json::from_str::<Value>(value) else {
                return false;
            };
            items.iter().any(|item| leaf(item).is_some_and(&mut *visit))
        } else if data_type.starts_with("Number") {
            match value.trim().parse::<f64>() {
                Ok(n) if n.is_finite() => visit(Val::Num(n)),
                _ => false,
            }
        } else if data_type.starts_with("String") {
            visit(Val::Str(value))
        } else {
            false // Binary attributes are ignored by filter policies.
        }
    }
}

/// MessageBody scope: the parsed body, a JSON object.
pub struct Body<'a>(pub &'a Value);

impl Event for Body<'_> {
    fn any_value(&self, path: &[String], visit: &mut dyn FnMut(Val<'_>) -> bool) -> bool {
        // SNS names a value by its keys joined with dots, in the policy and in the body
        // alike: `"a.b"` reaches `{"a":{"b":…}}` and `{"a.b":…}` (AWS's recordings of
        // test_filter_policy_on_message_body_dot_attribute).
        let parts: Vec<&str> = path.iter().flat_map(|key| key.split('.')).collect();
        walk(self.0, &parts, visit)
    }
}

/// The leaves under `path` (dot-separated parts, any run of which one body key may hold).
fn walk(value: &Value, path: &[&str], visit: &mut dyn FnMut(Val<'_>) -> bool) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|item| walk(item, path, visit)),
        // An object is not a value a pattern can match: an empty path reaches nothing here.
        Value::Object(map) => (1..=path.len()).any(|n| {
            map.get(&path[..n].join("."))
                .is_some_and(|child| walk(child, &path[n..], visit))
        }),
        leaf_value => path.is_empty() && leaf(leaf_value).is_some_and(visit),
    }
}

fn leaf(value: &Value) -> Option<Val<'_>> {
    match value {
        Value::String(s) => Some(Val::Str(s)),
        Value::Number(n) => n.as_f64().map(Val::Num),
        Value::Bool(b) => Some(Val::Bool(*b)),
        Value::Null => Some(Val::Null),
        Value::Array(_) | Value::Object(_) => None,
    }
}
