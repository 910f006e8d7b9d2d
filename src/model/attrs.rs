//! Message attributes: the in-memory shape, and conversion from/to the JSON protocol's
//! `MessageAttributes` map with SQS's validation rules.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use super::body::allowed_char;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrValue {
    /// `String`, `Number` or `Binary`, optionally followed by `.label`.
    pub data_type: String,
    pub value: AttrData,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrData {
    String(String),
    /// Kept as the client's base64 text; decoded only to hash or validate.
    Binary(String),
}

/// Name-ordered, which is also the order the attribute MD5 needs.
pub type Attrs = BTreeMap<String, AttrValue>;

pub const MAX_ATTRIBUTES: usize = 10;
const MAX_NAME_CHARS: usize = 256;
const MAX_TYPE_CHARS: usize = 256;
const NUMBER_MAX_DIGITS: usize = 38;
/// Decimal exponent range of a non-zero Number in scientific form (d.ddd × 10^e),
/// so magnitudes from 10^-128 up to (not including) 10^126.
const NUMBER_MIN_EXP: i64 = -128;
const NUMBER_MAX_EXP: i64 = 125;

/// Standard alphabet; padding optional on input, so an unpadded value is not refused.
const B64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

pub(crate) fn decode_base64(s: &str) -> Option<Vec<u8>> {
    B64.decode(s.as_bytes()).ok()
}

/// The three base types an attribute may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BaseType {
    String,
    Number,
    Binary,
}

/// The base of `String`, `Number.float` etc.; None for anything else.
pub(crate) fn base_type(data_type: &str) -> Option<BaseType> {
    let (base, label) = match data_type.split_once('.') {
        Some((b, l)) => (b, Some(l)),
        None => (data_type, None),
    };
    // A custom label is any non-empty text without control characters (SNS accepts
    // `String.  prefixed.`, as recorded against it).
    if let Some(l) = label {
        if l.is_empty() || l.chars().any(char::is_control) {
            return None;
        }
    }
    match base {
        "String" => Some(BaseType::String),
        "Number" => Some(BaseType::Number),
        "Binary" => Some(BaseType::Binary),
        _ => None,
    }
}

/// Why a `MessageAttributes` map was refused. SQS and SNS refuse the same things in
/// different words: `Display` gives SQS's, the SNS facade renders its own from the variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrFault {
    NotAMap,
    TooMany(usize),
    EmptyName,
    NameTooLong(String),
    /// The first character outside letters, digits, `_`, `-` and `.`.
    NameCharacter(String, char),
    NameReserved(String),
    NameStartsWithPeriod(String),
    NameEndsWithPeriod(String),
    NameSuccessivePeriods(String),
    NotAStructure(String),
    /// No `DataType`, or an empty one.
    NoDataType(String),
    DataTypeNotText(String),
    /// A `DataType` whose base is not String, Number or Binary (or too long).
    UnknownDataType(String),
    ListValues {
        name: String,
        list: &'static str,
    },
    /// No value, or an empty one, of the field the type asks for.
    EmptyValue {
        name: String,
        data_type: String,
    },
    /// The value is in the other field than the type's: `want` names the right one.
    WrongField {
        name: String,
        data_type: String,
        want: ValueField,
    },
    ValueNotText {
        name: String,
        field: ValueField,
    },
    InvalidCharacters(String),
    InvalidNumber {
        name: String,
        data_type: String,
        value: String,
    },
    InvalidBase64(String),
}

/// The field an attribute's value is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueField {
    String,
    Binary,
}

impl ValueField {
    /// SNS's word for it (`'String'`, `'Binary'`).
    pub fn short(self) -> &'static str {
        match self {
            ValueField::String => "String",
            ValueField::Binary => "Binary",
        }
    }

    /// The API member's name.
    pub fn member(self) -> &'static str {
        match self {
            ValueField::String => "StringValue",
            ValueField::Binary => "BinaryValue",
        }
    }
}

