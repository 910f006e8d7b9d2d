//! Queue names, queue URLs and ARNs. A URL is client input on every message action:
//! another account's segment or a path traversal is `QueueDoesNotExist`, never a
//! malformed-request error.

use crate::config::Config;
use crate::wire::{ApiError, ErrorCode};

pub const MAX_NAME_LEN: usize = 80;

/// SQS's rule: 1..80 characters of `[A-Za-z0-9_-]`, a FIFO queue's name ending `.fifo`.
pub fn valid_queue_name(name: &str) -> bool {
    let stem = name.strip_suffix(".fifo").unwrap_or(name);
    !stem.is_empty()
        && name.len() <= MAX_NAME_LEN
        && stem
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A name for a queue of this kind: a FIFO queue's ends `.fifo`, a standard queue's has
/// no `.` at all (SQS decides the kind by the `FifoQueue` attribute, not by the name).
pub fn valid_name_for(name: &str, fifo: bool) -> bool {
    valid_queue_name(name) && is_fifo_name(name) == fifo
}

pub fn is_fifo_name(name: &str) -> bool {
    name.ends_with(".fifo")
}

pub fn queue_url(base_url: &str, cfg: &Config, name: &str) -> String {
    format!("{base_url}/{}/{name}", cfg.account_id)
}

pub fn queue_arn(cfg: &Config, name: &str) -> String {
    format!("arn:aws:sqs:{}:{}:{name}", cfg.region, cfg.account_id)
}

/// The IAM user this endpoint names as the account's one principal (AWS answers the
/// caller's user ARN as a subscription's `SubscriptionPrincipal`; every key here acts
/// for the account, and which key subscribed is not recorded).
pub fn principal_arn(cfg: &Config) -> String {
    format!("arn:aws:iam::{}:user/queen-sqs", cfg.account_id)
}

/// The `SenderId` a received message answers: one principal id for the account, shaped as
/// AWS's IAM user ids (`AIDA` and 16 more characters). Every key this endpoint accepts acts
/// for the one account, and which key sent a message is not recorded, so the account's
/// principal is the sender AWS would name for it.
pub fn sender_id(cfg: &Config) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("queen-sqs sender {}", cfg.account_id).as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02X}")).collect();
    format!("AIDA{hex}")
}

pub fn no_such_queue() -> ApiError {
    ApiError::new(
        ErrorCode::QueueDoesNotExist,
        "The specified queue does not exist.",
    )
}

/// The queue name a QueueUrl addresses. Any scheme and host are accepted (the client
/// reached us somehow); the path must be exactly `/<our account>/<valid name>`. A bare
/// queue name is accepted too, as SQS accepts it (`QueueUrl=orders`).
pub fn name_from_url<'a>(cfg: &Config, url: &'a str) -> Result<&'a str, ApiError> {
    if valid_queue_name(url) {
        return Ok(url);
    }
    let path = match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map(|i| &rest[i..]).unwrap_or(""),
        None => url,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let mut segments = path.trim_start_matches('/').split('/');
    let (Some(account), Some(name), None) = (segments.next(), segments.next(), segments.next())
    else {
        return Err(no_such_queue());
    };
    if account != cfg.account_id || !valid_queue_name(name) {
        return Err(no_such_queue());
    }
    Ok(name)
}

/// The queue name an SQS ARN names, if it is one of ours.
pub fn name_from_arn<'a>(cfg: &Config, arn: &'a str) -> Option<&'a str> {
    let mut parts = arn.splitn(6, ':');
    let (Some("arn"), Some(_partition), Some("sqs"), Some(_region), Some(account), Some(name)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    (account == cfg.account_id && valid_queue_name(name)).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        Config::from_env([
            ("QUEEN_URL", "http://x:1"),
            ("QUEEN_SQS_AUTH", "off"),
            ("QUEEN_SQS_HANDLE_SECRET", "0123456789abcdef"),
        ])
        .unwrap()
    }

    #[test]
    fn names() {
        assert!(valid_queue_name("orders"));
        assert!(valid_queue_name("a-b_C9.fifo"));
        assert!(!valid_queue_name(""));
        assert!(!valid_queue_name(".fifo"));
        assert!(!valid_queue_name("a.b"));
        assert!(!valid_queue_name(&"x".repeat(81)));
        assert!(valid_queue_name(&"x".repeat(80)));
        assert!(valid_name_for("q.fifo", true) && valid_name_for("q", false));
        assert!(!valid_name_for("q.fifo", false) && !valid_name_for("q", true));
    }

    #[test]
    fn urls_are_parsed_as_untrusted_input() {
        let c = cfg();
        assert_eq!(
            name_from_url(&c, "http://h:9324/000000000000/q1").unwrap(),
            "q1"
        );
        assert_eq!(
            name_from_url(
                &c,
                "https://sqs.eu-west-1.amazonaws.com/000000000000/q.fifo"
            )
            .unwrap(),
            "q.fifo"
        );
        assert_eq!(name_from_url(&c, "q1").unwrap(), "q1");
        assert_eq!(name_from_url(&c, "q.fifo").unwrap(), "q.fifo");
        for bad in [
            "q 1",
            "http://h/123456789012/q1",
            "http://h/000000000000/../q1",
            "http://h/000000000000/q1/extra",
            "http://h/000000000000/",
            "http://h/000000000000/%2e%2e",
            "",
            "http://h",
        ] {
            assert_eq!(
                name_from_url(&c, bad).unwrap_err().code,
                ErrorCode::QueueDoesNotExist,
                "{bad}"
            );
        }
    }

    #[test]
    fn the_sender_id_is_a_principal_id_of_the_account() {
        let id = sender_id(&cfg());
        assert_eq!(id.len(), 20);
        assert!(
            id.starts_with("AIDA")
                && id
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        );
        assert!(!id.contains(&cfg().account_id));
        assert_eq!(id, sender_id(&cfg()));
    }

    #[test]
    fn arns() {
        let c = cfg();
        assert_eq!(
            name_from_arn(&c, "arn:aws:sqs:us-east-1:000000000000:dlq"),
            Some("dlq")
        );
        assert_eq!(
            name_from_arn(&c, "arn:aws:sqs:us-east-1:111111111111:dlq"),
            None
        );
        assert_eq!(
            name_from_arn(&c, "arn:aws:sns:us-east-1:000000000000:dlq"),
            None
        );
    }
}
