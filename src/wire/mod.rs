//! The wire layer: recognising a request, the two codecs, the closed action table
//! and the closed error catalog. Nothing here knows what an action means.
//!
//! Every request is decoded into ONE shape, the AWS JSON 1.0 input of its action (a
//! `serde_json::Value`), and every output is handed back in that shape too; the Query codec
//! translates both ways from static tables generated out of botocore's models
//! (`tools/gen_wire_model.py`).

mod actions;
mod errors;
mod form;
#[rustfmt::skip]
mod model_sns;
#[rustfmt::skip]
mod model_sqs;
mod query;
mod shape;
mod xml;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::http::{Request, Response};

pub use actions::Action;
pub use errors::{ApiError, ErrorCode};
use shape::Model;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Service {
    Sqs,
    Sns,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// AWS JSON 1.0, recognised by `X-Amz-Target`.
    Json,
    /// Query in, XML out, recognised by the form's `Action=`.
    Query,
}

/// The listener's body cap; a larger body is `RequestEntityTooLarge` before it gets here.
/// A 1 MiB message (AWS's maximum) can take three times its size on the wire: SDKs escape
/// every non-ASCII character of a JSON body as `\uXXXX` (two UTF-8 bytes become six), and the
/// Query form percent-encodes every byte that is not plain (one byte becomes three).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

const JSON_TARGET_PREFIX: &str = "AmazonSQS.";
const SQS_VERSION: &str = "2012-11-05";
const SNS_VERSION: &str = "2010-03-31";

/// A request whose protocol, service and action are known.
#[derive(Debug, Clone)]
pub struct Recognised {
    pub protocol: Protocol,
    pub service: Service,
    pub action: Action,
    /// The Query parameters (URL query merged with the form body); empty for JSON.
    params: BTreeMap<String, String>,
    /// An SQS Query request that asked for JSON (`Accept: application/json`): SQS then
    /// answers the response document as JSON (recorded: test_get_list_queues_with_query_auth).
    json_answer: bool,
}

fn invalid_action() -> ApiError {
    ApiError::new(
        ErrorCode::InvalidAction,
        "The action or operation requested is invalid. Verify that the action is typed correctly.",
    )
}

/// The longest unknown action name echoed back.
const MAX_ECHOED_ACTION: usize = 64;

/// A Query request's unknown action, in SQS's words, which name it (recorded:
/// test_invalid_action_raises_exception). Only a name that could be an action is echoed
/// (letters and digits, at most 64): anything else is unbounded client input, answered
/// without it.
fn unknown_action(name: &str) -> ApiError {
    let plausible = (1..=MAX_ECHOED_ACTION).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric());
    if !plausible {
        return invalid_action();
    }
    ApiError::new(
        ErrorCode::InvalidAction,
        format!("The action {name} is not valid for this endpoint."),
    )
}

/// Whether a Query request to a queue's URL may name this action: SQS answers the
/// actions that address a queue there (their input has a `QueueUrl`) and `GetQueueUrl`
/// (of that queue or another), as recorded against it; `CreateQueue` or `ListQueues` not.
pub fn addresses_a_queue(service: Service, action: Action) -> bool {
    action == Action::GetQueueUrl || Model::of(service).input_has(action, "QueueUrl")
}

/// SQS's answer to an action that is not one of a queue's, sent to a queue's URL. The
/// name is echoed: it is one of the closed set, not arbitrary input.
pub fn not_for_this_endpoint(action: Action) -> ApiError {
    ApiError::new(
        ErrorCode::InvalidAction,
        format!(
            "The action {} is not valid for this endpoint.",
            action.name()
        ),
    )
}

