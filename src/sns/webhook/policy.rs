//! When a failed POST is tried again: SNS's HTTP/S delivery policy.
//!
//! A policy's `healthyRetryPolicy` spends `numRetries` retries in four phases, in order:
//! `numNoDelayRetries` at once, `numMinDelayRetries` after `minDelayTarget` seconds, the
//! backoff phase (the retries left) rising from `minDelayTarget` to `maxDelayTarget` by
//! `backoffFunction`, and `numMaxDelayRetries` after `maxDelayTarget`. The subscription's
//! `DeliveryPolicy` applies unless the topic's `http.disableSubscriptionOverrides` is true;
//! otherwise the topic's `http.defaultHealthyRetryPolicy`; otherwise SNS's default of
//! three retries 20 s apart. The backoff curves are this endpoint's reading of the four
//! names (AWS publishes their shapes as a chart, not as formulas): `linear` steps evenly,
//! `arithmetic` rises with the square of the step, `geometric` and `exponential` by a
//! constant factor.
//!
//! The same documents give the POSTs' pace and header: `throttlePolicy.maxReceivesPerSecond`
//! (the topic's `http.defaultThrottlePolicy`) and `requestPolicy.headerContentType` (the
//! topic's `http.defaultRequestPolicy`), chosen the same way.

use serde_json::Value;

/// SNS's bounds on the policy's fields.
const MAX_RETRIES: u32 = 100;
const MAX_DELAY_S: u32 = 3600;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backoff {
    Linear,
    Arithmetic,
    Geometric,
    Exponential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub num_retries: u32,
    pub no_delay: u32,
    pub min_delay_s: u32,
    pub max_delay_s: u32,
    pub at_min: u32,
    pub at_max: u32,
    pub backoff: Backoff,
}

impl Default for RetryPolicy {
    /// SNS's default for HTTP/S: three retries, 20 seconds apart.
    fn default() -> Self {
        RetryPolicy {
            num_retries: 3,
            no_delay: 0,
            min_delay_s: 20,
            max_delay_s: 20,
            at_min: 0,
            at_max: 0,
            backoff: Backoff::Linear,
        }
    }
}

