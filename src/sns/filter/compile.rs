//! Turns a policy document into conditions, enforcing AWS's limits on the way.
//!
//! Order of checks, as AWS reports the first problem it meets: size, JSON syntax, shape
//! (object at the top, at most five top-level keys, every key holding an array or, in
//! MessageBody scope, a nested object), complexity, then each match expression.

use super::json::{self, Json};
use super::pattern::{self, Pattern};
use super::Scope;

pub const PREFIX: &str = "Invalid parameter: FilterPolicy: ";
/// AWS's limit on a filter policy's size.
pub const MAX_POLICY_BYTES: usize = 256 * 1024;
/// AWS's limit on the number of top-level keys (`$or` counts as one).
pub const MAX_KEYS: usize = 5;
/// AWS's limit on the total combination of values.
pub const MAX_COMBINATIONS: u64 = 150;

/// All conditions must hold, and in every `$or` group at least one branch must.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Group {
    pub conditions: Vec<Condition>,
    pub ors: Vec<Vec<Group>>,
}

impl Group {
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty() && self.ors.is_empty()
    }
}

/// A key (a path of keys in MessageBody scope) and the expressions any of which may match.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub path: Vec<String>,
    pub patterns: Vec<Pattern>,
    /// Holds an `exists: false`, so a key with no value matches.
    pub wants_absent: bool,
}

pub fn compile(text: &str, scope: Scope) -> Result<Group, String> {
    if text.len() > MAX_POLICY_BYTES {
        return Err(format!(
            "{PREFIX}Filter policy is too large: it must be at most {MAX_POLICY_BYTES} bytes"
        ));
    }
    let document = json::parse(text).map_err(|e| format!("{PREFIX}{e}"))?;
    let Json::Obj(members) = document else {
        return Err(format!("{PREFIX}Filter policy must be a JSON object"));
    };
    if members.len() > MAX_KEYS {
        return Err(format!(
            "{PREFIX}Filter policy can not have more than {MAX_KEYS} keys"
        ));
    }
    let combinations = shape(&members, 1, 1, scope)?;
    if combinations > MAX_COMBINATIONS {
        return Err(format!("{PREFIX}Filter policy is too complex"));
    }
    let mut root = Group::default();
    build(&members, &[], &mut root).map_err(|e| format!("{PREFIX}{e}"))?;
    Ok(root)
}

/// `"$or": [{...}, {...}]` is a disjunction when its array holds objects; an array of plain
/// values is an ordinary key named `$or`.
fn or_branches<'a>(key: &str, value: &'a Json) -> Result<Option<&'a [Json]>, String> {
    let Json::Arr(items) = value else {
        return Ok(None);
    };
    if key != "$or" || !items.iter().any(|i| matches!(i, Json::Obj(_))) {
        return Ok(None);
    }
    if items.iter().all(|i| matches!(i, Json::Obj(_))) {
        Ok(Some(items))
    } else {
        Err(format!(
            "{PREFIX}Every element of an $or array must be a JSON object"
        ))
    }
}

/// Checks the structure and returns the combination count AWS limits: the product of each
/// array's length times its nesting depth, with `$or` branches summed.
fn shape(members: &[(String, Json)], depth: u64, carry: u64, scope: Scope) -> Result<u64, String> {
    let mut combinations = carry;
    for (key, value) in members {
        if let Some(branches) = or_branches(key, value)? {
            let mut sum: u64 = 0;
            for branch in branches {
                let Json::Obj(inner) = branch else { continue };
                if inner.is_empty() {
                    return Err(format!("{PREFIX}Empty objects are not allowed"));
                }
                sum = sum.saturating_add(shape(inner, depth, combinations, scope)?);
            }
            combinations = sum;
            continue;
        }
        match value {
            Json::Arr(items) => {
                if items.is_empty() {
                    return Err(format!("{PREFIX}Empty arrays are not allowed"));
                }
                combinations = combinations
                    .saturating_mul(items.len() as u64)
                    .saturating_mul(depth);
            }
            Json::Obj(inner) => {
                if inner.is_empty() {
                    return Err(format!("{PREFIX}Empty objects are not allowed"));
                }
                // AWS checks the nested object's shape first, then refuses the nesting.
                combinations = shape(inner, depth + 1, combinations, Scope::MessageBody)?;
                if scope == Scope::MessageAttributes {
                    return Err("Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy".to_string());
                }
            }
            _ => return Err(format!("{PREFIX}\"{key}\" must be an object or an array")),
        }
    }
    Ok(combinations)
}

/// Flattens the (already shape-checked) policy into `group`, keys nested under `path`.
/// Errors are sentences without the prefix.
fn build(members: &[(String, Json)], path: &[String], group: &mut Group) -> Result<(), String> {
    for (key, value) in members {
        if let Ok(Some(branches)) = or_branches(key, value) {
            let mut compiled = Vec::with_capacity(branches.len());
            for branch in branches {
                let Json::Obj(inner) = branch else { continue };
                let mut sub = Group::default();
                build(inner, path, &mut sub)?;
                compiled.push(sub);
            }
            group.ors.push(compiled);
            continue;
        }
        let mut full = path.to_vec();
        full.push(key.clone());
        match value {
            Json::Arr(items) => {
                let patterns = items
                    .iter()
                    .map(pattern::compile)
                    .collect::<Result<Vec<_>, _>>()?;
                let wants_absent = patterns.iter().any(Pattern::wants_absent);
                group.conditions.push(Condition {
                    path: full,
                    patterns,
                    wants_absent,
                });
            }
            Json::Obj(inner) => build(inner, &full, group)?,
            _ => return Err(format!("\"{key}\" must be an object or an array")),
        }
    }
    Ok(())
}
