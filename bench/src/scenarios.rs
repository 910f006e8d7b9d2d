//! The measurements. Each scenario makes its own queue, measures, deletes the queue, and
//! answers named results; `main` repeats scenarios and summarises the repetitions.

use crate::load::{self, Limit};
use crate::native::Queen;
use crate::sdk;
use crate::stats::{micros, RunResult};
use anyhow::{ensure, Result};
use aws_sdk_sqs::Client;
use std::sync::Arc;
use std::time::Instant;

/// Lanes of every benchmark queue (the receive tests need in-flight ≤ lanes to be no limit).
pub const LANES: u32 = 256;

pub struct Env {
    pub sqs: Client,
    /// An SNS client on the same endpoint and SDK configuration.
    pub sns: aws_sdk_sns::Client,
    pub queen: Queen,
    /// Seconds per timed run.
    pub secs: f64,
    pub clients: usize,
    /// Makes queue names unique per invocation.
    pub tag: String,
    /// The broker's data directory (`--data-dir`), for the scenarios that weigh its files.
    pub data_dir: Option<std::path::PathBuf>,
}

pub type Named = Vec<(String, RunResult)>;

fn qname(env: &Env, what: &str, run: usize) -> String {
    format!("bench-{}-{what}-{run}", env.tag)
}

async fn sdk_send_for(env: &Env, url: &str, secs: f64, batch: bool) -> RunResult {
    let (c, u) = (env.sqs.clone(), Arc::new(url.to_string()));
    let clients = env.clients as u64;
    load::run(
        env.clients,
        Limit { secs, items: None },
        u32::MAX,
        move |w, i| {
            let (c, u) = (c.clone(), u.clone());
            async move {
                let n = i * clients + w as u64;
                if batch {
                    sdk::send_batch(&c, &u, n).await
                } else {
                    sdk::send(&c, &u, n).await
                }
            }
        },
    )
    .await
}

async fn sdk_drain(env: &Env, url: &str, limit: Limit, max: i32, wait: i32) -> RunResult {
    sdk_drain_patient(env, url, limit, max, wait, 2).await
}

/// [`sdk_drain`] where a consumer gives up only after `empty_limit` empty receives in a row.
async fn sdk_drain_patient(
    env: &Env,
    url: &str,
    limit: Limit,
    max: i32,
    wait: i32,
    empty_limit: u32,
) -> RunResult {
    let (c, u) = (env.sqs.clone(), Arc::new(url.to_string()));
    load::run(env.clients, limit, empty_limit, move |_, _| {
        let (c, u) = (c.clone(), u.clone());
        async move { sdk::receive_delete(&c, &u, max, wait).await }
    })
    .await
}

/// SendMessage and SendMessageBatch(10) at `clients` concurrent callers, after a 1 s warm-up.
pub async fn send(env: &Env, run: usize, batch: bool) -> Result<Named> {
    let url = sdk::create_queue(
        &env.sqs,
        &qname(env, if batch { "batch" } else { "send" }, run),
        LANES,
    )
    .await?;
    let _ = sdk_send_for(env, &url, 1.0, batch).await;
    let r = sdk_send_for(env, &url, env.secs, batch).await;
    sdk::delete_queue(&env.sqs, &url).await;
    let name = if batch {
        format!("SendMessageBatch (10/call) x{}", env.clients)
    } else {
        format!("SendMessage x{}", env.clients)
    };
    Ok(vec![(name, r)])
}

/// Fills `count` messages with SendMessageBatch (exactly, `clients` callers), then drains the
/// queue with ReceiveMessage(10) + DeleteMessageBatch; the rate is count / time to the last delete.
pub async fn drain(env: &Env, run: usize, count: u64, wait: i32) -> Result<Named> {
    let url = sdk::create_queue(&env.sqs, &qname(env, "drain", run), LANES).await?;
    let calls = count.div_ceil(10);
    let mut fills = Vec::new();
    for w in 0..env.clients as u64 {
        let (c, u) = (env.sqs.clone(), url.clone());
        let stride = env.clients as u64;
        fills.push(tokio::spawn(async move {
            let mut k = w;
            while k < calls {
                sdk::send_batch(&c, &u, k).await?;
                k += stride;
            }
            anyhow::Ok(())
        }));
    }
    for f in fills {
        f.await??;
    }
    let limit = Limit {
        secs: 600.0,
        items: Some(calls * 10),
    };
    let r = sdk_drain(env, &url, limit, 10, wait).await;
    ensure!(
        r.items == calls * 10,
        "drained {} of {}",
        r.items,
        calls * 10
    );
    sdk::delete_queue(&env.sqs, &url).await;
    Ok(vec![(
        format!(
            "drain {} (Receive 10 + DeleteBatch, wait {wait}) x{}",
            calls * 10,
            env.clients
        ),
        r,
    )])
}

