//! The component's outgoing HTTP: a pooled keep-alive client, and an in-process
//! shortcut to the embedded broker. (The stock `send_request` opens a TCP connection
//! per call, which under load leaves thousands of sockets in TIME_WAIT.) `https` URLs go
//! through `tls`.

use super::cache::{self, Cached, Hints, ResponseCache};
use super::metrics::{outcome_of, Metrics};
use super::tls::TlsClient;
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
    /// Broker GETs the component marked cacheable (see `cache`).
    cache: ResponseCache,
    /// Every broker call, counted (see `metrics`).
    metrics: Arc<Metrics>,
    /// `https` requests (subscribers, a broker behind TLS).
    tls: TlsClient,
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
        Outgoing {
            client,
            embedded,
            cache: ResponseCache::default(),
            metrics: Arc::new(Metrics::default()),
            tls: TlsClient::new(None).expect("the public roots alone always make a client"),
        }
    }

    /// Trusts the certificate authorities of a PEM file too for outgoing `https`
    /// (`QUEEN_SQS_TLS_CA_FILE`); `None` keeps the public roots alone.
    pub fn with_tls_ca(mut self, ca_file: Option<&str>) -> Result<Outgoing, String> {
        if ca_file.is_some() {
            self.tls = TlsClient::new(ca_file)?;
        }
        Ok(self)
    }

    /// The metrics this outgoing side counts broker calls into (the server adds requests).
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// The embedded broker reached in process, if any (its queue depths go into `/metrics`).
    pub fn embedded_broker(&self) -> Option<Arc<RunningBroker>> {
        self.embedded.as_ref().map(|(_, b)| b.clone())
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
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: IoFuture,
    ) -> SendFuture {
        let first_byte = options
            .and_then(|o| o.first_byte_timeout)
            .unwrap_or(Duration::from_secs(600));
        let method = request.method().clone();
        let hints = Hints::take(&method, request.headers_mut());
        for path in &hints.forget {
            self.cache.forget(path.as_deref());
        }
        let authority = request
            .uri()
            .authority()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let cache_key = hints.max_age.map(|_| {
            let auth = request
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok());
            let pq = request.uri().path_and_query().map_or("/", |p| p.as_str());
            cache::key(
                &authority,
                auth,
                &hints.variant,
                hints.cache_as.as_deref().unwrap_or(pq),
            )
        });
        // A POST to an SNS subscriber (it carries SNS's message type) is counted as one,
        // never under its URL.
        let sns_type = request
            .headers()
            .get("x-amz-sns-message-type")
            .and_then(|v| v.to_str().ok());
        let meter = match sns_type {
            Some(kind) => self.metrics.meter_sns_post(kind),
            None => self
                .metrics
                .meter(request.uri().path_and_query().map_or("/", |p| p.as_str())),
        };
        if let (Some(k), Some(age)) = (&cache_key, hints.max_age) {
            if let Some(hit) = self.cache.get(k, age) {
                meter.done("cached");
                return Box::new(async move {
                    // A reading POST has a body: the guest is still writing it, and a body
                    // dropped unread fails its write. It is read to its end, then answered.
                    request.into_body().collect().await?;
                    respond(hit)
                });
            }
        }
        let store = cache_key.map(|k| (k, self.cache.clone(), self.cache.since()));
        // A write's forget is repeated once it is answered (see `ResponseCache::forget`).
        let forget_after = (!hints.forget.is_empty()).then(|| (self.cache.clone(), hints.forget));
        if let Some((_, broker)) = self.embedded.clone().filter(|(addr, _)| authority == *addr) {
            return Box::new(async move {
                let (parts, body) = request.into_parts();
                let body = body.collect().await?.to_bytes();
                let pq = parts
                    .uri
                    .path_and_query()
                    .map(|p| p.as_str())
                    .unwrap_or("/")
                    .to_string();
                // The same deadline as a call over the network: a broker statement that
                // hangs fails this call (the component answers ServiceUnavailable) rather
                // than holding the request as long as the broker takes.
                let answered = tokio::time::timeout(
                    first_byte,
                    broker.handle(parts.method.as_str(), &pq, body),
                )
                .await;
                forget_again(forget_after);
                let Ok((status, headers, body)) = answered else {
                    meter.done("timeout");
                    return Err(Error::ConnectionReadTimeout);
                };
                meter.done(outcome_of(status));
                let answer = Cached {
                    status,
                    headers,
                    body,
                };
                if let Some((k, cache, since)) = store {
                    cache.put(k, answer.clone(), since);
                }
                respond(answer)
            });
        }
        let client = self.client.clone();
        let tls =
            (request.uri().scheme() == Some(&http::uri::Scheme::HTTPS)).then(|| self.tls.clone());
        Box::new(async move {
            let sent = async move {
                match tls {
                    Some(tls) => tls.send(request).await,
                    None => match client.request(request).await {
                        Ok(resp) => Ok(resp.map(|b| b.map_err(Error::from).boxed_unsync())),
                        Err(e) => Err(map_hyper_util(e)),
                    },
                }
            };
            let answered = tokio::time::timeout(first_byte, sent).await;
            // Even when the answer is lost: the write may have landed.
            forget_again(forget_after);
            let resp = match answered {
                Err(_) => {
                    meter.done("timeout");
                    return Err(Error::ConnectionReadTimeout);
                }
                Ok(Err(e)) => {
                    meter.done("unreachable");
                    return Err(e);
                }
                Ok(Ok(resp)) => resp,
            };
            meter.answered(resp.status().as_u16());
            let Some((k, cache, since)) = store else {
                return Ok((resp, no_io()));
            };
            // A cacheable answer is small (one KV row): read it whole, keep it, serve it.
            let (parts, body) = resp.into_parts();
            let body = body
                .collect()
                .await
                .map_err(|_| Error::ConnectionTerminated)?
                .to_bytes();
            let answer = Cached {
                status: parts.status.as_u16(),
                headers: parts
                    .headers
                    .iter()
                    .filter_map(|(n, v)| Some((n.to_string(), v.to_str().ok()?.to_string())))
                    .collect(),
                body,
            };
            cache.put(k, answer.clone(), since);
            respond(answer)
        })
    }
}

fn forget_again(after: Option<(ResponseCache, Vec<Option<String>>)>) {
    if let Some((cache, paths)) = after {
        for path in &paths {
            cache.forget(path.as_deref());
        }
    }
}

fn no_io() -> IoFuture {
    Box::new(async { Ok(()) })
}

fn respond(answer: Cached) -> Result<(http::Response<WasiBody>, IoFuture), Error> {
    let mut resp = http::Response::builder().status(answer.status);
    for (k, v) in answer.headers {
        resp = resp.header(k, v);
    }
    let resp = resp
        .body(full(answer.body))
        .map_err(|_| Error::HttpProtocolError)?;
    Ok((resp, no_io()))
}
