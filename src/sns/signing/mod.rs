//! SNS message signatures, as AWS documents them ("Verifying the signatures of Amazon SNS
//! messages"): a notification carries `Signature`, the base64 of an RSA PKCS#1 v1.5
//! signature (SHA-1 for `SignatureVersion` 1, SHA-256 for 2) over its canonical string,
//! and `SigningCertURL`, where the certificate that verifies it is served.
//!
//! The key is the deployment's, not a replica's: made once, by whichever replica first
//! needs it, and kept in Queen's KV store (`qs:sns:signing-key`, written create-only, so of
//! two replicas racing one key wins and both sign with it). Nothing of it lives in a
//! process; every replica reads it (a read a host may cache: the record never changes).
//! The certificate is self-signed and served unauthenticated, as AWS serves its own, at
//! `/SimpleNotificationService-<id>.pem`, where `id` names the certificate.
//!
//! The core has no RNG: the generator that makes the key and blinds each signature is
//! seeded with the request's id (random per request, from the edge) and the deployment's
//! handle secret.

mod cert;
mod crt;
mod drbg;

use crate::ctx::Ctx;
use crate::http::Transport;
use crate::queen::KvOp;
use crate::wire::{ApiError, ErrorCode};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use drbg::Drbg;
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::pkcs1v15::SigningKey;
use rsa::signature::{RandomizedSigner, SignatureEncoding};
use rsa::RsaPrivateKey;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The KV record of the deployment's signing key and certificate.
pub const KEY_RECORD: &str = "qs:sns:signing-key";
/// AWS signs with 2048-bit keys.
const KEY_BITS: usize = 2048;
const CERT_DAYS: i64 = 3650;
/// How old a cached read of the record may be: it is written once and never changed.
const CACHE_MS: u64 = 3_600_000;
const CERT_PREFIX: &str = "/SimpleNotificationService-";
const CERT_SUFFIX: &str = ".pem";

/// `SignatureVersion`: which digest the signature is made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// SHA1withRSA.
    V1,
    /// SHA256withRSA.
    V2,
}

