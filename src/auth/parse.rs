//! Reading the signature's parts from the `Authorization` header or the presigned
//! query parameters, with AWS's wording for what is missing.

use super::canonical::query_pairs;
use super::error::{clip, AuthError};
use super::sign::ALGORITHM;
use super::time::parse_amz_date;
use super::MAX_PRESIGN_EXPIRES_SECS;
use crate::http::Request;

/// What the client claims; nothing here is verified yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    pub access_key_id: String,
    pub scope_date: String,
    pub region: String,
    pub service: String,
    /// Lower-case names, in the client's order (the order it signed them in).
    pub signed_headers: Vec<String>,
    pub signature: String,
    pub amz_date: String,
    pub amz_secs: i64,
    /// Present on a presigned request only.
    pub expires: Option<i64>,
}

const PRESIGN_PARAMS: [&str; 3] = ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature"];

/// True when the query carries any of the presigned-request parameters.
pub fn is_presigned(query: &str) -> bool {
    query_pairs(query)
        .iter()
        .any(|(k, _)| PRESIGN_PARAMS.iter().any(|p| k.as_slice() == p.as_bytes()))
}

fn incomplete(m: impl Into<String>) -> AuthError {
    AuthError::IncompleteSignature(m.into())
}

/// `AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request, SignedHeaders=a;b, Signature=hex`
pub fn parse_header(value: &str, req: &Request) -> Result<Signed, AuthError> {
    let value = value.trim();
    let (algorithm, rest) = value.split_once(' ').unwrap_or((value, ""));
    if algorithm != ALGORITHM {
        return Err(incomplete(format!(
            "Unsupported AWS 'algorithm': '{}'. Only AWS4-HMAC-SHA256 is accepted.",
            clip(algorithm)
        )));
    }
    let (mut credential, mut signed_headers, mut signature) = (None, None, None);
    for part in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            return Err(incomplete(format!(
                "Authorization header requires each component to be of the form key=value, not '{}'.",
                clip(part)
            )));
        };
        match k.trim() {
            "Credential" => credential = Some(v.trim()),
            "SignedHeaders" => signed_headers = Some(v.trim()),
            "Signature" => signature = Some(v.trim()),
            _ => {}
        }
    }
    let mut missing = String::new();
    for (name, v) in [
        ("Credential", &credential),
        ("Signature", &signature),
        ("SignedHeaders", &signed_headers),
    ] {
        if v.is_none() {
            missing.push_str(&format!(
                "Authorization header requires '{name}' parameter. "
            ));
        }
    }
    let (Some(credential), Some(signed_headers), Some(signature)) =
        (credential, signed_headers, signature)
    else {
        return Err(incomplete(missing.trim_end()));
    };
    let amz_date = req.header("x-amz-date").map(str::trim).ok_or_else(|| {
        incomplete(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
        )
    })?;
    build(credential, signed_headers, signature, amz_date, None)
}