impl std::fmt::Display for AttrFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use AttrFault::*;
        match self {
            NotAMap => write!(f, "MessageAttributes must be a map of attribute name to value."),
            TooMany(n) => write!(
                f,
                "Number of message attributes [{n}] exceeds the allowed maximum [{MAX_ATTRIBUTES}]."
            ),
            EmptyName => write!(f, "The message attribute name must not be empty."),
            NameTooLong(name) => write!(
                f,
                "Message attribute name '{}...' exceeds the maximum length of {MAX_NAME_CHARS} characters.",
                name.chars().take(32).collect::<String>()
            ),
            NameCharacter(name, _) => write!(
                f,
                "The message attribute name '{name}' is invalid. Attribute name can contain A-Z, a-z, 0-9, underscore (_), hyphen (-), and period (.) characters."
            ),
            NameReserved(name) => write!(
                f,
                "The message attribute name '{name}' is reserved: names may not start with 'AWS.' or 'Amazon.'."
            ),
            NameStartsWithPeriod(name) | NameEndsWithPeriod(name) | NameSuccessivePeriods(name) => write!(
                f,
                "The message attribute name '{name}' is invalid. Attribute name cannot start or end with a period (.), or contain successive periods."
            ),
            NotAStructure(name) => write!(
                f,
                "The message attribute '{name}' must be a structure with a DataType and a value."
            ),
            NoDataType(name) => write!(
                f,
                "The message attribute '{name}' must contain non-empty message attribute type."
            ),
            DataTypeNotText(name) => {
                write!(f, "The message attribute '{name}' has a DataType that is not a string.")
            }
            UnknownDataType(name) => write!(
                f,
                "The message attribute '{name}' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."
            ),
            ListValues { name, list } => write!(
                f,
                "The message attribute '{name}' uses {list}, which is not supported."
            ),
            EmptyValue { name, data_type } => write!(
                f,
                "Message (user) attribute '{name}' must contain a non-empty value of type '{data_type}'."
            ),
            WrongField { name, data_type, want } => write!(
                f,
                "The message attribute '{name}' with type '{data_type}' must use field '{}'.",
                want.member()
            ),
            ValueNotText { name, field } => write!(
                f,
                "The message attribute '{name}' has a {} that is not a string.",
                field.member()
            ),
            InvalidCharacters(name) => write!(
                f,
                "Message attribute '{name}' contains invalid characters. Valid characters: #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF."
            ),
            InvalidNumber { name, data_type, value } => write!(
                f,
                "Value {value} for message attribute '{name}' of type '{data_type}' is not a valid number: up to 38 digits of precision, between 10^-128 and 10^+126."
            ),
            InvalidBase64(name) => write!(
                f,
                "The message attribute '{name}' has a BinaryValue that is not valid base64."
            ),
        }
    }
}

/// Reads and validates a JSON-protocol `MessageAttributes` map. `null` (or absent) is empty.
pub fn attrs_from_api(v: &Value) -> Result<Attrs, AttrFault> {
    let map = match v {
        Value::Null => return Ok(Attrs::new()),
        Value::Object(m) => m,
        _ => return Err(AttrFault::NotAMap),
    };
    if map.len() > MAX_ATTRIBUTES {
        return Err(AttrFault::TooMany(map.len()));
    }
    let mut out = Attrs::new();
    for (name, value) in map {
        check_name(name)?;
        out.insert(name.clone(), attr_from_api(name, value)?);
    }
    Ok(out)
}

fn check_name(name: &str) -> Result<(), AttrFault> {
    let n = name.chars().count();
    let owned = || name.to_string();
    if n == 0 {
        return Err(AttrFault::EmptyName);
    }
    if n > MAX_NAME_CHARS {
        return Err(AttrFault::NameTooLong(owned()));
    }
    // Letters and digits of any script (SQS accepts `attr.1øßä`, as recorded against it).
    let allowed = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
    if let Some(bad) = name.chars().find(|&c| !allowed(c)) {
        return Err(AttrFault::NameCharacter(owned(), bad));
    }
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("aws.") || lower.starts_with("amazon.") {
        return Err(AttrFault::NameReserved(owned()));
    }
    if name.starts_with('.') {
        return Err(AttrFault::NameStartsWithPeriod(owned()));
    }
    if name.ends_with('.') {
        return Err(AttrFault::NameEndsWithPeriod(owned()));
    }
    if name.contains("..") {
        return Err(AttrFault::NameSuccessivePeriods(owned()));
    }
    Ok(())
}

