//! SigV4, verified in house: the `Authorization` header variant and the presigned query
//! variant, AWS's 15-minute clock-skew window, a constant-time comparison, and a
//! credential scope naming `sqs` or `sns` in any region.

mod canonical;
mod error;
mod parse;
mod sign;
mod time;

#[cfg(test)]
mod vectors;

pub use error::AuthError;
pub use time::{format_amz_date, parse_amz_date};

use subtle::ConstantTimeEq;

use crate::config::Credential;
use crate::http::Request;
use crate::wire::Service;
use canonical::{canonical_request, sha256_hex};
use parse::{parse_header, parse_presigned, scope_service_of_request, Signed};

/// AWS's window, in both directions, for the header form.
pub const MAX_SKEW_SECS: i64 = 15 * 60;
/// The longest X-Amz-Expires AWS allows (seven days).
pub const MAX_PRESIGN_EXPIRES_SECS: i64 = 7 * 24 * 3600;
pub const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";

/// Who signed, and for which service and region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified<'a> {
    pub credential: &'a Credential,
    pub service: Service,
    pub region: String,
}

/// Verifies a request's SigV4 signature against the configured credentials.
pub fn verify<'a>(
    req: &Request,
    creds: &'a [Credential],
    now_unix_secs: i64,
) -> Result<Verified<'a>, AuthError> {
    let signed = match (req.header("authorization"), parse::is_presigned(req.query())) {
        (None, false) => return Err(AuthError::MissingAuthenticationToken),
        (Some(_), true) => {
            return Err(AuthError::IncompleteSignature(
                "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified.".into(),
            ))
        }
        (Some(h), false) => parse_header(h, req)?,
        (None, true) => parse_presigned(req.query())?,
    };

    let service = match signed.service.as_str() {
        "sqs" => Service::Sqs,
        "sns" => Service::Sns,
        other => return Err(AuthError::WrongService(other.to_string())),
    };
    if Some(signed.scope_date.as_str()) != signed.amz_date.get(..8) {
        return Err(AuthError::ScopeDateMismatch {
            scope_date: signed.scope_date.clone(),
            amz_date: signed.amz_date.clone(),
        });
    }
    check_time(&signed, now_unix_secs)?;

    let credential = creds
        .iter()
        .find(|c| c.access_key_id == signed.access_key_id)
        .ok_or(AuthError::InvalidClientTokenId)?;

    if !signed.signed_headers.iter().any(|h| h == "host") {
        return Err(AuthError::HostNotSigned);
    }
    let payload_hash = payload_hash(req)?;
    let skip = signed.expires.map(|_| "X-Amz-Signature");
    let canonical = canonical_request(req, skip, &signed.signed_headers, &payload_hash)
        .ok_or(AuthError::SignatureDoesNotMatch)?;
    let expected = sign::signature(
        &credential.secret_access_key,
        &signed.amz_date,
        &signed.scope_date,
        &signed.region,
        &signed.service,
        &canonical,
    );
    if !bool::from(expected.as_bytes().ct_eq(signed.signature.as_bytes())) {
        return Err(AuthError::SignatureDoesNotMatch);
    }
    Ok(Verified {
        credential,
        service,
        region: signed.region,
    })
}

/// Unverified read of the credential scope's service (header or presigned form) so
/// recognition can pick SQS vs SNS first. None when absent or neither service.
pub fn peek_scope_service(req: &Request) -> Option<Service> {
    match scope_service_of_request(req)?.as_str() {
        "sqs" => Some(Service::Sqs),
        "sns" => Some(Service::Sns),
        _ => None,
    }
}

fn check_time(s: &Signed, now: i64) -> Result<(), AuthError> {
    let now_text = || format_amz_date(now);
    if s.amz_secs > now + MAX_SKEW_SECS {
        return Err(AuthError::SignatureNotYetCurrent {
            amz_date: s.amz_date.clone(),
            limit: format_amz_date(now + MAX_SKEW_SECS),
            now: now_text(),
        });
    }
    match s.expires {
        None if s.amz_secs < now - MAX_SKEW_SECS => Err(AuthError::SignatureExpired {
            amz_date: s.amz_date.clone(),
            limit: format_amz_date(now - MAX_SKEW_SECS),
            now: now_text(),
        }),
        Some(expires) if s.amz_secs + expires < now => Err(AuthError::PresignedUrlExpired {
            expired_at: format_amz_date(s.amz_secs + expires),
            now: now_text(),
        }),
        _ => Ok(()),
    }
}

/// The payload hash the client signed: a declared hash that must match the body, else the
/// body's own SHA-256. `UNSIGNED-PAYLOAD` is refused: no AWS SDK signs SQS or SNS that way,
/// and a signature that does not cover the body cannot tell a body cut off in transit (or
/// rewritten) from the one the client sent (docs/hardening.md).
fn payload_hash(req: &Request) -> Result<String, AuthError> {
    let actual = || sha256_hex(&req.body);
    match req.header("x-amz-content-sha256").map(str::trim) {
        None => Ok(actual()),
        Some(p) if p.eq_ignore_ascii_case(UNSIGNED_PAYLOAD) => Err(AuthError::UnsignedPayload),
        Some(declared) => {
            if declared.eq_ignore_ascii_case(&actual()) {
                Ok(declared.to_string())
            } else {
                Err(AuthError::PayloadHashMismatch)
            }
        }
    }
}
