//! Table-driven tests: matching in each scope, and validation messages.

mod attributes;
mod body;
mod validation;

use super::{FilterPolicy, Scope};

/// Compiles `policy` (which must be valid) and evaluates it.
fn eval(policy: &str, scope: Scope, attributes: &[(&str, &str, &str)], body: &str) -> bool {
    let compiled = match FilterPolicy::parse(policy, scope) {
        Ok(p) => p,
        Err(e) => panic!("policy {policy} refused: {e}"),
    };
    let owned: Vec<(String, String, String)> = attributes
        .iter()
        .map(|(n, t, v)| (n.to_string(), t.to_string(), v.to_string()))
        .collect();
    compiled.matches(&owned, body)
}

#[test]
fn scope_names_round_trip() {
    for scope in [Scope::MessageAttributes, Scope::MessageBody] {
        assert_eq!(Scope::parse(scope.as_str()), Some(scope));
    }
    assert_eq!(Scope::parse("messagebody"), None);
    assert_eq!(Scope::parse(""), None);
}

#[test]
fn empty_policy_matches_everything() {
    for scope in [Scope::MessageAttributes, Scope::MessageBody] {
        assert!(eval("{}", scope, &[], "not json"));
        assert!(eval(" { } ", scope, &[("a", "String", "x")], "{}"));
    }
}
