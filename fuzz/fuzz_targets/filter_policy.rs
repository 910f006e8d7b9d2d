//! SNS filter policies: `FilterPolicy::parse` on arbitrary text, `matches` on arbitrary
//! attributes and bodies.
//!
//! Input: byte 0 holds flags (bit 0: MessageBody scope; bit 1: spell generated strings
//! with `\uXXXX` escapes only), the rest is text split at NUL into: policy 1, policy 2, a
//! message body, a probe string, then message attributes as `name US DataType US value`.
//!
//! Asserts, for the two arbitrary policies: parsing never panics and is deterministic; a
//! policy that parses is a JSON object to serde_json too; matching never panics and reads
//! only its scope (attributes for MessageAttributes, the body for MessageBody);
//! `{"$or": [P1, P2]}` matches exactly when P1 or P2 does, and the union of their keys
//! exactly when both do (whenever those compositions parse, i.e. stay within AWS's limits).
//! And, for a key `n` holding the string `v` (an attribute, or a body property) and the
//! probe string `X` written into generated policies: `[X]` matches iff `v == X`, and
//! `anything-but X` iff not; `prefix`/`suffix` iff `v` starts/ends with `X`, their
//! `anything-but` forms iff not; `equals-ignore-case X` matches when `v == X`;
//! `wildcard` with X's `*` and `\` escaped matches iff `v == X`, and with a `*` appended
//! iff `v` starts with `X`; `exists: true` matches a present key and `exists: false` an
//! absent one; for a `Number`
//! attribute, `numeric [">", X]` and `["<=", X]` disagree, and `["=", X]` is both `>=` and
//! `<=`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use queen_sqs::sns::filter::{FilterPolicy, Scope};
use serde_json::Value;

type Attrs = Vec<(String, String, String)>;

fn parse(text: &str, scope: Scope) -> Option<FilterPolicy> {
    let first = FilterPolicy::parse(text, scope);
    assert_eq!(
        first,
        FilterPolicy::parse(text, scope),
        "parsing is deterministic"
    );
    let p = first.ok()?;
    assert_eq!(p.scope(), scope);
    assert!(
        matches!(serde_json::from_str::<Value>(text), Ok(Value::Object(_))),
        "accepted a policy serde_json does not read as an object: {text:?}"
    );
    Some(p)
}

fn matches(p: &FilterPolicy, attrs: &Attrs, body: &str) -> bool {
    let m = p.matches(attrs, body);
    match p.scope() {
        Scope::MessageAttributes => assert_eq!(m, p.matches(attrs, "{\"other\": 1}")),
        Scope::MessageBody => assert_eq!(m, p.matches(&[], body)),
    }
    m
}

/// A JSON string literal, spelt plainly or with every character escaped.
fn lit(s: &str, escaped: bool) -> String {
    if !escaped {
        return serde_json::to_string(s).unwrap();
    }
    let mut out = String::from("\"");
    for unit in s.encode_utf16() {
        out.push_str(&format!("\\u{unit:04x}"));
    }
    out.push('"');
    out
}

/// The members of an object's text, without its braces.
fn inner(text: &str) -> &str {
    let t = text.trim_matches([' ', '\t', '\n', '\r']);
    &t[1..t.len() - 1]
}

fn compositions(p1: &str, p2: &str, scope: Scope, attrs: &Attrs, body: &str) {
    let (Some(a), Some(b)) = (parse(p1, scope), parse(p2, scope)) else {
        return;
    };
    let (ma, mb) = (matches(&a, attrs, body), matches(&b, attrs, body));
    if let Some(or) = parse(&format!("{{\"$or\":[{p1},{p2}]}}"), scope) {
        assert_eq!(matches(&or, attrs, body), ma || mb, "$or of {p1} and {p2}");
    }
    let (i1, i2) = (inner(p1), inner(p2));
    if !i1.trim().is_empty() && !i2.trim().is_empty() {
        if let Some(and) = parse(&format!("{{{i1},{i2}}}"), scope) {
            assert_eq!(
                matches(&and, attrs, body),
                ma && mb,
                "union of {p1} and {p2}"
            );
        }
    }
}

