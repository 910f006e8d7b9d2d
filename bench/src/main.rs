//! queen-sqs benchmarks. `queen-sqs-bench SCENARIO... [--sqs URL] [--queen URL] [--secs S]
//! [--runs N] [--clients N] [--json FILE] [--host-pid PID] [--data-dir DIR]`; scenarios: send
//! batch drain rtt overhead backlog all, and (not in all) broker, storage, fifo-drain, and
//! snsK (SNS Publish to a topic with K SQS subscribers, e.g. sns1, sns3, sns10; snsKraw with
//! RawMessageDelivery subscriptions), httpK (SNS Publish to K `http` subscribers, receivers of
//! this process: `webhooks`).
//! Prints one markdown table per scenario (median and min–max over the runs) and appends
//! every raw run as JSON lines to `--json`.

mod broker;
mod cpu;
mod load;
mod native;
mod scenarios;
mod sdk;
mod stats;
mod storage;
mod webhooks;

use anyhow::{bail, Context, Result};
use scenarios::{Env, Named};
use serde_json::json;
use stats::Spread;
use std::collections::BTreeMap;
use std::io::Write;

struct Opts {
    scenarios: Vec<String>,
    sqs: String,
    queen: String,
    secs: f64,
    runs: usize,
    clients: usize,
    json: Option<String>,
    host_pid: Option<u32>,
    data_dir: Option<String>,
}

fn parse() -> Result<Opts> {
    let mut o = Opts {
        scenarios: vec![],
        sqs: "http://127.0.0.1:19400".into(),
        queen: "http://127.0.0.1:19401".into(),
        secs: 10.0,
        runs: 3,
        clients: 16,
        json: None,
        host_pid: None,
        data_dir: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut val = || it.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--sqs" => o.sqs = val()?,
            "--queen" => o.queen = val()?,
            "--secs" => o.secs = val()?.parse()?,
            "--runs" => o.runs = val()?.parse()?,
            "--clients" => o.clients = val()?.parse()?,
            "--json" => o.json = Some(val()?),
            "--host-pid" => o.host_pid = Some(val()?.parse()?),
            "--data-dir" => o.data_dir = Some(val()?),
            s if s.starts_with("--") => bail!("unknown flag {s}"),
            s => o.scenarios.push(s.to_string()),
        }
    }
    if o.scenarios.is_empty() || o.scenarios.iter().any(|s| s == "all") {
        o.scenarios = ["send", "batch", "drain", "rtt", "overhead", "backlog"]
            .map(String::from)
            .to_vec();
    }
    Ok(o)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

async fn one(env: &Env, scenario: &str, run: usize) -> Result<Named> {
    match scenario {
        "send" => scenarios::send(env, run, false).await,
        "batch" => scenarios::send(env, run, true).await,
        "drain" => scenarios::drain(env, run, 5_000, 1).await,
        "drain0" => scenarios::drain(env, run, 5_000, 0).await,
        "drain100k" => scenarios::drain(env, run, 100_000, 1).await,
        "fifo-drain" => scenarios::fifo_drain(env, run, 5_000, 16, 1).await,
        "rtt" => scenarios::round_trip(env, run, 1_000).await,
        "overhead" => scenarios::overhead(env, run).await,
        "backlog" => scenarios::backlog(env, 3).await,
        "broker" => broker::broker(env, run).await,
        s if s.starts_with("http") => match s["http".len()..].parse::<usize>() {
            Ok(k) if (1..=100).contains(&k) => webhooks::http(env, run, k).await,
            _ => bail!("unknown scenario {s}"),
        },
        s => {
            // snsK, or snsKraw for RawMessageDelivery subscriptions.
            let (k, raw) = match s.strip_suffix("raw") {
                Some(k) => (k, true),
                None => (s, false),
            };
            match k.strip_prefix("sns").map(str::parse::<usize>) {
                Some(Ok(k)) if (1..=100).contains(&k) => scenarios::sns(env, run, k, raw).await,
                _ => bail!("unknown scenario {s}"),
            }
        }
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let o = parse()?;
    if let Some(p) = o.host_pid {
        cpu::set_host_pid(p);
    }
    let conf = sdk::config(&o.sqs).await;
    let env = Env {
        sqs: aws_sdk_sqs::Client::new(&conf),
        sns: aws_sdk_sns::Client::new(&conf),
        queen: native::Queen::new(&o.queen),
        secs: o.secs,
        clients: o.clients,
        tag: format!("{:x}", std::process::id()),
        data_dir: o.data_dir.as_ref().map(std::path::PathBuf::from),
    };
    let mut sink = match &o.json {
        Some(p) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)?,
        ),
        None => None,
    };
    for scenario in &o.scenarios {
        if scenario == "storage" {
            // Its own table: sizes and bytes, not call rates.
            storage::storage(&env).await?;
            continue;
        }
        if scenario == "storage-sqs" {
            storage::storage_sqs(&env).await?;
            continue;
        }
        // The backlog scenario repeats inside itself (one fill to 10^6 is enough).
        let runs = if scenario == "backlog" { 1 } else { o.runs };
        let mut by_metric: BTreeMap<String, (usize, Vec<stats::RunResult>)> = BTreeMap::new();
        let mut loads = Vec::new();
        for run in 0..runs {
            let before = load_average();
            let named = one(&env, scenario, run).await?;
            loads.push(before.clone());
            for (i, (metric, r)) in named.into_iter().enumerate() {
                eprintln!(
                    "[{scenario} run {run}] {metric}: {:.0}/s p50 {:.2} ms p99 {:.2} ms ({} errors, {} empty calls, load {})",
                    r.rate(), r.pct_ms(50.0), r.pct_ms(99.0), r.errors, r.empty_calls, load_average()
                );
                if let Some(f) = sink.as_mut() {
                    let line = json!({"scenario": scenario, "run": run, "metric": metric,
                                      "loadavg": before, "clients": o.clients, "result": r.to_json()});
                    writeln!(f, "{line}")?;
                }
                let e = by_metric.entry(metric).or_insert((i, vec![]));
                e.1.push(r);
            }
        }
        let mut rows: Vec<_> = by_metric.into_iter().collect();
        rows.sort_by_key(|(_, (i, _))| *i);
        println!(
            "\n### {scenario} ({runs} run(s), load average before each: {})\n",
            loads.join(" / ")
        );
        println!("| measurement | n | rate /s median (min–max) | p50 ms | p99 ms | CPU µs/item client / host | errors | empty calls |");
        println!("|---|---|---|---|---|---|---|---|");
        for (metric, (_, rs)) in rows {
            let rate = Spread::of(&rs.iter().map(|r| r.rate()).collect::<Vec<_>>());
            let p50 = Spread::of(&rs.iter().map(|r| r.pct_ms(50.0)).collect::<Vec<_>>());
            let p99 = Spread::of(&rs.iter().map(|r| r.pct_ms(99.0)).collect::<Vec<_>>());
            let errors: u64 = rs.iter().map(|r| r.errors).sum();
            let empties: u64 = rs.iter().map(|r| r.empty_calls).sum();
            let cc = Spread::of(&rs.iter().map(|r| r.cpu_us_per_item().0).collect::<Vec<_>>());
            let hc = Spread::of(&rs.iter().map(|r| r.cpu_us_per_item().1).collect::<Vec<_>>());
            println!(
                "| {metric} | {} | {} | {} | {} | {:.0} / {:.0} | {errors} | {empties} |",
                rs.len(),
                rate.show(0),
                p50.show(2),
                p99.show(2),
                cc.median,
                hc.median
            );
        }
        std::io::stdout().flush()?;
    }
    Ok(())
}
