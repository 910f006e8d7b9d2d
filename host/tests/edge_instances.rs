//! Component instances are reused across requests (a fresh one costs ~124 µs), and a reused
//! instance answers exactly as a fresh one: state does not leak from one request to the next.

mod support;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use queen_sqs_host::serve::{self, Outgoing, Server};
use serde_json::{json, Value};
use std::sync::Arc;
use support::{fresh_dir, loaded, TestBroker, HANDLE_SECRET};

struct Running {
    url: String,
    server: Arc<Server>,
    client: Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>,
}

async fn start(reuse: &str) -> Running {
    let broker = TestBroker::start(fresh_dir("instances")).await;
    let mut env = vec![
        ("QUEEN_SQS_AUTH".to_string(), "off".to_string()),
        (
            "QUEEN_SQS_HANDLE_SECRET".to_string(),
            HANDLE_SECRET.to_string(),
        ),
        ("QUEEN_SQS_REUSE_INSTANCES".to_string(), reuse.to_string()),
        // Counts the instances requests make; the SNS delivery loop's calls would add theirs.
        ("QUEEN_SQS_SNS_POSTS_IN_FLIGHT".to_string(), "0".to_string()),
    ];
    let outgoing = match broker.embedded() {
        Some(b) => Outgoing::new(Some(b)),
        None => {
            env.push(("QUEEN_URL".to_string(), broker.url()));
            Outgoing::new(None)
        }
    };
    if broker.embedded().is_some() {
        env.push(("QUEEN_URL".to_string(), broker.url()));
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = Server::new(loaded(), env, outgoing);
    let serving = server.clone();
    tokio::spawn(async move { serve::serve(listener, serving).await });
    // The broker stays up for the test: leaked on purpose (dropped at process exit).
    std::mem::forget(broker);
    Running {
        url,
        server,
        client: Client::builder(TokioExecutor::new()).build_http(),
    }
}

impl Running {
    async fn sqs(&self, action: &str, input: Value) -> Value {
        let req = hyper::Request::post(&self.url)
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amz-target", format!("AmazonSQS.{action}"))
            .body(Full::new(Bytes::from(input.to_string())))
            .unwrap();
        let resp = self.client.request(req).await.unwrap();
        let status = resp.status().as_u16();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        assert_eq!(status, 200, "{action}: {v}");
        v
    }
}

/// Requests of every kind, each checked: what a leaked state would break.
async fn traffic(r: &Running, rounds: usize) {
    let url = r.sqs("CreateQueue", json!({"QueueName": "reuse"})).await["QueueUrl"]
        .as_str()
        .unwrap()
        .to_string();
    for i in 0..rounds {
        let body = format!("body {i} {}", "x".repeat(i * 37));
        r.sqs("SendMessage", json!({"QueueUrl": url, "MessageBody": body}))
            .await;
        let got = r
            .sqs(
                "ReceiveMessage",
                json!({"QueueUrl": url, "WaitTimeSeconds": 1, "VisibilityTimeout": 30}),
            )
            .await;
        let m = &got["Messages"][0];
        assert_eq!(m["Body"], body.as_str(), "round {i}");
        r.sqs(
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": m["ReceiptHandle"]}),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_are_reused_across_requests() {
    let r = start("1").await;
    traffic(&r, 20).await;
    let made = r.server.instances_created();
    // 61 sequential requests; one instance serves them all (two if a request overlapped
    // the return of the previous one's instance).
    assert!(made <= 2, "{made} instances for 61 requests");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_reuse_every_request_gets_a_fresh_instance() {
    let r = start("0").await;
    traffic(&r, 5).await;
    assert_eq!(r.server.instances_created(), 16);
}
