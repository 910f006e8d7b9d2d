//! The receipt handle: self-contained, so any replica can act on it, and MACed, so a
//! client cannot mint one.
//!
//! Token = standard base64 (AWS's alphabet: `+`, `/`, `=` padding; never `-`, which
//! amazon-sqs-extended-client uses as a separator when it wraps handles) of `body ‖ tag`.
//! Handles minted before, in base64url without padding, are still opened. Body is
//! `version(1) ‖ queue ‖ partition ‖ partition_id ‖ transaction_id ‖ lease_id ‖ message_id
//! ‖ expiry_unix_ms (i64 BE)`, or for a message held by a visibility timer `version(2) ‖
//! … ‖ message_id ‖ timer_key ‖ expiry_unix_ms`; version 3 is version 1's layout for a FIFO
//! message behind another of its claim (`behind_in_claim`); tag is the first 16 bytes of
//! HMAC-SHA256(secret, label ‖ body). Each text field is a LEB128 header `h` followed by
//! 16 raw bytes when `h == 0` (a lower-case hyphenated UUID, the broker's id form) or by
//! `h - 1` bytes of UTF-8 otherwise. With UUID ids a handle is about 160 characters.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptHandle {
    pub queue: String,
    pub partition: String,
    pub partition_id: String,
    pub transaction_id: String,
    pub lease_id: String,
    pub message_id: String,
    /// The visibility timer holding the message (standard queues); None for a handle that
    /// names a broker lease (FIFO claims, `VisibilityTimeout=0` receives, older handles).
    pub timer_key: Option<String>,
    pub expiry_unix_ms: i64,
    /// FIFO: the message was delivered behind another message of its claim, so an ack of
    /// it under the claim's lease would also complete the messages before it. Such a
    /// handle is never acked without its group's record (`inflight::claim_settle`).
    pub behind_in_claim: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleError {
    /// Not something this facade could have minted (bad base64, wrong size, bad fields).
    Malformed,
    /// Well formed, but the MAC does not verify: forged, altered, or another secret's.
    BadTag,
}

const VERSION: u8 = 1;
const VERSION_TIMED: u8 = 2;
const VERSION_BEHIND: u8 = 3;
const TAG_LEN: usize = 16;
/// Domain separation, should the handle secret ever MAC anything else.
const LABEL: &[u8] = b"queen-sqs receipt handle";
/// Far above any handle we mint; refusing early keeps garbage from costing memory.
const MAX_TOKEN_CHARS: usize = 8192;
const MIN_BODY: usize = 1 + 6 + 8;

pub fn mint(h: &ReceiptHandle, secret: &[u8]) -> String {
    let mut buf = Vec::with_capacity(192);
    buf.push(if h.timer_key.is_some() {
        VERSION_TIMED
    } else if h.behind_in_claim {
        VERSION_BEHIND
    } else {
        VERSION
    });
    for field in [
        &h.queue,
        &h.partition,
        &h.partition_id,
        &h.transaction_id,
        &h.lease_id,
        &h.message_id,
    ] {
        put_text(&mut buf, field);
    }
    if let Some(key) = &h.timer_key {
        put_text(&mut buf, key);
    }
    buf.extend_from_slice(&h.expiry_unix_ms.to_be_bytes());
    let tag = mac(secret, &buf).finalize().into_bytes();
    buf.extend_from_slice(&tag[..TAG_LEN]);
    STANDARD.encode(&buf)
}

/// Decodes a token exactly as it was minted: standard base64 with its padding, or the
/// base64url without padding of handles minted by earlier versions (`-`/`_`). Nothing is
/// decoded leniently: a handle missing its last character (a `=` of its padding, say) is
/// not a handle, as at AWS (`ReceiptHandleIsInvalid`).
fn decode_token(token: &str) -> Option<Vec<u8>> {
    if token.contains(['-', '_']) {
        if token.contains('=') {
            return None;
        }
        return URL_SAFE_NO_PAD.decode(token.as_bytes()).ok();
    }
    STANDARD.decode(token.as_bytes()).ok()
}

pub fn open(token: &str, secret: &[u8]) -> Result<ReceiptHandle, HandleError> {
    if token.len() > MAX_TOKEN_CHARS {
        return Err(HandleError::Malformed);
    }
    let raw = decode_token(token).ok_or(HandleError::Malformed)?;
    if raw.len() < MIN_BODY + TAG_LEN {
        return Err(HandleError::Malformed);
    }
    let (body, tag) = raw.split_at(raw.len() - TAG_LEN);
    // Constant-time comparison of the truncated tag.
    mac(secret, body)
        .verify_truncated_left(tag)
        .map_err(|_| HandleError::BadTag)?;
    parse(body).ok_or(HandleError::Malformed)
}

fn mac(secret: &[u8], body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes keys of any length, so this cannot fail.
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC accepts any key length");
    m.update(LABEL);
    m.update(body);
    m
}

