//! The component's outgoing HTTP: a pooled keep-alive client, and an in-process
//! shortcut to the embedded broker. (The stock `send_request` opens a TCP connection
//! per call, which under load leaves thousands of sockets in TIME_WAIT.)

use crate::broker::RunningBroker;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

#[derive(Clone)]
pub struct Outgoing {
    client: Client<HttpConnector, WasiBody>,
    /// The embedded broker and the authority the component addresses it by.
    embedded: Option<(String, Arc<RunningBroker>)>,
}

type IoFuture = Box<dyn Future<Output = Result<(), Error>> + Send>;
type SendFuture =
    Box<dyn Future<Output = Result<(http::Response<WasiBody>, IoFuture), Error>> + Send>;

impl Outgoing {
    pub fn new(embedded: Option<Arc<RunningBroker>>) -> Outgoing {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(5)));
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .pool_max_idle_per_host(256)
            .build(connector);
        let embedded = embedded.map(|b| (b.addr.to_string(), b));
        Outgoing { client, embedded }
    }
}

fn full(bytes: Bytes) -> WasiBody {
    Full::new(bytes)
        .map_err(|never| match never {})
        .boxed_unsync()
}

fn map_hyper_util(e: hyper_util::client::legacy::Error) -> Error {
    if e.is_connect() {
        Error::ConnectionRefused
    } else {
        Error::ConnectionTerminated
    }
}

impl WasiHttpHooks for Outgoing {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: IoFuture,
    ) -> SendFuture {
        let first_byte = options
            .and_then(|o| o.first_byte_timeout)
            .unwrap_or(Duration::from_secs(600));
        let done: IoFuture = Box::new(async { Ok(()) });
        let authority = request.uri().authority().map(|a| a.to_string());
        if let Some((addr, broker)) = self
            .embedded
            .clone()
            .filter(|(addr, _)| authority.as_deref() == Some(addr.as_str()))
        {
            let _ = addr;
            return Box::new(async move {
                let (parts, body) = request.into_parts();
                let body = body.collect().await?.to_bytes();
                let pq = parts
                    .uri
                    .path_and_query()
                    .map(|p| p.as_str())
                    .unwrap_or("/")
                    .to_string();
                let (status, headers, body) = broker.handle(parts.method.as_str(), &pq, body).await;
                let mut resp = http::Response::builder().status(status);
                for (k, v) in headers {
                    resp = resp.header(k, v);
                }
                let resp = resp
                    .body(full(body))
                    .map_err(|_| Error::HttpProtocolError)?;
                Ok((resp, done))
            });
        }
        let client = self.client.clone();
        Box::new(async move {
            let resp = tokio::time::timeout(first_byte, client.request(request))
                .await
                .map_err(|_| Error::ConnectionReadTimeout)?
                .map_err(map_hyper_util)?;
            let resp = resp.map(|b| b.map_err(Error::from).boxed_unsync());
            Ok((resp, done))
        })
    }
}
