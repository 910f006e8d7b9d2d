//! Every SNS validation rule of the table (`rules/sns_table.rs`), one Query request per
//! row (SNS has no JSON protocol), against a live endpoint with fresh fixtures. The rows
//! run in table order; a run reports every difference at once, then fails if there was one.

mod rules;
mod support;

use rules::{check, from_xml, tags_all};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use support::Endpoint;

const ACCOUNT: &str = "000000000000";

async fn sns(ep: &Endpoint, action: &str, input: &Value) -> (u16, String) {
    let params = rules::sns_query(action, input);
    let refs: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    ep.query("/", &refs).await
}

async fn sns_ok(ep: &Endpoint, action: &str, input: Value) -> String {
    let (status, xml) = sns(ep, action, &input).await;
    assert_eq!(status, 200, "{action} failed: {xml}");
    xml
}

async fn topic(ep: &Endpoint, input: Value) -> String {
    let xml = sns_ok(ep, "CreateTopic", input).await;
    tags_all(&xml, "TopicArn").remove(0)
}

async fn fixtures(ep: &Endpoint) -> BTreeMap<&'static str, String> {
    let mut v = BTreeMap::new();
    v.insert("topic", topic(ep, json!({"Name": "t"})).await);
    let fifo = json!({"Name": "f.fifo", "Attributes": {"FifoTopic": "true"}});
    v.insert("ftopic", topic(ep, fifo).await);
    let cbd = json!({"Name": "c.fifo",
        "Attributes": {"FifoTopic": "true", "ContentBasedDeduplication": "true"}});
    v.insert("ctopic", topic(ep, cbd).await);
    let tags: Vec<Value> = (0..50)
        .map(|i| json!({"Key": format!("k{i}"), "Value": "v"}))
        .collect();
    v.insert("t50", topic(ep, json!({"Name": "t50", "Tags": tags})).await);
    ep.create_queue("subq", json!({})).await;
    ep.create_queue("subq.fifo", json!({"FifoQueue": "true"}))
        .await;
    v.insert("subq_arn", format!("arn:aws:sqs:us-east-1:{ACCOUNT}:subq"));
    v.insert(
        "fsubq_arn",
        format!("arn:aws:sqs:us-east-1:{ACCOUNT}:subq.fifo"),
    );
    let sub = json!({"TopicArn": v["topic"], "Protocol": "sqs", "Endpoint": v["subq_arn"]});
    let xml = sns_ok(ep, "Subscribe", sub).await;
    v.insert("sub", tags_all(&xml, "SubscriptionArn").remove(0));
    v.insert(
        "no_topic",
        format!("arn:aws:sns:us-east-1:{ACCOUNT}:no-such-topic"),
    );
    v.insert(
        "no_sub",
        format!("arn:aws:sns:us-east-1:{ACCOUNT}:t:00000000-0000-4000-8000-000000000000"),
    );
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sns_rule_over_query() {
    let ep = Endpoint::start().await;
    let vars = fixtures(&ep).await;
    let mut diffs = Vec::new();
    for rule in rules::sns_table::RULES {
        let text = rules::expand(rule.input, &vars);
        let input: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: input is not JSON ({e}): {text}", rule.id));
        let (status, xml) = sns(&ep, rule.action, &input).await;
        diffs.extend(check(rule, &from_xml(status, &xml), str::to_string));
    }
    eprintln!(
        "SNS rules over Query: {} rows, {} differ",
        rules::sns_table::RULES.len(),
        diffs.len()
    );
    assert!(diffs.is_empty(), "rows that differ:\n{}", diffs.join("\n"));
}

#[test]
fn the_sns_table_is_well_formed() {
    let rules = rules::sns_table::RULES;
    rules::check_table(rules);
    let per = rules::per_action(rules);
    eprintln!("SNS rules: {} rows; per action: {per:?}", rules.len());
    // The 17 SNS actions, SNS's AddPermission/RemovePermission, and one action outside
    // the set.
    assert_eq!(per.len(), 20, "{per:?}");
}
