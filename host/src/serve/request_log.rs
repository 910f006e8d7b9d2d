//! The request log: one JSON line per request the component answered, opt-in with
//! `QUEEN_SQS_REQUEST_LOG` (`stderr`, `stdout`, or a file path to append to).
//!
//! The host knows no SQS: what a request was (service, action, access key id, queue or
//! topic, error code) the component tells it in the `x-queen-sqs-said` response header
//! (`queen_sqs::service::TELL_HOST_HEADER`), which the host always removes before the
//! response leaves. Time, request id, status, latency and sizes the host measures itself.
//! No bodies, no signatures.

use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

pub enum Sink {
    Stderr,
    Stdout,
    File(Mutex<std::fs::File>),
}

pub struct RequestLog {
    sink: Sink,
}

/// One answered request, as the host saw it.
pub struct Entry<'a> {
    pub said: Option<&'a str>,
    pub request_id: Option<&'a str>,
    pub status: u16,
    pub latency: Duration,
    pub bytes_in: usize,
    pub bytes_out: Option<u64>,
}

impl RequestLog {
    /// The log `QUEEN_SQS_REQUEST_LOG` asks for, if any; a file that cannot be opened is
    /// an error naming it.
    pub fn from_env(env: &[(String, String)]) -> Result<Option<RequestLog>, String> {
        let Some(target) = env
            .iter()
            .rev()
            .find(|(k, v)| k == "QUEEN_SQS_REQUEST_LOG" && !v.trim().is_empty())
            .map(|(_, v)| v.trim().to_string())
        else {
            return Ok(None);
        };
        let sink = match target.as_str() {
            "stderr" => Sink::Stderr,
            "stdout" => Sink::Stdout,
            path => Sink::File(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("QUEEN_SQS_REQUEST_LOG: cannot open {path}: {e}"))?,
            )),
        };
        Ok(Some(RequestLog { sink }))
    }

    pub fn write(&self, e: &Entry) {
        let mut fields = e.said.unwrap_or("").split(' ');
        let mut next = || match fields.next() {
            Some(f) if !f.is_empty() && f != "-" => serde_json::Value::String(f.to_string()),
            _ => serde_json::Value::Null,
        };
        let (service, action, access_key, target, error) = (next(), next(), next(), next(), next());
        let line = serde_json::json!({
            "time": time_now(),
            "request_id": e.request_id,
            "access_key_id": access_key,
            "service": service,
            "action": action,
            "target": target,
            "status": e.status,
            "error": error,
            "latency_ms": (e.latency.as_secs_f64() * 1e6).round() / 1e3,
            "bytes_in": e.bytes_in,
            "bytes_out": e.bytes_out,
        })
        .to_string();
        match &self.sink {
            Sink::Stderr => eprintln!("{line}"),
            Sink::Stdout => println!("{line}"),
            Sink::File(f) => {
                let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
                let _ = writeln!(f, "{line}");
            }
        }
    }
}

/// RFC 3339 UTC with milliseconds.
fn time_now() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    queen_sqs::calendar::iso8601_ms(ms)
}