fn probes(n: &str, v: &str, x: &str, scope: Scope, esc: bool) {
    let (attrs, body): (Attrs, String) = match scope {
        Scope::MessageAttributes => (vec![(n.into(), "String".into(), v.into())], "{}".into()),
        Scope::MessageBody => (
            Vec::new(),
            format!("{{{}:{}}}", lit(n, false), lit(v, false)),
        ),
    };
    if n == "$or" {
        return; // a `$or` key holding objects is a disjunction, not a key
    }
    let key = lit(n, esc);
    let xl = lit(x, esc);
    let check = |pattern: String, want: bool| {
        let text = format!("{{{key}:[{pattern}]}}");
        if let Some(p) = parse(&text, scope) {
            assert_eq!(matches(&p, &attrs, &body), want, "{text} on {n:?} = {v:?}");
        }
    };
    check(xl.clone(), v == x);
    check(format!("{{\"anything-but\":{xl}}}"), v != x);
    check(format!("{{\"prefix\":{xl}}}"), v.starts_with(x));
    check(
        format!("{{\"anything-but\":{{\"prefix\":{xl}}}}}"),
        !v.starts_with(x),
    );
    check(format!("{{\"suffix\":{xl}}}"), v.ends_with(x));
    check(
        format!("{{\"anything-but\":{{\"suffix\":{xl}}}}}"),
        !v.ends_with(x),
    );
    // `*` and `\` escaped: the pattern is X itself; with a star after it, X as a prefix.
    let literal = x.replace('\\', "\\\\").replace('*', "\\*");
    check(format!("{{\"wildcard\":{}}}", lit(&literal, esc)), v == x);
    check(
        format!("{{\"wildcard\":{}}}", lit(&format!("{literal}*"), esc)),
        v.starts_with(x),
    );
    check("{\"exists\":true}".into(), true);
    check("{\"exists\":false}".into(), false);
    // A value always matches itself ignoring case (word-final `Σ` once did not: fixed).
    if v == x {
        check(format!("{{\"equals-ignore-case\":{xl}}}"), true);
    }
    let absent = format!(
        "{{{}:[{{\"exists\":false}}]}}",
        lit(&format!("{n}-absent"), esc)
    );
    if let Some(p) = parse(&absent, scope) {
        assert!(matches(&p, &attrs, &body), "{absent}");
    }

    // Numbers: a Number attribute against numeric ranges written with the probe as operand.
    if scope == Scope::MessageAttributes
        && is_json_number(x)
        && v.trim().parse::<f64>().is_ok_and(f64::is_finite)
    {
        let attrs: Attrs = vec![(n.into(), "Number".into(), v.into())];
        let range = |op: &str| {
            parse(
                &format!("{{{key}:[{{\"numeric\":[\"{op}\",{x}]}}]}}"),
                scope,
            )
        };
        if let (Some(gt), Some(le)) = (range(">"), range("<=")) {
            assert_ne!(
                matches(&gt, &attrs, "{}"),
                matches(&le, &attrs, "{}"),
                "> / <= {x} on {v}"
            );
            if let (Some(eq), Some(ge)) = (range("="), range(">=")) {
                assert_eq!(
                    matches(&eq, &attrs, "{}"),
                    matches(&ge, &attrs, "{}") && matches(&le, &attrs, "{}"),
                    "= {x} on {v}"
                );
            }
        }
    }
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`: safe to paste into a policy.
fn is_json_number(x: &str) -> bool {
    let b = x.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    if b.get(i) == Some(&b'0') {
        i += 1;
    } else if !digits(&mut i) {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

fuzz_target!(|data: &[u8]| {
    let [flags, rest @ ..] = data else { return };
    let scope = if flags & 1 == 1 {
        Scope::MessageBody
    } else {
        Scope::MessageAttributes
    };
    let esc = flags & 2 == 2;
    let text = String::from_utf8_lossy(rest);
    let mut parts = text.split('\0');
    let p1 = parts.next().unwrap_or("");
    let p2 = parts.next().unwrap_or("");
    let body = parts.next().unwrap_or("");
    let probe = parts.next().unwrap_or("");
    let attrs: Attrs = parts
        .map(|a| {
            let mut f = a.splitn(3, '\u{1f}');
            let name = f.next().unwrap_or("").to_string();
            let ty = f.next().unwrap_or("String").to_string();
            let value = f.next().unwrap_or("").to_string();
            (name, ty, value)
        })
        .collect();

    compositions(p1, p2, scope, &attrs, body);

    let (n, v) = attrs
        .first()
        .map(|(n, _, v)| (n.as_str(), v.as_str()))
        .unwrap_or(("k", body));
    probes(n, v, probe, scope, esc);
});
