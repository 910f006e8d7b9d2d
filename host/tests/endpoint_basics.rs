//! The endpoint as a whole: health, recognition, the body cap, and the component's
//! imports and exports.

mod support;

use serde_json::json;
use support::Endpoint;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reports_a_valid_configuration() {
    let ep = Endpoint::start().await;
    let (status, _, body) = ep.raw("GET", "/healthz", &[], "").await;
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["config"]["valid"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reports_an_invalid_configuration() {
    let ok = Endpoint::start().await;
    let bad = Endpoint::serve(
        vec![("QUEEN_URL".into(), "http://127.0.0.1:1".into())],
        ok.broker.clone(),
        ok.data_dir.clone(),
    )
    .await;
    let (status, _, body) = bad.raw("GET", "/healthz", &[], "").await;
    assert_eq!(status, 503);
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["config"]["valid"], false);
    assert!(
        v["config"]["error"]
            .as_str()
            .unwrap()
            .contains("QUEEN_SQS_"),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_carries_a_request_id() {
    let ep = Endpoint::start().await;
    let (_, headers, _) = ep
        .raw("POST", "/", &[("x-amz-target", "AmazonSQS.Nope")], "{}")
        .await;
    assert!(
        headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("x-amzn-requestid") && v.len() == 36),
        "{headers:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_action_is_invalid_action_named_only_when_it_could_be_one() {
    let ep = Endpoint::start().await;
    // The JSON protocol's target is never echoed.
    let (status, body) = ep.sqs("sendmessage", json!({})).await;
    assert_eq!(status, 400);
    assert!(
        body["__type"].as_str().unwrap().ends_with("#InvalidAction"),
        "{body}"
    );
    assert!(!body.to_string().contains("sendmessage"));
    // A Query action name of letters and digits is named, as SQS names it.
    let (status, xml) = ep
        .query(
            "/",
            &[("Action", "DoSomethingOdd"), ("Version", "2012-11-05")],
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        xml.contains("<Code>InvalidAction</Code>")
            && xml.contains("The action DoSomethingOdd is not valid for this endpoint."),
        "{xml}"
    );
    // Anything else is not.
    let odd = format!("Do<{}>", "x".repeat(100));
    let (status, xml) = ep
        .query("/", &[("Action", &odd), ("Version", "2012-11-05")])
        .await;
    assert_eq!(status, 400);
    assert!(
        xml.contains("<Code>InvalidAction</Code>") && !xml.contains("xxxx"),
        "{xml}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bodies_get_aws_errors_and_the_endpoint_keeps_serving() {
    let ep = Endpoint::start().await;
    let target = [("x-amz-target", "AmazonSQS.ListQueues")];
    let (status, _, _) = ep.raw("POST", "/", &target, "{not json").await;
    assert_eq!(status, 400);
    let (status, _, _) = ep.raw("POST", "/", &target, vec![0xff, 0xfe, b'{']).await;
    assert_eq!(status, 400);
    let (status, _, body) = ep
        .raw(
            "POST",
            "/",
            &[("x-amz-target", "DynamoDB_20120810.ListTables")],
            "{}",
        )
        .await;
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));
    let (status, _, _) = ep.raw("POST", "/", &[], "Action=ListQueues&%zz=1").await;
    assert!((400..500).contains(&status));
    // Still serving.
    let (status, _, _) = ep.raw("GET", "/healthz", &[], "").await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_four_mebibytes_is_refused() {
    let ep = Endpoint::start().await;
    let big = vec![b'a'; 4 * 1024 * 1024 + 1];
    let (status, _, body) = ep
        .raw(
            "POST",
            "/",
            &[("x-amz-target", "AmazonSQS.SendMessage")],
            big,
        )
        .await;
    assert_eq!(status, 413, "{}", String::from_utf8_lossy(&body));
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert!(v["__type"]
        .as_str()
        .unwrap()
        .ends_with("RequestEntityTooLarge"));
    let (status, _, _) = ep.raw("GET", "/healthz", &[], "").await;
    assert_eq!(status, 200);
}

/// The component imports only standard WASI 0.2 interfaces and exports only the
/// incoming handler, so `wasmtime serve -Scli` and Spin run it unmodified.
#[test]
fn the_component_imports_only_standard_wasi_and_exports_the_handler() {
    let loaded = support::loaded();
    let component =
        wasmtime::component::Component::new(&loaded.engine, queen_sqs_host::serve::COMPONENT)
            .unwrap();
    let ty = component.component_type();
    let allowed = [
        "wasi:http/",
        "wasi:io/",
        "wasi:clocks/",
        "wasi:random/",
        "wasi:cli/",
    ];
    let mut imports = Vec::new();
    for (name, _) in ty.imports(&loaded.engine) {
        assert!(
            allowed.iter().any(|p| name.starts_with(p)),
            "unexpected import {name}"
        );
        assert!(name.contains("@0.2."), "import {name} is not WASI 0.2");
        imports.push(name.to_string());
    }
    assert!(
        imports
            .iter()
            .any(|n| n.starts_with("wasi:http/outgoing-handler@0.2.")),
        "{imports:?}"
    );
    let exports: Vec<String> = ty
        .exports(&loaded.engine)
        .map(|(n, _)| n.to_string())
        .collect();
    assert_eq!(exports.len(), 1, "{exports:?}");
    assert!(
        exports[0].starts_with("wasi:http/incoming-handler@0.2."),
        "{exports:?}"
    );
}
