//! One request, end to end: recognise, authenticate, decode, act, encode.
//! Plain Rust: the edge hands in a [`Request`], the time and a request id, and a
//! way to reach the broker; it gets a [`Response`] back.

use crate::auth;
use crate::config::{AuthMode, Config};
use crate::ctx::Ctx;
use crate::http::{Request, Response, Transport};
use crate::queen::{Queen, QueenError};
use crate::wire::{self, ApiError, ErrorCode, Protocol, Service};
use serde_json::{json, Value};

/// A broker failure, answered the way SDKs retry: a 429 is `RequestThrottled`
/// (never `OverLimit`), an unreachable or failing broker a 5xx-class error.
impl From<QueenError> for ApiError {
    fn from(e: QueenError) -> ApiError {
        match e {
            QueenError::Throttled { .. } => ApiError::new(ErrorCode::RequestThrottled, "Rate exceeded"),
            QueenError::Unavailable(_) => ApiError::new(
                ErrorCode::ServiceUnavailable,
                "The request has failed due to a temporary failure of the server.",
            ),
            // The broker in trouble (a 5xx of its own): retryable, as an outage is.
            QueenError::Failed { status, .. } if status >= 500 => ApiError::new(
                ErrorCode::ServiceUnavailable,
                "The request has failed due to a temporary failure of the server.",
            ),
            // The broker's own words ride along: an operator reading a client's error (or
            // the request log) can then tell which broker answer the endpoint did not expect.
            other @ (QueenError::Failed { .. } | QueenError::BadAnswer(_)) => ApiError::new(
                ErrorCode::InternalError,
                format!(
                    "The request processing has failed because of an unknown error, exception or failure ({other})."
                ),
            ),
        }
    }
}

/// The response header through which the component tells its host what a request was
/// (for the host's request log and metrics), when the host asks for it by setting
/// [`TELL_HOST_VAR`]; the host removes it before the response leaves. Fields, separated by
/// a space, `-` when unknown: service, action, access key id, queue or topic, error code.
pub const TELL_HOST_HEADER: &str = "x-queen-sqs-said";
pub const TELL_HOST_VAR: &str = "QUEEN_SQS_TELL_HOST";

/// What a request turned out to be, as far as it got.
#[derive(Default)]
struct Said {
    service: Option<Service>,
    action: Option<&'static str>,
    access_key: Option<String>,
    target: Option<String>,
}

pub async fn handle<T, F, I>(
    req: Request,
    vars: I,
    make_transport: F,
    now_ms: i64,
    request_id: String,
) -> Response
where
    T: Transport,
    F: FnOnce(&Config) -> T,
    I: IntoIterator<Item = (String, String)>,
{
    let vars: Vec<(String, String)> = vars.into_iter().collect();
    let tell = vars
        .iter()
        .any(|(k, v)| k == TELL_HOST_VAR && v.trim() == "1");
    let mut said = Said::default();
    let mut resp = respond(req, vars, make_transport, now_ms, request_id, &mut said).await;
    if tell {
        let line = said_line(&said, &resp);
        resp.headers.push((TELL_HOST_HEADER.to_string(), line));
    }
    resp
}

/// The telemetry line: `service action access-key target code`, `-` for what is unknown
/// (the code is read back from an error answer: `__type` in JSON, `<Code>` in XML).
fn said_line(said: &Said, resp: &Response) -> String {
    let service = match said.service {
        Some(Service::Sqs) => "sqs",
        Some(Service::Sns) => "sns",
        None => "-",
    };
    let code = if resp.status >= 400 {
        error_code(&resp.body).unwrap_or_else(|| "-".to_string())
    } else {
        "-".to_string()
    };
    let field = |v: &Option<String>| {
        v.as_deref()
            .filter(|s| !s.is_empty() && !s.contains(char::is_whitespace))
            .unwrap_or("-")
            .to_string()
    };
    format!(
        "{service} {} {} {} {code}",
        said.action.unwrap_or("-"),
        field(&said.access_key),
        field(&said.target)
    )
}