/// Cheap: reads X-Amz-Target or the form's Action; no input decoding yet.
///
/// `scope` is the SigV4 credential scope's service when the caller has parsed one; it
/// decides a Query request's service ahead of `Version` and of the action's name.
pub fn recognise(
    req: &Request,
    scope: Option<Service>,
) -> Result<Recognised, (Protocol, Service, ApiError)> {
    if let Some(target) = req.header("x-amz-target") {
        let Some(name) = target.strip_prefix(JSON_TARGET_PREFIX) else {
            return Err((
                Protocol::Json,
                scope.unwrap_or(Service::Sqs),
                invalid_action(),
            ));
        };
        return match Action::from_name(Service::Sqs, name) {
            Some(action) => Ok(Recognised {
                protocol: Protocol::Json,
                service: Service::Sqs,
                action,
                params: BTreeMap::new(),
                json_answer: false,
            }),
            None => Err((Protocol::Json, Service::Sqs, invalid_action())),
        };
    }

    let fallback = scope.unwrap_or(Service::Sqs);
    let params = form::merged(req.query(), &req.body).map_err(|e| {
        let why = match e {
            form::FormError::BadEscape => "The query string contains an invalid percent-escape.",
            form::FormError::NotUtf8 => "The query string is not valid UTF-8.",
        };
        let err = ApiError::new(ErrorCode::MalformedQueryString, why);
        (Protocol::Query, fallback, err)
    })?;
    let Some(name) = params.get("Action").filter(|n| !n.is_empty()) else {
        // A bare GET of a URL (a browser, a health probe) is AWS's unknown operation.
        let err = if req.method.eq_ignore_ascii_case("GET") {
            ApiError::new(
                ErrorCode::UnknownOperation,
                "The requested operation is not recognised.",
            )
        } else {
            ApiError::new(
                ErrorCode::MissingAction,
                "The request must contain the parameter Action.",
            )
        };
        return Err((Protocol::Query, fallback, err));
    };
    let service = scope
        .or(match params.get("Version").map(String::as_str) {
            Some(SQS_VERSION) => Some(Service::Sqs),
            Some(SNS_VERSION) => Some(Service::Sns),
            _ => None,
        })
        .or_else(|| {
            [Service::Sqs, Service::Sns]
                .into_iter()
                .find(|s| Action::from_name(*s, name).is_some())
        })
        .unwrap_or(Service::Sqs);
    match Action::from_name(service, name) {
        Some(action) => Ok(Recognised {
            protocol: Protocol::Query,
            service,
            action,
            params,
            json_answer: service == Service::Sqs
                && req
                    .header("accept")
                    .is_some_and(|a| a.contains("application/json")),
        }),
        None => Err((Protocol::Query, service, unknown_action(name))),
    }
}

/// Who is calling, as far as the edge can tell without authenticating: the protocol and
/// service an answer made before the service runs (a throttle, a refused body) must be
/// written in, and whether the request may hold its instance for a long poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    pub protocol: Protocol,
    pub service: Service,
    /// SQS `ReceiveMessage`: it may wait up to 20 s for messages.
    pub may_wait: bool,
}

/// Reads the caller's protocol and service from a request whose body has been read (the
/// Query form's `Action` and `Version` are in it). Never fails: an unrecognisable request is
/// answered as SQS JSON when it has `X-Amz-Target`, else as Query.
pub fn caller(req: &Request) -> Caller {
    let scope = crate::auth::peek_scope_service(req);
    match recognise(req, scope) {
        Ok(r) => Caller {
            protocol: r.protocol,
            service: r.service,
            may_wait: r.service == Service::Sqs && r.action == Action::ReceiveMessage,
        },
        Err((protocol, service, _)) => Caller {
            protocol,
            service,
            may_wait: false,
        },
    }
}

/// The answer when the endpoint has no capacity left for the request: the throttle each
/// service's SDKs retry (`RequestThrottled` for SQS, both protocols; `Throttled` 429 for SNS).
pub fn throttled(caller: Caller, request_id: &str) -> Response {
    let code = match caller.service {
        Service::Sqs => ErrorCode::RequestThrottled,
        Service::Sns => ErrorCode::Throttled,
    };
    let err = ApiError::new(code, "Rate exceeded");
    encode_error(caller.protocol, caller.service, &err, request_id)
}

/// The answer when the endpoint itself failed (a trap): `InternalError` in the caller's dialect.
pub fn internal_error(caller: Caller, request_id: &str) -> Response {
    let code = match caller.service {
        Service::Sqs => ErrorCode::InternalError,
        Service::Sns => ErrorCode::SnsInternalError,
    };
    let err = ApiError::new(
        code,
        "The request processing has failed because of an unknown error, exception or failure.",
    );
    encode_error(caller.protocol, caller.service, &err, request_id)
}

/// The answer to a body that ended before its declared length (the client hung up or the
/// chunked body lost its last chunk). The request was NOT acted on.
pub fn incomplete_body(caller: Caller, request_id: &str) -> Response {
    let code = match caller.protocol {
        Protocol::Json => ErrorCode::SerializationException,
        Protocol::Query => ErrorCode::InvalidParameterValue,
    };
    let err = ApiError::new(
        code,
        "The request body ended before its declared length; the request was not acted on.",
    );
    encode_error(caller.protocol, caller.service, &err, request_id)
}

/// The action's input in the AWS JSON 1.0 shape, whichever protocol carried it.
pub fn decode_input(rec: &Recognised, req: &Request) -> Result<Value, ApiError> {
    match rec.protocol {
        Protocol::Json => decode_json(&req.body),
        Protocol::Query => {
            let model = Model::of(rec.service);
            match model.op(rec.action).and_then(|op| op.input) {
                Some(input) => query::Decoder::new(rec.service).decode(input, &rec.params),
                None => Ok(Value::Object(Default::default())),
            }
        }
    }
}

