//! The only module that touches the wasi bindings: read the incoming request,
//! run the core, write the response. Everything it calls is plain Rust.

mod executor;
mod transport;

use crate::http::{Request, Response};
use crate::wire::MAX_BODY_BYTES;
use wasip2::http::types::{
    Fields, IncomingBody, IncomingRequest, Method, OutgoingBody, OutgoingResponse,
    ResponseOutparam, Scheme,
};
use wasip2::io::streams::StreamError;

struct Endpoint;

impl wasip2::exports::http::incoming_handler::Guest for Endpoint {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let transport = |cfg: &crate::config::Config| transport::WasiTransport::new(&cfg.queen_url);
        let req = match read_request(&request) {
            Ok(req) => req,
            Err(Refused::TooLarge(head)) => {
                let response = crate::service::body_too_large(&head, &request_id());
                return write_response(response, response_out);
            }
            Err(Refused::Incomplete(head)) => {
                let response =
                    crate::wire::incomplete_body(crate::wire::caller(&head), &request_id());
                return write_response(response, response_out);
            }
        };
        if crate::service::is_delivery_route(&req) {
            // May answer before its POSTs are made; the instance goes on until they are.
            return executor::block_on(crate::service::delivery_route_early(
                req,
                std::env::vars(),
                transport,
                now_unix_ms(),
                request_id(),
                |response| write_response(response, response_out),
            ));
        }
        let response = executor::block_on(crate::service::handle(
            req,
            std::env::vars(),
            transport,
            now_unix_ms(),
            request_id(),
        ));
        write_response(response, response_out);
    }
}

wasip2::http::proxy::export!(Endpoint);

enum Refused {
    /// Over the body cap: the request's head only, so the error can match its protocol.
    TooLarge(Request),
    /// The body ended before its declared length, or its stream failed (a client that hung
    /// up mid-body, a chunked body without its last chunk): never acted on.
    Incomplete(Request),
}

fn read_request(incoming: &IncomingRequest) -> Result<Request, Refused> {
    let mut headers: Vec<(String, String)> = incoming
        .headers()
        .entries()
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_ascii_lowercase(),
                String::from_utf8_lossy(&v).into_owned(),
            )
        })
        .collect();
    // wasi-http carries the authority beside the headers, not always in them; SigV4 signs `host`.
    if !headers.iter().any(|(k, _)| k == "host") {
        if let Some(authority) = incoming.authority() {
            headers.push(("host".into(), authority));
        }
    }
    // Refuse a declared oversize body before reading a byte of it.
    let declared = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.trim().parse::<u64>().ok());
    let head = |headers: Vec<(String, String)>| Request {
        headers,
        ..Request::default()
    };
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(Refused::TooLarge(head(headers)));
    }
    let method = match incoming.method() {
        Method::Get => "GET".to_string(),
        Method::Post => "POST".to_string(),
        Method::Put => "PUT".to_string(),
        Method::Delete => "DELETE".to_string(),
        Method::Head => "HEAD".to_string(),
        Method::Options => "OPTIONS".to_string(),
        Method::Patch => "PATCH".to_string(),
        Method::Connect => "CONNECT".to_string(),
        Method::Trace => "TRACE".to_string(),
        Method::Other(m) => m,
    };
    let scheme = match incoming.scheme() {
        Some(Scheme::Https) => "https",
        _ => "http",
    }
    .to_string();
    let path_and_query = incoming.path_with_query().unwrap_or_else(|| "/".into());
    let body = match read_capped_body(incoming) {
        Body::Complete(body) => body,
        Body::TooLarge => return Err(Refused::TooLarge(head(headers))),
        Body::Failed => return Err(Refused::Incomplete(head(headers))),
    };
    if declared.is_some_and(|n| n != body.len() as u64) {
        return Err(Refused::Incomplete(head(headers)));
    }
    Ok(Request {
        method,
        path_and_query,
        headers,
        body,
        scheme,
    })
}

enum Body {
    Complete(Vec<u8>),
    /// Over `MAX_BODY_BYTES`.
    TooLarge,
    /// The stream failed before its end.
    Failed,
}

/// Reads at most `MAX_BODY_BYTES`; one byte more and the request is refused without
/// reading the rest (a chunked body declares no length, so the cap is enforced here).
/// Only a body read to its clean end is complete: a failed stream is never taken for one.
fn read_capped_body(incoming: &IncomingRequest) -> Body {
    let mut body = Vec::new();
    let Ok(incoming_body) = incoming.consume() else {
        return Body::Failed;
    };
    {
        let Ok(stream) = incoming_body.stream() else {
            return Body::Failed;
        };
        loop {
            match stream.blocking_read(64 * 1024) {
                Ok(chunk) => {
                    if body.len() + chunk.len() > MAX_BODY_BYTES {
                        return Body::TooLarge;
                    }
                    body.extend_from_slice(&chunk);
                }
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(_)) => return Body::Failed,
            }
        }
    }
    // The trailers' future reports a body that failed after its last byte was read.
    let trailers = IncomingBody::finish(incoming_body);
    trailers.subscribe().block();
    match trailers.get() {
        Some(Ok(Ok(_))) | None => Body::Complete(body),
        Some(_) => Body::Failed,
    }
}

fn write_response(response: Response, out: ResponseOutparam) {
    let fields = Fields::new();
    for (name, value) in &response.headers {
        let _ = fields.append(name, value.as_bytes());
    }
    let _ = fields.set(
        "content-length",
        &[response.body.len().to_string().into_bytes()],
    );
    let outgoing = OutgoingResponse::new(fields);
    let _ = outgoing.set_status_code(response.status);
    let Ok(body) = outgoing.body() else { return };
    ResponseOutparam::set(out, Ok(outgoing));
    // A client that hung up makes these writes fail; that is not our error, so it must not trap.
    if let Ok(stream) = body.write() {
        for chunk in response.body.chunks(4096) {
            if stream.blocking_write_and_flush(chunk).is_err() {
                break;
            }
        }
    }
    let _ = OutgoingBody::finish(body, None);
}

fn now_unix_ms() -> i64 {
    let t = wasip2::clocks::wall_clock::now();
    t.seconds as i64 * 1000 + (t.nanoseconds / 1_000_000) as i64
}

fn request_id() -> String {
    let b = wasip2::random::random::get_random_bytes(16);
    crate::service::format_request_id(&b)
}