/// The presigned form's `X-Amz-*` query parameters.
pub fn parse_presigned(query: &str) -> Result<Signed, AuthError> {
    let pairs = query_pairs(query);
    let get = |name: &str| -> Option<String> {
        pairs
            .iter()
            .find(|(k, _)| k.as_slice() == name.as_bytes())
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    };
    let mut missing = Vec::new();
    let mut need = |name: &'static str| {
        let v = get(name);
        if v.is_none() {
            missing.push(name);
        }
        v.unwrap_or_default()
    };
    let algorithm = need("X-Amz-Algorithm");
    let credential = need("X-Amz-Credential");
    let amz_date = need("X-Amz-Date");
    let expires = need("X-Amz-Expires");
    let signed_headers = need("X-Amz-SignedHeaders");
    let signature = need("X-Amz-Signature");
    if !missing.is_empty() {
        return Err(incomplete(format!(
            "AWS query-string parameters must include {}. Re-examine the query-string parameters.",
            missing
                .iter()
                .map(|m| format!("'{m}'"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if algorithm != ALGORITHM {
        return Err(incomplete(format!(
            "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\", not '{}'.",
            clip(&algorithm)
        )));
    }
    let expires = match expires.parse::<i64>() {
        Ok(n) if (1..=MAX_PRESIGN_EXPIRES_SECS).contains(&n) => n,
        _ => {
            return Err(incomplete(format!(
            "X-Amz-Expires must be a whole number of seconds from 1 to {MAX_PRESIGN_EXPIRES_SECS}."
        )))
        }
    };
    build(
        &credential,
        &signed_headers,
        &signature,
        &amz_date,
        Some(expires),
    )
}

fn build(
    credential: &str,
    signed_headers: &str,
    signature: &str,
    amz_date: &str,
    expires: Option<i64>,
) -> Result<Signed, AuthError> {
    let parts: Vec<&str> = credential.split('/').collect();
    let [akid, date, region, service, terminator] = parts.as_slice() else {
        return Err(incomplete(
            "Credential must have the form <AccessKeyId>/<YYYYMMDD>/<region>/<service>/aws4_request.",
        ));
    };
    if *terminator != "aws4_request" {
        return Err(incomplete(format!(
            "Credential should be scoped with a valid terminator: 'aws4_request', not '{}'.",
            clip(terminator)
        )));
    }
    if akid.is_empty() {
        return Err(incomplete("Credential must name an access key id."));
    }
    if region.is_empty() {
        return Err(incomplete(
            "Credential should be scoped to a valid region, not ''.",
        ));
    }
    if date.len() != 8 || !date.bytes().all(|b| b.is_ascii_digit()) {
        return Err(incomplete(format!(
            "Credential date must be YYYYMMDD, not '{}'.",
            clip(date)
        )));
    }
    let amz_secs = parse_amz_date(amz_date).ok_or_else(|| {
        incomplete(format!(
            "X-Amz-Date must be in the ISO-8601 basic format YYYYMMDD'T'HHMMSS'Z', not '{}'.",
            clip(amz_date)
        ))
    })?;
    let signed_headers: Vec<String> = signed_headers
        .split(';')
        .map(|h| h.trim().to_string())
        .collect();
    if signed_headers
        .iter()
        .any(|h| h.is_empty() || h.bytes().any(|b| b.is_ascii_uppercase()))
    {
        return Err(incomplete(
            "SignedHeaders must be a ';'-separated list of lower-case header names.",
        ));
    }
    Ok(Signed {
        access_key_id: akid.to_string(),
        scope_date: date.to_string(),
        region: region.to_string(),
        service: service.to_string(),
        signed_headers,
        signature: signature.to_string(),
        amz_date: amz_date.to_string(),
        amz_secs,
        expires,
    })
}

/// The credential scope's service, read without verifying anything.
pub fn scope_service_of_request(req: &Request) -> Option<String> {
    let credential = match req.header("authorization") {
        Some(h) => {
            let rest = h.trim().strip_prefix(ALGORITHM)?;
            rest.split(',')
                .filter_map(|p| p.trim().strip_prefix("Credential="))
                .next()?
                .trim()
                .to_string()
        }
        None => {
            let pairs = query_pairs(req.query());
            let (_, v) = pairs
                .iter()
                .find(|(k, _)| k.as_slice() == b"X-Amz-Credential")?;
            String::from_utf8_lossy(v).into_owned()
        }
    };
    credential.split('/').nth(3).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(headers: &[(&str, &str)], pq: &str) -> Request {
        Request {
            method: "POST".into(),
            path_and_query: pq.into(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        }
    }

    const AUTH: &str = "AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=abcd";

    #[test]
    fn header_parts() {
        let r = req(&[("x-amz-date", "20261130T120000Z")], "/");
        let s = parse_header(AUTH, &r).unwrap();
        assert_eq!(s.access_key_id, "AKID");
        assert_eq!(s.region, "us-east-1");
        assert_eq!(s.service, "sqs");
        assert_eq!(s.signed_headers, vec!["host", "x-amz-date"]);
        assert_eq!(s.signature, "abcd");
        assert_eq!(s.expires, None);
    }

    #[test]
    fn header_components_in_any_order_and_spacing() {
        let r = req(&[("x-amz-date", "20261130T120000Z")], "/");
        let h = "AWS4-HMAC-SHA256 Signature=abcd,SignedHeaders=host , Credential=AKID/20261130/eu-west-1/sns/aws4_request";
        let s = parse_header(h, &r).unwrap();
        assert_eq!(
            (s.service.as_str(), s.region.as_str()),
            ("sns", "eu-west-1")
        );
    }

    #[test]
    fn garbled_headers_are_incomplete_signature() {
        let r = req(&[("x-amz-date", "20261130T120000Z")], "/");
        let bad = [
            "",
            "AWS4-HMAC-SHA256",
            "AWS AKID:signature",
            "AWS4-HMAC-SHA512 Credential=AKID/20261130/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=ab",
            "AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1/sqs/aws4_request, SignedHeaders=host",
            "AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1/sqs, SignedHeaders=host, Signature=ab",
            "AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1/sqs/aws5_request, SignedHeaders=host, Signature=ab",
            "AWS4-HMAC-SHA256 Credential=AKID/2026113/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=ab",
            "AWS4-HMAC-SHA256 Credential=AKID/20261130//sqs/aws4_request, SignedHeaders=host, Signature=ab",
            "AWS4-HMAC-SHA256 Credential=/20261130/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=ab",
            "AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1/sqs/aws4_request, SignedHeaders=Host, Signature=ab",
            "AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1/sqs/aws4_request, SignedHeaders=host;;x, Signature=ab",
            "AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1/sqs/aws4_request, garbage, Signature=ab",
        ];
        for h in bad {
            let e = parse_header(h, &r).expect_err(h);
            assert_eq!(e.code_name(), "IncompleteSignature", "{h}: {e:?}");
            assert_eq!(e.status(), 400);
        }
        let missing = parse_header("AWS4-HMAC-SHA256 SignedHeaders=host", &r).unwrap_err();
        assert_eq!(
            missing.message(),
            "Authorization header requires 'Credential' parameter. Authorization header requires 'Signature' parameter."
        );
        let no_date = parse_header(AUTH, &req(&[], "/")).unwrap_err();
        assert!(no_date.message().contains("X-Amz-Date"));
        let bad_date = parse_header(
            AUTH,
            &req(&[("x-amz-date", "Mon, 30 Nov 2026 12:00:00 GMT")], "/"),
        )
        .unwrap_err();
        assert_eq!(bad_date.code_name(), "IncompleteSignature");
    }

    #[test]
    fn presigned_parts_and_gaps() {
        let q = "Action=ListQueues&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20261130%2Fus-east-1%2Fsqs%2Faws4_request&X-Amz-Date=20261130T120000Z&X-Amz-Expires=300&X-Amz-SignedHeaders=host&X-Amz-Signature=ab";
        assert!(is_presigned(q));
        assert!(!is_presigned("Action=ListQueues"));
        let s = parse_presigned(q).unwrap();
        assert_eq!((s.access_key_id.as_str(), s.expires), ("AKID", Some(300)));
        let no_sig = q.replace("&X-Amz-Signature=ab", "");
        let e = parse_presigned(&no_sig).unwrap_err();
        assert!(e.message().contains("'X-Amz-Signature'"), "{}", e.message());
        for bad_expiry in ["0", "-5", "604801", "ten"] {
            let e = parse_presigned(
                &q.replace("X-Amz-Expires=300", &format!("X-Amz-Expires={bad_expiry}")),
            )
            .unwrap_err();
            assert_eq!(e.code_name(), "IncompleteSignature");
        }
    }

    #[test]
    fn peek_reads_either_form() {
        let h = req(&[("authorization", AUTH)], "/");
        assert_eq!(scope_service_of_request(&h).as_deref(), Some("sqs"));
        let p = req(
            &[],
            "/?X-Amz-Credential=AKID%2F20261130%2Fus-east-1%2Fsns%2Faws4_request",
        );
        assert_eq!(scope_service_of_request(&p).as_deref(), Some("sns"));
        assert_eq!(scope_service_of_request(&req(&[], "/")), None);
        assert_eq!(
            scope_service_of_request(&req(&[("authorization", "Bearer x")], "/")),
            None
        );
    }
}
