//! The payload envelope: how an SQS message (a string body plus attributes) is stored as
//! a Queen JSON payload, and how any stored payload is served back to an SQS receiver.
//!
//! `{"b": body, "a": {name: {"t": DataType, "v": value}}, "s": {...}, "m": original id}`:
//! `b` always, `a`/`s` only when non-empty, `m` only on a redriven copy. Binary values
//! stay the client's base64 text.

use serde_json::{Map, Value};

use super::attrs::{base_type, decode_base64, AttrData, AttrValue, Attrs, BaseType};

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Envelope {
    pub body: String,
    pub attrs: Attrs,
    /// Message system attributes (AWSTraceHeader).
    pub system: Attrs,
    /// The MessageId the message was first sent under, on a redriven copy.
    pub original_id: Option<String>,
}

impl Envelope {
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("b".into(), Value::String(self.body.clone()));
        if !self.attrs.is_empty() {
            m.insert("a".into(), attrs_to_json(&self.attrs));
        }
        if !self.system.is_empty() {
            m.insert("s".into(), attrs_to_json(&self.system));
        }
        if let Some(id) = &self.original_id {
            m.insert("m".into(), Value::String(id.clone()));
        }
        Value::Object(m)
    }

    /// Strict recognition: an object whose keys are a subset of `b`, `a`, `s`, `m`, with
    /// `b` a string, every attribute well formed and every binary value decodable.
    /// Anything else is not ours and yields None.
    pub fn from_payload(v: &Value) -> Option<Envelope> {
        let obj = v.as_object()?;
        if !obj
            .keys()
            .all(|k| matches!(k.as_str(), "b" | "a" | "s" | "m"))
        {
            return None;
        }
        let body = obj.get("b")?.as_str()?.to_string();
        let attrs = match obj.get("a") {
            None => Attrs::new(),
            Some(a) => attrs_from_json(a)?,
        };
        let system = match obj.get("s") {
            None => Attrs::new(),
            Some(s) => attrs_from_json(s)?,
        };
        let original_id = match obj.get("m") {
            None => None,
            Some(m) => Some(m.as_str()?.to_string()),
        };
        Some(Envelope {
            body,
            attrs,
            system,
            original_id,
        })
    }

    /// What a receiver gets for any stored payload: the envelope when it is one, otherwise
    /// the payload served as itself (body = its JSON text, no attributes).
    pub fn from_stored(v: &Value) -> Envelope {
        Envelope::from_payload(v).unwrap_or_else(|| Envelope {
            body: v.to_string(),
            ..Envelope::default()
        })
    }
}

fn attrs_to_json(a: &Attrs) -> Value {
    let mut m = Map::new();
    for (name, v) in a {
        let text = match &v.value {
            AttrData::String(s) | AttrData::Binary(s) => s.clone(),
        };
        let mut o = Map::new();
        o.insert("t".into(), Value::String(v.data_type.clone()));
        o.insert("v".into(), Value::String(text));
        m.insert(name.clone(), Value::Object(o));
    }
    Value::Object(m)
}

fn attrs_from_json(v: &Value) -> Option<Attrs> {
    let mut out = Attrs::new();
    for (name, a) in v.as_object()? {
        let o = a.as_object()?;
        if o.len() != 2 {
            return None;
        }
        let data_type = o.get("t")?.as_str()?;
        let text = o.get("v")?.as_str()?;
        let value = match base_type(data_type)? {
            BaseType::Binary => {
                decode_base64(text)?;
                AttrData::Binary(text.to_string())
            }
            BaseType::String | BaseType::Number => AttrData::String(text.to_string()),
        };
        out.insert(
            name.clone(),
            AttrValue {
                data_type: data_type.to_string(),
                value,
            },
        );
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sv(t: &str, v: &str) -> AttrValue {
        AttrValue {
            data_type: t.into(),
            value: AttrData::String(v.into()),
        }
    }

    #[test]
    fn minimal_envelope_is_just_b() {
        let e = Envelope {
            body: "  hello\r\n".into(),
            ..Default::default()
        };
        assert_eq!(e.to_json(), json!({"b": "  hello\r\n"}));
        assert_eq!(Envelope::from_payload(&e.to_json()), Some(e));
    }

    #[test]
    fn full_envelope_round_trips_and_keeps_base64() {
        let mut attrs = Attrs::new();
        attrs.insert("event".into(), sv("String", "order.created"));
        attrs.insert(
            "blob".into(),
            AttrValue {
                data_type: "Binary.gz".into(),
                value: AttrData::Binary("AAEC/w==".into()),
            },
        );
        let mut system = Attrs::new();
        system.insert("AWSTraceHeader".into(), sv("String", "Root=1-abc"));
        let e = Envelope {
            body: "{\"x\":1}".into(),
            attrs,
            system,
            original_id: Some("orig-id".into()),
        };
        let j = e.to_json();
        assert_eq!(
            j,
            json!({
                "b": "{\"x\":1}",
                "a": {"blob": {"t": "Binary.gz", "v": "AAEC/w=="}, "event": {"t": "String", "v": "order.created"}},
                "s": {"AWSTraceHeader": {"t": "String", "v": "Root=1-abc"}},
                "m": "orig-id"
            })
        );
        assert_eq!(Envelope::from_payload(&j), Some(e.clone()));
        assert_eq!(Envelope::from_stored(&j), e);
    }

    #[test]
    fn recognition_is_strict() {
        let not_ours = [
            json!("just a string"),
            json!(42),
            json!(null),
            json!([{"b": "x"}]),
            json!({}),
            json!({"a": {}}),
            json!({"b": 5}),
            json!({"b": "x", "extra": 1}),
            json!({"b": "x", "a": []}),
            json!({"b": "x", "a": {"n": {"t": "String"}}}),
            json!({"b": "x", "a": {"n": {"t": "String", "v": 1}}}),
            json!({"b": "x", "a": {"n": {"t": "Text", "v": "v"}}}),
            json!({"b": "x", "a": {"n": {"t": "String", "v": "v", "z": 1}}}),
            json!({"b": "x", "a": {"n": {"t": "Binary", "v": "%%%"}}}),
            json!({"b": "x", "s": {"n": "flat"}}),
            json!({"b": "x", "m": 7}),
        ];
        for v in not_ours {
            assert_eq!(Envelope::from_payload(&v), None, "{v}");
        }
    }

    #[test]
    fn foreign_payloads_are_served_as_their_json_text() {
        for v in [
            json!({"order": 1, "items": [1, 2]}),
            json!("hello"),
            json!(3.5),
            json!({"b": 5}),
        ] {
            let e = Envelope::from_stored(&v);
            assert_eq!(e.body, v.to_string());
            assert!(e.attrs.is_empty() && e.system.is_empty() && e.original_id.is_none());
            // The served text parses back to the stored value.
            assert_eq!(serde_json::from_str::<Value>(&e.body).unwrap(), v);
        }
    }
}
