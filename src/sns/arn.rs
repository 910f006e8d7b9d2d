//! Topic and subscription ARNs, topic names, and the ids this module mints.
//! The core has no RNG: ids are SHA-256 of the request id (random per request) and a
//! purpose-and-index suffix, shaped as UUIDs.

use crate::config::Config;
use sha2::{Digest, Sha256};

pub const MAX_TOPIC_NAME: usize = 256;

/// SNS's rule: 1..256 of `[A-Za-z0-9_-]`, a FIFO topic's name ending `.fifo` (the
/// suffix counts towards the 256).
pub fn valid_topic_name(name: &str) -> bool {
    let stem = name.strip_suffix(".fifo").unwrap_or(name);
    !stem.is_empty()
        && name.len() <= MAX_TOPIC_NAME
        && stem
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

pub fn is_fifo_name(name: &str) -> bool {
    name.ends_with(".fifo")
}

pub fn topic_arn(cfg: &Config, name: &str) -> String {
    format!("arn:aws:sns:{}:{}:{name}", cfg.region, cfg.account_id)
}

pub fn subscription_arn(cfg: &Config, topic: &str, id: &str) -> String {
    format!("{}:{id}", topic_arn(cfg, topic))
}

/// `arn:<partition>:sns:<region>:<account>:<rest>`, the account ours; answers `rest`.
fn our_sns_resource<'a>(cfg: &Config, arn: &'a str) -> Option<&'a str> {
    let mut parts = arn.splitn(6, ':');
    let (Some("arn"), Some(p), Some("sns"), Some(region), Some(account), Some(rest)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    // Any partition and region a client names: both are labels here.
    (!p.is_empty() && !region.is_empty() && account == cfg.account_id).then_some(rest)
}

/// The topic name a topic ARN names, if it is one of ours and well formed.
pub fn topic_from_arn<'a>(cfg: &Config, arn: &'a str) -> Option<&'a str> {
    our_sns_resource(cfg, arn).filter(|name| valid_topic_name(name))
}

/// (topic name, subscription id) of a subscription ARN of ours.
pub fn subscription_from_arn<'a>(cfg: &Config, arn: &'a str) -> Option<(&'a str, &'a str)> {
    let (topic, id) = our_sns_resource(cfg, arn)?.split_once(':')?;
    (valid_topic_name(topic) && valid_uuid(id)).then_some((topic, id))
}

/// A UUID-shaped id (version 4 bits set) from `seed`.
pub fn mint_uuid(seed: &str) -> String {
    crate::model::uuid::v4_from(&Sha256::digest(seed.as_bytes()))
}

/// 8-4-4-4-12 lowercase or uppercase hex.
pub fn valid_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
    fn topic_names() {
        assert!(valid_topic_name("t1"));
        assert!(valid_topic_name("a-b_C.fifo"));
        assert!(valid_topic_name(&"x".repeat(256)));
        assert!(!valid_topic_name(&"x".repeat(257)));
        assert!(!valid_topic_name(""));
        assert!(!valid_topic_name(".fifo"));
        assert!(!valid_topic_name("a.b"));
        assert!(!valid_topic_name("a:b"));
    }

    #[test]
    fn arns_round_trip_and_foreign_ones_are_refused() {
        let c = cfg();
        let arn = topic_arn(&c, "orders");
        assert_eq!(topic_from_arn(&c, &arn), Some("orders"));
        let id = mint_uuid("rid/sub/0");
        assert!(valid_uuid(&id));
        let sub = subscription_arn(&c, "orders", &id);
        assert_eq!(
            subscription_from_arn(&c, &sub),
            Some(("orders", id.as_str()))
        );
        assert_eq!(topic_from_arn(&c, &sub), None);
        assert_eq!(subscription_from_arn(&c, &arn), None);
        let other = arn.replace(&c.account_id, "999999999999");
        assert_eq!(topic_from_arn(&c, &other), None);
        assert_eq!(
            topic_from_arn(&c, "arn:aws:sqs:us-east-1:000000000000:q"),
            None
        );
        assert_eq!(topic_from_arn(&c, "orders"), None);
        assert_ne!(mint_uuid("a"), mint_uuid("b"));
    }
}
