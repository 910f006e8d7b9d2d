//! Runs the embedded broker alone, for the compat suites and the SIGKILL test:
//! `broker_only [LISTEN_ADDR] [DATA_DIR]` (defaults `127.0.0.1:0` and `./data/broker`).
//! Prints `listening on <addr>` once it accepts connections; stops on Ctrl-C or stdin EOF.

use queen_sqs_host::broker::{start, BrokerConfig};
use std::io::Write;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let listen = args
        .next()
        .unwrap_or_else(|| "127.0.0.1:0".to_string())
        .parse()?;
    let data_dir = args
        .next()
        .unwrap_or_else(|| "data/broker".to_string())
        .into();
    let broker = start(BrokerConfig { listen, data_dir }).await?;
    println!("listening on {}", broker.addr);
    std::io::stdout().flush()?;
    tokio::signal::ctrl_c().await?;
    broker.shutdown().await;
    Ok(())
}
