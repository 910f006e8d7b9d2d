//! The signing key's certificate: a self-signed X.509 v3 certificate (RFC 5280) over the
//! key's public half, written in DER by hand (a handful of fixed shapes), so that any
//! X.509 reader can fetch it from `SigningCertURL` and verify a notification with it.

use rsa::pkcs1v15::SigningKey;
use rsa::pkcs8::EncodePublicKey;
use rsa::signature::{RandomizedSigner, SignatureEncoding};
use rsa::RsaPrivateKey;
use sha2::Sha256;

use super::drbg::Drbg;

/// sha256WithRSAEncryption (1.2.840.113549.1.1.11).
const SHA256_WITH_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b];
/// id-at-commonName (2.5.4.3).
const COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];
/// id-at-organizationName (2.5.4.10).
const ORGANIZATION: &[u8] = &[0x55, 0x04, 0x0a];

/// A DER element: tag, definite length, contents.
fn tlv(tag: u8, contents: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = contents.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes: Vec<u8> = n
            .to_be_bytes()
            .iter()
            .copied()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend_from_slice(&bytes);
    }
    out.extend_from_slice(contents);
    out
}

fn seq(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

/// A non-negative INTEGER from big-endian bytes (a leading zero where the top bit is set).
fn positive_integer(bytes: &[u8]) -> Vec<u8> {
    let trimmed: Vec<u8> = bytes.iter().copied().skip_while(|b| *b == 0).collect();
    let mut body = if trimmed.is_empty() { vec![0] } else { trimmed };
    if body[0] & 0x80 != 0 {
        body.insert(0, 0);
    }
    tlv(0x02, &body)
}

fn algorithm() -> Vec<u8> {
    seq(&[tlv(0x06, SHA256_WITH_RSA), vec![0x05, 0x00]])
}

/// `O=queen-sqs, CN=<common name>`.
fn name(common: &str) -> Vec<u8> {
    let rdn =
        |oid: &[u8], value: &str| tlv(0x31, &seq(&[tlv(0x06, oid), tlv(0x0c, value.as_bytes())]));
    seq(&[rdn(ORGANIZATION, "queen-sqs"), rdn(COMMON_NAME, common)])
}

/// UTCTime (years 1950-2049) or GeneralizedTime, as RFC 5280 §4.1.2.5 asks.
fn time(unix_s: i64) -> Vec<u8> {
    let (y, m, d) = crate::calendar::civil_from_days(unix_s.div_euclid(86_400));
    let secs = unix_s.rem_euclid(86_400);
    let rest = format!(
        "{m:02}{d:02}{:02}{:02}{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if (1950..2050).contains(&y) {
        tlv(0x17, format!("{:02}{rest}", y % 100).as_bytes())
    } else {
        tlv(0x18, format!("{y:04}{rest}").as_bytes())
    }
}

/// The DER certificate of `key`, self-signed, valid from `not_before_s` for `days`.
pub fn self_signed(
    key: &RsaPrivateKey,
    common: &str,
    serial: &[u8],
    not_before_s: i64,
    days: i64,
    rng: &mut Drbg,
) -> Result<Vec<u8>, String> {
    let spki = key
        .to_public_key()
        .to_public_key_der()
        .map_err(|e| format!("public key: {e}"))?
        .as_bytes()
        .to_vec();
    let tbs = seq(&[
        // [0] EXPLICIT Version v3 (2).
        tlv(0xa0, &tlv(0x02, &[2])),
        positive_integer(serial),
        algorithm(),
        name(common),
        seq(&[time(not_before_s), time(not_before_s + days * 86_400)]),
        name(common),
        spki,
    ]);
    let signer = SigningKey::<Sha256>::new(key.clone());
    let signature = signer
        .try_sign_with_rng(rng, &tbs)
        .map_err(|e| format!("certificate signature: {e}"))?;
    let mut bits = vec![0u8]; // no unused bits
    bits.extend_from_slice(&signature.to_bytes());
    Ok(seq(&[tbs, algorithm(), tlv(0x03, &bits)]))
}

/// PEM text of a DER certificate.
pub fn pem(der: &[u8]) -> String {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    let b64 = STANDARD.encode(der);
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_integers_are_der() {
        assert_eq!(tlv(0x04, &[1, 2]), vec![0x04, 2, 1, 2]);
        let long = tlv(0x04, &[0u8; 200]);
        assert_eq!(&long[..3], &[0x04, 0x81, 200]);
        let longer = tlv(0x04, &[0u8; 300]);
        assert_eq!(&longer[..4], &[0x04, 0x82, 0x01, 0x2c]);
        assert_eq!(positive_integer(&[0, 0, 5]), vec![0x02, 1, 5]);
        assert_eq!(positive_integer(&[0x80]), vec![0x02, 2, 0, 0x80]);
        assert_eq!(positive_integer(&[]), vec![0x02, 1, 0]);
    }

    #[test]
    fn times_are_utc_or_generalized_by_year() {
        // 2026-12-04T20:29:34Z
        assert_eq!(time(1_796_416_174), tlv(0x17, b"261204202934Z"));
        // 2050-01-01T00:00:00Z
        assert_eq!(time(2_524_608_000), tlv(0x18, b"20500101000000Z"));
    }
}
