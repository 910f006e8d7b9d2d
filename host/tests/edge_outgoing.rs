//! The component's outgoing calls to the in-process embedded broker keep their deadline:
//! a broker call that does not answer in time fails as a read timeout (the component then
//! answers `ServiceUnavailable`) instead of holding the request for as long as the broker
//! takes. Embedded broker only (the engine lane has no in-process path).

mod support;

use http_body_util::{BodyExt, Empty};
use queen_sqs_host::serve::Outgoing;
use std::time::{Duration, Instant};
use support::{fresh_dir, TestBroker};
use wasmtime_wasi_http::{RequestOptions, WasiHttpHooks};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_process_broker_call_past_its_deadline_fails_as_a_timeout() {
    let broker = TestBroker::start(fresh_dir("outgoing")).await;
    let Some(embedded) = broker.embedded() else {
        eprintln!("skipped: the engine lane has no in-process broker");
        return;
    };
    let mut outgoing = Outgoing::new(Some(embedded));
    // A long poll of an empty queue: the broker holds it for 5 s.
    let request = http::Request::get(format!(
        "http://{}/api/v1/pop/queue/nothing-here?batch=1&partitions=1&wait=true&timeout=5000",
        broker.addr
    ))
    .body(
        Empty::<bytes::Bytes>::new()
            .map_err(|never| match never {})
            .boxed_unsync(),
    )
    .unwrap();
    let options = RequestOptions {
        connect_timeout: None,
        first_byte_timeout: Some(Duration::from_millis(300)),
        between_bytes_timeout: None,
    };
    let started = Instant::now();
    let answer =
        Box::into_pin(outgoing.send_request(request, Some(options), Box::new(async { Ok(()) })))
            .await;
    let took = started.elapsed();
    assert!(
        answer.is_err(),
        "answered after {took:?} instead of timing out"
    );
    assert!(took < Duration::from_secs(2), "took {took:?}");
}
