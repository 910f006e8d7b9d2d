//! The command line: `serve` (the endpoint, with the embedded broker unless QUEEN_URL
//! is set) and `broker` (the embedded broker alone). Bad configuration is refused at
//! start with one line naming what to set.

use crate::broker::{self, BrokerConfig, RunningBroker};
use crate::serve::{self, Outgoing, Server};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

const USAGE: &str = "usage: queen-sqs-host serve [--listen ADDR] [--broker-listen ADDR] [--data-dir DIR]\n       queen-sqs-host broker [--listen ADDR] [--data-dir DIR]";

struct Args {
    command: String,
    listen: Option<SocketAddr>,
    broker_listen: Option<SocketAddr>,
    data_dir: PathBuf,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut it = args.iter();
    let command = it.next().cloned().unwrap_or_else(|| "serve".into());
    if command != "serve" && command != "broker" {
        return Err(format!("unknown command {command:?}\n{USAGE}"));
    }
    let mut out = Args {
        command,
        listen: None,
        broker_listen: None,
        data_dir: default_data_dir(),
    };
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let addr = || {
            value
                .parse::<SocketAddr>()
                .map_err(|_| format!("{flag} wants HOST:PORT, got {value:?}"))
        };
        match flag.as_str() {
            "--listen" => out.listen = Some(addr()?),
            "--broker-listen" => out.broker_listen = Some(addr()?),
            "--data-dir" => out.data_dir = PathBuf::from(value),
            _ => return Err(format!("unknown flag {flag:?}\n{USAGE}")),
        }
    }
    Ok(out)
}

fn default_data_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("QUEEN_SQS_DATA_DIR") {
        return PathBuf::from(d);
    }
    PathBuf::from("./data")
}

pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("queen-sqs-host: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("queen-sqs-host: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("queen-sqs-host: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let flush = broker::store::Flush::from_env().map_err(|e| anyhow::anyhow!(e))?;
    if flush == broker::store::Flush::Normal {
        eprintln!(
            "queen-sqs-host: {}=normal: the embedded broker's commits are not flushed one by one; a power cut can lose the last writes (a killed process cannot)",
            broker::store::FLUSH_VAR
        );
    }
    if args.command == "broker" {
        let listen = args
            .listen
            .unwrap_or_else(|| "127.0.0.1:6632".parse().expect("literal"));
        let token = BrokerToken::resolve("--listen", listen, &args.data_dir)?;
        let running = broker::start(BrokerConfig {
            listen,
            data_dir: args.data_dir.clone(),
            token: token.value.clone(),
        })
        .await?;
        eprintln!(
            "queen-sqs-host: broker listening on http://{} (data in {}; {})",
            running.addr,
            args.data_dir.display(),
            token.whereabouts
        );
        shutdown_signal().await;
        running.shutdown().await;
        return Ok(());
    }

    // The broker token is the host's alone: the component never sees it.
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("QUEEN_") && k != broker::auth::TOKEN_VAR)
        .collect();
    let has = |env: &Vec<(String, String)>, k: &str| {
        env.iter().any(|(n, v)| n == k && !v.trim().is_empty())
    };

    // Defaults for the zero-setup run, announced only once the whole configuration is valid.
    let mut notices: Vec<String> = Vec::new();
    if !has(&env, "QUEEN_SQS_HANDLE_SECRET") {
        if has(&env, "QUEEN_URL") {
            // In front of a shared broker this host may be one replica of several: a secret of
            // its own would make every other replica refuse its receipt handles.
            anyhow::bail!(
                "set QUEEN_SQS_HANDLE_SECRET (the same on every replica) when QUEEN_URL names a shared broker"
            );
        }
        let (secret, note) = kept_handle_secret(&args.data_dir)?;
        notices.push(note);
        env.push(("QUEEN_SQS_HANDLE_SECRET".into(), secret));
    }
    let auth_off = env
        .iter()
        .any(|(k, v)| k == "QUEEN_SQS_AUTH" && v.trim() == "off");
    if !auth_off && !has(&env, "QUEEN_SQS_CREDENTIALS") {
        // The well-known pair is for a developer's own machine: anyone who can reach a
        // non-loopback listener knows it (the broker's port refuses such an address
        // without a token, for the same reason).
        if let Some(addr) = args.listen.filter(|a| !a.ip().is_loopback()) {
            anyhow::bail!(
                "set QUEEN_SQS_CREDENTIALS to listen on {addr}: the development key pair test/test is accepted on loopback addresses only"
            );
        }
        notices.push(
            "QUEEN_SQS_CREDENTIALS is not set; accepting the development key pair test/test."
                .to_string(),
        );
        env.push(("QUEEN_SQS_CREDENTIALS".into(), "test:test:".into()));
    }
    let embedded_wanted = !has(&env, "QUEEN_URL");
    let broker_listen = args
        .broker_listen
        .unwrap_or_else(|| "127.0.0.1:0".parse().expect("literal"));
    let broker_token = if embedded_wanted {
        Some(BrokerToken::resolve(
            "--broker-listen",
            broker_listen,
            &args.data_dir,
        )?)
    } else {
        None
    };
    let mut checked = env.clone();
    if embedded_wanted {
        // Stands in for the embedded broker's address, known only once it listens.
        checked.push(("QUEEN_URL".into(), "http://127.0.0.1:6632".into()));
    }
    if let Err(e) = queen_sqs::config::Config::from_env(checked) {
        anyhow::bail!("{e}");
    }
    if let Err(e) = serve::Limits::from_env(&env) {
        anyhow::bail!("{e}");
    }
    if let Err(e) = serve::DeliveryLoop::from_env(&mut env.clone()) {
        anyhow::bail!("{e}");
    }
    let switches = serve::Switches::from_env(&env).map_err(|e| anyhow::anyhow!("{e}"))?;
    for notice in notices {
        eprintln!("queen-sqs-host: {notice}");
    }

    let mut embedded: Option<Arc<RunningBroker>> = None;
    if let Some(token) = broker_token {
        // The component reaches this broker in process (serve::Outgoing), with no token; the
        // token guards its HTTP listener, for native clients and other replicas.
        let running = broker::start(BrokerConfig {
            listen: broker_listen,
            data_dir: args.data_dir.clone(),
            token: token.value.clone(),
        })
        .await?;
        eprintln!(
            "queen-sqs-host: embedded broker on http://{} (data in {}; {})",
            running.addr,
            args.data_dir.display(),
            token.whereabouts
        );
        env.push(("QUEEN_URL".into(), format!("http://{}", running.addr)));
        embedded = Some(Arc::new(running));
    }

    let loaded = tokio::task::spawn_blocking(|| serve::load(serve::COMPONENT)).await??;
    let listen = args
        .listen
        .unwrap_or_else(|| "127.0.0.1:9324".parse().expect("literal"));
    let listener =
        listen_on(listen).map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
    let local = listener.local_addr()?;
    eprintln!("queen-sqs-host: SQS/SNS endpoint on http://{local}");
    if switches.console {
        eprintln!("queen-sqs-host: queue console on http://{local}/console/ (sign in with a configured key pair)");
    }
    if let Some(short) = serve::Limits::from_env(&env)
        .ok()
        .and_then(|limits| serve::raise_open_files_limit(&limits, embedded.is_none()))
    {
        eprintln!("queen-sqs-host: {short}");
    }
    let ca_file = env
        .iter()
        .find(|(k, _)| k == "QUEEN_SQS_TLS_CA_FILE")
        .map(|(_, v)| v.as_str());
    let outgoing = Outgoing::new(embedded.clone())
        .with_tls_ca(ca_file)
        .map_err(|e| anyhow::anyhow!("cannot start: {e}"))?;
    let server = Server::new(loaded, env, outgoing);
    tokio::select! {
        r = serve::serve(listener, server) => r?,
        _ = shutdown_signal() => {}
    }
    if let Some(b) = embedded {
        if let Ok(b) = Arc::try_unwrap(b) {
            b.shutdown().await;
        }
    }
    Ok(())
}

