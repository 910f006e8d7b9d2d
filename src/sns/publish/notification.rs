//! The JSON a subscriber reads when delivery is not raw: AWS's notification document, in
//! AWS's key order, minus `Signature`, `SigningCertURL` and `UnsubscribeURL` (a signature
//! nothing can verify and two URLs that cannot work are worse present than absent; see
//! the contract's divergences). `SignatureVersion` stays: clients compare it as a string.
//! A FIFO topic's notification carries no `SequenceNumber`: none exists at publish time.

use crate::model::{AttrData, Attrs};
use serde_json::Value;

pub struct Notification<'a> {
    pub message_id: &'a str,
    pub topic_arn: &'a str,
    pub subject: Option<&'a str>,
    pub message: &'a str,
    pub now_ms: i64,
    pub signature_version: &'a str,
    pub attrs: &'a Attrs,
}

fn q(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

impl Notification<'_> {
    /// The document as text, keys in the order AWS writes them.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(self.message.len() + 256);
        out.push_str("{\"Type\":\"Notification\",\"MessageId\":");
        out.push_str(&q(self.message_id));
        out.push_str(",\"TopicArn\":");
        out.push_str(&q(self.topic_arn));
        if let Some(s) = self.subject {
            out.push_str(",\"Subject\":");
            out.push_str(&q(s));
        }
        out.push_str(",\"Message\":");
        out.push_str(&q(self.message));
        out.push_str(",\"Timestamp\":");
        out.push_str(&q(&iso8601_ms(self.now_ms)));
        out.push_str(",\"SignatureVersion\":");
        out.push_str(&q(self.signature_version));
        if !self.attrs.is_empty() {
            out.push_str(",\"MessageAttributes\":{");
            for (i, (name, a)) in self.attrs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let value = match &a.value {
                    AttrData::String(s) | AttrData::Binary(s) => s,
                };
                out.push_str(&q(name));
                out.push_str(":{\"Type\":");
                out.push_str(&q(&a.data_type));
                out.push_str(",\"Value\":");
                out.push_str(&q(value));
                out.push('}');
            }
            out.push('}');
        }
        out.push('}');
        out
    }
}

/// `2024-05-01T12:34:56.789Z`.
pub fn iso8601_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let milli = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AttrValue;

    #[test]
    fn timestamps() {
        assert_eq!(iso8601_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_ms(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601_ms(1_767_225_599_999), "2025-12-31T23:59:59.999Z");
    }

    #[test]
    fn document_order_and_optional_fields() {
        let mut attrs = Attrs::new();
        attrs.insert(
            "k".into(),
            AttrValue {
                data_type: "String".into(),
                value: AttrData::String("v\"1".into()),
            },
        );
        let n = Notification {
            message_id: "id",
            topic_arn: "arn",
            subject: None,
            message: "hi\n",
            now_ms: 0,
            signature_version: "1",
            attrs: &attrs,
        };
        let text = n.to_json();
        assert_eq!(
            text,
            r#"{"Type":"Notification","MessageId":"id","TopicArn":"arn","Message":"hi\n","Timestamp":"1970-01-01T00:00:00.000Z","SignatureVersion":"1","MessageAttributes":{"k":{"Type":"String","Value":"v\"1"}}}"#
        );
        let empty = Attrs::new();
        let n = Notification {
            subject: Some("s"),
            attrs: &empty,
            ..n
        };
        let v: Value = serde_json::from_str(&n.to_json()).unwrap();
        assert_eq!(v["Subject"], "s");
        assert!(v.get("MessageAttributes").is_none());
    }
}
