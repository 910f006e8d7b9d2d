//! A quick measurement, not a test: publish latency and throughput with 1, 3 and 10
//! subscribed queues, and the cost per matched subscription.
//! `cargo test -p queen-sqs-host --test sns_bench -- --ignored --nocapture`

mod sns_common;
mod support;

use sns_common::*;
use std::time::{Duration, Instant};
use support::Endpoint;

const N: usize = 200;

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

async fn run(ep: &Endpoint, topic: &str, label: &str, attrs: &[(&str, &str, &str)]) -> f64 {
    for _ in 0..20 {
        publish_ok(ep, topic, "warm-up", attrs, &[]).await;
    }
    let mut lat = Vec::with_capacity(N);
    let start = Instant::now();
    for i in 0..N {
        let t = Instant::now();
        publish_ok(ep, topic, &format!("message {i}"), attrs, &[]).await;
        lat.push(t.elapsed());
    }
    let total = start.elapsed();
    lat.sort();
    let mean = total.as_secs_f64() * 1e3 / N as f64;
    println!(
        "{label:<28} sequential: {:>7.0} publish/s  mean {mean:>6.2} ms  p50 {:>6.2} ms  p99 {:>6.2} ms",
        N as f64 / total.as_secs_f64(),
        pct(&lat, 0.5),
        pct(&lat, 0.99)
    );
    // Eight publishers at once.
    let start = Instant::now();
    let per = N / 8;
    let mut tasks = Vec::new();
    for w in 0..8 {
        let topic = topic.to_string();
        let attrs: Vec<(String, String, String)> = attrs
            .iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect();
        tasks.push(async move {
            let refs: Vec<(&str, &str, &str)> = attrs
                .iter()
                .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
                .collect();
            for i in 0..per {
                publish_ok(ep, &topic, &format!("w{w} {i}"), &refs, &[]).await;
            }
        });
    }
    support::join_all(tasks).await;
    let total = start.elapsed();
    println!(
        "{label:<28} 8 in flight: {:>7.0} publish/s",
        (per * 8) as f64 / total.as_secs_f64()
    );
    mean
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn publish_fan_out_cost() {
    let ep = Endpoint::start().await;
    let mut means = Vec::new();
    for subs in [0usize, 1, 3, 10] {
        let t = create_topic(&ep, &format!("bench{subs}"), &[]).await;
        let names: Vec<String> = (0..subs).map(|i| format!("b{subs}-{i}")).collect();
        make_queues(&ep, &names, 64).await;
        for n in &names {
            subscribe(&ep, &t, &queue_arn(n), &[]).await;
        }
        let m = run(&ep, &t, &format!("{subs} subscribed queues"), &[]).await;
        means.push((subs, m));
    }
    // Ten subscriptions whose filter policy matches nothing: the evaluation without the pushes.
    let t = create_topic(&ep, "bench-filtered", &[]).await;
    let names: Vec<String> = (0..10).map(|i| format!("bf-{i}")).collect();
    make_queues(&ep, &names, 64).await;
    for n in &names {
        subscribe(
            &ep,
            &t,
            &queue_arn(n),
            &[("FilterPolicy", r#"{"kind":["never"]}"#)],
        )
        .await;
    }
    run(
        &ep,
        &t,
        "10 subs, none matching",
        &[("kind", "String", "other")],
    )
    .await;
    let one = means
        .iter()
        .find(|(s, _)| *s == 1)
        .map(|x| x.1)
        .unwrap_or(0.0);
    let ten = means
        .iter()
        .find(|(s, _)| *s == 10)
        .map(|x| x.1)
        .unwrap_or(0.0);
    println!(
        "cost per matched subscription: {:.3} ms (mean latency, 10 vs 1)",
        (ten - one) / 9.0
    );
    assert!(means.iter().all(|(_, m)| *m > 0.0));
}
