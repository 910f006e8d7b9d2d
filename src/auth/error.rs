//! Why a request failed authentication, with the code, status and wording AWS uses.

/// Every variant maps onto a real AWS error code; several share `SignatureDoesNotMatch`,
/// as on AWS, and differ only in their message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// Neither an `Authorization` header nor presigned query parameters.
    MissingAuthenticationToken,
    /// The header or the presigned parameters are malformed; the text says how.
    IncompleteSignature(String),
    /// The access key is not one this deployment knows.
    InvalidClientTokenId,
    /// The signature (or a signed header, or the body) does not verify.
    SignatureDoesNotMatch,
    /// The credential scope names a service other than `sqs` or `sns`.
    WrongService(String),
    /// The credential scope's date is not X-Amz-Date's date.
    ScopeDateMismatch {
        scope_date: String,
        amz_date: String,
    },
    /// `host` is not among the signed headers.
    HostNotSigned,
    /// `x-amz-content-sha256` is not the body's SHA-256.
    PayloadHashMismatch,
    /// `x-amz-content-sha256: UNSIGNED-PAYLOAD`: refused, the body must be signed.
    UnsignedPayload,
    /// X-Amz-Date more than 15 minutes in the past. Dates are `YYYYMMDDTHHMMSSZ`.
    SignatureExpired {
        amz_date: String,
        limit: String,
        now: String,
    },
    /// X-Amz-Date more than 15 minutes in the future.
    SignatureNotYetCurrent {
        amz_date: String,
        limit: String,
        now: String,
    },
    /// A presigned request past X-Amz-Date + X-Amz-Expires.
    PresignedUrlExpired { expired_at: String, now: String },
}

impl AuthError {
    /// The AWS error code. Clock skew answers `SignatureDoesNotMatch` because that is what
    /// SQS (and SNS) answer for it, with a "Signature expired" message, rather than the
    /// `RequestExpired` of EC2-style services or S3's `RequestTimeTooSkewed`.
    pub fn code_name(&self) -> &'static str {
        match self {
            AuthError::MissingAuthenticationToken => "MissingAuthenticationToken",
            AuthError::IncompleteSignature(_) => "IncompleteSignature",
            AuthError::InvalidClientTokenId => "InvalidClientTokenId",
            AuthError::SignatureDoesNotMatch
            | AuthError::WrongService(_)
            | AuthError::ScopeDateMismatch { .. }
            | AuthError::HostNotSigned
            | AuthError::PayloadHashMismatch
            | AuthError::UnsignedPayload
            | AuthError::SignatureExpired { .. }
            | AuthError::SignatureNotYetCurrent { .. }
            | AuthError::PresignedUrlExpired { .. } => "SignatureDoesNotMatch",
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            AuthError::IncompleteSignature(_) => 400,
            _ => 403,
        }
    }

    pub fn message(&self) -> String {
        match self {
            AuthError::MissingAuthenticationToken => "Request is missing Authentication Token".into(),
            AuthError::IncompleteSignature(m) => m.clone(),
            AuthError::InvalidClientTokenId => "The security token included in the request is invalid.".into(),
            AuthError::SignatureDoesNotMatch => "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.".into(),
            AuthError::WrongService(s) => format!(
                "Credential should be scoped to correct service: 'sqs' or 'sns', not '{}'.",
                clip(s)
            ),
            AuthError::ScopeDateMismatch { scope_date, amz_date } => format!(
                "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{}' != '{}', from '{}'.",
                clip(scope_date),
                amz_date.get(..8).unwrap_or(amz_date),
                amz_date
            ),
            AuthError::HostNotSigned => {
                "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.".into()
            }
            AuthError::PayloadHashMismatch => {
                "The provided 'x-amz-content-sha256' header does not match what was computed.".into()
            }
            AuthError::UnsignedPayload => {
                "'x-amz-content-sha256: UNSIGNED-PAYLOAD' is not accepted: sign the body's SHA-256.".into()
            }
            AuthError::SignatureExpired { amz_date, limit, now } => format!(
                "Signature expired: {amz_date} is now earlier than {limit} ({now} - 15 min.)"
            ),
            AuthError::SignatureNotYetCurrent { amz_date, limit, now } => format!(
                "Signature not yet current: {amz_date} is still later than {limit} ({now} + 15 min.)"
            ),
            AuthError::PresignedUrlExpired { expired_at, now } => {
                format!("Signature expired: the presigned request expired at {expired_at}; it is now {now}.")
            }
        }
    }
}

/// Client-supplied text echoed in a message is bounded.
pub(crate) fn clip(s: &str) -> String {
    const MAX: usize = 64;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(MAX).collect();
        t.push_str("...");
        t
    }
}
