//! Confirming an `http`/`https` subscription: the token, and the `SubscriptionConfirmation`
//! POSTed to the endpoint when it is subscribed.
//!
//! The token is kept in the subscription's record, so any replica can check it. It is a
//! digest of the handle secret and the `Subscribe`'s request id: nobody without the secret
//! can make one, whatever request ids they have seen. The subscriber confirms with
//! `ConfirmSubscription(TopicArn, Token)`, signed or not, or a GET of `SubscribeURL`,
//! which is that same call.

use super::outbox::{Job, Kind};
use crate::ctx::Ctx;
use crate::http::Transport;
use crate::sns::arn::{mint_uuid, subscription_arn, topic_arn};
use crate::sns::publish::iso8601_ms;
use crate::sns::records::SubRecord;
use crate::sns::signing::{self, Version};
use crate::wire::ApiError;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A new subscription's confirmation token: 64 hex digits.
pub fn mint_token(handle_secret: &[u8], request_id: &str) -> String {
    let mut h = Sha256::new();
    h.update(handle_secret);
    h.update(b"\0sns-confirmation-token\0");
    h.update(request_id.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `token` has the shape of one [`mint_token`] makes (anything else was never
/// issued, and is not looked up).
pub fn is_token_shaped(token: &str) -> bool {
    token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Constant-time comparison: how many leading characters of a token match is not told.
pub fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The URL a GET of which confirms the subscription.
pub fn subscribe_url(base_url: &str, topic_arn: &str, token: &str) -> String {
    format!(
        "{base_url}/?Action=ConfirmSubscription&TopicArn={}&Token={}",
        percent_encode(topic_arn),
        percent_encode(token)
    )
}

/// The `SubscriptionConfirmation` document for `sub` (pending, with its token), signed
/// with the topic's signature version, as a POST for the outbox.
pub async fn confirmation<T: Transport>(
    ctx: &Ctx<'_, T>,
    sub: &SubRecord,
    signature_version: Option<&str>,
) -> Result<Job, ApiError> {
    let arn = topic_arn(ctx.cfg, &sub.topic);
    let message = format!(
        "You have chosen to subscribe to the topic {arn}.\nTo confirm the subscription, visit the SubscribeURL included in this message."
    );
    signed_link(
        ctx,
        sub,
        signature_version,
        Kind::SubscriptionConfirmation,
        message,
    )
    .await
}

/// The `UnsubscribeConfirmation` SNS sends when a subscription is removed by a GET of its
/// `UnsubscribeURL` (someone other than its owner may have followed it): its `SubscribeURL`
/// restores the subscription (`restore`). Carries the removed subscription.
pub async fn unsubscribed<T: Transport>(
    ctx: &Ctx<'_, T>,
    sub: &SubRecord,
    signature_version: Option<&str>,
) -> Result<Job, ApiError> {
    let arn = subscription_arn(ctx.cfg, &sub.topic, &sub.id);
    let message = format!(
        "You have chosen to deactivate subscription {arn}.\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message."
    );
    let mut job = signed_link(
        ctx,
        sub,
        signature_version,
        Kind::UnsubscribeConfirmation,
        message,
    )
    .await?;
    job.gone = Some(sub.clone());
    Ok(job)
}

/// A signed document of `kind` carrying the subscription's token and its `SubscribeURL`.
async fn signed_link<T: Transport>(
    ctx: &Ctx<'_, T>,
    sub: &SubRecord,
    signature_version: Option<&str>,
    kind: Kind,
    message: String,
) -> Result<Job, ApiError> {
    let token = sub.token.clone().unwrap_or_default();
    let arn = topic_arn(ctx.cfg, &sub.topic);
    let message_id = mint_uuid(&format!("{}/{}", ctx.request_id, kind.as_str()));
    let url = subscribe_url(&ctx.base_url, &arn, &token);
    let timestamp = iso8601_ms(ctx.now_ms);
    let version = Version::of(signature_version);
    let canonical = signing::canonical(&[
        ("Message", Some(&message)),
        ("MessageId", Some(&message_id)),
        ("SubscribeURL", Some(&url)),
        ("Timestamp", Some(&timestamp)),
        ("Token", Some(&token)),
        ("TopicArn", Some(&arn)),
        ("Type", Some(kind.as_str())),
    ]);
    let mut signer = signing::signer(ctx).await?;
    let signature = signer.sign(version, &canonical)?;
    let cert_url = signer.cert_url(&ctx.base_url);
    let doc = ordered_object(&[
        ("Type", kind.as_str()),
        ("MessageId", &message_id),
        ("Token", &token),
        ("TopicArn", &arn),
        ("Message", &message),
        ("SubscribeURL", &url),
        ("Timestamp", &timestamp),
        ("SignatureVersion", version.as_str()),
        ("Signature", &signature),
        ("SigningCertURL", &cert_url),
    ]);
    Ok(Job {
        kind,
        topic: sub.topic.clone(),
        sub: sub.id.clone(),
        message_id,
        body: doc,
        raw: false,
        gone: None,
    })
}

/// A JSON object of string fields, in the order given (AWS's order, which a JSON map
/// would sort away).
fn ordered_object(fields: &[(&str, &str)]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}:{}", Value::from(*k), Value::from(*v)))
        .collect();
    format!("{{{}}}", parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_depend_on_the_secret_and_compare_whole() {
        let a = mint_token(b"0123456789abcdef", "req-1");
        assert_eq!(a.len(), 64);
        assert_ne!(a, mint_token(b"0123456789abcdeF", "req-1"));
        assert_ne!(a, mint_token(b"0123456789abcdef", "req-2"));
        assert!(same_token(&a, &a.clone()));
        assert!(!same_token(&a, &a[..63]));
        assert!(!same_token(&a, &format!("{}0", &a[..63])) || a.ends_with('0'));
    }

    #[test]
    fn the_subscribe_url_carries_both_parameters_encoded() {
        let url = subscribe_url("http://h:1", "arn:aws:sns:us-east-1:000000000000:t", "ab");
        assert_eq!(
            url,
            "http://h:1/?Action=ConfirmSubscription&TopicArn=arn%3Aaws%3Asns%3Aus-east-1%3A000000000000%3At&Token=ab"
        );
    }
}