/// The FIFO drain: `count` messages sent with SendMessageBatch(10) to a FIFO queue, spread
/// over `groups` message groups with explicit deduplication ids, then `clients` consumers
/// ReceiveMessage(10, `wait`) + DeleteMessageBatch until all are deleted. A group is held
/// while a consumer has its messages in flight, so at most `groups` consumers get work at once.
pub async fn fifo_drain(
    env: &Env,
    run: usize,
    count: u64,
    groups: u64,
    wait: i32,
) -> Result<Named> {
    let name = format!("{}.fifo", qname(env, "fifo-drain", run));
    let url = sdk::create_fifo_queue(&env.sqs, &name).await?;
    let calls = count.div_ceil(10);
    let mut fills = Vec::new();
    for w in 0..env.clients as u64 {
        let (c, u) = (env.sqs.clone(), url.clone());
        let stride = env.clients as u64;
        fills.push(tokio::spawn(async move {
            let mut k = w;
            while k < calls {
                sdk::send_batch_fifo(&c, &u, k, groups).await?;
                k += stride;
            }
            anyhow::Ok(())
        }));
    }
    for f in fills {
        f.await??;
    }
    let limit = Limit {
        secs: 600.0,
        items: Some(calls * 10),
    };
    // Near the end only a few groups are left and the other consumers find nothing until a
    // holder deletes its batch: give up only after 5 empty long polls in a row.
    let r = sdk_drain_patient(env, &url, limit, 10, wait, 5).await;
    ensure!(
        r.items == calls * 10,
        "FIFO drained {} of {}",
        r.items,
        calls * 10
    );
    sdk::delete_queue(&env.sqs, &url).await;
    Ok(vec![(
        format!(
            "FIFO drain {} in {groups} groups (Receive 10 + DeleteBatch, wait {wait}) x{}",
            calls * 10,
            env.clients
        ),
        r,
    )])
}

/// Publishes for `secs` with `clients` concurrent publishers.
async fn sns_publish_for(env: &Env, topic: &str, secs: f64, first: u64) -> RunResult {
    let (c, t) = (env.sns.clone(), Arc::new(topic.to_string()));
    let clients = env.clients as u64;
    load::run(
        env.clients,
        Limit { secs, items: None },
        u32::MAX,
        move |w, i| {
            let (c, t) = (c.clone(), t.clone());
            async move { sdk::sns::publish(&c, &t, first + i * clients + w as u64).await }
        },
    )
    .await
}

