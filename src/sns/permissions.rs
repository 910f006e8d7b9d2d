//! SNS's `AddPermission`/`RemovePermission` as statements of the topic's `Policy`, the way
//! AWS keeps them (recorded against SNS): one statement per label, its `Sid` the label.
//! As every policy here, it is stored and answered, never enforced.

use super::errors::invalid;
use crate::wire::{Action, ApiError, Service};
use serde_json::{json, Value};

/// A grant's statement: `Principal.AWS` and `Action` are one string for one item and a
/// list for several, as AWS writes them.
fn statement(topic_arn: &str, label: &str, accounts: &[&str], actions: &[&str]) -> Value {
    let one_or_many = |items: Vec<String>| match items.as_slice() {
        [one] => Value::String(one.clone()),
        _ => json!(items),
    };
    let principals = accounts
        .iter()
        .map(|a| format!("arn:aws:iam::{a}:root"))
        .collect();
    let actions = actions.iter().map(|a| format!("SNS:{a}")).collect();
    json!({
        "Sid": label,
        "Effect": "Allow",
        "Principal": {"AWS": one_or_many(principals)},
        "Action": one_or_many(actions),
        "Resource": topic_arn,
    })
}

fn statements(policy: &mut Value) -> Option<&mut Vec<Value>> {
    policy.get_mut("Statement")?.as_array_mut()
}

/// The policy with the label's statement added. Every action must be one of SNS's; a
/// label already in the policy is refused.
pub fn grant(
    policy: &str,
    topic_arn: &str,
    label: &str,
    accounts: &[&str],
    actions: &[&str],
) -> Result<String, ApiError> {
    if actions
        .iter()
        .any(|a| Action::from_name(Service::Sns, a).is_none())
    {
        return Err(invalid("Policy statement action out of service scope!"));
    }
    let mut doc: Value = serde_json::from_str(policy).unwrap_or_else(|_| json!({}));
    if doc.get("Statement").and_then(Value::as_array).is_none() {
        doc["Statement"] = json!([]);
    }
    let list = statements(&mut doc).ok_or_else(|| invalid("Policy"))?;
    if list.iter().any(|s| s["Sid"] == label) {
        return Err(invalid("Statement already exists"));
    }
    list.push(statement(topic_arn, label, accounts, actions));
    Ok(doc.to_string())
}

/// The policy without the label's statement (unchanged when it has none).
pub fn revoke(policy: &str, label: &str) -> String {
    let Ok(mut doc) = serde_json::from_str::<Value>(policy) else {
        return policy.to_string();
    };
    if let Some(list) = statements(&mut doc) {
        list.retain(|s| s["Sid"] != label);
    }
    doc.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARN: &str = "arn:aws:sns:us-east-1:000000000000:t";

    #[test]
    fn a_grant_is_a_statement_named_by_its_label() {
        let base = r#"{"Version":"2008-10-17","Statement":[{"Sid":"__default_statement_ID"}]}"#;
        let one = grant(base, ARN, "test", &["000000000000"], &["Publish"]).unwrap();
        let doc: Value = serde_json::from_str(&one).unwrap();
        assert_eq!(
            doc["Statement"][1],
            json!({"Sid": "test", "Effect": "Allow",
                   "Principal": {"AWS": "arn:aws:iam::000000000000:root"},
                   "Action": "SNS:Publish", "Resource": ARN})
        );
        let two = grant(base, ARN, "two", &["1", "2"], &["Publish", "Subscribe"]).unwrap();
        let doc: Value = serde_json::from_str(&two).unwrap();
        assert_eq!(
            doc["Statement"][1]["Action"],
            json!(["SNS:Publish", "SNS:Subscribe"])
        );
        assert_eq!(
            doc["Statement"][1]["Principal"]["AWS"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );

        let again = grant(&one, ARN, "test", &["1"], &["Publish"]).unwrap_err();
        assert_eq!(again.message, "Invalid parameter: Statement already exists");
        let bad = grant(base, ARN, "x", &["1"], &["InvalidAction"]).unwrap_err();
        assert_eq!(
            bad.message,
            "Invalid parameter: Policy statement action out of service scope!"
        );
        let back: Value = serde_json::from_str(&revoke(&one, "test")).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(base).unwrap());
    }
}