fn error_code(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        let t = v.get("__type")?.as_str()?;
        return Some(t.rsplit('#').next().unwrap_or(t).to_string());
    }
    let start = text.find("<Code>")? + "<Code>".len();
    let end = text[start..].find("</Code>")? + start;
    Some(text[start..end].to_string())
}

/// The queue or topic a request names, by its last path or ARN segment.
fn target_of(input: &Value) -> Option<String> {
    for key in [
        "QueueUrl",
        "QueueName",
        "TopicArn",
        "TargetArn",
        "ResourceArn",
        "SubscriptionArn",
    ] {
        if let Some(v) = input.get(key).and_then(Value::as_str) {
            let last = v.rsplit(['/', ':']).next().unwrap_or(v);
            return Some(last.chars().take(256).collect());
        }
    }
    None
}

async fn respond<T, F>(
    req: Request,
    vars: Vec<(String, String)>,
    make_transport: F,
    now_ms: i64,
    request_id: String,
    said: &mut Said,
) -> Response
where
    T: Transport,
    F: FnOnce(&Config) -> T,
{
    let config = Config::from_env(vars);
    if req.path() == "/healthz" && (req.method == "GET" || req.method == "HEAD") {
        return health(&config);
    }
    if req.path() == "/readyz" && (req.method == "GET" || req.method == "HEAD") {
        return readiness(&config, make_transport).await;
    }

    if is_get(&req) && crate::sns::signing::is_cert_path(req.path()) {
        return match &config {
            Ok(cfg) => signing_certificate(&req, cfg, make_transport, now_ms, &request_id).await,
            Err(_) => not_found(),
        };
    }

    if is_delivery_route(&req) {
        let mut answer = None;
        let answered = |resp| answer = Some(resp);
        delivery_route(req, &config, make_transport, now_ms, &request_id, answered).await;
        return answer.unwrap_or_else(not_found);
    }

    let scope = auth::peek_scope_service(&req);
    let rec = match wire::recognise(&req, scope) {
        Ok(r) => r,
        Err((protocol, service, err)) => {
            return wire::encode_error(protocol, service, &err, &request_id)
        }
    };
    said.service = Some(rec.service);
    said.action = Some(rec.action.name());
    let fail = |err: ApiError| wire::encode_error(rec.protocol, rec.service, &err, &request_id);

    let cfg = match &config {
        Ok(c) => c,
        Err(_) => {
            return fail(ApiError::new(
                ErrorCode::InternalError,
                "The endpoint is misconfigured; see its /healthz.",
            ))
        }
    };

    let token = match cfg.auth {
        AuthMode::Off => cfg.queen_token.clone(),
        // An SNS notification's `UnsubscribeURL` works with a plain GET, as AWS's does: it
        // names the subscription, which is all it can remove.
        AuthMode::SigV4 if is_unsigned_link(&req, &rec) => public_token(cfg),
        AuthMode::SigV4 => match auth::verify(&req, &cfg.credentials, now_ms.div_euclid(1000)) {
            // One listener serves both services; the scope must name the one the action is.
            Ok(v) if v.service != rec.service => {
                let want = match rec.service {
                    Service::Sqs => "sqs",
                    Service::Sns => "sns",
                };
                return fail(ApiError::new(
                    ErrorCode::SignatureDoesNotMatch,
                    format!("Credential should be scoped to correct service: '{want}'."),
                ));
            }
            Ok(v) => {
                said.access_key = Some(v.credential.access_key_id.clone());
                Some(v.credential.queen_token.clone())
            }
            Err(e) => return fail(auth_error(&e)),
        },
    };

    let mut input = match wire::decode_input(&rec, &req) {
        Ok(v) => v,
        Err(e) => return fail(e),
    };
    let base_url = base_url(&req);
    if rec.service == Service::Sqs && rec.protocol == Protocol::Query && req.path().len() > 1 {
        if !wire::addresses_a_queue(rec.service, rec.action) {
            return fail(wire::not_for_this_endpoint(rec.action));
        }
        address_queue_by_path(&mut input, &req, &base_url);
    }
    said.target = target_of(&input);

    let transport = make_transport(cfg);
    let ctx = Ctx {
        cfg,
        queen: Queen::new(&transport, token),
        now_ms,
        started_clock_ms: transport.clock_ms(),
        base_url,
        request_id: &request_id,
        trace_header: trace_header(&req),
        signed: !is_unsigned_link(&req, &rec),
    };
    let result = match rec.service {
        Service::Sqs => crate::sqs::dispatch(&ctx, rec.action, input).await,
        Service::Sns => crate::sns::dispatch(&ctx, rec.action, input).await,
    };
    match result {
        Ok(output) => wire::encode_ok(&rec, &output, &request_id),
        Err(e) => fail(e),
    }
}

