//! The proxy-wasm edge (`--features proxy-wasm`, wasm32-wasip1): the same core served as a
//! local response of an HTTP filter in Envoy, Istio or MOSN. The plugin configuration (a
//! JSON object) carries what the component reads from its environment; the broker is
//! reached with `proxy_http_call` through a cluster of the gateway. See
//! docs/deploy/gateway.md.

mod config;
mod executor;
mod transport;

use crate::http::{Request, Response};
use crate::wire::MAX_BODY_BYTES;
use config::PluginConfig;
use proxy_wasm::hostcalls;
use proxy_wasm::traits::{Context, HttpContext, RootContext};
use proxy_wasm::types::{Action, ContextType, LogLevel};
use std::rc::Rc;

proxy_wasm::main! {{
    proxy_wasm::set_log_level(LogLevel::Info);
    proxy_wasm::set_root_context(|_| -> Box<dyn RootContext> { Box::new(Root::default()) });
}}

#[derive(Default)]
struct Root {
    config: Rc<PluginConfig>,
}

impl Context for Root {
    /// A call dispatched while the root's tick was polling a stream's task lands here.
    fn on_http_call_response(&mut self, token: u32, headers: usize, body: usize, _: usize) {
        executor::on_answer(token, headers, body);
    }
}

impl RootContext for Root {
    fn on_configure(&mut self, _size: usize) -> bool {
        let raw = self.get_plugin_configuration().unwrap_or_default();
        match PluginConfig::parse(&raw) {
            Ok(config) => {
                // An invalid value is reported, not refused: /healthz names it, as the
                // component's does, and the filter answers every other request 500.
                if let Err(e) = crate::config::Config::from_env(config.vars.iter().cloned()) {
                    let _ = hostcalls::log(LogLevel::Error, &format!("queen-sqs: {}", e.0));
                }
                self.config = Rc::new(config);
                true
            }
            Err(e) => {
                let _ = hostcalls::log(LogLevel::Error, &format!("queen-sqs: {e}"));
                false
            }
        }
    }

    fn on_tick(&mut self) {
        executor::on_tick();
    }

    fn create_http_context(&self, context_id: u32) -> Option<Box<dyn HttpContext>> {
        Some(Box::new(Stream {
            id: context_id,
            config: self.config.clone(),
            headers: Vec::new(),
            started: false,
        }))
    }

    fn get_type(&self) -> Option<ContextType> {
        Some(ContextType::HttpContext)
    }
}

/// One client request: its head is kept until the body is complete, then the task runs.
struct Stream {
    id: u32,
    config: Rc<PluginConfig>,
    headers: Vec<(String, String)>,
    /// The task was started or the request refused: later callbacks change nothing.
    started: bool,
}

impl Context for Stream {
    fn on_http_call_response(&mut self, token: u32, headers: usize, body: usize, _: usize) {
        executor::on_answer(token, headers, body);
    }
}

impl HttpContext for Stream {
    fn on_http_request_headers(&mut self, _num_headers: usize, end_of_stream: bool) -> Action {
        self.headers = self.get_http_request_headers();
        // Refuse a declared oversize body before the gateway buffers a byte of it.
        if self
            .declared_length()
            .is_some_and(|n| n > MAX_BODY_BYTES as u64)
        {
            self.started = true;
            respond(crate::service::body_too_large(&self.head(), &request_id()));
        } else if end_of_stream {
            self.start(Vec::new());
        }
        Action::Pause
    }

    /// Each call sees the whole body buffered so far; pausing makes the gateway keep it.
    fn on_http_request_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        if self.started {
            return Action::Pause;
        }
        if body_size > MAX_BODY_BYTES {
            self.started = true;
            respond(crate::service::body_too_large(&self.head(), &request_id()));
        } else if end_of_stream {
            let body = self.get_http_request_body(0, body_size).unwrap_or_default();
            self.start(body);
        }
        Action::Pause
    }

    /// A request that ends with trailers ends here: its body is what was buffered.
    fn on_http_request_trailers(&mut self, _num_trailers: usize) -> Action {
        if !self.started {
            let body = self
                .get_http_request_body(0, MAX_BODY_BYTES + 1)
                .unwrap_or_default();
            self.start(body);
        }
        Action::Pause
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        executor::forget(self.id);
    }
}

