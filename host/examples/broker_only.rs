//! Runs the embedded broker alone, for the compat suites and the SIGKILL test:
//! `broker_only [LISTEN_ADDR] [DATA_DIR]` (defaults `127.0.0.1:0` and `./data/broker`).
//! Prints `listening on <addr>` once it accepts connections; stops on Ctrl-C or stdin EOF.
//! Clients send `Authorization: Bearer <token>`: `QUEEN_SQS_BROKER_TOKEN` if set, else the
//! token kept in `<DATA_DIR>/broker-token` (generated on the first start).

use queen_sqs_host::broker::{auth, start, BrokerConfig};
use std::io::Write;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let listen = args
        .next()
        .unwrap_or_else(|| "127.0.0.1:0".to_string())
        .parse()?;
    let data_dir: std::path::PathBuf = args
        .next()
        .unwrap_or_else(|| "data/broker".to_string())
        .into();
    let token = match std::env::var(auth::TOKEN_VAR) {
        Ok(t) if !t.trim().is_empty() => t.trim().to_string(),
        _ => auth::kept_token(&data_dir)?.0,
    };
    let broker = start(BrokerConfig {
        listen,
        data_dir,
        token,
    })
    .await?;
    println!("listening on {}", broker.addr);
    std::io::stdout().flush()?;
    tokio::signal::ctrl_c().await?;
    broker.shutdown().await;
    Ok(())
}
