//! Amazon SNS subscription filter policies: validated when written, evaluated at publish.
//!
//! A policy is a JSON object. Each key names a message attribute (scope
//! `MessageAttributes`, the default) or a property of the JSON body (scope `MessageBody`,
//! where keys nest); its array lists match expressions, any of which may match. All keys
//! must match; `"$or": [{...}, {...}]` needs one of its branches to. A key with an array of
//! values (a `String.Array` attribute, an array in the body) matches when any element does.
//!
//! What a value can match:
//! - exact strings, numbers (compared as numbers), `true`, `false`, `null`;
//! - `prefix`, `suffix`, `equals-ignore-case`, `wildcard`, `cidr`: strings only;
//! - `numeric`: numbers only (a `Number` attribute or a body number; a `String` attribute
//!   that looks like a number is still a string);
//! - `anything-but`: any present value not excluded (its string forms exclude strings only);
//! - `exists: true`: any value; `exists: false`: the key has no value at all.
//!
//! `Binary` attributes are ignored, as by AWS. A `MessageBody` policy never matches a body
//! that is not a JSON object.
//!
//! `FilterPolicy::parse("{}", _)` succeeds with a policy that matches every message (the
//! caller treats `""` and `{}` as "no policy"; `parse("")` is a JSON error).

mod cidr;
mod compile;
mod eval;
mod json;
mod numeric;
mod pattern;
mod wildcard;

#[cfg(test)]
mod tests;

use compile::Group;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    MessageAttributes,
    MessageBody,
}

impl Scope {
    /// The `FilterPolicyScope` attribute's values, exactly as AWS spells them.
    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "MessageAttributes" => Some(Scope::MessageAttributes),
            "MessageBody" => Some(Scope::MessageBody),
            _ => None,
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Scope::MessageAttributes => "MessageAttributes",
            Scope::MessageBody => "MessageBody",
        }
    }
}

/// A validated, compiled filter policy.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterPolicy {
    scope: Scope,
    root: Group,
}

impl FilterPolicy {
    /// Validates and compiles. Err carries the full AWS message for an InvalidParameter error.
    pub fn parse(policy_json: &str, scope: Scope) -> Result<FilterPolicy, String> {
        let root = compile::compile(policy_json, scope)?;
        Ok(FilterPolicy { scope, root })
    }

    /// The scope the policy was compiled for.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// attributes: name -> (DataType, StringValue) for String/Number/String.Array/Binary
    /// (Binary value is base64). body: the raw message body (parsed as JSON here when the
    /// scope is MessageBody).
    pub fn matches(&self, attributes: &[(String, String, String)], body: &str) -> bool {
        if self.root.is_empty() {
            return true;
        }
        match self.scope {
            Scope::MessageAttributes => {
                eval::group_matches(&self.root, &eval::Attributes(attributes))
            }
            Scope::MessageBody => match serde_json::from_str::<serde_json::Value>(body) {
                Ok(value @ serde_json::Value::Object(_)) => {
                    eval::group_matches(&self.root, &eval::Body(&value))
                }
                _ => false,
            },
        }
    }
}
