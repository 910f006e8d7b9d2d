//! The queue console's files as the host serves them: off by default (404 with the switch to
//! set), on with `QUEEN_SQS_CONSOLE=on` (the page and its scripts, a strict
//! Content-Security-Policy, GET/HEAD only), and queue URLs never shadowed. The page itself
//! is tested in a real browser by scripts/console-test.sh.

mod support;

use serde_json::json;
use support::Endpoint;

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_is_off_by_default() {
    let ep = Endpoint::start().await;
    for path in ["/console", "/console/", "/console/console.js"] {
        let (status, headers, body) = ep.raw("GET", path, &[], "").await;
        assert_eq!(status, 404, "{path}");
        let body = String::from_utf8(body).unwrap();
        assert!(body.contains("QUEEN_SQS_CONSOLE=on"), "{path}: {body}");
        assert!(header(&headers, "content-security-policy").is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_serves_its_bundled_files_when_on() {
    let ep = Endpoint::with_env(&[("QUEEN_SQS_AUTH", "off"), ("QUEEN_SQS_CONSOLE", "on")]).await;

    let (status, headers, _) = ep.raw("GET", "/console", &[], "").await;
    assert_eq!(status, 308);
    assert_eq!(header(&headers, "location"), Some("/console/"));

    let (status, headers, body) = ep.raw("GET", "/console/", &[], "").await;
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "content-type"),
        Some("text/html; charset=utf-8")
    );
    let csp = header(&headers, "content-security-policy").expect("a CSP");
    assert!(csp.contains("script-src 'self'") && csp.contains("connect-src 'self'"));
    assert_eq!(header(&headers, "x-frame-options"), Some("DENY"));
    let page = String::from_utf8(body).unwrap();
    assert!(page.contains(r#"<script type="module" src="console.js">"#));
    assert!(page.contains(r#"id="login-form""#));

    for (file, imports) in [
        ("console.js", "./api.js"),
        ("api.js", "./sigv4.js"),
        ("sigv4.js", "AWS4-HMAC-SHA256"),
    ] {
        let (status, headers, body) = ep.raw("GET", &format!("/console/{file}"), &[], "").await;
        assert_eq!(status, 200, "{file}");
        assert_eq!(
            header(&headers, "content-type"),
            Some("text/javascript; charset=utf-8")
        );
        assert!(String::from_utf8(body).unwrap().contains(imports), "{file}");
    }
    let (status, headers, _) = ep.raw("GET", "/console/console.css", &[], "").await;
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "content-type"),
        Some("text/css; charset=utf-8")
    );

    let (status, headers, body) = ep.raw("HEAD", "/console/", &[], "").await;
    assert_eq!(status, 200);
    assert!(body.is_empty());
    assert_eq!(
        header(&headers, "content-length").map(str::to_string),
        Some(page.len().to_string())
    );

    let (status, _, _) = ep.raw("GET", "/console/../metrics", &[], "").await;
    assert_ne!(status, 200);
    let (status, _, _) = ep.raw("GET", "/console/secret.txt", &[], "").await;
    assert_eq!(status, 404);
    let (status, headers, _) = ep.raw("POST", "/console/", &[], "x").await;
    assert_eq!(status, 405);
    assert_eq!(header(&headers, "allow"), Some("GET, HEAD"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_urls_are_not_shadowed_by_the_console() {
    let ep = Endpoint::with_env(&[("QUEEN_SQS_AUTH", "off"), ("QUEEN_SQS_CONSOLE", "on")]).await;
    let url = ep.create_queue("console", json!({})).await;
    let path = url
        .strip_prefix(&ep.url)
        .expect("a queue URL on this endpoint");
    assert!(path.ends_with("/console"), "{path}");
    let (status, xml) = ep
        .query(path, &[("Action", "SendMessage"), ("MessageBody", "hi")])
        .await;
    assert_eq!(status, 200, "{xml}");
    assert!(xml.contains("<MessageId>"), "{xml}");
}
