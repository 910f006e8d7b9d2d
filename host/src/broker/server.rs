//! The HTTP/1.1 server (hyper 1): checks the caller's bearer token (`auth`), reads the
//! request, hands it to `api::dispatch`.

use super::api::reply::Reply;
use super::api::{dispatch, Ctx};
use super::auth::{self, Gate};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// `QUEEN_MAX_BODY_BYTES` default of the real broker.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

fn to_response(r: Reply) -> Response<Full<Bytes>> {
    let mut b = Response::builder().status(r.status);
    for (k, v) in &r.headers {
        b = b.header(k.as_str(), v.as_str());
    }
    b.body(Full::new(r.body)).unwrap_or_else(|_| {
        let mut resp = Response::new(Full::new(Bytes::from_static(
            b"{\"error\":\"bad response\"}",
        )));
        *resp.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
        resp
    })
}

async fn handle(
    ctx: Arc<Ctx>,
    gate: Arc<Gate>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().as_str().to_string();
    let pq = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".to_string());
    // Before the body is read: a caller without the token costs no more than its head.
    if !auth::is_open(&method, &pq) {
        let presented = req
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        if let Some(refused) = gate.check(presented) {
            return Ok(to_response(refused));
        }
    }
    let too_big = || to_response(Reply::error(413, "payload too large"));
    let declared = req
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY) {
        return Ok(too_big());
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                return Ok(too_big());
            }
            return Ok(to_response(Reply::error(400, format!("bad body: {e}"))));
        }
    };
    Ok(to_response(dispatch(&ctx, &method, &pq, body).await))
}

/// Accepts until `stop` flips; then drops every open connection. Every call but the health
/// checks must carry the token `gate` holds.
pub async fn serve(
    listener: TcpListener,
    ctx: Arc<Ctx>,
    gate: Arc<Gate>,
    mut stop: watch::Receiver<bool>,
) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            acc = listener.accept() => {
                let Ok((stream, _)) = acc else {
                    // Out of descriptors and the like: back off briefly instead of spinning.
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let ctx = ctx.clone();
                let gate = gate.clone();
                conns.spawn(async move {
                    let svc = service_fn(move |req| handle(ctx.clone(), gate.clone(), req));
                    let _ = http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
            _ = stop.changed() => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    conns.abort_all();
    while conns.join_next().await.is_some() {}
}
