//! One match expression of a policy (an element of a key's array) and how it tests a value.

use super::cidr::Cidr;
use super::json::Json;
use super::numeric::NumericRange;
use super::wildcard::Wildcard;

/// A value found in a message: a body leaf, an attribute, or a `String.Array` element.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Val<'a> {
    Str(&'a str),
    Num(f64),
    Bool(bool),
    Null,
}

/// An exact value written in a policy.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
}

impl Literal {
    /// Equal in type and value; numbers compare as numbers (`5` equals `5.0`).
    fn equals(&self, value: Val<'_>) -> bool {
        match (self, value) {
            (Literal::Str(a), Val::Str(b)) => a == b,
            (Literal::Num(a), Val::Num(b)) => *a == b,
            (Literal::Bool(a), Val::Bool(b)) => *a == b,
            (Literal::Null, Val::Null) => true,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    Exact(Literal),
    Prefix(String),
    Suffix(String),
    /// Held lower-cased.
    EqualsIgnoreCase(String),
    Wildcard(Wildcard),
    AnythingBut(AnythingBut),
    Numeric(NumericRange),
    Cidr(Cidr),
    /// `exists: true` matches any value; `exists: false` matches none and is answered by
    /// the caller when the key has no value at all.
    Exists(bool),
}

/// The forms of `anything-but`. Each matches a value that is present and is not excluded;
/// the string forms exclude only strings, so a number or boolean is never excluded by them.
#[derive(Debug, Clone, PartialEq)]
pub enum AnythingBut {
    Values(Vec<Literal>),
    Prefix(String),
    Suffix(String),
    Wildcard(Wildcard),
}

impl Pattern {
    pub fn matches(&self, value: Val<'_>) -> bool {
        match self {
            Pattern::Exact(literal) => literal.equals(value),
            Pattern::Prefix(p) => as_str(value).is_some_and(|s| s.starts_with(p.as_str())),
            Pattern::Suffix(p) => as_str(value).is_some_and(|s| s.ends_with(p.as_str())),
            Pattern::EqualsIgnoreCase(lower) => as_str(value)
                .is_some_and(|s| s.chars().flat_map(char::to_lowercase).eq(lower.chars())),
            Pattern::Wildcard(w) => as_str(value).is_some_and(|s| w.matches(s)),
            Pattern::AnythingBut(but) => !but.excludes(value),
            Pattern::Numeric(range) => match value {
                Val::Num(n) => range.matches(n),
                _ => false,
            },
            Pattern::Cidr(block) => as_str(value).is_some_and(|s| block.matches(s)),
            Pattern::Exists(wanted) => *wanted,
        }
    }

    /// Whether this is `{"exists": false}`, which matches a key with no value.
    pub fn wants_absent(&self) -> bool {
        matches!(self, Pattern::Exists(false))
    }
}

impl AnythingBut {
    fn excludes(&self, value: Val<'_>) -> bool {
        match self {
            AnythingBut::Values(values) => values.iter().any(|v| v.equals(value)),
            AnythingBut::Prefix(p) => as_str(value).is_some_and(|s| s.starts_with(p.as_str())),
            AnythingBut::Suffix(p) => as_str(value).is_some_and(|s| s.ends_with(p.as_str())),
            AnythingBut::Wildcard(w) => as_str(value).is_some_and(|s| w.matches(s)),
        }
    }
}

fn as_str(value: Val<'_>) -> Option<&str> {
    match value {
        Val::Str(s) => Some(s),
        _ => None,
    }
}

/// Compiles one element of a key's array. The error is the sentence without the AWS prefix.
pub fn compile(element: &Json) -> Result<Pattern, String> {
    match element {
        Json::Null => Ok(Pattern::Exact(Literal::Null)),
        Json::Bool(b) => Ok(Pattern::Exact(Literal::Bool(*b))),
        Json::Num(n, _) => Ok(Pattern::Exact(Literal::Num(*n))),
        Json::Str(s) => Ok(Pattern::Exact(Literal::Str(s.clone()))),
        Json::Arr(_) => Err("Match value must be String, number, true, false, or null".to_string()),
        Json::Obj(members) => {
            let (op, arg) = single_member(members)?;
            match op {
                "prefix" => Ok(Pattern::Prefix(string_arg(op, arg)?.to_string())),
                "suffix" => Ok(Pattern::Suffix(string_arg(op, arg)?.to_string())),
                // Lower-cased a character at a time, as values are: `str::to_lowercase`
                // turns a word-final `Σ` into `ς`, so `ΑΣ` did not match itself.
                "equals-ignore-case" => Ok(Pattern::EqualsIgnoreCase(
                    string_arg(op, arg)?
                        .chars()
                        .flat_map(char::to_lowercase)
                        .collect(),
                )),
                "wildcard" => Ok(Pattern::Wildcard(Wildcard::compile(string_arg(op, arg)?)?)),
                "anything-but" => anything_but(arg).map(Pattern::AnythingBut),
                "numeric" => match arg {
                    Json::Arr(terms) => NumericRange::compile(terms).map(Pattern::Numeric),
                    _ => Err("Value of numeric must be an array.".to_string()),
                },
                "exists" => match arg {
                    Json::Bool(b) => Ok(Pattern::Exists(*b)),
                    _ => Err("exists match pattern must be either true or false.".to_string()),
                },
                // AWS answers a non-string CIDR with the prefix wording.
                "cidr" => Cidr::compile(string_arg("prefix", arg)?).map(Pattern::Cidr),
                other => Err(format!("Unrecognized match type {other}")),
            }
        }
    }
}

fn single_member(members: &[(String, Json)]) -> Result<(&str, &Json), String> {
    match members {
        [] => Err("Match expression name not found".to_string()),
        [(op, arg)] => Ok((op.as_str(), arg)),
        _ => Err("Only one key allowed in match expression".to_string()),
    }
}

fn string_arg<'a>(op: &str, arg: &'a Json) -> Result<&'a str, String> {
    match arg {
        Json::Str(s) => Ok(s),
        _ => Err(format!("{op} match pattern must be a string")),
    }
}

fn anything_but(arg: &Json) -> Result<AnythingBut, String> {
    match arg {
        Json::Str(s) => Ok(AnythingBut::Values(vec![Literal::Str(s.clone())])),
        Json::Num(n, _) => Ok(AnythingBut::Values(vec![Literal::Num(*n)])),
        Json::Arr(items) => {
            if items.is_empty() {
                return Err("Empty arrays are not allowed".to_string());
            }
            items
                .iter()
                .map(|item| match item {
                    Json::Str(s) => Ok(Literal::Str(s.clone())),
                    Json::Num(n, _) => Ok(Literal::Num(*n)),
                    _ => Err(
                        "Inside anything but list, start|null|boolean is not supported."
                            .to_string(),
                    ),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(AnythingBut::Values)
        }
        Json::Obj(members) => {
            let (op, inner) = single_member(members)?;
            match op {
                "prefix" => Ok(AnythingBut::Prefix(string_arg(op, inner)?.to_string())),
                "suffix" => Ok(AnythingBut::Suffix(string_arg(op, inner)?.to_string())),
                "wildcard" => Ok(AnythingBut::Wildcard(Wildcard::compile(string_arg(
                    op, inner,
                )?)?)),
                other => Err(format!("Unsupported anything-but pattern: {other}")),
            }
        }
        Json::Bool(_) | Json::Null => {
            Err("Value of anything-but must be an array or single string/number value.".to_string())
        }
    }
}
