//! The JSON a subscriber reads when delivery is not raw: AWS's notification document, in
//! AWS's key order. A standard topic's is signed as AWS signs it (`signing`): `Signature`
//! over the canonical string of `Message`, `MessageId`, `Subject`, `Timestamp`, `TopicArn`
//! and `Type`, and `SigningCertURL` where the endpoint serves the certificate. A FIFO
//! topic's carries its `SequenceNumber` and no signature, as AWS writes it. Both carry
//! `UnsubscribeURL`, a GET of which unsubscribes.

use crate::model::{AttrData, Attrs};
use serde_json::Value;

pub struct Notification<'a> {
    pub message_id: &'a str,
    /// A FIFO topic's: the message's place in the topic.
    pub sequence_number: Option<&'a str>,
    pub topic_arn: &'a str,
    pub subject: Option<&'a str>,
    pub message: &'a str,
    pub now_ms: i64,
    /// A standard topic's; a FIFO topic's notifications are not signed (AWS writes none of
    /// `SignatureVersion`, `Signature` and `SigningCertURL` there).
    pub signature_version: Option<&'a str>,
    pub attrs: &'a Attrs,
}

/// What a delivered notification adds: the signature (a standard topic's) and the
/// subscription's unsubscribe URL.
pub struct Links<'a> {
    /// `Signature` and `SigningCertURL`.
    pub signature: Option<(&'a str, &'a str)>,
    pub unsubscribe_url: &'a str,
}

fn q(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn field(out: &mut String, name: &str, value: &str) {
    out.push_str(",\"");
    out.push_str(name);
    out.push_str("\":");
    out.push_str(&q(value));
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
    pub fn to_json(&self, links: Option<&Links>) -> String {
        let mut out = String::with_capacity(self.message.len() + 512);
        out.push_str("{\"Type\":\"Notification\"");
        field(&mut out, "MessageId", self.message_id);
        if let Some(n) = self.sequence_number {
            field(&mut out, "SequenceNumber", n);
        }
        field(&mut out, "TopicArn", self.topic_arn);
        if let Some(s) = self.subject {
            field(&mut out, "Subject", s);
        }
        field(&mut out, "Message", self.message);
        field(&mut out, "Timestamp", &iso8601_ms(self.now_ms));
        if let Some(v) = self.signature_version {
            field(&mut out, "SignatureVersion", v);
        }
        if let Some(l) = links {
            if let Some((signature, cert_url)) = l.signature {
                field(&mut out, "Signature", signature);
                field(&mut out, "SigningCertURL", cert_url);
            }
            field(&mut out, "UnsubscribeURL", l.unsubscribe_url);
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
            signature_version: Some("1"),
            sequence_number: None,
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
        let links = Links {
            signature: Some(("c2ln", "http://h/SimpleNotificationService-x.pem")),
            unsubscribe_url: "http://h/?Action=Unsubscribe&SubscriptionArn=a:b",
        };
        let v: Value = serde_json::from_str(&n.to_json(Some(&links))).unwrap();
        assert_eq!(v["Subject"], "s");
        assert!(v.get("MessageAttributes").is_none());
        assert_eq!(v["Signature"], "c2ln");
        assert_eq!(
            v["SigningCertURL"],
            "http://h/SimpleNotificationService-x.pem"
        );
        assert_eq!(v["UnsubscribeURL"], links.unsubscribe_url);
        // A FIFO topic's: its sequence number after the id, no signature fields.
        let fifo = Notification {
            sequence_number: Some("00000000000000000007"),
            signature_version: None,
            ..n
        };
        let unsigned = Links {
            signature: None,
            ..links
        };
        let text = fifo.to_json(Some(&unsigned));
        assert!(
            text.starts_with(r#"{"Type":"Notification","MessageId":"id","SequenceNumber":"00000000000000000007","TopicArn":"arn","#),
            "{text}"
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        for absent in ["SignatureVersion", "Signature", "SigningCertURL"] {
            assert!(v.get(absent).is_none(), "{absent}: {text}");
        }
        assert_eq!(v["UnsubscribeURL"], links.unsubscribe_url);
        assert_eq!(
            n.canonical(),
            "Message\nhi\n\nMessageId\nid\nSubject\ns\nTimestamp\n1970-01-01T00:00:00.000Z\nTopicArn\narn\nType\nNotification\n"
        );
    }
}
