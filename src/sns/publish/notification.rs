//! The JSON a subscriber reads when delivery is not raw: AWS's notification document, in
//! AWS's key order, signed as AWS signs it (`signing`): `Signature` over the canonical
//! string of `Message`, `MessageId`, `Subject`, `Timestamp`, `TopicArn` and `Type`,
//! `SigningCertURL` where the endpoint serves the certificate, and `UnsubscribeURL`, a GET
//! of which unsubscribes. A FIFO topic's notification carries no `SequenceNumber`: none
//! exists at publish time.

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

/// What a signed notification adds: the signature and the two URLs.
pub struct Signed<'a> {
    pub signature: &'a str,
    pub signing_cert_url: &'a str,
    pub unsubscribe_url: &'a str,
}

fn q(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

impl Notification<'_> {
    /// The canonical string its `Signature` is made over.
    pub fn canonical(&self) -> String {
        crate::sns::signing::canonical(&[
            ("Message", Some(self.message)),
            ("MessageId", Some(self.message_id)),
            ("Subject", self.subject),
            ("Timestamp", Some(&iso8601_ms(self.now_ms))),
            ("TopicArn", Some(self.topic_arn)),
            ("Type", Some("Notification")),
        ])
    }

    /// The document as text, keys in the order AWS writes them.
    pub fn to_json(&self, signed: Option<&Signed>) -> String {
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
        if let Some(s) = signed {
            for (name, value) in [
                ("Signature", s.signature),
                ("SigningCertURL", s.signing_cert_url),
                ("UnsubscribeURL", s.unsubscribe_url),
            ] {
                out.push_str(",\"");
                out.push_str(name);
                out.push_str("\":");
                out.push_str(&q(value));
            }
        }
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

pub use crate::calendar::iso8601_ms;

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
        let text = n.to_json(None);
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
        let signed = Signed {
            signature: "c2ln",
            signing_cert_url: "http://h/SimpleNotificationService-x.pem",
            unsubscribe_url: "http://h/?Action=Unsubscribe&SubscriptionArn=a:b",
        };
        let v: Value = serde_json::from_str(&n.to_json(Some(&signed))).unwrap();
        assert_eq!(v["Subject"], "s");
        assert!(v.get("MessageAttributes").is_none());
        assert_eq!(v["Signature"], "c2ln");
        assert_eq!(v["SigningCertURL"], signed.signing_cert_url);
        assert_eq!(v["UnsubscribeURL"], signed.unsubscribe_url);
        assert_eq!(
            n.canonical(),
            "Message\nhi\n\nMessageId\nid\nSubject\ns\nTimestamp\n1970-01-01T00:00:00.000Z\nTopicArn\narn\nType\nNotification\n"
        );
    }
}