/// One part of the policy in force for a subscription: the subscription's `part` unless
/// the topic's `http.disableSubscriptionOverrides` is true, else the topic's `http.<default>`.
fn part_in_force(
    topic: Option<&str>,
    subscription: Option<&str>,
    part: &str,
    default: &str,
) -> Option<Value> {
    let topic: Option<Value> = topic.and_then(|t| serde_json::from_str(t).ok());
    let http = topic.as_ref().and_then(|t| t.get("http"));
    let overrides_off = http
        .and_then(|h| h.get("disableSubscriptionOverrides"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let from_sub = subscription
        .filter(|_| !overrides_off)
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|s| s.get(part).cloned());
    from_sub.or_else(|| http.and_then(|h| h.get(default)).cloned())
}

/// The most POSTs a second a subscription takes, if its policy says
/// (`maxReceivesPerSecond`, at least 1).
pub fn max_per_second(topic: Option<&str>, subscription: Option<&str>) -> Option<u32> {
    let doc = part_in_force(
        topic,
        subscription,
        "throttlePolicy",
        "defaultThrottlePolicy",
    )?;
    let v = doc.get("maxReceivesPerSecond")?;
    let n = v.as_u64().or_else(|| v.as_str()?.parse().ok())?;
    Some(n.clamp(1, u64::from(u32::MAX)) as u32)
}

/// The media types SNS lets `headerContentType` name.
const CONTENT_TYPES: [&str; 7] = [
    "application/json",
    "application/xml",
    "text/css",
    "text/csv",
    "text/html",
    "text/plain",
    "text/xml",
];

/// The `Content-Type` the POSTs carry: the policy's `headerContentType` when it names one
/// of SNS's media types (with parameters, such as a charset), else SNS's default.
pub fn content_type(topic: Option<&str>, subscription: Option<&str>) -> String {
    let chosen = part_in_force(topic, subscription, "requestPolicy", "defaultRequestPolicy")
        .and_then(|d| d.get("headerContentType")?.as_str().map(str::to_string))
        .filter(|t| {
            let media = t.split(';').next().unwrap_or("").trim();
            CONTENT_TYPES.contains(&media.to_ascii_lowercase().as_str())
                && !t.chars().any(|c| c.is_control())
        });
    chosen.unwrap_or_else(|| "text/plain; charset=UTF-8".to_string())
}

impl RetryPolicy {
    /// The policy in force for a subscription, from the two `DeliveryPolicy` documents.
    pub fn effective(topic: Option<&str>, subscription: Option<&str>) -> RetryPolicy {
        part_in_force(
            topic,
            subscription,
            "healthyRetryPolicy",
            "defaultHealthyRetryPolicy",
        )
        .map(|doc| RetryPolicy::read(&doc))
        .unwrap_or_default()
    }

    /// A `healthyRetryPolicy` object; a field missing or out of SNS's bounds takes the
    /// default's value (or the bound).
    fn read(doc: &Value) -> RetryPolicy {
        let d = RetryPolicy::default();
        let num = |name: &str, default: u32, max: u32| {
            doc.get(name)
                .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
                .map_or(default, |v| v.min(u64::from(max)) as u32)
        };
        let min_delay_s = num("minDelayTarget", d.min_delay_s, MAX_DELAY_S).max(1);
        let backoff = match doc.get("backoffFunction").and_then(Value::as_str) {
            Some("arithmetic") => Backoff::Arithmetic,
            Some("geometric") => Backoff::Geometric,
            Some("exponential") => Backoff::Exponential,
            _ => Backoff::Linear,
        };
        RetryPolicy {
            num_retries: num("numRetries", d.num_retries, MAX_RETRIES),
            no_delay: num("numNoDelayRetries", 0, MAX_RETRIES),
            min_delay_s,
            max_delay_s: num("maxDelayTarget", d.max_delay_s, MAX_DELAY_S).max(min_delay_s),
            at_min: num("numMinDelayRetries", 0, MAX_RETRIES),
            at_max: num("numMaxDelayRetries", 0, MAX_RETRIES),
            backoff,
        }
    }

    /// Seconds to wait before retry `n` (1 is the first retry, after the first attempt);
    /// `None` when the policy has no retry `n`.
    pub fn delay_before(&self, n: u32) -> Option<u32> {
        if n == 0 || n > self.num_retries {
            return None;
        }
        let backoff_phase = self
            .num_retries
            .saturating_sub(self.no_delay + self.at_min + self.at_max);
        if n <= self.no_delay {
            return Some(0);
        }
        let n = n - self.no_delay;
        if n <= self.at_min {
            return Some(self.min_delay_s);
        }
        let n = n - self.at_min;
        if n > backoff_phase {
            return Some(self.max_delay_s);
        }
        Some(self.backoff_delay(n, backoff_phase))
    }

    /// Step `k` of `steps` of the backoff phase: `minDelayTarget` at the first step,
    /// `maxDelayTarget` at the last.
    fn backoff_delay(&self, k: u32, steps: u32) -> u32 {
        let (lo, hi) = (f64::from(self.min_delay_s), f64::from(self.max_delay_s));
        if steps <= 1 {
            return self.min_delay_s;
        }
        let t = f64::from(k - 1) / f64::from(steps - 1);
        let d = match self.backoff {
            Backoff::Linear => lo + (hi - lo) * t,
            Backoff::Arithmetic => lo + (hi - lo) * t * t,
            Backoff::Geometric | Backoff::Exponential => lo * (hi / lo).powf(t),
        };
        (d.round() as u32).clamp(self.min_delay_s, self.max_delay_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delays(p: &RetryPolicy) -> Vec<u32> {
        (1..=p.num_retries + 1)
            .map_while(|n| p.delay_before(n))
            .collect()
    }

    #[test]
    fn the_default_is_three_retries_twenty_seconds_apart() {
        assert_eq!(
            delays(&RetryPolicy::effective(None, None)),
            vec![20, 20, 20]
        );
        assert_eq!(RetryPolicy::default().delay_before(0), None);
        assert_eq!(RetryPolicy::default().delay_before(4), None);
    }

    #[test]
    fn the_four_phases_come_in_order() {
        let sub = r#"{"healthyRetryPolicy":{"numRetries":9,"numNoDelayRetries":2,"numMinDelayRetries":1,"numMaxDelayRetries":2,"minDelayTarget":1,"maxDelayTarget":9,"backoffFunction":"linear"}}"#;
        let p = RetryPolicy::effective(None, Some(sub));
        // 2 at once, 1 at the minimum, 4 rising from 1 to 9, 2 at the maximum.
        assert_eq!(delays(&p), vec![0, 0, 1, 1, 4, 6, 9, 9, 9]);
        let exp = RetryPolicy {
            backoff: Backoff::Exponential,
            ..p
        };
        assert_eq!(delays(&exp), vec![0, 0, 1, 1, 2, 4, 9, 9, 9]);
    }

    #[test]
    fn the_topic_decides_when_it_disables_overrides() {
        let topic = r#"{"http":{"defaultHealthyRetryPolicy":{"numRetries":1,"minDelayTarget":5,"maxDelayTarget":5},"disableSubscriptionOverrides":true}}"#;
        let sub =
            r#"{"healthyRetryPolicy":{"numRetries":5,"minDelayTarget":1,"maxDelayTarget":1}}"#;
        assert_eq!(
            delays(&RetryPolicy::effective(Some(topic), Some(sub))),
            vec![5]
        );
        let open = topic.replace("true", "false");
        assert_eq!(
            delays(&RetryPolicy::effective(Some(&open), Some(sub))),
            vec![1; 5]
        );
        assert_eq!(delays(&RetryPolicy::effective(Some(&open), None)), vec![5]);
    }

    #[test]
    fn the_pace_and_the_content_type_come_from_the_policy_in_force() {
        let sub = r#"{"throttlePolicy":{"maxReceivesPerSecond":3},"requestPolicy":{"headerContentType":"application/json; charset=UTF-8"}}"#;
        assert_eq!(max_per_second(None, Some(sub)), Some(3));
        assert_eq!(
            content_type(None, Some(sub)),
            "application/json; charset=UTF-8"
        );
        assert_eq!(max_per_second(None, None), None);
        assert_eq!(content_type(None, None), "text/plain; charset=UTF-8");
        let topic = r#"{"http":{"defaultThrottlePolicy":{"maxReceivesPerSecond":0},"defaultRequestPolicy":{"headerContentType":"text/xml"},"disableSubscriptionOverrides":true}}"#;
        assert_eq!(max_per_second(Some(topic), Some(sub)), Some(1));
        assert_eq!(content_type(Some(topic), Some(sub)), "text/xml");
        // Not one of SNS's media types, or a header injection: the default.
        let odd = r#"{"requestPolicy":{"headerContentType":"image/png"}}"#;
        assert_eq!(content_type(None, Some(odd)), "text/plain; charset=UTF-8");
        let hostile = "{\"requestPolicy\":{\"headerContentType\":\"text/plain\\r\\nX: 1\"}}";
        assert_eq!(
            content_type(None, Some(hostile)),
            "text/plain; charset=UTF-8"
        );
    }

    #[test]
    fn out_of_bounds_values_are_held_to_sns_bounds() {
        let sub = r#"{"healthyRetryPolicy":{"numRetries":1000,"minDelayTarget":0,"maxDelayTarget":99999}}"#;
        let p = RetryPolicy::effective(None, Some(sub));
        assert_eq!(p.num_retries, MAX_RETRIES);
        assert_eq!(p.min_delay_s, 1);
        assert_eq!(p.max_delay_s, MAX_DELAY_S);
        assert!(delays(&p).iter().all(|d| (1..=MAX_DELAY_S).contains(d)));
        let garbage = RetryPolicy::effective(Some("not json"), Some("[1]"));
        assert_eq!(garbage, RetryPolicy::default());
    }
}
