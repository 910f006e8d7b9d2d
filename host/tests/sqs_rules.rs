//! Every SQS validation rule of the table (`rules/sqs_queues.rs`, `rules/sqs_messages.rs`),
//! one request per row, over both wire protocols, against a live endpoint. Each protocol
//! gets a fresh endpoint and fresh fixtures; the rows run in table order (a few depend on
//! the one before, e.g. a second PurgeQueue inside the cooldown). A run reports every
//! difference at once, then fails if there was one.

mod rules;
mod support;

use queen_sqs::wire::{ErrorCode, Service};
use rules::{check, from_json, from_xml, Rule};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use support::Endpoint;

const ACCOUNT: &str = "000000000000";

fn all_rules() -> Vec<Rule> {
    let mut v = rules::sqs_queues::RULES.to_vec();
    v.extend_from_slice(rules::sqs_messages::RULES);
    v
}

fn arn(name: &str) -> String {
    format!("arn:aws:sqs:us-east-1:{ACCOUNT}:{name}")
}

/// A receipt handle of a message sent to and received from `url` (600 s visibility).
async fn held_handle(ep: &Endpoint, url: &str) -> String {
    ep.sqs_ok(
        "SendMessage",
        json!({"QueueUrl": url, "MessageBody": "held"}),
    )
    .await;
    let got = ep
        .sqs_ok(
            "ReceiveMessage",
            json!({"QueueUrl": url, "VisibilityTimeout": 600, "WaitTimeSeconds": 5}),
        )
        .await;
    got["Messages"][0]["ReceiptHandle"]
        .as_str()
        .expect("a received message")
        .to_string()
}

/// The queues and handles the rows name, by placeholder.
async fn fixtures(ep: &Endpoint) -> BTreeMap<&'static str, String> {
    let fifo = json!({"FifoQueue": "true"});
    let mut v = BTreeMap::new();
    v.insert("std", ep.create_queue("std", json!({})).await);
    v.insert("fifo", ep.create_queue("fifo.fifo", fifo.clone()).await);
    let cbd = json!({"FifoQueue": "true", "ContentBasedDeduplication": "true"});
    v.insert("cbd", ep.create_queue("cbd.fifo", cbd).await);
    let small = json!({"MaximumMessageSize": "1024"});
    v.insert("small", ep.create_queue("small", small).await);
    v.insert("dlq", ep.create_queue("dlq", json!({})).await);
    let policy = json!({"deadLetterTargetArn": arn("dlq"), "maxReceiveCount": 3}).to_string();
    ep.create_queue("src", json!({ "RedrivePolicy": policy }))
        .await;
    ep.create_queue("fdlq.fifo", fifo).await;
    for name in ["scratch", "held", "held2", "empty", "purgeme"] {
        v.insert(name, ep.create_queue(name, json!({})).await);
    }
    let tags: serde_json::Map<String, Value> =
        (0..50).map(|i| (format!("k{i}"), json!("v"))).collect();
    let tagged = ep
        .sqs_ok("CreateQueue", json!({"QueueName": "tags50", "tags": tags}))
        .await;
    v.insert("tags50", tagged["QueueUrl"].as_str().unwrap().to_string());
    let handle = held_handle(ep, &v["held"]).await;
    v.insert("handle", handle);
    let other = held_handle(ep, &v["held2"]).await;
    v.insert("other_handle", other);
    let base = v["std"].trim_end_matches("/std").to_string();
    v.insert("gone", format!("{base}/gone"));
    v.insert(
        "foreign",
        format!(
            "{}/123456789012/std",
            base.trim_end_matches(ACCOUNT).trim_end_matches('/')
        ),
    );
    for (key, name) in [
        ("std_arn", "std"),
        ("dlq_arn", "dlq"),
        ("fdlq_arn", "fdlq.fifo"),
        ("scratch_arn", "scratch"),
        ("gone_arn", "gone"),
    ] {
        v.insert(key, arn(name));
    }
    v
}

/// The Query `<Code>` of an error shape: the catalog's legacy code (checked against
/// botocore's query-era model by the core's catalog test).
fn query_code(shape: &str) -> String {
    ErrorCode::ALL
        .iter()
        .find(|c| c.shape() == shape && c.json_type_prefix(Service::Sqs) != "com.amazonaws.sns#")
        .map(|c| c.code().to_string())
        .unwrap_or_else(|| format!("<{shape} is not in the catalog>"))
}

#[derive(Clone, Copy, PartialEq)]
enum Protocol {
    Json,
    Query,
}

async fn run(protocol: Protocol) {
    let ep = Endpoint::start().await;
    let vars = fixtures(&ep).await;
    let rules = all_rules();
    let mut diffs = Vec::new();
    for rule in &rules {
        let text = rules::expand(rule.input, &vars);
        let input: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: input is not JSON ({e}): {text}", rule.id));
        let diff = match protocol {
            Protocol::Json => {
                let (status, body) = ep.sqs(rule.action, input).await;
                check(rule, &from_json(status, &body), str::to_string)
            }
            Protocol::Query => {
                let params = rules::sqs_query(rule.action, &input);
                let refs: Vec<(&str, &str)> = params
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                let (status, xml) = ep.query("/", &refs).await;
                check(rule, &from_xml(status, &xml), query_code)
            }
        };
        diffs.extend(diff);
    }
    let name = if protocol == Protocol::Json {
        "JSON"
    } else {
        "Query"
    };
    eprintln!(
        "SQS rules over {name}: {} rows, {} differ",
        rules.len(),
        diffs.len()
    );
    assert!(diffs.is_empty(), "rows that differ:\n{}", diffs.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sqs_rule_over_json() {
    run(Protocol::Json).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sqs_rule_over_query() {
    run(Protocol::Query).await;
}

#[test]
fn the_sqs_table_is_well_formed() {
    let rules = all_rules();
    rules::check_table(&rules);
    let per = rules::per_action(&rules);
    eprintln!("SQS rules: {} rows; per action: {per:?}", rules.len());
    // Every SQS action has at least one row.
    assert_eq!(
        per.keys()
            .filter(|a| a.chars().next().is_some_and(char::is_uppercase) && **a != "Nope")
            .count(),
        23,
        "{per:?}"
    );
}