fn decode_json(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(ApiError::new(
            ErrorCode::SerializationException,
            "The request body must be a JSON object.",
        )),
        Err(_) => Err(ApiError::new(
            ErrorCode::SerializationException,
            "The request body is not valid JSON.",
        )),
    }
}

fn respond(status: u16, content_type: &str, body: Vec<u8>, request_id: &str) -> Response {
    let mut resp = Response::new(status, content_type, body);
    resp.headers
        .push(("x-amzn-RequestId".into(), request_id.to_string()));
    resp
}

fn namespace(service: Service) -> &'static str {
    match service {
        Service::Sqs => xml::SQS_NS,
        Service::Sns => xml::SNS_NS,
    }
}

/// A success, in the protocol the request came in. `output` is the JSON protocol's shape of
/// the action's output (`{}` or `null` for actions that have none).
pub fn encode_ok(rec: &Recognised, output: &Value, request_id: &str) -> Response {
    let model = Model::of(rec.service);
    let op = model.op(rec.action);
    match rec.protocol {
        Protocol::Json => {
            let body = match output {
                Value::Object(_) if op.and_then(|o| o.output).is_some() => {
                    serde_json::to_vec(output).unwrap_or_else(|_| b"{}".to_vec())
                }
                _ => b"{}".to_vec(),
            };
            respond(200, "application/x-amz-json-1.0", body, request_id)
        }
        Protocol::Query if rec.json_answer => {
            let name = rec.action.name();
            let mut response = serde_json::Map::new();
            if let Some(wrapper) = op.and_then(|o| o.output.map(|_| o.result_wrapper)) {
                response.insert(wrapper.to_string(), output.clone());
            }
            response.insert(
                "ResponseMetadata".into(),
                serde_json::json!({ "RequestId": request_id }),
            );
            let body = serde_json::json!({ format!("{name}Response"): response });
            respond(
                200,
                "application/json",
                body.to_string().into_bytes(),
                request_id,
            )
        }
        Protocol::Query => {
            let name = rec.action.name();
            let mut w = xml::Writer::new(model);
            w.out.push_str("<?xml version=\"1.0\"?>");
            w.out.push_str(&format!(
                "<{name}Response xmlns=\"{}\">",
                namespace(rec.service)
            ));
            if let Some((out_id, wrapper)) =
                op.and_then(|o| o.output.map(|id| (id, o.result_wrapper)))
            {
                let at = w.out.len();
                w.open(wrapper);
                w.members(out_id, output);
                if w.out.len() == at + wrapper.len() + 2 {
                    // Nothing inside: `<XResult/>`, as AWS writes an empty result.
                    w.out.truncate(at);
                    w.out.push_str(&format!("<{wrapper}/>"));
                } else {
                    w.close(wrapper);
                }
            }
            w.out.push_str("<ResponseMetadata>");
            xml::element(&mut w.out, "RequestId", request_id);
            w.out.push_str("</ResponseMetadata>");
            w.close(&format!("{name}Response"));
            respond(200, "text/xml", w.out.into_bytes(), request_id)
        }
    }
}

/// An error, in the given protocol and service's dialect.
pub fn encode_error(
    protocol: Protocol,
    service: Service,
    err: &ApiError,
    request_id: &str,
) -> Response {
    let code = err.code;
    match protocol {
        Protocol::Json => {
            let body = serde_json::json!({
                "__type": format!("{}{}", code.json_type_prefix(service), code.shape()),
                "message": err.message,
            });
            let mut resp = respond(
                code.status(),
                "application/x-amz-json-1.0",
                body.to_string().into_bytes(),
                request_id,
            );
            resp.headers.push((
                "x-amzn-query-error".into(),
                format!("{};{}", code.code(), code.fault()),
            ));
            resp
        }
        Protocol::Query => {
            // AWS's front end names an unknown operation by its root element.
            let root = match code {
                ErrorCode::UnknownOperation => "UnknownOperationException",
                _ => "ErrorResponse",
            };
            let mut out = String::from("<?xml version=\"1.0\"?>");
            out.push_str(&format!("<{root} xmlns=\"{}\"><Error>", namespace(service)));
            xml::element(&mut out, "Type", code.fault());
            xml::element(&mut out, "Code", code.code());
            let message = match service {
                Service::Sqs => err.sqs_query_message(),
                Service::Sns => &err.message,
            };
            xml::element(&mut out, "Message", message);
            if service == Service::Sqs {
                out.push_str("<Detail/>");
            }
            out.push_str("</Error>");
            xml::element(&mut out, "RequestId", request_id);
            out.push_str(&format!("</{root}>"));
            respond(code.status(), "text/xml", out.into_bytes(), request_id)
        }
    }
}