fn attr_from_api(name: &str, v: &Value) -> Result<AttrValue, AttrFault> {
    let owned = || name.to_string();
    let obj = v
        .as_object()
        .ok_or_else(|| AttrFault::NotAStructure(owned()))?;
    let data_type = match obj.get("DataType") {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            return Err(AttrFault::NoDataType(owned()))
        }
        Some(_) => return Err(AttrFault::DataTypeNotText(owned())),
    };
    let base = match base_type(data_type) {
        Some(b) if data_type.chars().count() <= MAX_TYPE_CHARS => b,
        _ => return Err(AttrFault::UnknownDataType(owned())),
    };
    // The list members are reserved by AWS and not implemented there either.
    for list in ["StringListValues", "BinaryListValues"] {
        if let Some(l) = obj.get(list) {
            if !(l.is_null() || l.as_array().is_some_and(|a| a.is_empty())) {
                return Err(AttrFault::ListValues {
                    name: owned(),
                    list,
                });
            }
        }
    }
    let (field, other) = match base {
        BaseType::String | BaseType::Number => (ValueField::String, ValueField::Binary),
        BaseType::Binary => (ValueField::Binary, ValueField::String),
    };
    if non_null(obj, other.member()).is_some() {
        return Err(AttrFault::WrongField {
            name: owned(),
            data_type: data_type.to_string(),
            want: field,
        });
    }
    let s = match non_null(obj, field.member()) {
        Some(Value::String(s)) if !s.is_empty() => s,
        Some(Value::String(_)) | None => {
            return Err(AttrFault::EmptyValue {
                name: owned(),
                data_type: data_type.to_string(),
            })
        }
        Some(_) => {
            return Err(AttrFault::ValueNotText {
                name: owned(),
                field,
            })
        }
    };
    let value = match base {
        BaseType::String | BaseType::Number => {
            if !s.chars().all(allowed_char) {
                return Err(AttrFault::InvalidCharacters(owned()));
            }
            if base == BaseType::Number && !valid_number(s) {
                return Err(AttrFault::InvalidNumber {
                    name: owned(),
                    data_type: data_type.to_string(),
                    value: s.clone(),
                });
            }
            AttrData::String(s.clone())
        }
        BaseType::Binary => {
            if decode_base64(s).is_none() {
                return Err(AttrFault::InvalidBase64(owned()));
            }
            AttrData::Binary(s.clone())
        }
    };
    Ok(AttrValue {
        data_type: data_type.to_string(),
        value,
    })
}

fn non_null<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

/// SQS's Number: decimal with optional sign, fraction and exponent; at most 38
/// significant digits; a non-zero magnitude from 10^-128 up to 10^126.
pub(crate) fn valid_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = &b[int_start..i];
    let mut frac_digits: &[u8] = &[];
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = &b[f..i];
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return false;
    }
    let mut exp: i64 = 0;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let neg = i < b.len() && b[i] == b'-';
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let e = i;
        while i < b.len() && b[i].is_ascii_digit() {
            // Saturate: anything this large is out of range anyway.
            exp = (exp * 10 + i64::from(b[i] - b'0')).min(1_000_000);
            i += 1;
        }
        if e == i {
            return false;
        }
        if neg {
            exp = -exp;
        }
    }
    if i != b.len() {
        return false;
    }
    let digits: Vec<u8> = int_digits.iter().chain(frac_digits).copied().collect();
    let Some(first) = digits.iter().position(|&d| d != b'0') else {
        return true; // zero
    };
    let last = digits.iter().rposition(|&d| d != b'0').unwrap_or(first);
    if last - first + 1 > NUMBER_MAX_DIGITS {
        return false;
    }
    // Exponent of the leading significant digit in scientific notation.
    let sci = int_digits.len() as i64 - 1 - first as i64 + exp;
    (NUMBER_MIN_EXP..=NUMBER_MAX_EXP).contains(&sci)
}