/// Connections the kernel completes and keeps waiting for the listener to accept: a fleet
/// of pollers started together connects in a burst, and past the backlog the kernel drops
/// or resets connections (capped by `net.core.somaxconn`).
const LISTEN_BACKLOG: u32 = 4096;

fn listen_on(addr: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // As std and tokio's own bind do: a restart does not wait out TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// The embedded default's receipt-handle secret: generated once and kept in the data
/// directory (owner-only), so a restart does not turn every in-flight handle into
/// `ReceiptHandleIsInvalid`, which SDKs do not retry. Answers the secret and the notice.
fn kept_handle_secret(data_dir: &std::path::Path) -> anyhow::Result<(String, String)> {
    let path = data_dir.join("handle-secret");
    let (secret, generated) = broker::auth::keep_secret(
        &path,
        |kept| kept.len() >= queen_sqs::config::MIN_HANDLE_SECRET_BYTES,
        "the handle secret",
    )?;
    let note = if generated {
        format!(
            "QUEEN_SQS_HANDLE_SECRET is not set; generated one and kept it in {} (set the variable before running a second replica).",
            path.display()
        )
    } else {
        format!(
            "QUEEN_SQS_HANDLE_SECRET is not set; using the one kept in {}.",
            path.display()
        )
    };
    Ok((secret, note))
}

/// The bearer token the broker's HTTP listener requires, and where it is (for the start
/// line; the token itself is never printed).
struct BrokerToken {
    value: String,
    whereabouts: String,
}

impl BrokerToken {
    /// `QUEEN_SQS_BROKER_TOKEN` if set; else, on a loopback address only, the one kept in
    /// `<data_dir>/broker-token` (generated there on the first start, owner-only). A listener
    /// on any other address without the variable is refused: a generated token on disk is a
    /// secret nobody configured the other machines with.
    fn resolve(
        flag: &str,
        listen: SocketAddr,
        data_dir: &std::path::Path,
    ) -> anyhow::Result<BrokerToken> {
        let var = broker::auth::TOKEN_VAR;
        let set = std::env::var(var)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty());
        if let Some(value) = set {
            if let Some(why) = broker::auth::invalid(&value) {
                anyhow::bail!("{why}");
            }
            return Ok(BrokerToken {
                value,
                whereabouts: format!("bearer token from {var}"),
            });
        }
        if !listen.ip().is_loopback() {
            anyhow::bail!(
                "{flag} {listen} is not a loopback address: set {var} (the bearer token every broker client must send) to listen there"
            );
        }
        let (value, _) = broker::auth::kept_token(data_dir)?;
        Ok(BrokerToken {
            value,
            whereabouts: format!(
                "bearer token in {}",
                broker::auth::token_path(data_dir).display()
            ),
        })
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return ctrl_c.await.unwrap_or(()),
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
