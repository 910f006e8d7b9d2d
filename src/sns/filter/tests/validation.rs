//! Validation: each bad policy gets AWS's message; each good one is accepted.

use super::super::{FilterPolicy, Scope};

const MA: Scope = Scope::MessageAttributes;
const MB: Scope = Scope::MessageBody;

/// (policy, scope, None when it must be accepted or Some(the full error message))
type Row = (String, Scope, Option<String>);

fn bad(policy: &str, scope: Scope, sentence: &str) -> Row {
    let message = format!("Invalid parameter: FilterPolicy: {sentence}");
    (policy.to_string(), scope, Some(message))
}

fn good(policy: &str, scope: Scope) -> Row {
    (policy.to_string(), scope, None)
}

/// `["v0","v1",...]` with `n` values.
fn values(n: usize) -> String {
    let items: Vec<String> = (0..n).map(|i| format!("\"v{i}\"")).collect();
    format!("[{}]", items.join(","))
}

fn rows() -> Vec<Row> {
    let nested_ma = "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy";
    let mut rows = vec![
        // JSON syntax and shape.
        bad("", MA, "failed to parse JSON. Unexpected end of input at line 1, column 1"),
        bad(
            r#"{"a":["x"]"#,
            MA,
            "failed to parse JSON. Unexpected end of input at line 1, column 11",
        ),
        bad(
            "{a:[1]}",
            MA,
            "failed to parse JSON. Unexpected character 'a' at line 1, column 2",
        ),
        bad(
            "{\n  \"a\": [1,]\n}",
            MA,
            "failed to parse JSON. Unexpected character ']' at line 2, column 11",
        ),
        bad(
            r#"{"a":["x"]} x"#,
            MA,
            "failed to parse JSON. Unexpected content after the end of the JSON document at line 1, column 13",
        ),
        bad(
            r#"{"a":[1e400]}"#,
            MA,
            "failed to parse JSON. Numeric value out of range at line 1, column 7",
        ),
        bad(r#"{"a":["x"],"a":["y"]}"#, MA, "Duplicate field 'a'"),
        bad(r#"{"o":{"k":[1],"k":[2]}}"#, MB, "Duplicate field 'k'"),
        bad("[1]", MA, "Filter policy must be a JSON object"),
        bad(r#""text""#, MB, "Filter policy must be a JSON object"),
        bad(r#"{"a":"x"}"#, MA, r#""a" must be an object or an array"#),
        bad(r#"{"a":5}"#, MB, r#""a" must be an object or an array"#),
        bad(r#"{"a":null}"#, MA, r#""a" must be an object or an array"#),
        bad(r#"{"a":[]}"#, MA, "Empty arrays are not allowed"),
        bad(r#"{"a":{"b":[]}}"#, MB, "Empty arrays are not allowed"),
        bad(r#"{"a":{}}"#, MB, "Empty objects are not allowed"),
        (r#"{"a":{"b":["x"]}}"#.to_string(), MA, Some(nested_ma.to_string())),
        // A nested object's shape is checked before the scope refuses nesting (recorded:
        // test_validate_policy_string_operators, MessageAttributes scope).
        bad(r#"{"key":{"suffix":"value"}}"#, MA, r#""suffix" must be an object or an array"#),
        bad(
            r#"{"key":{"suffix":"value","prefix":"value"}}"#,
            MA,
            r#""suffix" must be an object or an array"#,
        ),
        bad(
            r#"{"key":{"not-an-operator":"value"}}"#,
            MA,
            r#""not-an-operator" must be an object or an array"#,
        ),
        good(r#"{"a":{"b":["x"]}}"#, MB),
        bad(
            r#"{"a":["x",["y"]]}"#,
            MA,
            "Match value must be String, number, true, false, or null",
        ),
        // Match expressions.
        bad(r#"{"a":[{"prefixx":"x"}]}"#, MA, "Unrecognized match type prefixx"),
        bad(r#"{"a":[{"Prefix":"x"}]}"#, MB, "Unrecognized match type Prefix"),
        bad(r#"{"a":[{}]}"#, MA, "Match expression name not found"),
        bad(
            r#"{"a":[{"prefix":"x","suffix":"y"}]}"#,
            MA,
            "Only one key allowed in match expression",
        ),
        bad(r#"{"a":[{"prefix":1}]}"#, MA, "prefix match pattern must be a string"),
        bad(r#"{"a":[{"suffix":["x"]}]}"#, MA, "suffix match pattern must be a string"),
        bad(
            r#"{"a":[{"equals-ignore-case":null}]}"#,
            MA,
            "equals-ignore-case match pattern must be a string",
        ),
        bad(r#"{"a":[{"wildcard":7}]}"#, MB, "wildcard match pattern must be a string"),
        bad(
            r#"{"a":[{"exists":"true"}]}"#,
            MA,
            "exists match pattern must be either true or false.",
        ),
        bad(
            r#"{"a":[{"exists":1}]}"#,
            MB,
            "exists match pattern must be either true or false.",
        ),
        // numeric.
        bad(r#"{"a":[{"numeric":5}]}"#, MA, "Value of numeric must be an array."),
        bad(r#"{"a":[{"numeric":[]}]}"#, MA, "Invalid member in numeric match: ]"),
        bad(r#"{"a":[{"numeric":[5]}]}"#, MA, "Invalid member in numeric match: 5"),
        bad(
            r#"{"a":[{"numeric":["!",5]}]}"#,
            MA,
            "Unrecognized numeric range operator: !",
        ),
        bad(r#"{"a":[{"numeric":["<","5"]}]}"#, MA, "Value of < must be numeric"),
        bad(r#"{"a":[{"numeric":["="]}]}"#, MA, "Value of equals must be numeric"),
        bad(r#"{"a":[{"numeric":[">=",null]}]}"#, MB, "Value of >= must be numeric"),
        bad(
            r#"{"a":[{"numeric":["<",5,">",1]}]}"#,
            MA,
            "Too many elements in numeric expression",
        ),
        bad(
            r#"{"a":[{"numeric":["=",5,"<",9]}]}"#,
            MA,
            "Too many elements in numeric expression",
        ),
        bad(r#"{"a":[{"numeric":[">",1,5]}]}"#, MA, "Bad value in numeric range: 5"),
        bad(r#"{"a":[{"numeric":[">",1,">",5]}]}"#, MA, "Bad numeric range operator: >"),
        bad(r#"{"a":[{"numeric":[">",1,"<"]}]}"#, MA, "Value of < must be numeric"),
        bad(
            r#"{"a":[{"numeric":[">",1,"<",5,6]}]}"#,
            MA,
            "Too many terms in numeric range expression",
        ),
        bad(r#"{"a":[{"numeric":[">",5,"<",1]}]}"#, MA, "Bottom must be less than top"),
        bad(r#"{"a":[{"numeric":[">=",5,"<=",5]}]}"#, MB, "Bottom must be less than top"),
        bad(
            r#"{"a":[{"numeric":["<",1000000001]}]}"#,
            MA,
            "Numeric value 1000000001 is out of range: values must be between -1000000000 and 1000000000 with at most 5 decimal places",
        ),
        // An exponent near i64::MIN overflowed the decimals count (a panic in checked builds).
        bad(
            r#"{"n":[{"numeric":[">",1e-9223372036854775808]}]}"#,
            MA,
            "Numeric value 1e-9223372036854775808 is out of range: values must be between -1000000000 and 1000000000 with at most 5 decimal places",
        ),
        bad(
            r#"{"a":[{"numeric":[">",-2e9]}]}"#,
            MA,
            "Numeric value -2e9 is out of range: values must be between -1000000000 and 1000000000 with at most 5 decimal places",
        ),
        bad(
            r#"{"a":[{"numeric":[">",0,"<",0.000001]}]}"#,
            MB,
            "Numeric value 0.000001 is out of range: values must be between -1000000000 and 1000000000 with at most 5 decimal places",
        ),
        good(r#"{"a":[{"numeric":[">=",-1000000000,"<=",1000000000]}]}"#, MA),
        good(r#"{"a":[{"numeric":["=",0.00001]}]}"#, MA),
        good(r#"{"a":[{"numeric":["<",1.500000]}]}"#, MA),
        good(r#"{"a":[12345678901.123456]}"#, MA),
        // anything-but.
        bad(r#"{"a":[{"anything-but":[]}]}"#, MA, "Empty arrays are not allowed"),
        bad(
            r#"{"a":[{"anything-but":["x",null]}]}"#,
            MA,
            "Inside anything but list, start|null|boolean is not supported.",
        ),
        bad(
            r#"{"a":[{"anything-but":[true]}]}"#,
            MB,
            "Inside anything but list, start|null|boolean is not supported.",
        ),
        bad(
            r#"{"a":[{"anything-but":[{"prefix":"x"}]}]}"#,
            MA,
            "Inside anything but list, start|null|boolean is not supported.",
        ),
        bad(
            r#"{"a":[{"anything-but":false}]}"#,
            MA,
            "Value of anything-but must be an array or single string/number value.",
        ),
        bad(
            r#"{"a":[{"anything-but":{"equals-ignore-case":"x"}}]}"#,
            MA,
            "Unsupported anything-but pattern: equals-ignore-case",
        ),
        bad(
            r#"{"a":[{"anything-but":{"prefix":5}}]}"#,
            MA,
            "prefix match pattern must be a string",
        ),
        bad(
            r#"{"a":[{"anything-but":{"prefix":"a","suffix":"b"}}]}"#,
            MA,
            "Only one key allowed in match expression",
        ),
        bad(
            r#"{"a":[{"anything-but":{"wildcard":"a**"}}]}"#,
            MB,
            "Consecutive wildcard characters at pos 2",
        ),
        good(r#"{"a":[{"anything-but":["x",1,2.5]}]}"#, MA),
        good(r#"{"a":[{"anything-but":{"suffix":"x"}}]}"#, MB),
        // cidr.
        bad(r#"{"a":[{"cidr":5}]}"#, MA, "prefix match pattern must be a string"),
        bad(r#"{"a":[{"cidr":"10.0.0.0"}]}"#, MA, "Malformed CIDR, one '/' required"),
        bad(r#"{"a":[{"cidr":"10.0.0.0/8/8"}]}"#, MA, "Malformed CIDR, one '/' required"),
        bad(
            r#"{"a":[{"cidr":"10.0.0.0/x"}]}"#,
            MA,
            "Malformed CIDR, mask bits must be an integer",
        ),
        bad(
            r#"{"a":[{"cidr":"10.0.0.256/8"}]}"#,
            MB,
            "Nonstandard IP address: 10.0.0.256",
        ),
        bad(
            r#"{"a":[{"cidr":"10.0.0.0/33"}]}"#,
            MA,
            "Malformed CIDR, mask bits must be between 0 and 32: 33",
        ),
        bad(
            r#"{"a":[{"cidr":"::/129"}]}"#,
            MA,
            "Malformed CIDR, mask bits must be between 0 and 128: 129",
        ),
        good(r#"{"a":[{"cidr":"2001:db8::/32"}]}"#, MA),
        good(r#"{"a":[{"cidr":"10.1.2.3/8"}]}"#, MB),
        // wildcard.
        bad(
            r#"{"a":[{"wildcard":"a**b"}]}"#,
            MA,
            "Consecutive wildcard characters at pos 2",
        ),
        bad(r#"{"a":[{"wildcard":"a\\b"}]}"#, MA, "Invalid escape character at pos 1"),
        good(r#"{"a":[{"wildcard":"*a*b\\**"}]}"#, MA),
        // $or.
        bad(
            r#"{"$or":[{"a":["x"]},"b"]}"#,
            MA,
            "Every element of an $or array must be a JSON object",
        ),
        bad(r#"{"$or":[{"a":["x"]},{}]}"#, MB, "Empty objects are not allowed"),
        (
            r#"{"$or":[{"a":["x"]},{"b":{"c":["y"]}}]}"#.to_string(),
            MA,
            Some(nested_ma.to_string()),
        ),
        good(r#"{"$or":[{"a":["x"]},{"b":{"c":["y"]}}]}"#, MB),
        good(r#"{"x":{"$or":[{"a":["x"]},{"b":["y"]}]}}"#, MB),
        good(r#"{"$or":["plain","values"]}"#, MA),
        // Key count.
        good(r#"{"a":[1],"b":[1],"c":[1],"d":[1],"e":[1]}"#, MA),
        bad(
            r#"{"a":[1],"b":[1],"c":[1],"d":[1],"e":[1],"f":[1]}"#,
            MA,
            "Filter policy can not have more than 5 keys",
        ),
        bad(
            r#"{"a":[1],"b":[1],"c":[1],"d":[1],"e":[1],"f":[{"prefixx":1}]}"#,
            MB,
            "Filter policy can not have more than 5 keys",
        ),
        good(r#"{"a":{"b":[1],"c":[1],"d":[1],"e":[1],"f":[1],"g":[1]}}"#, MB),
        // Plain good policies.
        good("{}", MA),
        good("{}", MB),
        good(r#"{"a":["x",5,true,false,null]}"#, MA),
        good(
            r#"{"a":[{"prefix":""},{"suffix":"s"},{"equals-ignore-case":"E"},{"exists":false}]}"#,
            MB,
        ),
        good(r#"{"a\u00e9\"":["\ud83d\ude00"]}"#, MA),
    ];

    // Complexity: the product of array lengths (times nesting depth in MessageBody),
    // $or branches summed.
    rows.push(good(
        &format!(r#"{{"a":{},"b":{}}}"#, values(10), values(15)),
        MA,
    ));
    rows.push(bad(
        &format!(r#"{{"a":{},"b":{}}}"#, values(10), values(16)),
        MA,
        "Filter policy is too complex",
    ));
    rows.push(bad(
        &format!(
            r#"{{"a":{},"b":{},"c":[{{"prefixx":1}}]}}"#,
            values(10),
            values(16)
        ),
        MA,
        "Filter policy is too complex",
    ));
    // AWS's documented example: 4 values three levels deep, 3 values two deep: 3*4*2*3 = 72.
    rows.push(good(
        &format!(
            r#"{{"a":{{"b":{{"c":{}}}}},"d":{{"e":{}}}}}"#,
            values(4),
            values(3)
        ),
        MB,
    ));
    // Same shape, 25 and 1 values: 3*25*2*1 = 150; one more value is 156.
    rows.push(good(
        &format!(
            r#"{{"a":{{"b":{{"c":{}}}}},"d":{{"e":{}}}}}"#,
            values(25),
            values(1)
        ),
        MB,
    ));
    rows.push(bad(
        &format!(
            r#"{{"a":{{"b":{{"c":{}}}}},"d":{{"e":{}}}}}"#,
            values(26),
            values(1)
        ),
        MB,
        "Filter policy is too complex",
    ));
    rows.push(good(
        &format!(
            r#"{{"$or":[{{"a":{}}},{{"b":{}}}]}}"#,
            values(75),
            values(75)
        ),
        MA,
    ));
    rows.push(bad(
        &format!(
            r#"{{"$or":[{{"a":{}}},{{"b":{}}}]}}"#,
            values(76),
            values(75)
        ),
        MA,
        "Filter policy is too complex",
    ));
    // A key outside the $or multiplies every branch: 2*(30+45) = 150, then 2*(30+46).
    rows.push(good(
        &format!(
            r#"{{"k":{},"$or":[{{"a":{}}},{{"b":{}}}]}}"#,
            values(2),
            values(30),
            values(45)
        ),
        MA,
    ));
    rows.push(bad(
        &format!(
            r#"{{"k":{},"$or":[{{"a":{}}},{{"b":{}}}]}}"#,
            values(2),
            values(30),
            values(46)
        ),
        MA,
        "Filter policy is too complex",
    ));
    // A huge array overflows no counter.
    rows.push(bad(
        &format!(
            r#"{{"a":{},"b":{},"c":{},"d":{},"e":{}}}"#,
            values(5000),
            values(5000),
            values(5000),
            values(5000),
            values(5000)
        ),
        MA,
        "Filter policy is too complex",
    ));

    // Thousands of nested keys: read in linear time, refused by the complexity limit.
    let many: Vec<String> = (0..20_000).map(|i| format!(r#""k{i}":[1]"#)).collect();
    rows.push(bad(
        &format!(r#"{{"a":{{{}}}}}"#, many.join(",")),
        MB,
        "Filter policy is too complex",
    ));
    let mut twice = many.clone();
    twice.push(r#""k7":[2]"#.to_string());
    rows.push(bad(
        &format!(r#"{{"a":{{{}}}}}"#, twice.join(",")),
        MB,
        "Duplicate field 'k7'",
    ));

    // Size: 256 KB at most.
    let filler = "x".repeat(256 * 1024);
    rows.push(bad(
        &format!(r#"{{"a":["{filler}"]}}"#),
        MA,
        "Filter policy is too large: it must be at most 262144 bytes",
    ));
    let fits = "x".repeat(256 * 1024 - r#"{"a":[""]}"#.len());
    rows.push(good(&format!(r#"{{"a":["{fits}"]}}"#), MA));

    // Nesting is bounded before recursion can hurt.
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    rows.push(bad(
        &format!(r#"{{"a":{deep}}}"#),
        MA,
        "failed to parse JSON. Nesting is too deep at line 1, column 69",
    ));

    rows
}

#[test]
fn validation_table() {
    let rows = rows();
    let mut failures = Vec::new();
    for (i, (policy, scope, want)) in rows.iter().enumerate() {
        let got = FilterPolicy::parse(policy, *scope).err();
        if got != *want {
            let shown: String = policy.chars().take(120).collect();
            failures.push(format!(
                "row {i} ({}): {shown}\n  want {want:?}\n  got  {got:?}",
                scope.as_str()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(rows.len() >= 100, "{} rows", rows.len());
}
