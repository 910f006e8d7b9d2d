//! The MD5 digests SQS answers with (`MD5OfMessageBody`, `MD5OfMessageAttributes`,
//! `MD5OfMessageSystemAttributes`). The Java, JavaScript and .NET SDKs check them, so
//! the attribute encoding follows AWS's algorithm byte for byte.

use super::attrs::{decode_base64, AttrData, Attrs};
use ::md5::{Digest, Md5};

/// Hex MD5 of the body's UTF-8 bytes.
pub fn md5_of_body(body: &str) -> String {
    hex(&Md5::digest(body.as_bytes()))
}

/// Hex MD5 of the attributes in AWS's length-prefixed encoding, or None when there are none.
/// Serves user attributes and system attributes alike.
///
/// Per attribute, in name order: u32 BE length + name, u32 BE length + DataType, one
/// transport byte (1 string/number, 2 binary), u32 BE length + value (UTF-8 text, or the
/// decoded bytes of a binary value).
pub fn md5_of_message_attributes(attrs: &Attrs) -> Option<String> {
    if attrs.is_empty() {
        return None;
    }
    let mut h = Md5::new();
    // BTreeMap iterates in byte order of the names; names are ASCII, so this is the
    // same order as AWS's (UTF-16 code unit) sort.
    for (name, v) in attrs {
        put(&mut h, name.as_bytes());
        put(&mut h, v.data_type.as_bytes());
        match &v.value {
            AttrData::String(s) => {
                h.update([1u8]);
                put(&mut h, s.as_bytes());
            }
            AttrData::Binary(b64) => {
                h.update([2u8]);
                // Validated attributes always decode; should one not, its text is hashed
                // rather than panicking (the digest will then simply not match).
                let bytes = decode_base64(b64).unwrap_or_else(|| b64.as_bytes().to_vec());
                put(&mut h, &bytes);
            }
        }
    }
    Some(hex(&h.finalize()))
}

fn put(h: &mut Md5, bytes: &[u8]) {
    h.update((bytes.len() as u32).to_be_bytes());
    h.update(bytes);
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::attrs::attrs_from_api;
    use serde_json::Value;

    fn vectors() -> Value {
        let text = include_str!("../../tests/data/md5/vectors.json");
        serde_json::from_str(text).expect("vectors.json parses")
    }

    #[test]
    fn body_digests_match_the_js_sdk() {
        let v = vectors();
        let bodies = v["bodies"].as_array().expect("bodies");
        assert!(bodies.len() >= 8);
        for b in bodies {
            let body = b["body"].as_str().expect("body");
            assert_eq!(
                md5_of_body(body),
                b["md5"].as_str().expect("md5"),
                "body {body:?}"
            );
        }
    }

    #[test]
    fn attribute_digests_match_independent_implementations() {
        let v = vectors();
        let cases = v["attributes"].as_array().expect("attributes");
        assert!(cases.len() >= 10);
        for c in cases {
            let name = c["name"].as_str().unwrap_or("?");
            let attrs = attrs_from_api(&c["attributes"]).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got = md5_of_message_attributes(&attrs);
            assert_eq!(got.as_deref(), c["md5"].as_str(), "{name}");
        }
    }

    #[test]
    fn no_attributes_no_digest() {
        assert_eq!(md5_of_message_attributes(&Attrs::new()), None);
    }
}