/// Writes attributes in the JSON protocol's `MessageAttributes` shape.
pub fn attrs_to_api(a: &Attrs) -> Value {
    let mut m = Map::new();
    for (name, v) in a {
        let mut o = Map::new();
        o.insert("DataType".into(), Value::String(v.data_type.clone()));
        match &v.value {
            AttrData::String(s) => o.insert("StringValue".into(), Value::String(s.clone())),
            AttrData::Binary(b) => o.insert("BinaryValue".into(), Value::String(b.clone())),
        };
        m.insert(name.clone(), Value::Object(o));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(name: &str, v: Value) -> Result<Attrs, String> {
        let mut m = Map::new();
        m.insert(name.into(), v);
        attrs_from_api(&Value::Object(m)).map_err(|f| f.to_string())
    }

    #[test]
    fn reads_every_kind_and_writes_it_back() {
        let api = json!({
            "s": {"DataType": "String", "StringValue": "hi"},
            "n": {"DataType": "Number.int", "StringValue": "-12.5e3"},
            "b": {"DataType": "Binary", "BinaryValue": "AAEC/w=="},
            "c": {"DataType": "String.custom", "StringValue": "x"}
        });
        let a = attrs_from_api(&api).unwrap();
        assert_eq!(a.len(), 4);
        assert_eq!(a["b"].value, AttrData::Binary("AAEC/w==".into()));
        assert_eq!(a["n"].data_type, "Number.int");
        assert_eq!(attrs_to_api(&a), api);
    }

    #[test]
    fn null_is_empty_and_non_maps_are_refused() {
        assert!(attrs_from_api(&Value::Null).unwrap().is_empty());
        assert!(attrs_from_api(&json!([])).is_err());
        assert!(attrs_from_api(&json!("x")).is_err());
    }

    #[test]
    fn at_most_ten() {
        let mut m = Map::new();
        for i in 0..10 {
            m.insert(
                format!("a{i}"),
                json!({"DataType": "String", "StringValue": "v"}),
            );
        }
        assert!(attrs_from_api(&Value::Object(m.clone())).is_ok());
        m.insert(
            "a10".into(),
            json!({"DataType": "String", "StringValue": "v"}),
        );
        let e = attrs_from_api(&Value::Object(m)).unwrap_err().to_string();
        assert!(e.contains("[11]") && e.contains("[10]"), "{e}");
    }

    #[test]
    fn name_rules() {
        let v = json!({"DataType": "String", "StringValue": "v"});
        for ok in [
            "a",
            "A-b_c.d",
            "x".repeat(256).as_str(),
            "AWSish",
            "Amazonia",
            "aws-x",
            "ünï",
            "attr.1øßä",
        ] {
            assert!(one(ok, v.clone()).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "has space",
            "a/b",
            ".lead",
            "trail.",
            "two..dots",
            "AWS.x",
            "aws.x",
            "Amazon.y",
            "AMAZON.y",
            "x".repeat(257).as_str(),
        ] {
            assert!(one(bad, v.clone()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn type_and_value_rules() {
        let bad = [
            json!({"DataType": "string", "StringValue": "v"}),
            json!({"DataType": "Text", "StringValue": "v"}),
            json!({"DataType": "String.", "StringValue": "v"}),
            json!({"DataType": "", "StringValue": "v"}),
            json!({"StringValue": "v"}),
            json!({"DataType": "String"}),
            json!({"DataType": "String", "StringValue": ""}),
            json!({"DataType": "String", "StringValue": 5}),
            json!({"DataType": "String", "BinaryValue": "AA=="}),
            json!({"DataType": "String", "StringValue": "bad\u{1}char"}),
            json!({"DataType": "Binary", "StringValue": "v"}),
            json!({"DataType": "Binary", "BinaryValue": "not base64!"}),
            json!({"DataType": "Binary", "BinaryValue": ""}),
            json!({"DataType": "Number", "StringValue": "abc"}),
            json!({"DataType": "String", "StringValue": "v", "StringListValues": ["x"]}),
            json!("String"),
        ];
        for v in bad {
            assert!(one("n", v.clone()).is_err(), "{v}");
        }
        let ok = [
            json!({"DataType": "Binary.png", "BinaryValue": "AAEC"}),
            json!({"DataType": "String", "StringValue": "v", "StringListValues": []}),
            json!({"DataType": "String", "StringValue": "v", "BinaryValue": null}),
        ];
        for v in ok {
            assert!(one("n", v.clone()).is_ok(), "{v}");
        }
    }

    #[test]
    fn number_rules() {
        for ok in [
            "0",
            "-0",
            "+7",
            "42",
            "3.14",
            ".5",
            "5.",
            "1e10",
            "1E-5",
            "-1.5e+3",
            "00012",
            "12345678901234567890123456789012345678", // 38 digits
            "1234567890123456789012345678901234567800000", // trailing zeros are not precision
            "9.9e125",
            "1e-128",
            "0.000",
        ] {
            assert!(valid_number(ok), "{ok}");
        }
        for bad in [
            "",
            "-",
            ".",
            "e5",
            "1e",
            "1e+",
            "1.2.3",
            "12a",
            " 1",
            "1 ",
            "0x10",
            "NaN",
            "Infinity",
            "123456789012345678901234567890123456789", // 39 digits
            "1e126",
            "-1e126",
            "1e-129",
            "1e99999999999999999999",
        ] {
            assert!(!valid_number(bad), "{bad}");
        }
    }

    #[test]
    fn data_type_bases() {
        assert_eq!(base_type("Number.float"), Some(BaseType::Number));
        assert_eq!(base_type("Binary"), Some(BaseType::Binary));
        assert_eq!(base_type("StringX"), None);
        assert_eq!(base_type("String.  prefixed."), Some(BaseType::String));
        assert_eq!(base_type("String.a\u{1}b"), None);
    }
}
