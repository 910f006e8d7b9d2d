//! Helpers shared by the fuzz targets: a poll loop for the service's futures, a broker
//! stand-in that answers at once, and a strict reading of the XML the endpoint writes.

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use queen_sqs::http::{OutRequest, Request, Response, Transport, TransportError};
use queen_sqs::wire::Protocol;

/// Polls a future to completion. Every transport here answers at once, so a request's
/// future must finish without ever being woken; one that stays pending is a hang.
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000 {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
    panic!("a request's future is still pending though every broker call answered at once");
}

/// The broker, as far as a decoder target needs one: every call gets the same canned
/// answer at once (or, after 64 calls, `Unreachable`, so no retry loop can spin).
pub struct Canned {
    mode: u8,
    calls: Cell<u32>,
}

impl Canned {
    pub fn new(mode: u8) -> Canned {
        Canned {
            mode,
            calls: Cell::new(0),
        }
    }
}

impl Transport for Canned {
    fn send(&self, _req: OutRequest) -> impl Future<Output = Result<Response, TransportError>> {
        let n = self.calls.get();
        self.calls.set(n + 1);
        let json = |status: u16, body: &str| {
            Ok(Response::new(
                status,
                "application/json",
                body.as_bytes().to_vec(),
            ))
        };
        let answer = if n >= 64 {
            Err(TransportError::Unreachable(
                "fuzz: call budget spent".into(),
            ))
        } else {
            match self.mode % 6 {
                0 => Err(TransportError::Unreachable("fuzz".into())),
                1 => Err(TransportError::Timeout),
                2 => json(404, r#"{"error":"not found"}"#),
                3 => json(200, "{}"),
                4 => json(200, "[]"),
                _ => json(503, r#"{"error":"unavailable"}"#),
            }
        };
        std::future::ready(answer)
    }
}

/// The endpoint's configuration for the decoder targets: no SigV4 (the sigv4 target covers
/// it), a valid handle secret.
pub fn config_vars() -> Vec<(String, String)> {
    [
        ("QUEEN_URL", "http://127.0.0.1:6632"),
        ("QUEEN_SQS_AUTH", "off"),
        ("QUEEN_SQS_HANDLE_SECRET", "fuzz-handle-secret-0123456789"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

pub const REQUEST_ID: &str = "5e1f6c1e-6f2a-4c3b-9d4e-0a1b2c3d4e5f";

/// Runs one request through the whole service (recognise, authenticate, decode, act,
/// encode) against the canned broker.
pub fn handle(req: Request, broker_mode: u8) -> Response {
    block_on(queen_sqs::service::handle(
        req,
        config_vars(),
        |_| Canned::new(broker_mode),
        1_790_000_000_000,
        REQUEST_ID.to_string(),
    ))
}

/// XML 1.0's `Char` production.
pub fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// What a client reads back of text the writer was given: forbidden characters as U+FFFD.
pub fn as_xml_text(s: &str) -> String {
    s.chars()
        .map(|c| if is_xml_char(c) { c } else { '\u{FFFD}' })
        .collect()
}

/// One element without child elements: its path from the root (`a/b/c`) and its text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Leaf {
    pub path: String,
    pub text: String,
}

/// A document read strictly: one root element, matching end tags, only XML characters,
/// only the five predefined entities and character references, no text outside the root.
#[derive(Debug)]
pub struct Doc {
    pub root: String,
    pub leaves: Vec<Leaf>,
}

pub fn read_xml(doc: &str) -> Result<Doc, String> {
    use quick_xml::events::Event;
    if let Some(c) = doc.chars().find(|c| !is_xml_char(*c)) {
        return Err(format!(
            "character U+{:04X} is not allowed in XML",
            c as u32
        ));
    }
    let mut reader = quick_xml::Reader::from_str(doc);
    reader.config_mut().check_end_names = true;
    // (name, text so far, has child elements)
    let mut stack: Vec<(String, String, bool)> = Vec::new();
    let mut root: Option<String> = None;
    let mut leaves = Vec::new();
    let name_of = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|e| e.to_string());
    loop {
        let event = reader.read_event().map_err(|e| format!("{e}"))?;
        match event {
            Event::Decl(_) => {
                if root.is_some() || !stack.is_empty() {
                    return Err("declaration after the start".into());
                }
            }
            Event::Start(e) => {
                let name = name_of(e.name().as_ref())?;
                for a in e.attributes() {
                    let a = a.map_err(|e| format!("attribute: {e}"))?;
                    a.unescape_value()
                        .map_err(|e| format!("attribute value: {e}"))?;
                }
                match stack.last_mut() {
                    Some(parent) => {
                        if !parent.1.is_empty() {
                            return Err(format!("mixed content in <{}>", parent.0));
                        }
                        parent.2 = true;
                    }
                    None => {
                        if root.is_some() {
                            return Err("a second root element".into());
                        }
                        root = Some(name.clone());
                    }
                }
                stack.push((name, String::new(), false));
            }
            Event::Empty(e) => {
                let name = name_of(e.name().as_ref())?;
                let Some(parent) = stack.last_mut() else {
                    return Err("an empty root element".into());
                };
                parent.2 = true;
                let path = path_of(&stack, &name);
                leaves.push(Leaf {
                    path,
                    text: String::new(),
                });
            }
            Event::End(e) => {
                let name = name_of(e.name().as_ref())?;
                let Some((open, text, has_children)) = stack.pop() else {
                    return Err(format!("</{name}> closes nothing"));
                };
                if open != name {
                    return Err(format!("<{open}> closed by </{name}>"));
                }
                if !has_children {
                    leaves.push(Leaf {
                        path: path_of(&stack, &name),
                        text,
                    });
                } else if !text.is_empty() {
                    return Err(format!("mixed content in <{name}>"));
                }
            }
            Event::Text(t) => {
                let t = t.decode().map_err(|e| format!("text: {e}"))?;
                match stack.last_mut() {
                    Some(top) => {
                        if top.2 {
                            return Err(format!("mixed content in <{}>", top.0));
                        }
                        top.1.push_str(&t);
                    }
                    None => return Err(format!("text outside the root: {t:?}")),
                }
            }
            Event::GeneralRef(r) => {
                let name = r.decode().map_err(|e| format!("reference: {e}"))?;
                let c = match &*name {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    // The writer's only character reference: a literal one would be normalised.
                    "#xD" => '\r',
                    other => return Err(format!("unexpected reference &{other};")),
                };
                match stack.last_mut() {
                    Some(top) if !top.2 => top.1.push(c),
                    _ => return Err("reference outside a leaf element".into()),
                }
            }
            Event::Eof => break,
            other => return Err(format!("unexpected event {other:?}")),
        }
    }
    if !stack.is_empty() {
        return Err(format!("<{}> is never closed", stack[stack.len() - 1].0));
    }
    let root = root.ok_or("no root element")?;
    Ok(Doc { root, leaves })
}

fn path_of(stack: &[(String, String, bool)], name: &str) -> String {
    let mut p = String::new();
    for (n, _, _) in stack {
        p.push_str(n);
        p.push('/');
    }
    p.push_str(name);
    p
}

/// The properties every answer of the service has, whatever the request: a real status, the
/// request id header, a content type matching the protocol, and a body a client can parse
/// (JSON object; or a well-formed XML document whose root names the action or an error and
/// which carries the request id).
pub fn check_response(resp: &Response, protocol: Protocol, action: Option<&str>) {
    assert!(
        resp.status == 200 || (400..=599).contains(&resp.status),
        "status {}",
        resp.status
    );
    assert_eq!(resp.header("x-amzn-RequestId"), Some(REQUEST_ID));
    match protocol {
        Protocol::Json => {
            assert_eq!(
                resp.header("content-type"),
                Some("application/x-amz-json-1.0")
            );
            let v: serde_json::Value =
                serde_json::from_slice(&resp.body).expect("a JSON answer is JSON");
            let obj = v.as_object().expect("a JSON answer is an object");
            if resp.status != 200 {
                let ty = obj.get("__type").and_then(|t| t.as_str());
                assert!(ty.is_some_and(|t| !t.is_empty()), "error without __type");
                assert!(obj.get("message").is_some_and(|m| m.is_string()));
                let q = resp
                    .header("x-amzn-query-error")
                    .expect("x-amzn-query-error");
                assert!(q.ends_with(";Sender") || q.ends_with(";Receiver"), "{q}");
            }
        }
        Protocol::Query => {
            assert_eq!(resp.header("content-type"), Some("text/xml"));
            let text = std::str::from_utf8(&resp.body).expect("an XML answer is UTF-8");
            let doc = read_xml(text).unwrap_or_else(|e| panic!("{e}: {text}"));
            if resp.status == 200 {
                let action = action.expect("a 200 answer names a recognised action");
                assert_eq!(doc.root, format!("{action}Response"), "{text}");
                let rid = format!("{action}Response/ResponseMetadata/RequestId");
                assert!(
                    doc.leaves
                        .iter()
                        .any(|l| l.path == rid && l.text == REQUEST_ID),
                    "{text}"
                );
            } else {
                assert_eq!(doc.root, "ErrorResponse", "{text}");
                let code = doc
                    .leaves
                    .iter()
                    .find(|l| l.path == "ErrorResponse/Error/Code")
                    .expect("<Code>");
                assert!(!code.text.is_empty());
                assert!(doc
                    .leaves
                    .iter()
                    .any(|l| l.path == "ErrorResponse/RequestId" && l.text == REQUEST_ID));
            }
        }
    }
}
