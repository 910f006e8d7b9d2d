//! The SQS queue lifecycle through the real host: create (idempotency, races, naming,
//! the registry-first claim), GetQueueUrl, ListQueues paging, delete and its
//! tombstone, the Query protocol addressing a queue by its URL path.

mod support;

use bytes::Bytes;
use serde_json::{json, Map, Value};
use support::Endpoint;

const ACCOUNT: &str = "000000000000";

async fn attrs(ep: &Endpoint, url: &str, names: &[&str]) -> Map<String, Value> {
    let v = ep
        .sqs_ok(
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": names}),
        )
        .await;
    v.get("Attributes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The broker's own queues named `name` (the registry is not consulted).
async fn broker_queues_named(ep: &Endpoint, name: &str) -> usize {
    let (status, _, body) = ep
        .broker
        .handle("GET", "/api/v1/resources/queues", Bytes::new())
        .await;
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&body).unwrap();
    v["queues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["name"] == name)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_answers_a_url_on_the_host_the_client_reached_and_configures_the_broker() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("orders", json!({})).await;
    assert_eq!(url, format!("{}/{ACCOUNT}/orders", ep.url));
    assert_eq!(broker_queues_named(&ep, "orders").await, 1);

    let got = ep
        .sqs_ok("GetQueueUrl", json!({"QueueName": "orders"}))
        .await;
    assert_eq!(got["QueueUrl"], url.as_str());
    let same_account = ep
        .sqs_ok(
            "GetQueueUrl",
            json!({"QueueName": "orders", "QueueOwnerAWSAccountId": ACCOUNT}),
        )
        .await;
    assert_eq!(same_account["QueueUrl"], url.as_str());

    // The defaults SQS gives a standard queue; the width only when named.
    let a = attrs(&ep, &url, &["All"]).await;
    assert_eq!(a["VisibilityTimeout"], "30");
    assert_eq!(a["MaximumMessageSize"], "1048576");
    assert_eq!(a["MessageRetentionPeriod"], "345600");
    assert_eq!(a["DelaySeconds"], "0");
    assert_eq!(a["ReceiveMessageWaitTimeSeconds"], "0");
    assert!(a.get("queen.partitions").is_none(), "{a:?}");
    let width = attrs(&ep, &url, &["queen.partitions"]).await;
    assert_eq!(width["queen.partitions"], "64");
    assert_eq!(
        a["QueueArn"],
        format!("arn:aws:sqs:us-east-1:{ACCOUNT}:orders")
    );
    assert!(a.get("FifoQueue").is_none(), "{a:?}");
    let created: i64 = a["CreatedTimestamp"].as_str().unwrap().parse().unwrap();
    assert!(created > 1_600_000_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_queue_is_declared_by_its_suffix_and_has_fifo_defaults() {
    let ep = Endpoint::start().await;
    // The suffix alone is a standard queue's name with a `.` in it, as on SQS.
    let (status, ty) = ep
        .sqs_err("CreateQueue", json!({"QueueName": "jobs.fifo"}))
        .await;
    assert_eq!(
        (status, ty.as_str()),
        (400, "InvalidParameterValueException")
    );
    let url = ep
        .create_queue("jobs.fifo", json!({"FifoQueue": "true"}))
        .await;
    let a = attrs(&ep, &url, &["All"]).await;
    assert_eq!(a["FifoQueue"], "true");
    assert_eq!(a["ContentBasedDeduplication"], "false");
    assert_eq!(a["DeduplicationScope"], "queue");
    assert_eq!(a["FifoThroughputLimit"], "perQueue");
    assert!(a.get("queen.dedupWindowSeconds").is_none(), "{a:?}");
    let ours = attrs(&ep, &url, &["queen.dedupWindowSeconds", "queen.partitions"]).await;
    assert_eq!(ours["queen.dedupWindowSeconds"], "300");
    assert!(ours.get("queen.partitions").is_none(), "{ours:?}");
    // A repeat names the same queue.
    let again = ep
        .create_queue("jobs.fifo", json!({"FifoQueue": "true"}))
        .await;
    assert_eq!(again, url);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_is_idempotent_unless_a_supplied_attribute_differs() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue(
            "idem",
            json!({"VisibilityTimeout": "45", "queen.partitions": "8"}),
        )
        .await;
    // Same values (in another spelling), a subset, nothing at all: the same URL.
    for attrs in [
        json!({"VisibilityTimeout": "045"}),
        json!({"queen.partitions": "8"}),
        json!({}),
        json!({"DelaySeconds": "0"}),
    ] {
        assert_eq!(ep.create_queue("idem", attrs).await, url);
    }
    for differing in [
        json!({"VisibilityTimeout": "46"}),
        json!({"DelaySeconds": "5"}),
        json!({"queen.partitions": "9"}),
        json!({"Policy": "{\"Version\":\"2012-10-17\"}"}),
    ] {
        assert_eq!(
            ep.sqs_err(
                "CreateQueue",
                json!({"QueueName": "idem", "Attributes": differing})
            )
            .await,
            (400, "QueueNameExists".to_string())
        );
    }
    // Tags on an existing queue are neither compared nor applied.
    let v = ep
        .sqs_ok(
            "CreateQueue",
            json!({"QueueName": "idem", "tags": {"team": "x"}}),
        )
        .await;
    assert_eq!(v["QueueUrl"], url.as_str());
    let tags = ep.sqs_ok("ListQueueTags", json!({"QueueUrl": url})).await;
    assert!(tags.get("Tags").is_none(), "{tags}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_get_queue_attributes_answers_create_queue_accepts_back() {
    let ep = Endpoint::start().await;
    let dlq = ep.create_queue("rt-dlq", json!({})).await;
    let dlq_arn = attrs(&ep, &dlq, &["QueueArn"]).await["QueueArn"].clone();
    let url = ep
        .create_queue(
            "rt",
            json!({
                "VisibilityTimeout": "120",
                "DelaySeconds": "3",
                "MessageRetentionPeriod": "3600",
                "Policy": "{\"Version\":\"2012-10-17\",\"Statement\":[]}",
                "RedrivePolicy": format!("{{\"deadLetterTargetArn\":{dlq_arn},\"maxReceiveCount\":\"4\"}}"),
                "queen.partitions": "16"
            }),
        )
        .await;
    let all = attrs(&ep, &url, &["All"]).await;
    assert_eq!(
        all["RedrivePolicy"],
        format!("{{\"deadLetterTargetArn\":{dlq_arn},\"maxReceiveCount\":4}}")
    );
    assert_eq!(ep.create_queue("rt", Value::Object(all.clone())).await, url);

    let fifo = ep
        .create_queue(
            "rt.fifo",
            json!({"FifoQueue": "true", "ContentBasedDeduplication": "true"}),
        )
        .await;
    let all = attrs(&ep, &fifo, &["All"]).await;
    assert_eq!(ep.create_queue("rt.fifo", Value::Object(all)).await, fifo);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_creates_make_one_queue_and_answer_the_losers_by_the_rule() {
    let ep = std::sync::Arc::new(Endpoint::start().await);
    let mut joins = Vec::new();
    for i in 0..8 {
        let ep = ep.clone();
        joins.push(tokio::spawn(async move {
            ep.sqs(
                "CreateQueue",
                json!({"QueueName": "race", "Attributes": {"VisibilityTimeout": (10 + i).to_string()}}),
            )
            .await
        }));
    }
    let mut winners = Vec::new();
    for (i, j) in joins.into_iter().enumerate() {
        let (status, body) = j.await.unwrap();
        if status == 200 {
            winners.push(i);
        } else {
            assert_eq!(status, 400, "{body}");
            assert!(
                body["__type"]
                    .as_str()
                    .unwrap()
                    .ends_with("#QueueNameExists"),
                "{body}"
            );
        }
    }
    assert_eq!(
        winners.len(),
        1,
        "exactly one attribute set wins: {winners:?}"
    );
    let url = format!("{}/{ACCOUNT}/race", ep.url);
    let a = attrs(&ep, &url, &["VisibilityTimeout"]).await;
    assert_eq!(a["VisibilityTimeout"], (10 + winners[0]).to_string());
    assert_eq!(broker_queues_named(&ep, "race").await, 1);

    // Racing creates that agree all succeed, still one queue.
    let mut joins = Vec::new();
    for _ in 0..8 {
        let ep = ep.clone();
        joins.push(tokio::spawn(async move {
            ep.sqs(
                "CreateQueue",
                json!({"QueueName": "calm", "Attributes": {"DelaySeconds": "2"}}),
            )
            .await
        }));
    }
    for j in joins {
        let (status, body) = j.await.unwrap();
        assert_eq!(status, 200, "{body}");
    }
    assert_eq!(broker_queues_named(&ep, "calm").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_queue_not_created_through_sqs_is_not_adopted() {
    let ep = Endpoint::start().await;
    let (status, _, _) = ep
        .broker
        .handle(
            "POST",
            "/api/v1/configure",
            Bytes::from(json!({"queue": "native", "options": {"leaseTime": 7}}).to_string()),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        ep.sqs_err("CreateQueue", json!({"QueueName": "native"}))
            .await,
        (400, "QueueNameExists".to_string())
    );
    assert_eq!(
        ep.sqs_err("GetQueueUrl", json!({"QueueName": "native"}))
            .await,
        (400, "QueueDoesNotExist".to_string())
    );
    let list = ep.sqs_ok("ListQueues", json!({})).await;
    assert!(list.get("QueueUrls").is_none(), "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_refuses_bad_names_and_missing_names() {
    let ep = Endpoint::start().await;
    assert_eq!(
        ep.sqs_err("CreateQueue", json!({})).await,
        (400, "MissingRequiredParameterException".to_string())
    );
    for bad in ["", "a.b", "has space", "x/y", ".fifo", &"n".repeat(81)] {
        assert_eq!(
            ep.sqs_err("CreateQueue", json!({"QueueName": bad})).await,
            (400, "InvalidParameterValueException".to_string()),
            "{bad:?}"
        );
    }
    let longest = "n".repeat(80);
    assert!(ep
        .create_queue(&longest, json!({}))
        .await
        .ends_with(&longest));
    // FifoQueue must agree with the name; SQS answers FifoQueue=false as unknown.
    assert_eq!(
        ep.sqs_err(
            "CreateQueue",
            json!({"QueueName": "plain", "Attributes": {"FifoQueue": "true"}})
        )
        .await,
        (400, "InvalidParameterValueException".to_string())
    );
    assert_eq!(
        ep.sqs_err(
            "CreateQueue",
            json!({"QueueName": "plain", "Attributes": {"FifoQueue": "false"}})
        )
        .await,
        (400, "InvalidAttributeName".to_string())
    );
    assert_eq!(
        ep.sqs_err(
            "CreateQueue",
            json!({"QueueName": "f.fifo", "Attributes": {"FifoQueue": "false"}})
        )
        .await,
        (400, "InvalidAttributeName".to_string())
    );
    assert_eq!(
        ep.sqs_err(
            "CreateQueue",
            json!({"QueueName": "f.fifo", "Attributes": {"FifoQueue": "yes"}})
        )
        .await,
        (400, "InvalidAttributeValue".to_string())
    );
    // Nothing was created by any of the refusals.
    let list = ep
        .sqs_ok("ListQueues", json!({"QueueNamePrefix": "plain"}))
        .await;
    assert!(list.get("QueueUrls").is_none(), "{list}");
    assert_eq!(broker_queues_named(&ep, "plain").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_queue_url_refuses_other_accounts_and_unknown_names() {
    let ep = Endpoint::start().await;
    ep.create_queue("mine", json!({})).await;
    assert_eq!(
        ep.sqs_err(
            "GetQueueUrl",
            json!({"QueueName": "mine", "QueueOwnerAWSAccountId": "123456789012"})
        )
        .await,
        (400, "QueueDoesNotExist".to_string())
    );
    assert_eq!(
        ep.sqs_err("GetQueueUrl", json!({"QueueName": "theirs"}))
            .await,
        (400, "QueueDoesNotExist".to_string())
    );
    assert_eq!(
        ep.sqs_err("GetQueueUrl", json!({"QueueName": "../mine"}))
            .await,
        (400, "QueueDoesNotExist".to_string())
    );
    assert_eq!(
        ep.sqs_err("GetQueueUrl", json!({})).await,
        (400, "MissingRequiredParameterException".to_string())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_urls_of_another_account_or_with_traversal_do_not_exist() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("x", json!({})).await;
    assert_eq!(url, format!("{}/{ACCOUNT}/x", ep.url));
    for bad in [
        format!("{}/123456789012/x", ep.url),
        format!("{}/{ACCOUNT}/../x", ep.url),
        format!("{}/{ACCOUNT}/x/y", ep.url),
        "not a url".to_string(),
    ] {
        for action in [
            "GetQueueAttributes",
            "DeleteQueue",
            "PurgeQueue",
            "ListQueueTags",
        ] {
            assert_eq!(
                ep.sqs_err(action, json!({"QueueUrl": bad, "AttributeNames": ["All"]}))
                    .await,
                (400, "QueueDoesNotExist".to_string()),
                "{action} {bad}"
            );
        }
    }
    // And the queue survived all of it.
    assert_eq!(
        attrs(&ep, &url, &["DelaySeconds"]).await["DelaySeconds"],
        "0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_removes_both_halves_and_holds_the_name_for_a_minute() {
    let ep = Endpoint::start().await;
    let url = ep.create_queue("gone", json!({})).await;
    // A pending delayed send would re-create the queue when it fires.
    let (status, _, body) = ep
        .broker
        .handle(
            "POST",
            "/api/v1/timers",
            Bytes::from(
                json!({"operations": [{"op": "schedule", "queue": "gone", "timerKey": "sqs.k1",
                    "partition": "0", "delayMs": 600000, "txn": "k1", "payload": "eyJiIjoieCJ9"}]})
                .to_string(),
            ),
        )
        .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        attrs(&ep, &url, &["ApproximateNumberOfMessagesDelayed"]).await
            ["ApproximateNumberOfMessagesDelayed"],
        "1"
    );

    ep.sqs_ok("DeleteQueue", json!({"QueueUrl": url})).await;
    assert_eq!(broker_queues_named(&ep, "gone").await, 0);
    assert_eq!(
        ep.broker.timer_count("gone", "sqs.").await,
        0,
        "the delayed send was cancelled"
    );

    assert_eq!(
        ep.sqs_err("GetQueueUrl", json!({"QueueName": "gone"}))
            .await,
        (400, "QueueDoesNotExist".to_string())
    );
    assert_eq!(
        ep.sqs_err("DeleteQueue", json!({"QueueUrl": url})).await,
        (400, "QueueDoesNotExist".to_string())
    );
    assert_eq!(
        ep.sqs_err("CreateQueue", json!({"QueueName": "gone"}))
            .await,
        (400, "QueueDeletedRecently".to_string())
    );
    // Another name is unaffected.
    ep.create_queue("gone2", json!({})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_queues_filters_by_prefix_and_pages_with_an_opaque_token() {
    let ep = Endpoint::start().await;
    let mut expected = Vec::new();
    for i in 0..7 {
        let name = format!("page-{i}");
        expected.push(ep.create_queue(&name, json!({})).await);
    }
    ep.create_queue("other", json!({})).await;

    let all = ep.sqs_ok("ListQueues", json!({})).await;
    assert_eq!(all["QueueUrls"].as_array().unwrap().len(), 8);
    assert!(all.get("NextToken").is_none());

    let pre = ep
        .sqs_ok("ListQueues", json!({"QueueNamePrefix": "page-"}))
        .await;
    let got: Vec<String> = pre["QueueUrls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, expected);

    let mut paged = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut req = json!({"QueueNamePrefix": "page-", "MaxResults": 3});
        if let Some(t) = &token {
            req["NextToken"] = json!(t);
        }
        let v = ep.sqs_ok("ListQueues", req).await;
        pages += 1;
        let urls = v["QueueUrls"].as_array().unwrap();
        assert!(urls.len() <= 3);
        paged.extend(urls.iter().map(|u| u.as_str().unwrap().to_string()));
        match v.get("NextToken").and_then(Value::as_str) {
            Some(t) => {
                assert!(!t.contains("page-"), "the token is opaque: {t}");
                token = Some(t.to_string());
            }
            None => break,
        }
        assert!(pages < 10);
    }
    assert_eq!(pages, 3);
    assert_eq!(paged, expected);

    for bad in [
        json!({"MaxResults": 0}),
        json!({"MaxResults": 1001}),
        json!({"NextToken": "!!!"}),
    ] {
        assert_eq!(
            ep.sqs_err("ListQueues", bad).await,
            (400, "InvalidParameterValueException".to_string())
        );
    }
    let none = ep
        .sqs_ok("ListQueues", json!({"QueueNamePrefix": "zzz"}))
        .await;
    assert!(none.get("QueueUrls").is_none(), "{none}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_query_protocol_addresses_a_queue_by_the_path_it_was_posted_to() {
    let ep = Endpoint::start().await;
    ep.create_queue("viaquery", json!({"VisibilityTimeout": "77"}))
        .await;
    let (status, xml) = ep
        .query(
            &format!("/{ACCOUNT}/viaquery"),
            &[
                ("Action", "GetQueueAttributes"),
                ("Version", "2012-11-05"),
                ("AttributeName.1", "All"),
            ],
        )
        .await;
    assert_eq!(status, 200, "{xml}");
    assert!(
        xml.contains("<Name>VisibilityTimeout</Name><Value>77</Value>"),
        "{xml}"
    );
    assert!(
        xml.contains(&format!("arn:aws:sqs:us-east-1:{ACCOUNT}:viaquery")),
        "{xml}"
    );
    // CreateQueue over Query, attributes and tags in their flattened form.
    let (status, xml) = ep
        .query(
            "/",
            &[
                ("Action", "CreateQueue"),
                ("Version", "2012-11-05"),
                ("QueueName", "q2"),
                ("Attribute.1.Name", "DelaySeconds"),
                ("Attribute.1.Value", "9"),
                ("Tag.1.Key", "env"),
                ("Tag.1.Value", "test"),
            ],
        )
        .await;
    assert_eq!(status, 200, "{xml}");
    assert!(xml.contains(&format!("/{ACCOUNT}/q2</QueueUrl>")), "{xml}");
    let url = format!("{}/{ACCOUNT}/q2", ep.url);
    assert_eq!(
        attrs(&ep, &url, &["DelaySeconds"]).await["DelaySeconds"],
        "9"
    );
    let tags = ep.sqs_ok("ListQueueTags", json!({"QueueUrl": url})).await;
    assert_eq!(tags["Tags"], json!({"env": "test"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_without_its_broker_queue_is_configured_again_unless_being_deleted() {
    let ep = Endpoint::start().await;
    let url = ep
        .create_queue("heal", json!({"VisibilityTimeout": "41"}))
        .await;
    // As if the creator had died between the registry claim and /configure.
    let (status, _, _) = ep
        .broker
        .handle("DELETE", "/api/v1/resources/queues/heal", Bytes::new())
        .await;
    assert_eq!(status, 200);
    assert_eq!(broker_queues_named(&ep, "heal").await, 0);
    assert_eq!(ep.create_queue("heal", json!({})).await, url);
    let options = ep.broker.queue_options("heal").await;
    assert_eq!(options["leaseTime"], 41, "{options}");

    // A DeleteQueue under way writes its tombstone before removing the broker queue;
    // a CreateQueue in that window must not configure the queue back.
    ep.broker
        .handle("DELETE", "/api/v1/resources/queues/heal", Bytes::new())
        .await;
    let (status, _, _) = ep
        .broker
        .handle(
            "POST",
            "/api/v1/kv",
            Bytes::from(
                json!({"operations": [{"op": "put", "ns": "qs", "key": "qs:dq:heal",
                    "value": 1, "ttlSeconds": 60}]})
                .to_string(),
            ),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        ep.sqs_err("CreateQueue", json!({"QueueName": "heal"}))
            .await,
        (400, "QueueDeletedRecently".to_string())
    );
    assert_eq!(broker_queues_named(&ep, "heal").await, 0);
}
