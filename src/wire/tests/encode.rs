//! Encoding: an output value written as Query XML is what botocore's own Query parser
//! reads back as that value; JSON is the value itself.

use serde_json::{json, Value};

use super::{form_request, json_request, oracle};
use crate::http::Response;
use crate::wire::{encode_ok, recognise, Recognised, Service};

fn query_rec(action: &str, service: Service) -> Recognised {
    recognise(&form_request(&format!("Action={action}")), Some(service)).expect("recognised")
}

fn sqs_outputs() -> Vec<(&'static str, Value)> {
    vec![
        (
            "ReceiveMessage",
            json!({"Messages": [
            {"MessageId": "5fea7756-0ea4-451a-a703-a558b933e274", "ReceiptHandle": "AQEB+/=x",
             "MD5OfBody": "fafb00f5732ab283681e124bf8747ed1", "Body": "line1\r\nline2 <&> \"q\" 'a' ✓",
             "Attributes": {"SenderId": "AIDA", "ApproximateReceiveCount": "1", "SentTimestamp": "1700000000000"},
             "MD5OfMessageAttributes": "3ae8f24a165a8cedc005670c81a27295",
             "MessageAttributes": {
                "s": {"StringValue": "v", "DataType": "String"},
                "b": {"BinaryValue": "AAEC/w==", "DataType": "Binary"},
                "l": {"StringListValues": ["x", "y"], "DataType": "String"}}},
            {"MessageId": "m2", "ReceiptHandle": "h2", "MD5OfBody": "d", "Body": "two"}]}),
        ),
        (
            "SendMessage",
            json!({"MD5OfMessageBody": "a", "MD5OfMessageAttributes": "b", "MessageId": "c", "SequenceNumber": "18849496460467696128"}),
        ),
        (
            "SendMessageBatch",
            json!({
            "Successful": [{"Id": "a", "MessageId": "m", "MD5OfMessageBody": "x"}, {"Id": "b", "MessageId": "n", "MD5OfMessageBody": "y", "SequenceNumber": "1"}],
            "Failed": [{"Id": "c", "SenderFault": true, "Code": "InvalidParameterValue", "Message": "too long"}]}),
        ),
        (
            "DeleteMessageBatch",
            json!({"Successful": [{"Id": "1"}], "Failed": [{"Id": "2", "SenderFault": true, "Code": "ReceiptHandleIsInvalid"}]}),
        ),
        (
            "ChangeMessageVisibilityBatch",
            json!({"Successful": [{"Id": "1"}, {"Id": "2"}]}),
        ),
        (
            "ListQueues",
            json!({"QueueUrls": ["http://h/000000000000/a", "http://h/000000000000/b"], "NextToken": "t"}),
        ),
        (
            "GetQueueAttributes",
            json!({"Attributes": {"VisibilityTimeout": "30", "ApproximateNumberOfMessages": "0", "Policy": "{\"a\":\"<b>\"}"}}),
        ),
        (
            "ListQueueTags",
            json!({"Tags": {"team": "a", "env": "p&q"}}),
        ),
        (
            "CreateQueue",
            json!({"QueueUrl": "http://h/000000000000/q"}),
        ),
        (
            "GetQueueUrl",
            json!({"QueueUrl": "http://h/000000000000/q"}),
        ),
        (
            "ListDeadLetterSourceQueues",
            json!({"queueUrls": ["http://h/1/a"], "NextToken": "n"}),
        ),
        ("StartMessageMoveTask", json!({"TaskHandle": "th"})),
        (
            "CancelMessageMoveTask",
            json!({"ApproximateNumberOfMessagesMoved": 12}),
        ),
        (
            "ListMessageMoveTasks",
            json!({"Results": [{"TaskHandle": "t", "Status": "RUNNING", "SourceArn": "s", "DestinationArn": "d",
            "MaxNumberOfMessagesPerSecond": 5, "ApproximateNumberOfMessagesMoved": 1, "ApproximateNumberOfMessagesToMove": 2, "StartedTimestamp": 1700000000000i64}]}),
        ),
        ("DeleteMessage", json!({})),
        ("PurgeQueue", json!({})),
    ]
}

