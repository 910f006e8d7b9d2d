//! `httpK`: SNS Publish to a topic with K `http` subscribers, which are receivers of this
//! process (one small HTTP server, a path per subscriber, answering 200 at once). Each
//! subscription is confirmed with the token its confirmation carried. The rate is
//! publishes per second, as in `snsK`; the latencies are from the publish call's start to
//! the POST's arrival at a receiver (the delivery latency, not the call's); `delivered`
//! counts the POSTs that arrived against K × publishes.

use crate::load::{self, Limit};
use crate::scenarios::{Env, Named};
use anyhow::{bail, Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[derive(Default)]
struct Seen {
    tokens: Vec<String>,
    /// Publish-to-arrival latencies, µs.
    lat_us: Vec<u32>,
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// The receivers: one listener; answers its address.
async fn receivers(seen: Arc<Mutex<Seen>>) -> Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let seen = seen.clone();
                    async move {
                        let kind = req
                            .headers()
                            .get("x-amz-sns-message-type")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("")
                            .to_string();
                        let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                        let arrived = now_us();
                        let doc: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                        let mut s = seen.lock().unwrap();
                        match kind.as_str() {
                            "SubscriptionConfirmation" => {
                                if let Some(t) = doc["Token"].as_str() {
                                    s.tokens.push(t.to_string());
                                }
                            }
                            _ => {
                                let sent = doc["Message"]
                                    .as_str()
                                    .and_then(|m| m.split(' ').next()?.parse::<u64>().ok());
                                if let Some(sent) = sent {
                                    s.lat_us.push(arrived.saturating_sub(sent).min(u32::MAX as u64) as u32);
                                }
                            }
                        }
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::new())))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(addr)
}

/// A 256-byte message that starts with its publish time in µs.
fn stamped(n: u64) -> String {
    let head = format!("{} sns http benchmark message {n:>10} ", now_us());
    format!("{head}{}", ".".repeat(256usize.saturating_sub(head.len())))
}

pub async fn http(env: &Env, run: usize, fanout: usize) -> Result<Named> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let addr = receivers(seen.clone()).await?;
    let name = format!("bench-{}-http{fanout}-{run}", env.tag);
    let topic = crate::sdk::sns::create_topic(&env.sns, &name).await?;
    for k in 0..fanout {
        env.sns
            .subscribe()
            .topic_arn(&topic)
            .protocol("http")
            .endpoint(format!("http://{addr}/s{k}"))
            .send()
            .await
            .context("Subscribe http")?;
    }
    let started = Instant::now();
    loop {
        let n = seen.lock().unwrap().tokens.len();
        if n >= fanout {
            break;
        }
        if started.elapsed() > Duration::from_secs(60) {
            bail!("{n} of {fanout} confirmations arrived in 60 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let tokens = std::mem::take(&mut seen.lock().unwrap().tokens);
    for t in tokens {
        env.sns
            .confirm_subscription()
            .topic_arn(&topic)
            .token(t)
            .send()
            .await
            .context("ConfirmSubscription")?;
    }
    let (c, t) = (env.sns.clone(), Arc::new(topic.clone()));
    let clients = env.clients as u64;
    let mut r = load::run(
        env.clients,
        Limit { secs: env.secs, items: None },
        u32::MAX,
        move |w, i| {
            let (c, t) = (c.clone(), t.clone());
            let n = i * clients + w as u64;
            async move {
                c.publish().topic_arn(t.as_str()).message(stamped(n)).send().await.context("Publish")?;
                Ok(1)
            }
        },
    )
    .await;
    let expected = r.items * fanout as u64;
    // Until every POST arrived, or none for 10 s (120 s at most).
    let waited = Instant::now();
    let (mut got, mut moved) = (0u64, Instant::now());
    while waited.elapsed() < Duration::from_secs(120) {
        let n = seen.lock().unwrap().lat_us.len() as u64;
        if n != got {
            (got, moved) = (n, Instant::now());
        }
        if got >= expected || moved.elapsed() > Duration::from_secs(10) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if got < expected {
        eprintln!("http{fanout}: {got} of {expected} POSTs arrived");
    }
    let mut lat = std::mem::take(&mut seen.lock().unwrap().lat_us);
    lat.sort_unstable();
    r.lat_us = lat;
    r.fanout = Some(fanout as u64);
    r.delivered = Some((got, expected));
    crate::sdk::sns::delete_topic(&env.sns, &topic).await;
    Ok(vec![(
        format!(
            "SNS Publish, {fanout} HTTP subscriber{} x{} (latency: publish to POST)",
            if fanout == 1 { "" } else { "s" },
            env.clients
        ),
        r,
    )])
}
