//! Shared helpers for the broker integration tests: a broker on a fresh data dir and a
//! small JSON-over-loopback-HTTP client (which sends the test broker's bearer token).
#![allow(dead_code)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use queen_sqs_host::broker::{start, BrokerConfig, RunningBroker};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

static SEQ: AtomicU64 = AtomicU64::new(0);

/// The bearer token every test broker is started with, and [`Http::new`] sends.
pub const TOKEN: &str = "broker-test-token-0123456789abcdef";

/// A unique, empty directory under the system temp dir.
pub fn temp_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let d = std::env::temp_dir().join(format!(
        "broker-test-{tag}-{}-{}-{nanos}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

pub struct Http {
    client: Client<HttpConnector, Full<Bytes>>,
    pub base: String,
    /// The `Authorization` header sent on every call (None: no header).
    pub authorization: Option<String>,
}

pub struct Resp {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub bytes: Bytes,
    /// The body as JSON; `Null` for an empty body.
    pub json: Value,
}

impl Http {
    /// A client sending `Authorization: Bearer TOKEN`.
    pub fn new(addr: std::net::SocketAddr) -> Http {
        Http::with_authorization(addr, Some(&format!("Bearer {TOKEN}")))
    }

    /// A client sending exactly this `Authorization` header (None: none).
    pub fn with_authorization(addr: std::net::SocketAddr, authorization: Option<&str>) -> Http {
        Http {
            client: Client::builder(TokioExecutor::new()).build_http(),
            base: format!("http://{addr}"),
            authorization: authorization.map(str::to_string),
        }
    }

    pub async fn raw(&self, method: &str, path: &str, body: Vec<u8>) -> Resp {
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(format!("{}{}", self.base, path))
            .header("content-type", "application/json");
        if let Some(a) = &self.authorization {
            req = req.header("authorization", a.as_str());
        }
        let req = req.body(Full::new(Bytes::from(body))).expect("request");
        let resp = self.client.request(req).await.expect("http call");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.into_body().collect().await.expect("body").to_bytes();
        let json = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("JSON body")
        };
        Resp {
            status,
            headers,
            bytes,
            json,
        }
    }

    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Resp {
        let b = body.map(|v| v.to_string().into_bytes()).unwrap_or_default();
        self.raw(method, path, b).await
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.call("GET", path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.call("POST", path, Some(body)).await
    }
}

pub struct TestBroker {
    pub broker: RunningBroker,
    pub http: Http,
    pub dir: PathBuf,
}

impl TestBroker {
    pub async fn start() -> TestBroker {
        TestBroker::start_in(temp_dir("b")).await
    }

    pub async fn start_in(dir: PathBuf) -> TestBroker {
        let broker = start(BrokerConfig {
            listen: "127.0.0.1:0".parse().expect("addr"),
            data_dir: dir.clone(),
            token: TOKEN.to_string(),
        })
        .await
        .expect("broker starts");
        let http = Http::new(broker.addr);
        TestBroker { broker, http, dir }
    }

    pub async fn stop(self) {
        self.broker.shutdown().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    pub async fn push(&self, items: Value) -> Vec<Value> {
        let r = self
            .http
            .post("/api/v1/push", serde_json::json!({ "items": items }))
            .await;
        assert_eq!(r.status, 201, "push answered {}", r.json);
        r.json.as_array().expect("push array").clone()
    }

    pub async fn pop(&self, path_query: &str) -> Resp {
        self.http
            .get(&format!("/api/v1/pop/queue/{path_query}"))
            .await
    }

    pub async fn configure(&self, body: Value) -> Value {
        let r = self.http.post("/api/v1/configure", body).await;
        assert_eq!(r.status, 200, "configure answered {}", r.json);
        r.json
    }

    pub async fn ack(&self, body: Value) -> Vec<Value> {
        let r = self.http.post("/api/v1/ack", body).await;
        assert_eq!(r.status, 200, "ack answered {}", r.json);
        r.json.as_array().expect("ack array").clone()
    }

    pub async fn kv(&self, ops: Value) -> Resp {
        self.http
            .post("/api/v1/kv", serde_json::json!({ "operations": ops }))
            .await
    }
}

/// `(transactionId, partitionId, leaseId)` of a popped message, ready for an ack body.
pub fn ack_of(m: &Value, status: &str) -> Value {
    serde_json::json!({"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                       "leaseId": m["leaseId"], "status": status})
}
