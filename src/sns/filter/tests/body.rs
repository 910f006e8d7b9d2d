//! MessageBody scope: one row per (policy, body, expected).

use super::{eval, Scope};

type Row = (&'static str, &'static str, bool);

const ROWS: &[Row] = &[
    // Exact values, top level and nested.
    (r#"{"a":["x"]}"#, r#"{"a":"x"}"#, true),
    (r#"{"a":["x"]}"#, r#"{"a":"y"}"#, false),
    (r#"{"a":[5]}"#, r#"{"a":5.0}"#, true),
    (r#"{"a":[5]}"#, r#"{"a":"5"}"#, false),
    (r#"{"a":[true]}"#, r#"{"a":true}"#, true),
    (r#"{"a":[true]}"#, r#"{"a":"true"}"#, false),
    (r#"{"a":[null]}"#, r#"{"a":null}"#, true),
    (r#"{"a":[null]}"#, r#"{}"#, false),
    (r#"{"a":[null]}"#, r#"{"a":"null"}"#, false),
    (
        r#"{"order":{"type":["x"]}}"#,
        r#"{"order":{"type":"x"}}"#,
        true,
    ),
    (
        r#"{"order":{"type":["x"]}}"#,
        r#"{"order":{"type":"y"}}"#,
        false,
    ),
    (r#"{"order":{"type":["x"]}}"#, r#"{"type":"x"}"#, false),
    (r#"{"order":{"type":["x"]}}"#, r#"{"order":"x"}"#, false),
    // A key path is its keys joined by dots, in the policy and in the body alike (recorded:
    // test_filter_policy_on_message_body_dot_attribute, test_filter_policy_large_complex_payload).
    (r#"{"a.b":["x"]}"#, r#"{"a":{"b":"x"}}"#, true),
    (r#"{"a.b":["x"]}"#, r#"{"a.b":"x"}"#, true),
    (r#"{"a.b":["x"]}"#, r#"{"a":{"b":"y"}}"#, false),
    (r#"{"a.b.c":["x"]}"#, r#"{"a.b":{"c":"x"}}"#, true),
    (r#"{"a.b.c":["x"]}"#, r#"{"a":{"b.c":"x"}}"#, true),
    (r#"{"a":{"b.c":["x"]}}"#, r#"{"a.b":{"c":"x"}}"#, true),
    (r#"{"a":{"b":["x"]}}"#, r#"{"a.b":"x"}"#, true),
    (r#"{"a.b":["x"]}"#, r#"{"ab":"x"}"#, false),
    (r#"{"a.b":["x"]}"#, r#"{"a":"x"}"#, false),
    (r#"{"a.b":[{"exists":false}]}"#, r#"{"a":{"c":"x"}}"#, true),
    (
        r#"{"a":{"b":{"c":{"d":["deep"]}}}}"#,
        r#"{"a":{"b":{"c":{"d":"deep"}}}}"#,
        true,
    ),
    (r#"{"a":["x"]}"#, r#"{"a":{"x":1}}"#, false),
    // Arrays in the body: any element, at any level.
    (r#"{"a":["x"]}"#, r#"{"a":["w","x"]}"#, true),
    (r#"{"a":["x"]}"#, r#"{"a":["w","y"]}"#, false),
    (r#"{"a":["x"]}"#, r#"{"a":[["x"]]}"#, true),
    (
        r#"{"items":{"sku":["B"]}}"#,
        r#"{"items":[{"sku":"A"},{"sku":"B"}]}"#,
        true,
    ),
    (
        r#"{"items":{"sku":["C"]}}"#,
        r#"{"items":[{"sku":"A"},{"sku":"B"}]}"#,
        false,
    ),
    (
        r#"{"items":{"qty":[{"numeric":[">",5]}]}}"#,
        r#"{"items":[{"qty":1},{"qty":9}]}"#,
        true,
    ),
    // Keys AND-ed across levels.
    (
        r#"{"a":["1"],"b":{"c":["2"]}}"#,
        r#"{"a":"1","b":{"c":"2"}}"#,
        true,
    ),
    (
        r#"{"a":["1"],"b":{"c":["2"]}}"#,
        r#"{"a":"1","b":{"c":"3"}}"#,
        false,
    ),
    // Bodies that are not JSON objects match no non-empty policy.
    (r#"{"a":["x"]}"#, "plain text", false),
    (r#"{"a":["x"]}"#, r#"["x"]"#, false),
    (r#"{"a":[{"exists":false}]}"#, "plain text", false),
    (r#"{"a":[{"exists":false}]}"#, r#""a string""#, false),
    // Operators on body values.
    (r#"{"s":[{"prefix":"ab"}]}"#, r#"{"s":"abc"}"#, true),
    (r#"{"s":[{"prefix":"ab"}]}"#, r#"{"s":"cab"}"#, false),
    (r#"{"s":[{"suffix":"bc"}]}"#, r#"{"s":"abc"}"#, true),
    (r#"{"s":[{"suffix":"1"}]}"#, r#"{"s":11}"#, false),
    (
        r#"{"s":[{"equals-ignore-case":"ABC"}]}"#,
        r#"{"s":"aBc"}"#,
        true,
    ),
    (
        r#"{"s":[{"equals-ignore-case":"ABC"}]}"#,
        r#"{"s":"aBcd"}"#,
        false,
    ),
    (
        r#"{"s":[{"wildcard":"*-*-prod"}]}"#,
        r#"{"s":"eu-west-prod"}"#,
        true,
    ),
    (
        r#"{"s":[{"wildcard":"*-*-prod"}]}"#,
        r#"{"s":"euwest-prod"}"#,
        false,
    ),
    (
        r#"{"s":[{"anything-but":["x","y"]}]}"#,
        r#"{"s":"z"}"#,
        true,
    ),
    (
        r#"{"s":[{"anything-but":["x","y"]}]}"#,
        r#"{"s":"y"}"#,
        false,
    ),
    (
        r#"{"s":[{"anything-but":["x","y"]}]}"#,
        r#"{"s":["x","y"]}"#,
        false,
    ),
    (
        r#"{"s":[{"anything-but":["x","y"]}]}"#,
        r#"{"s":["x","q"]}"#,
        true,
    ),
    (r#"{"s":[{"anything-but":["x"]}]}"#, r#"{"t":"q"}"#, false),
    (
        r#"{"s":[{"anything-but":{"prefix":"x"}}]}"#,
        r#"{"s":"xyz"}"#,
        false,
    ),
    (
        r#"{"s":[{"anything-but":{"prefix":"x"}}]}"#,
        r#"{"s":7}"#,
        true,
    ),
    (
        r#"{"s":[{"anything-but":{"suffix":"z"}}]}"#,
        r#"{"s":"xyz"}"#,
        false,
    ),
    (
        r#"{"s":[{"anything-but":{"wildcard":"x*"}}]}"#,
        r#"{"s":"yx"}"#,
        true,
    ),
    (r#"{"s":[{"anything-but":5}]}"#, r#"{"s":5.0}"#, false),
    (
        r#"{"n":[{"numeric":[">=",1.5,"<",2]}]}"#,
        r#"{"n":1.5}"#,
        true,
    ),
    (
        r#"{"n":[{"numeric":[">=",1.5,"<",2]}]}"#,
        r#"{"n":2}"#,
        false,
    ),
    (
        r#"{"n":[{"numeric":[">=",1.5,"<",2]}]}"#,
        r#"{"n":"1.7"}"#,
        false,
    ),
    (r#"{"n":[{"numeric":["=",0]}]}"#, r#"{"n":-0.0}"#, true),
    (
        r#"{"n":[{"numeric":[">",-1000000000]}]}"#,
        r#"{"n":-999999999.5}"#,
        true,
    ),
    (
        r#"{"ip":[{"cidr":"192.168.0.0/16"}]}"#,
        r#"{"ip":"192.168.44.2"}"#,
        true,
    ),
    (
        r#"{"ip":[{"cidr":"192.168.0.0/16"}]}"#,
        r#"{"ip":"192.169.0.1"}"#,
        false,
    ),
    (
        r#"{"ip":[{"cidr":"fd00::/8"}]}"#,
        r#"{"ip":["10.0.0.1","fd12::1"]}"#,
        true,
    ),
    (
        r#"{"ip":[{"cidr":"fd00::/8"}]}"#,
        r#"{"ip":"fe80::1"}"#,
        false,
    ),
    // exists in the body: leaves only.
    (r#"{"a":[{"exists":true}]}"#, r#"{"a":null}"#, true),
    (r#"{"a":[{"exists":true}]}"#, r#"{"a":0}"#, true),
    (r#"{"a":[{"exists":true}]}"#, r#"{"b":0}"#, false),
    (r#"{"a":[{"exists":true}]}"#, r#"{"a":[]}"#, false),
    (r#"{"a":[{"exists":true}]}"#, r#"{"a":{"b":1}}"#, false),
    (r#"{"a":[{"exists":false}]}"#, r#"{"b":1}"#, true),
    (r#"{"a":[{"exists":false}]}"#, r#"{"a":null}"#, false),
    (r#"{"a":[{"exists":false}]}"#, r#"{"a":[]}"#, true),
    (
        r#"{"x":{"y":[{"exists":false}]}}"#,
        r#"{"x":{"z":1}}"#,
        true,
    ),
    (
        r#"{"x":{"y":[{"exists":false}]}}"#,
        r#"{"x":{"y":1}}"#,
        false,
    ),
    (
        r#"{"x":{"y":[{"exists":true}]}}"#,
        r#"{"x":[{"z":1},{"y":1}]}"#,
        true,
    ),
    // $or at the top and nested under a key.
    (r#"{"$or":[{"a":["1"]},{"b":["2"]}]}"#, r#"{"b":"2"}"#, true),
    (
        r#"{"$or":[{"a":["1"]},{"b":["2"]}]}"#,
        r#"{"a":"2","b":"1"}"#,
        false,
    ),
    (
        r#"{"o":{"$or":[{"a":["1"]},{"b":{"c":["2"]}}]}}"#,
        r#"{"o":{"b":{"c":"2"}}}"#,
        true,
    ),
    (
        r#"{"o":{"$or":[{"a":["1"]},{"b":{"c":["2"]}}]}}"#,
        r#"{"b":{"c":"2"}}"#,
        false,
    ),
    (
        r#"{"k":["v"],"$or":[{"n":[{"numeric":["<",0]}]},{"n":[{"numeric":[">",100]}]}]}"#,
        r#"{"k":"v","n":101}"#,
        true,
    ),
    (
        r#"{"k":["v"],"$or":[{"n":[{"numeric":["<",0]}]},{"n":[{"numeric":[">",100]}]}]}"#,
        r#"{"k":"v","n":50}"#,
        false,
    ),
];

#[test]
fn message_body_table() {
    let mut failures = Vec::new();
    for (i, (policy, body, want)) in ROWS.iter().enumerate() {
        let got = eval(policy, Scope::MessageBody, &[], body);
        if got != *want {
            failures.push(format!("row {i}: {policy} on {body}: got {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ROWS.len() >= 70, "{} rows", ROWS.len());
}

#[test]
fn body_scope_ignores_attributes() {
    assert!(!eval(
        r#"{"a":["x"]}"#,
        Scope::MessageBody,
        &[("a", "String", "x")],
        r#"{"a":"y"}"#
    ));
}