fn parse(body: &[u8]) -> Option<ReceiptHandle> {
    let mut r = Reader { buf: body, pos: 0 };
    let version = r.byte()?;
    if ![VERSION, VERSION_TIMED, VERSION_BEHIND].contains(&version) {
        return None;
    }
    let queue = r.text()?;
    let partition = r.text()?;
    let partition_id = r.text()?;
    let transaction_id = r.text()?;
    let lease_id = r.text()?;
    let message_id = r.text()?;
    let timer_key = match version {
        VERSION_TIMED => Some(r.text()?),
        _ => None,
    };
    let expiry = r.take(8)?;
    let expiry_unix_ms = i64::from_be_bytes(expiry.try_into().ok()?);
    if r.pos != body.len() {
        return None;
    }
    Some(ReceiptHandle {
        queue,
        partition,
        partition_id,
        transaction_id,
        lease_id,
        message_id,
        timer_key,
        expiry_unix_ms,
        behind_in_claim: version == VERSION_BEHIND,
    })
}

fn put_text(buf: &mut Vec<u8>, s: &str) {
    if let Some(uuid) = uuid_bytes(s) {
        buf.push(0);
        buf.extend_from_slice(&uuid);
    } else {
        put_varint(buf, s.len() as u64 + 1);
        buf.extend_from_slice(s.as_bytes());
    }
}

fn put_varint(buf: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        buf.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    buf.push(n as u8);
}

/// The 16 bytes of a canonical lower-case hyphenated UUID; None for any other text, so
/// that decoding always reproduces the exact original string.
fn uuid_bytes(s: &str) -> Option<[u8; 16]> {
    let b = s.as_bytes();
    if b.len() != 36 {
        return None;
    }
    let mut out = [0u8; 16];
    let mut n = 0;
    let mut i = 0;
    while i < 36 {
        if matches!(i, 8 | 13 | 18 | 23) {
            if b[i] != b'-' {
                return None;
            }
            i += 1;
            continue;
        }
        out[n] = (lower_hex(b[i])? << 4) | lower_hex(b[i + 1])?;
        n += 1;
        i += 2;
    }
    Some(out)
}

fn lower_hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