/// SNS Publish (256-byte messages) to a topic with `fanout` SQS queues subscribed by ARN,
/// `clients` concurrent publishers, 1 s warm-up then `secs`. The rate is publishes per second;
/// deliveries are `fanout` times that. Afterwards the queues' depths are summed (waiting for
/// an endpoint that delivers after answering the Publish) and recorded as `delivered` against
/// the `fanout` × publishes expected. With `raw` the subscriptions have RawMessageDelivery
/// (no JSON envelope, so nothing to sign per publish).
pub async fn sns(env: &Env, run: usize, fanout: usize, raw: bool) -> Result<Named> {
    let topic = sdk::sns::create_topic(&env.sns, &qname(env, &format!("sns{fanout}"), run)).await?;
    let mut urls = Vec::new();
    for k in 0..fanout {
        let url = sdk::create_queue(
            &env.sqs,
            &qname(env, &format!("sns{fanout}-q{k}"), run),
            LANES,
        )
        .await?;
        let arn = sdk::queue_arn(&env.sqs, &url).await?;
        sdk::sns::subscribe_queue(&env.sns, &topic, &arn, raw).await?;
        urls.push(url);
    }
    let warm = sns_publish_for(env, &topic, 1.0, 0).await;
    let mut r = sns_publish_for(env, &topic, env.secs, 1 << 40).await;
    let expected = (warm.items + r.items) * fanout as u64;
    // Wait until every delivery is counted, or the total stops moving for 5 s (60 s at most).
    let started = Instant::now();
    let (mut delivered, mut moved) = (0u64, Instant::now());
    while started.elapsed().as_secs() < 60 {
        let mut sum = 0;
        for u in &urls {
            sum += sdk::queue_depth(&env.sqs, u).await.unwrap_or(0);
        }
        if sum != delivered {
            (delivered, moved) = (sum, Instant::now());
        }
        if delivered >= expected || moved.elapsed().as_secs() >= 5 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    if delivered < expected {
        eprintln!("sns{fanout}: {delivered} of {expected} deliveries found in the queues");
    }
    r.fanout = Some(fanout as u64);
    r.delivered = Some((delivered, expected));
    sdk::sns::delete_topic(&env.sns, &topic).await;
    for u in &urls {
        sdk::delete_queue(&env.sqs, u).await;
    }
    Ok(vec![(
        format!(
            "SNS Publish, {fanout} SQS subscriber{}{} x{}",
            if fanout == 1 { "" } else { "s" },
            if raw { ", raw delivery" } else { "" },
            env.clients
        ),
        r,
    )])
}

/// One client, sequential send → receive → delete round trips on an empty queue.
pub async fn round_trip(env: &Env, run: usize, n: u64) -> Result<Named> {
    let url = sdk::create_queue(&env.sqs, &qname(env, "rtt", run), LANES).await?;
    let (mut all, mut s, mut r, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut errors = 0;
    let cpu = crate::cpu::snapshot();
    let started = Instant::now();
    for i in 0..n + 50 {
        let t0 = Instant::now();
        sdk::send(&env.sqs, &url, i).await?;
        let t1 = Instant::now();
        let Some(h) = sdk::receive_one(&env.sqs, &url).await? else {
            errors += 1;
            continue;
        };
        let t2 = Instant::now();
        sdk::delete_one(&env.sqs, &url, &h).await?;
        let t3 = Instant::now();
        if i >= 50 {
            // The first 50 warm the connection pool and the caches.
            all.push(micros(t3 - t0));
            s.push(micros(t1 - t0));
            r.push(micros(t2 - t1));
            d.push(micros(t3 - t2));
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let (client_cpu, host_cpu) = crate::cpu::since(cpu);
    sdk::delete_queue(&env.sqs, &url).await;
    let mk = |mut lat: Vec<u32>| {
        lat.sort_unstable();
        RunResult {
            items: lat.len() as u64,
            calls: lat.len() as u64,
            errors,
            empty_calls: 0,
            secs,
            lat_us: lat,
            client_cpu,
            host_cpu,
            ..RunResult::default()
        }
    };
    Ok(vec![
        ("round trip send→receive→delete (1 client)".into(), mk(all)),
        ("  of which SendMessage".into(), mk(s)),
        ("  of which ReceiveMessage".into(), mk(r)),
        ("  of which DeleteMessage".into(), mk(d)),
    ])
}

/// The same three operations, natively and through the facade, `clients` concurrent.
pub async fn overhead(env: &Env, run: usize) -> Result<Named> {
    let name = qname(env, "overhead", run);
    let url = sdk::create_queue(&env.sqs, &name, LANES).await?;
    let mut out = Vec::new();
    let lanes = u64::from(LANES);

    // Send: one message per call.
    let q = env.queen.clone();
    let nm = Arc::new(name.clone());
    let clients = env.clients as u64;
    let push = {
        let (q, nm) = (q.clone(), nm.clone());
        move |w: usize, i: u64| {
            let (q, nm) = (q.clone(), nm.clone());
            async move {
                q.push_envelopes(&nm, lanes, i * clients + w as u64, 1)
                    .await
            }
        }
    };
    let _ = load::run(
        env.clients,
        Limit {
            secs: 1.0,
            items: None,
        },
        u32::MAX,
        push.clone(),
    )
    .await;
    out.push((
        format!("send: native push (1 item) x{}", env.clients),
        load::run(
            env.clients,
            Limit {
                secs: env.secs,
                items: None,
            },
            u32::MAX,
            push,
        )
        .await,
    ));
    let kv_push = {
        let (q, nm) = (q.clone(), nm.clone());
        move |w: usize, i: u64| {
            let (q, nm) = (q.clone(), nm.clone());
            async move {
                q.kv_get(&format!("qs:q:{nm}")).await?;
                q.push_envelopes(&nm, lanes, i * clients + w as u64, 1)
                    .await
            }
        }
    };
    out.push((
        format!(
            "send: native kv get + push (the facade's two broker calls) x{}",
            env.clients
        ),
        load::run(
            env.clients,
            Limit {
                secs: env.secs,
                items: None,
            },
            u32::MAX,
            kv_push,
        )
        .await,
    ));
    out.push((
        format!("send: SendMessage x{}", env.clients),
        sdk_send_for(env, &url, env.secs, false).await,
    ));

    // Receive + delete: one message per cycle, on a queue that never runs dry.
    sdk::delete_queue(&env.sqs, &url).await;
    let url = sdk::create_queue(&env.sqs, &qname(env, "overhead-r", run), LANES).await?;
    let rname = Arc::new(qname(env, "overhead-r", run));
    let budget = 40_000u64;
    env.queen
        .fill(&rname, lanes, 0, budget + 5_000, 5_000)
        .await?;
    let cycle = {
        let (q, nm) = (q.clone(), rname.clone());
        move |_: usize, _: u64| {
            let (q, nm) = (q.clone(), nm.clone());
            async move {
                match q.pop_one(&nm).await? {
                    Some(c) => {
                        q.ack(&c).await?;
                        Ok(1)
                    }
                    None => Ok(0),
                }
            }
        }
    };
    let limit = Limit {
        secs: env.secs,
        items: Some(budget),
    };
    out.push((
        format!("receive+delete: native pop(1) + ack x{}", env.clients),
        load::run(env.clients, limit, 20, cycle).await,
    ));
    env.queen
        .fill(&rname, lanes, 100_000, budget + 5_000, 5_000)
        .await?;
    out.push((
        format!(
            "receive+delete: ReceiveMessage(1) + DeleteMessage x{}",
            env.clients
        ),
        sdk_drain(env, &url, limit, 1, 0).await,
    ));
    sdk::delete_queue(&env.sqs, &url).await;
    Ok(out)
}

/// Send and receive rates with 10^4, 10^5, 10^6 messages already queued (filled natively).
/// Each level is measured `reps` times; a receive run takes at most a tenth of the backlog (5000 at least).
pub async fn backlog(env: &Env, reps: usize) -> Result<Named> {
    let name = qname(env, "backlog", 0);
    let url = sdk::create_queue(&env.sqs, &name, LANES).await?;
    let lanes = u64::from(LANES);
    let mut out = Vec::new();
    let mut stored = 0u64;
    let mut next_id = 0u64;
    for level in [10_000u64, 100_000, 1_000_000] {
        if stored < level {
            let t = Instant::now();
            let k = level - stored;
            env.queen.fill(&name, lanes, next_id, k, 10_000).await?;
            next_id += k;
            stored = level;
            let secs = t.elapsed().as_secs_f64();
            out.push((
                format!("fill to {level} (native push, 10000/call)"),
                RunResult {
                    items: k,
                    calls: k.div_ceil(10_000),
                    secs,
                    ..RunResult::default()
                },
            ));
        }
        for rep in 0..reps {
            let s = sdk_send_for(env, &url, env.secs, false).await;
            stored += s.items;
            out.push((format!("@{level}: SendMessage x{} #{rep}", env.clients), s));
            let limit = Limit {
                secs: env.secs,
                items: Some((level / 10).max(5_000)),
            };
            let r = sdk_drain(env, &url, limit, 10, 0).await;
            stored = stored.saturating_sub(r.items);
            out.push((
                format!("@{level}: Receive 10 + DeleteBatch x{} #{rep}", env.clients),
                r,
            ));
        }
    }
    sdk::delete_queue(&env.sqs, &url).await;
    Ok(out)
}
