//! `queen-sqs-broker-runner LISTEN DATA_DIR`: the embedded broker alone, as
//! `queen-sqs-host broker` runs it, but built without the wasmtime half (a release build of
//! that takes most of an hour on a busy 2-core machine; this one minutes), so the storage
//! bench can compare two broker trees quickly. The token is `QUEEN_SQS_BROKER_TOKEN`.
//! Stops on SIGINT or SIGTERM, checkpointing the WAL as the host does.

use anyhow::Context;
use queen_sqs_host::broker::{start, BrokerConfig};
use tokio::signal::unix::{signal, SignalKind};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(listen), Some(dir)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: queen-sqs-broker-runner LISTEN DATA_DIR");
    };
    let token = std::env::var("QUEEN_SQS_BROKER_TOKEN").context("QUEEN_SQS_BROKER_TOKEN")?;
    let running = start(BrokerConfig {
        listen: listen.parse().context("LISTEN")?,
        data_dir: dir.into(),
        token,
    })
    .await?;
    eprintln!("broker listening on http://{}", running.addr);
    let mut term = signal(SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    running.shutdown().await;
    Ok(())
}