impl Stream {
    fn declared_length(&self) -> Option<u64> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.trim().parse::<u64>().ok())
    }

    /// The request without its body: what an early refusal is shaped by.
    fn head(&self) -> Request {
        Request {
            headers: plain_headers(&self.headers),
            ..Request::default()
        }
    }

    fn start(&mut self, body: Vec<u8>) {
        self.started = true;
        let pseudo = |name: &str| {
            self.headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        if body.len() > MAX_BODY_BYTES {
            return respond(crate::service::body_too_large(&self.head(), &request_id()));
        }
        if self
            .declared_length()
            .is_some_and(|n| n != body.len() as u64)
        {
            let head = self.head();
            return respond(crate::wire::incomplete_body(
                crate::wire::caller(&head),
                &request_id(),
            ));
        }
        let req = Request {
            method: pseudo(":method").unwrap_or_else(|| "GET".into()),
            path_and_query: pseudo(":path").unwrap_or_else(|| "/".into()),
            headers: plain_headers(&self.headers),
            body,
            scheme: pseudo(":scheme").unwrap_or_else(|| "http".into()),
        };
        let config = self.config.clone();
        let task = async move {
            crate::service::handle(
                req,
                config.vars.iter().cloned(),
                |cfg| transport::GatewayTransport::new(&cfg.queen_url, &config.cluster),
                executor::now_ms(),
                request_id(),
            )
            .await
        };
        executor::spawn(self.id, Box::pin(task));
    }
}

/// Header names lower-cased, pseudo-headers left out; `:authority` becomes `host` (what
/// SigV4 signs) when the gateway sent no `host` of its own (Envoy never does over HTTP/2).
fn plain_headers(all: &[(String, String)]) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = all
        .iter()
        .filter(|(k, _)| !k.starts_with(':'))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
        .collect();
    if !headers.iter().any(|(k, _)| k == "host") {
        if let Some((_, authority)) = all.iter().find(|(k, _)| k == ":authority") {
            headers.push(("host".into(), authority.clone()));
        }
    }
    headers
}

/// The local response of the current (effective) HTTP context.
fn respond(response: Response) {
    let headers: Vec<(&str, &str)> = response
        .headers
        .iter()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("content-length"))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    if let Err(status) =
        hostcalls::send_http_response(response.status as u32, headers, Some(&response.body))
    {
        let _ = hostcalls::log(
            LogLevel::Warn,
            &format!("queen-sqs: local response refused: {status:?}"),
        );
    }
}

#[link(wasm_import_module = "wasi_snapshot_preview1")]
extern "C" {
    /// WASI preview 1's `random_get` (Envoy, MOSN and wazero provide it): `errno` 0 on success.
    fn random_get(buf: *mut u8, len: usize) -> u16;
}

/// A request id from 16 random bytes. Request ids make message ids and handle nonces
/// unique (the core has no RNG of its own), so a failed `random_get` must not pass silently:
/// the clock's nanoseconds and a counter then keep them distinct within this VM.
fn request_id() -> String {
    use std::cell::Cell;
    thread_local!(static COUNTER: Cell<u64> = const { Cell::new(0) });
    let mut b = [0u8; 16];
    // SAFETY: the buffer is 16 writable bytes, the length passed.
    let errno = unsafe { random_get(b.as_mut_ptr(), b.len()) };
    if errno != 0 {
        let _ = hostcalls::log(
            LogLevel::Warn,
            "queen-sqs: random_get failed; ids from the clock",
        );
        let n = COUNTER.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        let t = hostcalls::get_current_time()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64);
        b[..8].copy_from_slice(&t.to_le_bytes());
        b[8..].copy_from_slice(&n.to_le_bytes());
    }
    crate::service::format_request_id(&b)
}
