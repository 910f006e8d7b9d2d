//! Answers: JSON bodies with their content type, bodiless 204s, and the error shapes of §1.7.

use bytes::Bytes;
use serde_json::{json, Value};

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

impl Reply {
    pub fn json(status: u16, v: &Value) -> Reply {
        Reply::raw_json(status, v.to_string())
    }

    pub fn raw_json(status: u16, text: String) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: Bytes::from(text),
        }
    }

    /// 204: no body and no content type at all.
    pub fn no_content() -> Reply {
        Reply {
            status: 204,
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// Core routes: `{"error": "<text>"}`.
    pub fn error(status: u16, text: impl Into<String>) -> Reply {
        Reply::json(status, &json!({"error": text.into()}))
    }

    /// KV and timer routes: `{"error": "<code>", "reason": "<id>", "detail": "<text>"}`.
    pub fn coded(status: u16, code: &str, reason: &str, detail: impl Into<String>) -> Reply {
        Reply::json(
            status,
            &json!({"error": code, "reason": reason, "detail": detail.into()}),
        )
    }

    pub fn with_header(mut self, k: &str, v: impl Into<String>) -> Reply {
        self.headers.push((k.to_string(), v.into()));
        self
    }
}

/// A store failure on a core route.
pub fn store_failed(op: &str, e: impl std::fmt::Display) -> Reply {
    Reply::error(500, format!("{op} failed: {e}"))
}
