//! MessageAttributes scope: one row per (policy, attributes, expected).

use super::{eval, Scope};

type Row = (
    &'static str,
    &'static [(&'static str, &'static str, &'static str)],
    bool,
);

const S: &str = "String";
const N: &str = "Number";
const A: &str = "String.Array";
const B: &str = "Binary";

const ROWS: &[Row] = &[
    // Exact strings and numbers.
    (r#"{"color":["red","blue"]}"#, &[("color", S, "blue")], true),
    (
        r#"{"color":["red","blue"]}"#,
        &[("color", S, "green")],
        false,
    ),
    (r#"{"color":["red"]}"#, &[("colour", S, "red")], false),
    (r#"{"color":["red"]}"#, &[("color", S, "Red")], false),
    (r#"{"price":[100]}"#, &[("price", N, "100")], true),
    (r#"{"price":[100]}"#, &[("price", N, "100.0")], true),
    (r#"{"price":[100]}"#, &[("price", N, "1e2")], true),
    (r#"{"price":[100]}"#, &[("price", S, "100")], false),
    (r#"{"price":["100"]}"#, &[("price", N, "100")], false),
    (r#"{"price":["100"]}"#, &[("price", S, "100")], true),
    (r#"{"t":["x"]}"#, &[("t", "String.custom", "x")], true),
    (r#"{"n":[7]}"#, &[("n", "Number.int", "7")], true),
    (
        r#"{"caf\u00e9":["\ud83d\ude00"]}"#,
        &[("café", S, "😀")],
        true,
    ),
    (
        r#"{"caf\u00e9":["\ud83d\ude00"]}"#,
        &[("cafe", S, "😀")],
        false,
    ),
    // Keys are AND-ed.
    (
        r#"{"a":["1"],"b":["2"]}"#,
        &[("a", S, "1"), ("b", S, "2")],
        true,
    ),
    (
        r#"{"a":["1"],"b":["2"]}"#,
        &[("a", S, "1"), ("b", S, "3")],
        false,
    ),
    (r#"{"a":["1"],"b":["2"]}"#, &[("a", S, "1")], false),
    // String.Array: any element.
    (r#"{"tags":["b"]}"#, &[("tags", A, r#"["a","b"]"#)], true),
    (r#"{"tags":["c"]}"#, &[("tags", A, r#"["a","b"]"#)], false),
    (r#"{"tags":[3]}"#, &[("tags", A, r#"["a",3]"#)], true),
    (
        r#"{"tags":[true]}"#,
        &[("tags", A, r#"[false,true]"#)],
        true,
    ),
    (r#"{"tags":[null]}"#, &[("tags", A, r#"[null]"#)], true),
    (
        r#"{"tags":[{"prefix":"ru"}]}"#,
        &[("tags", A, r#"["golf","rugby"]"#)],
        true,
    ),
    (
        r#"{"tags":[{"numeric":[">",10]}]}"#,
        &[("tags", A, r#"[1,"20",11]"#)],
        true,
    ),
    (
        r#"{"tags":[{"numeric":[">",10]}]}"#,
        &[("tags", A, r#"[1,"20"]"#)],
        false,
    ),
    (r#"{"tags":["a"]}"#, &[("tags", A, "not json")], false),
    (r#"{"tags":[{"exists":true}]}"#, &[("tags", A, "[]")], false),
    (r#"{"tags":[{"exists":false}]}"#, &[("tags", A, "[]")], true),
    (
        r#"{"tags":[{"anything-but":"a"}]}"#,
        &[("tags", A, r#"["a","b"]"#)],
        true,
    ),
    (
        r#"{"tags":[{"anything-but":"a"}]}"#,
        &[("tags", A, r#"["a"]"#)],
        false,
    ),
    // Binary attributes are ignored.
    (r#"{"bin":["AAAA"]}"#, &[("bin", B, "AAAA")], false),
    (r#"{"bin":[{"exists":true}]}"#, &[("bin", B, "AAAA")], false),
    (r#"{"bin":[{"exists":false}]}"#, &[("bin", B, "AAAA")], true),
    // prefix / suffix.
    (r#"{"c":[{"prefix":"bas"}]}"#, &[("c", S, "baseball")], true),
    (r#"{"c":[{"prefix":"bas"}]}"#, &[("c", S, "rugby")], false),
    (r#"{"c":[{"prefix":"1"}]}"#, &[("c", N, "10")], false),
    (
        r#"{"c":[{"suffix":"ball"}]}"#,
        &[("c", S, "baseball")],
        true,
    ),
    (r#"{"c":[{"suffix":"ball"}]}"#, &[("c", S, "balls")], false),
    // equals-ignore-case.
    (
        r#"{"c":[{"equals-ignore-case":"ReD"}]}"#,
        &[("c", S, "rEd")],
        true,
    ),
    (
        r#"{"c":[{"equals-ignore-case":"red"}]}"#,
        &[("c", S, "reds")],
        false,
    ),
    (
        r#"{"c":[{"equals-ignore-case":"ÉTÉ"}]}"#,
        &[("c", S, "été")],
        true,
    ),
    // A word-final capital sigma (found by reading for the fuzz target): `ΑΣ` matches itself.
    (
        r#"{"c":[{"equals-ignore-case":"ΑΣ"}]}"#,
        &[("c", S, "ΑΣ")],
        true,
    ),
    (
        r#"{"c":[{"equals-ignore-case":"ΑΣ"}]}"#,
        &[("c", S, "ασ")],
        true,
    ),
    // anything-but, each form.
    (
        r#"{"c":[{"anything-but":["rugby","tennis"]}]}"#,
        &[("c", S, "golf")],
        true,
    ),
    (
        r#"{"c":[{"anything-but":["rugby","tennis"]}]}"#,
        &[("c", S, "tennis")],
        false,
    ),
    (
        r#"{"c":[{"anything-but":"rugby"}]}"#,
        &[("c", S, "rugby")],
        false,
    ),
    (
        r#"{"c":[{"anything-but":"rugby"}]}"#,
        &[("c", S, "golf")],
        true,
    ),
    (r#"{"c":[{"anything-but":100}]}"#, &[("c", N, "100")], false),
    (
        r#"{"c":[{"anything-but":[100,200]}]}"#,
        &[("c", N, "150")],
        true,
    ),
    (
        r#"{"c":[{"anything-but":{"prefix":"org-"}}]}"#,
        &[("c", S, "org-1")],
        false,
    ),
    (
        r#"{"c":[{"anything-but":{"prefix":"org-"}}]}"#,
        &[("c", S, "data")],
        true,
    ),
    (
        r#"{"c":[{"anything-but":{"suffix":".tmp"}}]}"#,
        &[("c", S, "a.tmp")],
        false,
    ),
    (
        r#"{"c":[{"anything-but":{"suffix":".tmp"}}]}"#,
        &[("c", S, "a.txt")],
        true,
    ),
    (
        r#"{"c":[{"anything-but":{"wildcard":"a*z"}}]}"#,
        &[("c", S, "abcz")],
        false,
    ),
    (
        r#"{"c":[{"anything-but":{"wildcard":"a*z"}}]}"#,
        &[("c", S, "abc")],
        true,
    ),
    (r#"{"c":[{"anything-but":"rugby"}]}"#, &[], false),
    // numeric ranges with their edges.
    (
        r#"{"p":[{"numeric":["=",301.5]}]}"#,
        &[("p", N, "301.50")],
        true,
    ),
    (
        r#"{"p":[{"numeric":["=",301.5]}]}"#,
        &[("p", N, "301.51")],
        false,
    ),
    (
        r#"{"p":[{"numeric":[">",0,"<=",150]}]}"#,
        &[("p", N, "150")],
        true,
    ),
    (
        r#"{"p":[{"numeric":[">",0,"<=",150]}]}"#,
        &[("p", N, "0")],
        false,
    ),
    (
        r#"{"p":[{"numeric":[">",0,"<=",150]}]}"#,
        &[("p", N, "0.00001")],
        true,
    ),
    (
        r#"{"p":[{"numeric":[">",0,"<=",150]}]}"#,
        &[("p", N, "150.00001")],
        false,
    ),
    (
        r#"{"p":[{"numeric":[">=",0,"<",150]}]}"#,
        &[("p", N, "0")],
        true,
    ),
    (
        r#"{"p":[{"numeric":[">=",0,"<",150]}]}"#,
        &[("p", N, "150")],
        false,
    ),
    (r#"{"p":[{"numeric":["<",-5]}]}"#, &[("p", N, "-5.5")], true),
    (r#"{"p":[{"numeric":["<=",-5]}]}"#, &[("p", N, "-5")], true),
    (r#"{"p":[{"numeric":[">",10]}]}"#, &[("p", S, "20")], false),
    (
        r#"{"p":[{"numeric":[">",10]}]}"#,
        &[("p", N, "not a number")],
        false,
    ),
    // exists.
    (r#"{"k":[{"exists":true}]}"#, &[("k", S, "")], true),
    (r#"{"k":[{"exists":true}]}"#, &[("other", S, "x")], false),
    (r#"{"k":[{"exists":false}]}"#, &[("other", S, "x")], true),
    (r#"{"k":[{"exists":false}]}"#, &[], true),
    (r#"{"k":[{"exists":false}]}"#, &[("k", S, "x")], false),
    (r#"{"k":["x",{"exists":false}]}"#, &[("k", S, "x")], true),
    (r#"{"k":["x",{"exists":false}]}"#, &[("k", S, "y")], false),
    // cidr, v4 and v6.
    (
        r#"{"ip":[{"cidr":"10.0.0.0/24"}]}"#,
        &[("ip", S, "10.0.0.255")],
        true,
    ),
    (
        r#"{"ip":[{"cidr":"10.0.0.0/24"}]}"#,
        &[("ip", S, "10.0.1.0")],
        false,
    ),
    (
        r#"{"ip":[{"cidr":"10.0.0.0/24"}]}"#,
        &[("ip", S, "not an ip")],
        false,
    ),
    (
        r#"{"ip":[{"cidr":"0.0.0.0/0"}]}"#,
        &[("ip", S, "8.8.8.8")],
        true,
    ),
    (
        r#"{"ip":[{"cidr":"10.0.0.0/24"}]}"#,
        &[("ip", S, "::ffff:10.0.0.1")],
        false,
    ),
    (
        r#"{"ip":[{"cidr":"2001:db8::/32"}]}"#,
        &[("ip", S, "2001:db8:1::5")],
        true,
    ),
    (
        r#"{"ip":[{"cidr":"2001:db8::/32"}]}"#,
        &[("ip", S, "2001:db9::1")],
        false,
    ),
    (
        r#"{"ip":[{"cidr":"2001:db8::/32"}]}"#,
        &[("ip", S, "10.0.0.1")],
        false,
    ),
    (
        r#"{"ip":[{"cidr":"::1/128"}]}"#,
        &[("ip", S, "0:0:0:0:0:0:0:1")],
        true,
    ),
    // wildcard with several stars.
    (
        r#"{"h":[{"wildcard":"*.example.com"}]}"#,
        &[("h", S, "api.example.com")],
        true,
    ),
    (
        r#"{"h":[{"wildcard":"*.example.com"}]}"#,
        &[("h", S, "example.com")],
        false,
    ),
    (r#"{"h":[{"wildcard":"a*b*c"}]}"#, &[("h", S, "abc")], true),
    (
        r#"{"h":[{"wildcard":"a*b*c"}]}"#,
        &[("h", S, "axxbyyc")],
        true,
    ),
    (
        r#"{"h":[{"wildcard":"a*b*c"}]}"#,
        &[("h", S, "axxcyyb")],
        false,
    ),
    (
        r#"{"h":[{"wildcard":"a*b*c"}]}"#,
        &[("h", S, "abcd")],
        false,
    ),
    (
        r#"{"h":[{"wildcard":"*a*a*"}]}"#,
        &[("h", S, "banana")],
        true,
    ),
    (
        r#"{"h":[{"wildcard":"*aaa*"}]}"#,
        &[("h", S, "banana")],
        false,
    ),
    (
        r#"{"h":[{"wildcard":"*b*c*"}]}"#,
        &[("h", S, "xcxbx")],
        false,
    ),
    (
        r#"{"h":[{"wildcard":"*b*c*"}]}"#,
        &[("h", S, "xbxcx")],
        true,
    ),
    (r#"{"h":[{"wildcard":"*a*a*"}]}"#, &[("h", S, "ba")], false),
    (r#"{"h":[{"wildcard":"*"}]}"#, &[("h", S, "")], true),
    (r#"{"h":[{"wildcard":"*"}]}"#, &[("h", N, "5")], false),
    (r#"{"h":[{"wildcard":"ab*ba"}]}"#, &[("h", S, "aba")], false),
    (r#"{"h":[{"wildcard":"a\\*b"}]}"#, &[("h", S, "a*b")], true),
    (r#"{"h":[{"wildcard":"a\\*b"}]}"#, &[("h", S, "axb")], false),
    (
        r#"{"h":[{"wildcard":"plain"}]}"#,
        &[("h", S, "plain")],
        true,
    ),
    // $or at the top level, and nested inside a branch.
    (
        r#"{"source":["aws.ec2"],"$or":[{"metric":["cpu"]},{"ns":["ec2"]}]}"#,
        &[("source", S, "aws.ec2"), ("ns", S, "ec2")],
        true,
    ),
    (
        r#"{"source":["aws.ec2"],"$or":[{"metric":["cpu"]},{"ns":["ec2"]}]}"#,
        &[("source", S, "aws.ec2"), ("ns", S, "s3")],
        false,
    ),
    (
        r#"{"source":["aws.ec2"],"$or":[{"metric":["cpu"]},{"ns":["ec2"]}]}"#,
        &[("source", S, "aws.s3"), ("metric", S, "cpu")],
        false,
    ),
    (
        r#"{"$or":[{"a":["1"]},{"b":["2"],"$or":[{"c":[3]},{"d":[4]}]}]}"#,
        &[("b", S, "2"), ("d", N, "4")],
        true,
    ),
    (
        r#"{"$or":[{"a":["1"]},{"b":["2"],"$or":[{"c":[3]},{"d":[4]}]}]}"#,
        &[("b", S, "2"), ("d", N, "5")],
        false,
    ),
    // An array of plain values under "$or" is an ordinary key of that name.
    (r#"{"$or":["x"]}"#, &[("$or", S, "x")], true),
];

#[test]
fn message_attributes_table() {
    let mut failures = Vec::new();
    for (i, (policy, attributes, want)) in ROWS.iter().enumerate() {
        let got = eval(policy, Scope::MessageAttributes, attributes, "ignored body");
        if got != *want {
            failures.push(format!("row {i}: {policy} with {attributes:?}: got {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ROWS.len() >= 90, "{} rows", ROWS.len());
}

#[test]
fn attribute_scope_ignores_the_body() {
    assert!(eval(
        r#"{"a":["x"]}"#,
        Scope::MessageAttributes,
        &[("a", "String", "x")],
        r#"{"a":"y"}"#
    ));
    assert!(!eval(
        r#"{"a":["x"]}"#,
        Scope::MessageAttributes,
        &[],
        r#"{"a":"x"}"#
    ));
}
