//! The listener: HTTP/1.1 with keep-alive, one fresh store and instance per request.

use super::engine::{Loaded, State};
use super::outgoing::Outgoing;
use anyhow::Result;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use wasmtime::component::ResourceTable;
use wasmtime::Store;
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpView};

/// What every request's instance is given.
pub struct Server {
    loaded: Loaded,
    /// The configuration, passed to the component as environment variables.
    env: Vec<(String, String)>,
    outgoing: Outgoing,
}

impl Server {
    pub fn new(loaded: Loaded, env: Vec<(String, String)>, outgoing: Outgoing) -> Arc<Server> {
        Arc::new(Server {
            loaded,
            env,
            outgoing,
        })
    }

    async fn handle(
        self: Arc<Self>,
        req: hyper::Request<hyper::body::Incoming>,
    ) -> Result<hyper::Response<HyperOutgoingBody>> {
        let mut wasi = WasiCtx::builder();
        wasi.envs(&self.env).inherit_stderr();
        let state = State {
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            outgoing: self.outgoing.clone(),
        };
        let mut store = Store::new(&self.loaded.engine, state);
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let req = store
            .data_mut()
            .http()
            .new_incoming_request(Scheme::Http, req)?;
        let out = store.data_mut().http().new_response_outparam(sender)?;
        let pre = self.loaded.pre.clone();
        // The guest may go on writing the body after it has handed over the head.
        let task = tokio::task::spawn(async move {
            let proxy = pre.instantiate_async(&mut store).await?;
            proxy
                .wasi_http_incoming_handler()
                .call_handle(&mut store, req, out)
                .await
        });
        match receiver.await {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(e)) => Err(e.into()),
            Err(_) => {
                let why = match task.await {
                    Ok(Ok(())) => anyhow::anyhow!("the component set no response"),
                    Ok(Err(e)) => e.into(),
                    Err(e) => e.into(),
                };
                Err(why)
            }
        }
    }
}

/// A plain 500 for a request the component could not answer (a trap, an exhausted pool).
fn internal_error(why: &anyhow::Error) -> hyper::Response<HyperOutgoingBody> {
    eprintln!("queen-sqs-host: request failed: {why:#}");
    let body = Full::new(Bytes::from_static(
        b"{\"__type\":\"com.amazonaws.sqs#InternalError\",\"message\":\"The request processing has failed because of an unknown error, exception or failure.\"}",
    ))
    .map_err(|never| match never {})
    .boxed_unsync();
    let mut resp = hyper::Response::new(body);
    *resp.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
    resp.headers_mut().insert(
        "content-type",
        http::HeaderValue::from_static("application/x-amz-json-1.0"),
    );
    resp
}

/// Accepts connections on `listener` until the process ends.
pub async fn serve(listener: TcpListener, server: Arc<Server>) -> Result<()> {
    loop {
        let (stream, _peer): (_, SocketAddr) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                // EMFILE and friends: back off instead of spinning.
                eprintln!("queen-sqs-host: accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let server = server.clone();
        tokio::task::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let server = server.clone();
                async move {
                    Ok::<_, std::convert::Infallible>(match server.handle(req).await {
                        Ok(resp) => resp,
                        Err(e) => internal_error(&e),
                    })
                }
            });
            let _ = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
