//! Receipt handles: `model::handle::open` on hostile tokens, and `mint` -> `open`.
//!
//! Byte 0 picks the mode:
//! - token: the rest (as text) is a token, opened with a fixed secret. Asserts no panic;
//!   a token that opens re-mints to one that opens to the same handle.
//! - tagged body: the rest is a handle body, correctly MACed here (HMAC-SHA256 over the
//!   documented label and the body, truncated to 16 bytes) and encoded in one of the
//!   accepted spellings (standard base64 with or without padding, or the base64url of
//!   older handles). This gets past the MAC to the field parser. Asserts the result is
//!   never `BadTag` (the tag is right), and a body that parses re-mints to a token that
//!   opens to the same handle; another secret is always `BadTag`.
//! - fields: arbitrary field values and secret are minted. Asserts the token uses AWS's
//!   alphabet (`A-Z a-z 0-9 + / =`), opens to exactly the same handle (unless it is over
//!   the 8192-character cap, which must then be refused as Malformed), does not open under
//!   another secret, and stops opening when one of its characters is changed.
#![no_main]

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use base64::Engine;
use hmac::{Hmac, Mac};
use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use queen_sqs::model::handle::{mint, open, HandleError, ReceiptHandle};
use sha2::Sha256;

const SECRET: &[u8] = b"fuzz-handle-secret-0123456789";
const LABEL: &[u8] = b"queen-sqs receipt handle";
const MAX_TOKEN_CHARS: usize = 8192;

fn reopens(h: &ReceiptHandle, secret: &[u8]) {
    let t = mint(h, secret);
    if t.len() <= MAX_TOKEN_CHARS {
        assert_eq!(open(&t, secret).as_ref(), Ok(h), "{t}");
    } else {
        assert_eq!(open(&t, secret), Err(HandleError::Malformed));
    }
}

#[derive(Arbitrary, Debug)]
struct Fields {
    queue: String,
    partition: String,
    partition_id: String,
    transaction_id: String,
    lease_id: String,
    message_id: String,
    timer_key: Option<String>,
    expiry_unix_ms: i64,
    secret: Vec<u8>,
    change_at: u16,
    uuids: u8,
}

fn fields(f: Fields) {
    // Some ids as the broker writes them (lower-case hyphenated UUIDs: the compact form).
    let uuid = |seed: &str| {
        let mut x: u64 = seed.bytes().fold(0xcbf29ce484222325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
        });
        let mut s = String::new();
        for i in 0..32 {
            if matches!(i, 8 | 12 | 16 | 20) {
                s.push('-');
            }
            s.push(char::from_digit((x & 15) as u32, 16).unwrap());
            x = x.rotate_right(4) ^ (i as u64);
        }
        s
    };
    let pick = |bit: u8, s: String| {
        if f.uuids & (1 << bit) != 0 {
            uuid(&s)
        } else {
            s
        }
    };
    let h = ReceiptHandle {
        queue: f.queue,
        partition: f.partition,
        partition_id: pick(0, f.partition_id),
        transaction_id: pick(1, f.transaction_id),
        lease_id: pick(2, f.lease_id),
        message_id: pick(3, f.message_id),
        // A timed handle has no claim, so the flag rides only on lease handles.
        behind_in_claim: f.timer_key.is_none() && f.uuids & (1 << 5) != 0,
        timer_key: f.timer_key.map(|k| pick(4, k)),
        expiry_unix_ms: f.expiry_unix_ms,
    };
    let t = mint(&h, &f.secret);
    assert!(
        t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)),
        "{t}"
    );
    if t.len() > MAX_TOKEN_CHARS {
        assert_eq!(open(&t, &f.secret), Err(HandleError::Malformed));
        return;
    }
    assert_eq!(open(&t, &f.secret).as_ref(), Ok(&h));
    let mut other = f.secret.clone();
    other.push(1);
    assert_eq!(open(&t, &other), Err(HandleError::BadTag));

    let mut changed = t.clone().into_bytes();
    let i = f.change_at as usize % changed.len();
    changed[i] = match changed[i] {
        b'A' => b'B',
        _ => b'A',
    };
    let changed = String::from_utf8(changed).unwrap();
    assert!(open(&changed, &f.secret).is_err(), "{t} -> {changed}");
}

fn tagged(spelling: u8, body: &[u8]) {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(SECRET).unwrap();
    m.update(LABEL);
    m.update(body);
    let tag = m.finalize().into_bytes();
    let mut raw = body.to_vec();
    raw.extend_from_slice(&tag[..16]);
    let token = match spelling % 3 {
        0 => STANDARD.encode(&raw),
        1 => STANDARD_NO_PAD.encode(&raw),
        _ => URL_SAFE_NO_PAD.encode(&raw),
    };
    match open(&token, SECRET) {
        Ok(h) => {
            reopens(&h, SECRET);
            assert_eq!(open(&token, b"another secret"), Err(HandleError::BadTag));
        }
        Err(HandleError::Malformed) => {}
        Err(HandleError::BadTag) => {
            panic!("a correctly tagged body was refused as BadTag: {token}")
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [mode, rest @ ..] = data else { return };
    match mode % 3 {
        0 => {
            let token = String::from_utf8_lossy(rest);
            if let Ok(h) = open(&token, SECRET) {
                reopens(&h, SECRET);
            }
        }
        1 => {
            let [spelling, body @ ..] = rest else { return };
            tagged(*spelling, body);
        }
        _ => {
            if let Ok(f) = Fields::arbitrary_take_rest(Unstructured::new(rest)) {
                fields(f);
            }
        }
    }
});