fn format_uuid(b: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(HEX[(x >> 4) as usize] as char);
        s.push(HEX[(x & 15) as usize] as char);
    }
    s
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(n);
            }
        }
        None
    }

    fn text(&mut self) -> Option<String> {
        let h = self.varint()?;
        if h == 0 {
            return Some(format_uuid(self.take(16)?));
        }
        let len = usize::try_from(h - 1).ok()?;
        String::from_utf8(self.take(len)?.to_vec()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"0123456789abcdef-handle-secret";

    fn sample() -> ReceiptHandle {
        ReceiptHandle {
            queue: "orders-fifo.fifo".into(),
            partition: "17".into(),
            partition_id: "6f1c2a9e-3b7d-4e0a-9c55-0d2b8f41a7e3".into(),
            transaction_id: "dedup-key-with-ünicode".into(),
            lease_id: "01936f3e-8b7a-7c21-b3d4-5e6f7a8b9c0d".into(),
            message_id: "01936f3e-8b7a-7c21-b3d4-5e6f7a8b9c0e".into(),
            timer_key: None,
            expiry_unix_ms: 1_795_000_000_123,
            behind_in_claim: false,
        }
    }

    #[test]
    fn timed_handles_round_trip_and_differ_from_lease_handles() {
        let timed = ReceiptHandle {
            timer_key: Some("vis.01936f3e-8b7a-7c21-b3d4-5e6f7a8b9c0e.3".into()),
            lease_id: String::new(),
            partition_id: String::new(),
            ..sample()
        };
        let t = mint(&timed, SECRET);
        assert_eq!(open(&t, SECRET), Ok(timed.clone()));
        let lease = ReceiptHandle {
            timer_key: None,
            ..timed.clone()
        };
        assert_ne!(mint(&lease, SECRET), t);
        assert_eq!(open(&mint(&lease, SECRET), SECRET), Ok(lease));
        // An empty timer key is still a timed handle.
        let empty = ReceiptHandle {
            timer_key: Some(String::new()),
            ..timed
        };
        assert_eq!(open(&mint(&empty, SECRET), SECRET), Ok(empty));
    }

    #[test]
    fn round_trip() {
        let h = sample();
        let t = mint(&h, SECRET);
        assert!(
            t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)),
            "{t}"
        );
        assert_eq!(open(&t, SECRET), Ok(h));
    }

    #[test]
    fn round_trip_of_awkward_values() {
        let h = ReceiptHandle {
            queue: String::new(),
            partition: "x".repeat(300), // multi-byte varint length
            // Upper-case and un-hyphenated UUIDs are kept as text, so they come back verbatim.
            partition_id: "6F1C2A9E-3B7D-4E0A-9C55-0D2B8F41A7E3".into(),
            transaction_id: "6f1c2a9e3b7d4e0a9c550d2b8f41a7e3".into(),
            lease_id: String::new(),
            message_id: "00000000-0000-0000-0000-000000000000".into(),
            timer_key: None,
            expiry_unix_ms: i64::MIN,
            behind_in_claim: true,
        };
        assert_eq!(open(&mint(&h, SECRET), SECRET), Ok(h));
    }

    #[test]
    fn typical_length_is_compact() {
        let h = ReceiptHandle {
            queue: "my-queue".into(),
            partition: "3".into(),
            transaction_id: "01936f3e-8b7a-7c21-b3d4-5e6f7a8b9c0e".into(),
            ..sample()
        };
        // 1 + (1+8) + (1+1) + 4*(1+16) + 8 + 16 = 104 bytes -> 140 base64 characters.
        assert_eq!(mint(&h, SECRET).len(), 140);
    }

    #[test]
    fn every_single_byte_flip_is_rejected() {
        let t = mint(&sample(), SECRET);
        let raw = STANDARD.decode(&t).unwrap();
        for i in 0..raw.len() {
            for bit in 0..8 {
                let mut r = raw.clone();
                r[i] ^= 1 << bit;
                let forged = STANDARD.encode(&r);
                assert!(open(&forged, SECRET).is_err(), "byte {i} bit {bit}");
            }
        }
        // And at the text level: every character replaced by another alphabet character.
        let bytes = t.as_bytes();
        for i in 0..bytes.len() {
            let mut s = bytes.to_vec();
            s[i] = if s[i] == b'A' { b'B' } else { b'A' };
            let s = String::from_utf8(s).unwrap();
            assert!(open(&s, SECRET).is_err(), "char {i}");
        }
    }

    #[test]
    fn another_secret_is_rejected() {
        let t = mint(&sample(), SECRET);
        assert_eq!(
            open(&t, b"another-secret-of-some-length"),
            Err(HandleError::BadTag)
        );
        assert_eq!(open(&t, b""), Err(HandleError::BadTag));
    }

    #[test]
    fn truncation_and_extension_are_rejected() {
        let t = mint(&sample(), SECRET);
        for n in 0..t.len() {
            assert!(open(&t[..n], SECRET).is_err(), "prefix {n}");
        }
        assert!(open(&format!("{t}A"), SECRET).is_err());
        assert!(open(&format!("{t}AAAA"), SECRET).is_err());
    }

    #[test]
    fn garbage_never_panics() {
        let huge = "A".repeat(1 << 20);
        let inputs: Vec<String> = vec![
            String::new(),
            "=".into(),
            "not a handle at all".into(),
            "AQ".into(),
            "🚀🚀🚀".into(),
            "AAAA====".into(),
            "+/+/".repeat(40),
            huge,
            URL_SAFE_NO_PAD.encode([0xffu8; 64]),
        ];
        for s in inputs {
            assert!(open(&s, SECRET).is_err(), "{}", &s[..s.len().min(40)]);
        }
        // A correctly tagged body with broken fields is Malformed, not a panic.
        for body in [
            vec![VERSION],
            vec![3u8; 20],
            vec![
                VERSION, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0,
            ],
        ] {
            let mut raw = body.clone();
            raw.extend_from_slice(&mac(SECRET, &body).finalize().into_bytes()[..TAG_LEN]);
            let tok = URL_SAFE_NO_PAD.encode(&raw);
            assert_eq!(open(&tok, SECRET), Err(HandleError::Malformed));
        }
        // Pseudo-random bytes: deterministic, no panics, all refused.
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for len in 0..300 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            assert!(open(&URL_SAFE_NO_PAD.encode(&bytes), SECRET).is_err());
        }
    }

    #[test]
    fn minted_handles_use_aws_alphabet_and_old_ones_still_open() {
        // Many handles, so every alphabet character turns up somewhere.
        let mut seen_plus_or_slash = false;
        for i in 0..200 {
            let h = ReceiptHandle {
                message_id: format!("m-{i}"),
                expiry_unix_ms: 1_700_000_000_000 + i,
                ..sample()
            };
            let t = mint(&h, SECRET);
            assert!(!t.contains(['-', '_']), "{t}");
            assert!(
                t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)),
                "{t}"
            );
            seen_plus_or_slash |= t.contains(['+', '/']);
            assert_eq!(open(&t, SECRET), Ok(h.clone()));
            // amazon-sqs-extended-client wraps a handle as `…-<pointer>-<handle>` and
            // recovers it with split('-')[-1].
            let wrapped = format!("-..s3-bucket..-..s3-key..-{t}");
            assert_eq!(wrapped.rsplit('-').next(), Some(t.as_str()));
            // Handles minted by earlier versions (base64url, no padding) still open.
            let raw = STANDARD.decode(&t).unwrap();
            let old = URL_SAFE_NO_PAD.encode(&raw);
            assert_eq!(open(&old, SECRET), Ok(h.clone()));
            // The standard form keeps its padding: without it, or without its last
            // character, it is no handle.
            if t.ends_with('=') {
                assert_eq!(
                    open(t.trim_end_matches('='), SECRET),
                    Err(HandleError::Malformed)
                );
            }
            assert!(open(&t[..t.len() - 1], SECRET).is_err());
        }
        assert!(seen_plus_or_slash);
        // A mix of the two alphabets, or padding on a base64url token, is not a handle.
        assert_eq!(open("AB-+", SECRET), Err(HandleError::Malformed));
    }
}