fn sns_outputs() -> Vec<(&'static str, Value)> {
    vec![
        (
            "ListTopics",
            json!({"Topics": [{"TopicArn": "arn:aws:sns:us-east-1:0:a"}, {"TopicArn": "arn:aws:sns:us-east-1:0:b"}], "NextToken": "n"}),
        ),
        (
            "ListSubscriptions",
            json!({"Subscriptions": [{"SubscriptionArn": "arn:s", "Owner": "0", "Protocol": "sqs", "Endpoint": "arn:q", "TopicArn": "arn:t"}]}),
        ),
        (
            "ListSubscriptionsByTopic",
            json!({"Subscriptions": [{"SubscriptionArn": "arn:s", "Protocol": "sqs"}], "NextToken": "x"}),
        ),
        (
            "GetTopicAttributes",
            json!({"Attributes": {"TopicArn": "arn:t", "Policy": "{\"x\":1}", "SubscriptionsPending": "0"}}),
        ),
        (
            "GetSubscriptionAttributes",
            json!({"Attributes": {"RawMessageDelivery": "true"}}),
        ),
        ("Publish", json!({"MessageId": "m", "SequenceNumber": "1"})),
        (
            "PublishBatch",
            json!({"Successful": [{"Id": "1", "MessageId": "m"}], "Failed": [{"Id": "2", "Code": "InvalidParameter", "Message": "bad", "SenderFault": true}]}),
        ),
        (
            "ListTagsForResource",
            json!({"Tags": [{"Key": "k", "Value": "v"}, {"Key": "k2", "Value": ""}]}),
        ),
        ("CreateTopic", json!({"TopicArn": "arn:t"})),
        ("Subscribe", json!({"SubscriptionArn": "arn:s"})),
        ("TagResource", json!({})),
        ("DeleteTopic", json!({})),
    ]
}

fn xml(resp: &Response) -> String {
    String::from_utf8(resp.body.clone()).expect("UTF-8")
}

