//! The queue console: a static page under `/console/`, served only with
//! `QUEEN_SQS_CONSOLE=on` (off by default).
//!
//! The host stays SQS-agnostic and holds no secret for it. The page asks for an access key
//! id and secret, signs every call with SigV4 in the browser and calls the endpoint's own
//! actions (SQS over JSON with `X-Amz-Target`, SNS over Query), so the component checks each
//! call as it checks an SDK's: without a configured key pair the page shows nothing, and
//! with one it can do nothing that key pair could not do with an SDK. HTTP Basic with the
//! host signing on the page's behalf was the alternative; it would put the secret in every
//! request, make the host parse SQS credentials, and open a second way in.
//!
//! Assets are bundled (`include_str!`): no build step, no CDN. The page's scripts and
//! styles are its own files, so a strict Content-Security-Policy holds (no inline code,
//! connections to this origin only).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

/// The console's path prefix. No account id is `console`, so no queue URL is shadowed.
pub const PREFIX: &str = "/console";

struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: &[Asset] = &[
    Asset {
        path: "/console/",
        content_type: "text/html; charset=utf-8",
        body: include_str!("console/index.html"),
    },
    Asset {
        path: "/console/console.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("console/console.css"),
    },
    Asset {
        path: "/console/console.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("console/console.js"),
    },
    Asset {
        path: "/console/api.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("console/api.js"),
    },
    Asset {
        path: "/console/sigv4.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("console/sigv4.js"),
    },
];

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/// True for `/console` and everything under `/console/`.
pub fn is_console_path(path: &str) -> bool {
    path == PREFIX
        || path
            .strip_prefix(PREFIX)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The answer to a request for a console path (see [`is_console_path`]).
pub fn answer(method: &http::Method, path: &str, on: bool) -> hyper::Response<HyperOutgoingBody> {
    if !on {
        return text(
            404,
            "the queue console is off; start the host with QUEEN_SQS_CONSOLE=on\n",
        );
    }
    let head = *method == http::Method::HEAD;
    if *method != http::Method::GET && !head {
        let mut resp = text(405, "the console is read with GET\n");
        resp.headers_mut().insert(
            http::header::ALLOW,
            http::HeaderValue::from_static("GET, HEAD"),
        );
        return resp;
    }
    if path == PREFIX || path == "/console/index.html" {
        // Relative asset paths resolve under `/console/` only with the trailing slash.
        let mut resp = text(308, "");
        resp.headers_mut().insert(
            http::header::LOCATION,
            http::HeaderValue::from_static("/console/"),
        );
        return resp;
    }
    let Some(asset) = ASSETS.iter().find(|a| a.path == path) else {
        return text(404, "no such console file\n");
    };
    let mut resp = body(200, if head { "" } else { asset.body });
    let h = resp.headers_mut();
    let set = |h: &mut http::HeaderMap, name, value: &'static str| {
        h.insert(name, http::HeaderValue::from_static(value));
    };
    set(h, http::header::CONTENT_TYPE, asset.content_type);
    if head {
        h.insert(http::header::CONTENT_LENGTH, asset.body.len().into());
    }
    set(h, http::header::CONTENT_SECURITY_POLICY, CSP);
    set(h, http::header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(h, http::header::X_FRAME_OPTIONS, "DENY");
    set(h, http::header::REFERRER_POLICY, "no-referrer");
    // Revalidated on every load, so a new host version's page is never mixed with old scripts.
    set(h, http::header::CACHE_CONTROL, "no-cache");
    resp
}

fn body(status: u16, text: &'static str) -> hyper::Response<HyperOutgoingBody> {
    let body = Full::new(Bytes::from_static(text.as_bytes()))
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut resp = hyper::Response::new(body);
    *resp.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::OK);
    resp
}

fn text(status: u16, text: &'static str) -> hyper::Response<HyperOutgoingBody> {
    let mut resp = body(status, text);
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_paths() {
        assert!(is_console_path("/console"));
        assert!(is_console_path("/console/"));
        assert!(is_console_path("/console/x.js"));
        assert!(!is_console_path("/consoles"));
        assert!(!is_console_path("/000000000000/console"));
    }

    #[test]
    fn the_page_loads_only_bundled_files() {
        for a in ASSETS {
            // No CDN and no other origin: every script, style and call stays on this one.
            assert!(!a.body.contains("http://"), "{}", a.path);
            assert!(!a.body.contains("https://"), "{}", a.path);
        }
        let index = ASSETS[0].body;
        for a in &ASSETS[1..] {
            let file = a.path.trim_start_matches("/console/");
            let linked = index.contains(&format!("\"{file}\""))
                || ASSETS.iter().any(|b| b.body.contains(&format!("./{file}")));
            assert!(linked, "{file} is bundled but nothing loads it");
        }
    }
}