impl Version {
    /// The topic attribute's value ("1" unless "2").
    pub fn of(attribute: Option<&str>) -> Version {
        match attribute {
            Some("2") => Version::V2,
            _ => Version::V1,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1 => "1",
            Version::V2 => "2",
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Stored {
    /// PKCS#1 DER of the private key, base64.
    key: String,
    /// DER of the certificate, base64.
    cert: String,
}

/// The deployment's signing key, ready to sign for one request.
pub struct Signer {
    key: RsaPrivateKey,
    /// The key's CRT form, the fast path (`crt`); `None` for a key of another shape.
    crt: Option<crt::CrtKey>,
    cert_id: String,
    rng: Drbg,
}

impl Signer {
    /// `Signature`: base64 of the signature over `canonical`.
    pub fn sign(&mut self, version: Version, canonical: &str) -> Result<String, ApiError> {
        if let Some(crt) = &self.crt {
            let signed = match version {
                Version::V1 => crt.sign(crt::SHA1_PREFIX, &sha1::Sha1::digest(canonical)),
                Version::V2 => crt.sign(crt::SHA256_PREFIX, &Sha256::digest(canonical)),
            };
            if let Some(signature) = signed {
                return Ok(STANDARD.encode(signature));
            }
        }
        let signature = match version {
            Version::V1 => SigningKey::<sha1::Sha1>::new(self.key.clone())
                .try_sign_with_rng(&mut self.rng, canonical.as_bytes())
                .map(|s| s.to_bytes()),
            Version::V2 => SigningKey::<Sha256>::new(self.key.clone())
                .try_sign_with_rng(&mut self.rng, canonical.as_bytes())
                .map(|s| s.to_bytes()),
        }
        .map_err(|e| internal(format!("signing failed: {e}")))?;
        Ok(STANDARD.encode(signature))
    }

    /// `SigningCertURL` on the endpoint the client reached.
    pub fn cert_url(&self, base_url: &str) -> String {
        format!("{base_url}{CERT_PREFIX}{}{CERT_SUFFIX}", self.cert_id)
    }
}

/// A request's signer, made the first time one of its notifications needs it.
#[derive(Default)]
pub struct Lazy(Option<Signer>);

impl Lazy {
    pub async fn get<T: Transport>(&mut self, ctx: &Ctx<'_, T>) -> Result<&mut Signer, ApiError> {
        if self.0.is_none() {
            self.0 = Some(signer(ctx).await?);
        }
        self.0
            .as_mut()
            .ok_or_else(|| internal("no signer".to_string()))
    }
}

/// The canonical string AWS signs: each field present, in the given (alphabetical) order,
/// as `name\nvalue\n`.
pub fn canonical(fields: &[(&str, Option<&str>)]) -> String {
    let mut out = String::new();
    for (name, value) in fields {
        if let Some(v) = value {
            out.push_str(name);
            out.push('\n');
            out.push_str(v);
            out.push('\n');
        }
    }
    out
}

/// The deployment's signer: the stored key, or one made now and stored.
pub async fn signer<T: Transport>(ctx: &Ctx<'_, T>) -> Result<Signer, ApiError> {
    let mut rng = Drbg::new(&[
        ctx.request_id.as_bytes(),
        &ctx.cfg.handle_secret,
        b"sns signing",
    ]);
    let stored = match ctx.queen.kv_get_cached(KEY_RECORD, CACHE_MS).await? {
        Some(row) => parse(&row.value)?,
        None => make(ctx, &mut rng).await?,
    };
    Ok(Signer {
        crt: crt::CrtKey::of(&stored.0),
        key: stored.0,
        cert_id: stored.1,
        rng,
    })
}

/// The PEM certificate a `SigningCertURL` path names, if it is the deployment's.
pub async fn certificate<T: Transport>(
    ctx: &Ctx<'_, T>,
    path: &str,
) -> Result<Option<String>, ApiError> {
    let Some(id) = cert_id_of(path) else {
        return Ok(None);
    };
    let Some(row) = ctx.queen.kv_get_cached(KEY_RECORD, CACHE_MS).await? else {
        return Ok(None);
    };
    let stored: Stored = serde_json::from_value(row.value)
        .map_err(|e| internal(format!("the signing key record is unreadable: {e}")))?;
    let der = decode(&stored.cert)?;
    Ok((cert_id(&der) == id).then(|| cert::pem(&der)))
}

/// Whether a request path is a certificate's (`/SimpleNotificationService-<id>.pem`).
pub fn is_cert_path(path: &str) -> bool {
    cert_id_of(path).is_some()
}

fn cert_id_of(path: &str) -> Option<&str> {
    let id = path.strip_prefix(CERT_PREFIX)?.strip_suffix(CERT_SUFFIX)?;
    (id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())).then_some(id)
}

/// A certificate's name: the first half of its SHA-256, in hex.
fn cert_id(der: &[u8]) -> String {
    Sha256::digest(der)[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn parse(value: &serde_json::Value) -> Result<(RsaPrivateKey, String), ApiError> {
    let stored: Stored = serde_json::from_value(value.clone())
        .map_err(|e| internal(format!("the signing key record is unreadable: {e}")))?;
    let key = RsaPrivateKey::from_pkcs1_der(&decode(&stored.key)?)
        .map_err(|e| internal(format!("the signing key is unreadable: {e}")))?;
    Ok((key, cert_id(&decode(&stored.cert)?)))
}

/// Makes the key and its certificate and stores them create-only; a replica that lost the
/// race reads the winner's.
async fn make<T: Transport>(
    ctx: &Ctx<'_, T>,
    rng: &mut Drbg,
) -> Result<(RsaPrivateKey, String), ApiError> {
    let key = RsaPrivateKey::new(rng, KEY_BITS)
        .map_err(|e| internal(format!("making the signing key failed: {e}")))?;
    let mut serial = [0u8; 16];
    rand_core::RngCore::fill_bytes(rng, &mut serial);
    let der = cert::self_signed(&key, "sns.queen-sqs", &serial, ctx.now_s(), CERT_DAYS, rng)
        .map_err(internal)?;
    let pkcs1 = key
        .to_pkcs1_der()
        .map_err(|e| internal(format!("encoding the signing key failed: {e}")))?;
    let stored = Stored {
        key: STANDARD.encode(pkcs1.as_bytes()),
        cert: STANDARD.encode(&der),
    };
    let value = serde_json::to_value(&stored).map_err(|e| internal(e.to_string()))?;
    let results = ctx
        .queen
        .kv_results(vec![KvOp::put(KEY_RECORD, value, Some(0))])
        .await?;
    if results.first().is_some_and(|r| r.applied()) {
        return Ok((key, cert_id(&der)));
    }
    match ctx.queen.kv_get(KEY_RECORD).await? {
        Some(row) => parse(&row.value),
        None => Err(internal("the signing key could not be stored".into())),
    }
}

fn decode(b64: &str) -> Result<Vec<u8>, ApiError> {
    STANDARD
        .decode(b64)
        .map_err(|e| internal(format!("the signing key record is unreadable: {e}")))
}

fn internal(why: String) -> ApiError {
    ApiError::new(ErrorCode::InternalError, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::pkcs1v15::{Signature, VerifyingKey};
    use rsa::signature::Verifier;

    #[test]
    fn canonical_strings_skip_absent_fields() {
        let s = canonical(&[
            ("Message", Some("hi")),
            ("MessageId", Some("id")),
            ("Subject", None),
            ("Timestamp", Some("t")),
            ("TopicArn", Some("arn")),
            ("Type", Some("Notification")),
        ]);
        assert_eq!(
            s,
            "Message\nhi\nMessageId\nid\nTimestamp\nt\nTopicArn\narn\nType\nNotification\n"
        );
    }

    #[test]
    fn certificate_paths() {
        let id = "0123456789abcdef0123456789abcdef";
        assert!(is_cert_path(&format!(
            "/SimpleNotificationService-{id}.pem"
        )));
        assert!(!is_cert_path("/SimpleNotificationService-xyz.pem"));
        assert!(!is_cert_path(&format!(
            "/SimpleNotificationService-{id}.pem/x"
        )));
        assert!(!is_cert_path("/"));
    }

    /// A small key keeps the test quick; the signatures verify with the public half for
    /// both versions, and the certificate holds that public half.
    #[test]
    fn signatures_verify_with_the_public_key() {
        let mut rng = Drbg::new(&[b"test seed"]);
        let key = RsaPrivateKey::new(&mut rng, 1024).unwrap();
        let der = cert::self_signed(&key, "t", &[1, 2, 3], 1_796_416_174, 1, &mut rng).unwrap();
        let spki = rsa::pkcs8::EncodePublicKey::to_public_key_der(&key.to_public_key()).unwrap();
        assert!(
            der.windows(spki.as_bytes().len())
                .any(|w| w == spki.as_bytes()),
            "the certificate carries the public key"
        );
        let mut signer = Signer {
            crt: crt::CrtKey::of(&key),
            key: key.clone(),
            cert_id: cert_id(&der),
            rng,
        };
        let text = "Message\nhi\nType\nNotification\n";
        for version in [Version::V1, Version::V2] {
            let sig = STANDARD
                .decode(signer.sign(version, text).unwrap())
                .unwrap();
            let sig = Signature::try_from(sig.as_slice()).unwrap();
            let public = key.to_public_key();
            let ok = match version {
                Version::V1 => {
                    VerifyingKey::<sha1::Sha1>::new(public).verify(text.as_bytes(), &sig)
                }
                Version::V2 => VerifyingKey::<Sha256>::new(public).verify(text.as_bytes(), &sig),
            };
            assert!(ok.is_ok(), "{version:?}");
            let wrong = VerifyingKey::<Sha256>::new(key.to_public_key()).verify(b"other", &sig);
            assert!(wrong.is_err());
        }
        assert_eq!(
            signer.cert_url("http://h:1"),
            format!(
                "http://h:1/SimpleNotificationService-{}.pem",
                signer.cert_id
            )
        );
    }
}