/// Whether `req` is for the SNS delivery route, which an edge may let answer before its
/// work is done ([`delivery_route_early`]).
pub fn is_delivery_route(req: &Request) -> bool {
    req.path() == crate::sns::webhook::ROUTE
}

/// The SNS delivery route as an edge serves it when it can go on running after the answer
/// is written (the component): `respond` is called with the answer, perhaps before the
/// POSTs are made (see [`delivery_route`]).
pub async fn delivery_route_early<T, F, I, R>(
    req: Request,
    vars: I,
    make_transport: F,
    now_ms: i64,
    request_id: String,
    respond: R,
) where
    T: Transport,
    F: FnOnce(&Config) -> T,
    I: IntoIterator<Item = (String, String)>,
    R: FnOnce(Response),
{
    let config = Config::from_env(vars);
    delivery_route(req, &config, make_transport, now_ms, &request_id, respond).await
}

/// The SNS delivery route (`sns::webhook`): a POST carrying the deployment's delivery token
/// takes up to ten POSTs from the outbox (`?wait=N`: waiting up to N seconds, at most 5,
/// for one), makes them and answers what it did. With `?early=1` it answers how many it
/// took (`{"taken": n}`) as soon as it has them, and makes them afterwards: our host calls
/// it so, so that a subscriber slow to answer holds up no later call. With `?moves=1` it
/// then steps every running message move task (our host asks once a second), so that a
/// task runs without anyone listing it. Anything but a POST
/// with the token is a 404, so the route is not told apart from a path that does not exist.
async fn delivery_route<T, F, R>(
    req: Request,
    config: &Result<Config, crate::config::ConfigError>,
    make_transport: F,
    now_ms: i64,
    request_id: &str,
    respond: R,
) where
    T: Transport,
    F: FnOnce(&Config) -> T,
    R: FnOnce(Response),
{
    use crate::sns::webhook::{self, worker};
    let presented = req.header(webhook::TOKEN_HEADER);
    let cfg = config.as_ref().ok().filter(|cfg| {
        req.method == "POST"
            && cfg
                .delivery_token
                .as_deref()
                .zip(presented)
                .is_some_and(|(want, got)| webhook::confirm::same_token(want, got))
    });
    let Some(cfg) = cfg else {
        return respond(not_found());
    };
    let transport = make_transport(cfg);
    let ctx = Ctx {
        cfg,
        queen: Queen::new(&transport, public_token(cfg)),
        now_ms,
        started_clock_ms: transport.clock_ms(),
        base_url: base_url(&req),
        request_id,
        trace_header: None,
        signed: false,
    };
    let param = |name: &str| {
        req.query()
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    let wait_s = param("wait").and_then(|v| v.parse().ok()).unwrap_or(0);
    let early = param("early") == Some("1");
    let step_move_tasks = param("moves") == Some("1");
    let json_answer = |v: Value| Response::new(200, "application/json", v.to_string().into_bytes());
    let taken = match worker::take(&ctx, wait_s).await {
        Ok(taken) => taken,
        Err(e) => {
            let body = json!({"error": e.code.code(), "message": e.message});
            return respond(Response::new(
                503,
                "application/json",
                body.to_string().into_bytes(),
            ));
        }
    };
    if early {
        respond(json_answer(json!({"taken": taken.len()})));
        worker::make(&ctx, taken).await;
    } else {
        let worked = worker::make(&ctx, taken).await;
        respond(json_answer(
            serde_json::to_value(&worked).unwrap_or_default(),
        ));
    }
    if step_move_tasks {
        // Answered already: a step that fails is tried again at the next call.
        let _ = crate::sqs::movetasks::advance_running(&ctx).await;
    }
}

fn is_get(req: &Request) -> bool {
    req.method == "GET" || req.method == "HEAD"
}

/// An unsigned GET of SNS `Unsubscribe` (a notification's `UnsubscribeURL`) or
/// `ConfirmSubscription` (a confirmation's `SubscribeURL`, which needs the token).
fn is_unsigned_link(req: &Request, rec: &wire::Recognised) -> bool {
    is_get(req)
        && rec.service == Service::Sns
        && matches!(
            rec.action,
            wire::Action::Unsubscribe | wire::Action::ConfirmSubscription
        )
        && req.header("authorization").is_none()
        && !req.query().contains("X-Amz-")
}

/// The broker token of a request no key pair signed (the certificate, an unsubscribe URL):
/// the deployment's own, or else its first key pair's.
fn public_token(cfg: &Config) -> Option<String> {
    cfg.queen_token
        .clone()
        .or_else(|| cfg.credentials.first().map(|c| c.queen_token.clone()))
}

/// The SNS signing certificate a notification's `SigningCertURL` names, as PEM, to anyone
/// (AWS serves its own the same way); 404 for any other name.
async fn signing_certificate<T, F>(
    req: &Request,
    cfg: &Config,
    make_transport: F,
    now_ms: i64,
    request_id: &str,
) -> Response
where
    T: Transport,
    F: FnOnce(&Config) -> T,
{
    let transport = make_transport(cfg);
    let ctx = Ctx {
        cfg,
        queen: Queen::new(&transport, public_token(cfg)),
        now_ms,
        started_clock_ms: transport.clock_ms(),
        base_url: base_url(req),
        request_id,
        trace_header: None,
        signed: false,
    };
    match crate::sns::signing::certificate(&ctx, req.path()).await {
        Ok(Some(pem)) => Response::new(200, "application/x-pem-file", pem.into_bytes()),
        Ok(None) => not_found(),
        Err(_) => Response::new(
            503,
            "text/plain",
            b"The certificate cannot be read right now.".to_vec(),
        ),
    }
}

fn not_found() -> Response {
    Response::new(404, "text/plain", b"Not Found".to_vec())
}

/// The X-Ray trace header of a request, when it is one SQS would keep (a String attribute
/// value: at most 1 KiB of printable text here, anything else is ignored).
fn trace_header(req: &Request) -> Option<String> {
    let v = req.header("x-amzn-trace-id")?.trim();
    let printable = v.bytes().all(|b| (0x20..0x7f).contains(&b));
    (!v.is_empty() && v.len() <= 1024 && printable).then(|| v.to_string())
}

/// The answer to a body over the cap, which was refused before it was read.
pub fn body_too_large(req: &Request, request_id: &str) -> Response {
    let protocol = if req.header("x-amz-target").is_some() {
        Protocol::Json
    } else {
        Protocol::Query
    };
    let service = auth::peek_scope_service(req).unwrap_or(Service::Sqs);
    let err = ApiError::new(
        ErrorCode::RequestEntityTooLarge,
        format!(
            "Request body must be at most {} bytes.",
            wire::MAX_BODY_BYTES
        ),
    );
    wire::encode_error(protocol, service, &err, request_id)
}

fn auth_error(e: &auth::AuthError) -> ApiError {
    let code = match e.code_name() {
        "MissingAuthenticationToken" => ErrorCode::MissingAuthenticationToken,
        "IncompleteSignature" => ErrorCode::IncompleteSignature,
        "InvalidClientTokenId" => ErrorCode::InvalidClientTokenId,
        "RequestExpired" => ErrorCode::RequestExpired,
        _ => ErrorCode::SignatureDoesNotMatch,
    };
    ApiError::new(code, e.message())
}

fn health(config: &Result<Config, crate::config::ConfigError>) -> Response {
    let (status, body) = match config {
        Ok(_) => (200, json!({"status": "ok", "config": {"valid": true}})),
        Err(e) => (
            503,
            json!({"status": "misconfigured", "config": {"valid": false, "error": e.0}}),
        ),
    };
    Response::new(status, "application/json", body.to_string().into_bytes())
}

/// How long readiness waits for the broker: a load balancer's probe must not hang.
const READINESS_TIMEOUT_MS: u64 = 2_000;

/// Readiness, for a load balancer: 200 only when the configuration is valid AND the broker
/// answers its health route (the released engine answers 503 there when it has lost its
/// database). `/healthz` stays liveness: it never leaves the process.
async fn readiness<T, F>(
    config: &Result<Config, crate::config::ConfigError>,
    make_transport: F,
) -> Response
where
    T: Transport,
    F: FnOnce(&Config) -> T,
{
    let cfg = match config {
        Ok(c) => c,
        Err(_) => return health(config),
    };
    let transport = make_transport(cfg);
    let queen = Queen::new(&transport, cfg.queen_token.clone());
    let (status, body) = match queen.health(READINESS_TIMEOUT_MS).await {
        Ok(()) => (200, json!({"status": "ready", "broker": "reachable"})),
        Err(e) => (503, json!({"status": "not ready", "broker": e.to_string()})),
    };
    Response::new(status, "application/json", body.to_string().into_bytes())
}

/// `scheme://host` from the request's Host header (the client's view of us).
fn base_url(req: &Request) -> String {
    let host = req.header("host").unwrap_or("localhost");
    let scheme = req
        .header("x-forwarded-proto")
        .unwrap_or(if req.scheme.is_empty() {
            "http"
        } else {
            &req.scheme
        });
    format!("{scheme}://{host}")
}

/// AWS's own Query examples post to the queue URL and leave `QueueUrl` out: the path
/// then names the queue.
fn address_queue_by_path(input: &mut Value, req: &Request, base_url: &str) {
    let path = req.path();
    if path.len() > 1 && input.get("QueueUrl").is_none() {
        if let Value::Object(map) = input {
            map.insert(
                "QueueUrl".into(),
                Value::String(format!("{base_url}{path}")),
            );
        }
    }
}

/// A request id in AWS's UUID form.
pub fn format_request_id(random: &[u8]) -> String {
    crate::model::uuid::v4_from(random)
}

#[cfg(test)]
mod broker_error_tests {
    use super::*;

    #[test]
    fn an_unexpected_broker_answer_is_an_internal_error_in_the_brokers_words() {
        let e = ApiError::from(QueenError::Failed {
            status: 400,
            error: "kv_bad_request: kv_duplicate_key_in_call".into(),
        });
        assert_eq!(e.code, ErrorCode::InternalError);
        assert!(
            e.message.contains("kv_duplicate_key_in_call"),
            "{}",
            e.message
        );
        // A broker in trouble stays a retryable outage, whatever it says.
        let e = ApiError::from(QueenError::Failed {
            status: 502,
            error: "bad gateway".into(),
        });
        assert_eq!(e.code, ErrorCode::ServiceUnavailable);
    }
}
