//! A real endpoint for integration tests: the embedded broker on a fresh SQLite
//! database, the component served by the host on a loopback port, and a small HTTP
//! client speaking both SQS wire protocols to it. The component is compiled once per
//! test binary.
#![allow(dead_code)]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use queen_sqs_host::broker::{self, BrokerConfig, RunningBroker};
use queen_sqs_host::serve::{self, Loaded, Outgoing, Server};
use serde_json::Value;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

static LOADED: OnceLock<Loaded> = OnceLock::new();

pub fn loaded() -> Loaded {
    LOADED
        .get_or_init(|| serve::load(serve::COMPONENT).expect("load component"))
        .clone()
}

pub const HANDLE_SECRET: &str = "integration-test-handle-secret";

pub struct Endpoint {
    pub url: String,
    pub addr: SocketAddr,
    pub broker: Arc<RunningBroker>,
    pub data_dir: PathBuf,
    client: Client<HttpConnector, Full<Bytes>>,
    server: tokio::task::JoinHandle<()>,
}

/// A fresh, unique data directory under the system temp dir.
pub fn fresh_dir(tag: &str) -> PathBuf {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("random");
    let suffix: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let dir = std::env::temp_dir().join(format!("queen-sqs-test-{tag}-{suffix}"));
    std::fs::create_dir_all(&dir).expect("create data dir");
    dir
}

impl Endpoint {
    /// An endpoint with SigV4 off and the given extra `QUEEN_*` variables.
    pub async fn start() -> Endpoint {
        Endpoint::with_env(&[("QUEEN_SQS_AUTH", "off")]).await
    }

    pub async fn with_env(extra: &[(&str, &str)]) -> Endpoint {
        let data_dir = fresh_dir("endpoint");
        let running = broker::start(BrokerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            data_dir: data_dir.clone(),
        })
        .await
        .expect("start broker");
        let broker = Arc::new(running);
        let mut env: Vec<(String, String)> = vec![
            ("QUEEN_URL".into(), format!("http://{}", broker.addr)),
            ("QUEEN_SQS_HANDLE_SECRET".into(), HANDLE_SECRET.into()),
        ];
        for (k, v) in extra {
            env.retain(|(n, _)| n != k);
            env.push((k.to_string(), v.to_string()));
        }
        Endpoint::serve(env, broker, data_dir).await
    }

    /// Serves the component with exactly `env`, in front of `broker` (reached in process).
    pub async fn serve(
        env: Vec<(String, String)>,
        broker: Arc<RunningBroker>,
        data_dir: PathBuf,
    ) -> Endpoint {
        let outgoing = Outgoing::new(Some(broker.clone()));
        Endpoint::serve_with(env, outgoing, broker, data_dir).await
    }

    /// Serves the component with exactly `env`, reaching the broker only through
    /// `QUEEN_URL` over loopback TCP, as a second replica would; `broker` is kept for
    /// the test's own native calls.
    pub async fn serve_remote(
        env: Vec<(String, String)>,
        broker: Arc<RunningBroker>,
        data_dir: PathBuf,
    ) -> Endpoint {
        Endpoint::serve_with(env, Outgoing::new(None), broker, data_dir).await
    }

    async fn serve_with(
        env: Vec<(String, String)>,
        outgoing: Outgoing,
        broker: Arc<RunningBroker>,
        data_dir: PathBuf,
    ) -> Endpoint {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().unwrap();
        let server = Server::new(loaded(), env, outgoing);
        let server = tokio::spawn(async move {
            let _ = serve::serve(listener, server).await;
        });
        let client = Client::builder(TokioExecutor::new()).build(HttpConnector::new());
        Endpoint {
            url: format!("http://{addr}"),
            addr,
            broker,
            data_dir,
            client,
            server,
        }
    }

    /// Sends a raw request; answers (status, headers, body).
    pub async fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> (u16, Vec<(String, String)>, Vec<u8>) {
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(format!("{}{}", self.url, path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req.body(Full::new(body.into())).expect("request");
        let resp = self.client.request(req).await.expect("send");
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = resp
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes()
            .to_vec();
        (status, headers, body)
    }

    /// An SQS action over AWS JSON 1.0; answers (status, body as JSON).
    pub async fn sqs(&self, action: &str, input: Value) -> (u16, Value) {
        let target = format!("AmazonSQS.{action}");
        let (status, _, body) = self
            .raw(
                "POST",
                "/",
                &[
                    ("x-amz-target", &target),
                    ("content-type", "application/x-amz-json-1.0"),
                ],
                input.to_string(),
            )
            .await;
        let v = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into()))
        };
        (status, v)
    }

    /// Like [`Endpoint::sqs`] but panics unless the answer is 200.
    pub async fn sqs_ok(&self, action: &str, input: Value) -> Value {
        let (status, body) = self.sqs(action, input).await;
        assert_eq!(status, 200, "{action} failed: {body}");
        body
    }

    /// The `__type` suffix of an error answer (after `#`).
    pub async fn sqs_err(&self, action: &str, input: Value) -> (u16, String) {
        let (status, body) = self.sqs(action, input).await;
        assert_ne!(status, 200, "{action} unexpectedly succeeded: {body}");
        let ty = body["__type"]
            .as_str()
            .unwrap_or("")
            .rsplit('#')
            .next()
            .unwrap_or("")
            .to_string();
        (status, ty)
    }

    /// A Query request (SQS or SNS form); answers (status, XML text).
    pub async fn query(&self, path: &str, params: &[(&str, &str)]) -> (u16, String) {
        let body: String = params
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let (status, _, body) = self
            .raw(
                "POST",
                path,
                &[("content-type", "application/x-www-form-urlencoded")],
                body,
            )
            .await;
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// Creates a queue and answers its URL.
    pub async fn create_queue(&self, name: &str, attributes: Value) -> String {
        let v = self
            .sqs_ok(
                "CreateQueue",
                serde_json::json!({"QueueName": name, "Attributes": attributes}),
            )
            .await;
        v["QueueUrl"].as_str().expect("QueueUrl").to_string()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.server.abort();
    }
}

pub fn form_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