fn round_trip(service: Service, outputs: Vec<(&'static str, Value)>) {
    let mut cases = Vec::new();
    for (action, output) in &outputs {
        let resp = encode_ok(&query_rec(action, service), output, "rid-7");
        assert_eq!(resp.status, 200);
        assert_eq!(resp.header("content-type"), Some("text/xml"));
        assert_eq!(resp.header("x-amzn-RequestId"), Some("rid-7"));
        cases.push(json!({"action": action, "status": 200, "headers": {"x-amzn-requestid": "rid-7"}, "body": xml(&resp)}));
    }
    let parsed = oracle::ask(&json!({
        "cmd": "parse",
        "service": if service == Service::Sqs { "sqs" } else { "sns" },
        "protocol": "query",
        "cases": cases,
    }));
    for ((action, want), got) in outputs.iter().zip(parsed.as_array().expect("list")) {
        let mut got = got.clone();
        let meta = got
            .as_object_mut()
            .expect("object")
            .remove("ResponseMetadata");
        assert_eq!(
            meta.map(|m| m["RequestId"].clone()),
            Some(json!("rid-7")),
            "{action}"
        );
        assert_eq!(&got, want, "{action}");
    }
}

#[test]
fn oracle_sqs_xml_outputs_parse_back_with_botocore() {
    round_trip(Service::Sqs, sqs_outputs());
}

#[test]
fn oracle_sns_xml_outputs_parse_back_with_botocore() {
    round_trip(Service::Sns, sns_outputs());
}

#[test]
fn sqs_xml_uses_query_era_names() {
    let (_, out) = sqs_outputs().remove(0);
    let body = xml(&encode_ok(
        &query_rec("ReceiveMessage", Service::Sqs),
        &out,
        "r",
    ));
    for needle in [
        "<ReceiveMessageResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><ReceiveMessageResult><Message><MessageId>",
        "<Body>line1&#xD;\nline2 &lt;&amp;&gt; &quot;q&quot; &apos;a&apos; ✓</Body>",
        "<Attribute><Name>SenderId</Name><Value>AIDA</Value></Attribute>",
        "<MessageAttribute><Name>s</Name><Value><StringValue>v</StringValue><DataType>String</DataType></Value></MessageAttribute>",
        "<StringListValue>x</StringListValue><StringListValue>y</StringListValue>",
        "</ReceiveMessageResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></ReceiveMessageResponse>",
    ] {
        assert!(body.contains(needle), "missing {needle} in {body}");
    }
    let body = xml(&encode_ok(
        &query_rec("ListQueues", Service::Sqs),
        &json!({"QueueUrls": ["a", "b"]}),
        "r",
    ));
    assert!(
        body.contains(
            "<ListQueuesResult><QueueUrl>a</QueueUrl><QueueUrl>b</QueueUrl></ListQueuesResult>"
        ),
        "{body}"
    );
    let body = xml(&encode_ok(
        &query_rec("ListQueueTags", Service::Sqs),
        &json!({"Tags": {"k": "v"}}),
        "r",
    ));
    assert!(
        body.contains("<Tag><Key>k</Key><Value>v</Value></Tag>"),
        "{body}"
    );
    let body = xml(&encode_ok(
        &query_rec("DeleteMessage", Service::Sqs),
        &json!({}),
        "r",
    ));
    assert!(body.ends_with("<DeleteMessageResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DeleteMessageResponse>"), "{body}");
}

#[test]
fn sns_xml_uses_member_and_entry() {
    let body = xml(&encode_ok(
        &query_rec("GetTopicAttributes", Service::Sns),
        &json!({"Attributes": {"A": "1"}}),
        "r",
    ));
    assert!(body.contains("<GetTopicAttributesResponse xmlns=\"http://sns.amazonaws.com/doc/2010-03-31/\"><GetTopicAttributesResult><Attributes><entry><key>A</key><value>1</value></entry></Attributes>"), "{body}");
    let body = xml(&encode_ok(
        &query_rec("ListTopics", Service::Sns),
        &json!({"Topics": [{"TopicArn": "t"}]}),
        "r",
    ));
    assert!(
        body.contains("<Topics><member><TopicArn>t</TopicArn></member></Topics>"),
        "{body}"
    );
    let body = xml(&encode_ok(
        &query_rec("TagResource", Service::Sns),
        &json!({}),
        "r",
    ));
    assert!(body.contains("<TagResourceResult/>"), "{body}");
}

#[test]
fn json_out_is_the_value_itself() {
    let rec = recognise(&json_request("AmazonSQS.ListQueues", b"{}"), None).unwrap();
    let out = json!({"QueueUrls": ["a"], "NextToken": "t"});
    let resp = encode_ok(&rec, &out, "rid");
    assert_eq!(resp.status, 200);
    assert_eq!(
        resp.header("content-type"),
        Some("application/x-amz-json-1.0")
    );
    assert_eq!(resp.header("x-amzn-RequestId"), Some("rid"));
    assert_eq!(serde_json::from_slice::<Value>(&resp.body).unwrap(), out);
    let rec = recognise(&json_request("AmazonSQS.DeleteMessage", b"{}"), None).unwrap();
    for out in [json!({}), Value::Null] {
        assert_eq!(encode_ok(&rec, &out, "rid").body, b"{}");
    }
}

#[test]
fn mistyped_outputs_do_not_panic() {
    let rec = query_rec("ReceiveMessage", Service::Sqs);
    for out in [
        json!(null),
        json!([1]),
        json!({"Messages": "x"}),
        json!({"Messages": [1, {"Attributes": [1]}, {"Body": {"a": 1}}]}),
    ] {
        let resp = encode_ok(&rec, &out, "r");
        assert_eq!(resp.status, 200);
    }
}

/// SQS answers a Query request that asks for JSON (`Accept: application/json`) with its
/// response document as JSON (recorded: test_get_list_queues_with_query_auth); without
/// the header, XML. SNS answers XML either way.
#[test]
fn a_query_request_asking_for_json_is_answered_in_json() {
    let mut req = form_request("Action=ListQueues&Version=2012-11-05");
    req.headers
        .push(("accept".into(), "application/json".into()));
    let rec = recognise(&req, None).expect("recognised");
    let out = json!({"QueueUrls": ["http://h/000000000000/q"]});
    let resp = encode_ok(&rec, &out, "rid");
    let body: Value = serde_json::from_slice(&resp.body).expect("JSON");
    assert_eq!(
        body["ListQueuesResponse"]["ListQueuesResult"]["QueueUrls"][0],
        "http://h/000000000000/q"
    );
    assert_eq!(
        body["ListQueuesResponse"]["ResponseMetadata"]["RequestId"],
        "rid"
    );
    let plain = encode_ok(&query_rec("ListQueues", Service::Sqs), &out, "rid");
    assert!(String::from_utf8_lossy(&plain.body).starts_with("<?xml"));
    let mut sns = form_request("Action=ListTopics&Version=2010-03-31");
    sns.headers
        .push(("accept".into(), "application/json".into()));
    let rec = recognise(&sns, None).expect("recognised");
    let resp = encode_ok(&rec, &json!({"Topics": []}), "rid");
    assert!(String::from_utf8_lossy(&resp.body).starts_with("<?xml"));
}
