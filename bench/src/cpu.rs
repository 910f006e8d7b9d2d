//! CPU time of this process and of the host under test, from /proc (clock ticks of 10 ms),
//! so a run can say how much CPU each message cost on each side.

use std::sync::OnceLock;

static HOST_PID: OnceLock<u32> = OnceLock::new();

pub fn set_host_pid(pid: u32) {
    let _ = HOST_PID.set(pid);
}

/// The pid given with `--host-pid`.
pub fn host_pid() -> Option<u32> {
    HOST_PID.get().copied()
}

/// user + system seconds of `pid` ("self" for this process).
fn seconds(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Snapshot {
    client: f64,
    host: f64,
}

pub fn snapshot() -> Snapshot {
    Snapshot {
        client: seconds("self").unwrap_or(0.0),
        host: HOST_PID
            .get()
            .and_then(|p| seconds(&p.to_string()))
            .unwrap_or(0.0),
    }
}

/// (client, host) CPU seconds since `s`.
pub fn since(s: Snapshot) -> (f64, f64) {
    let now = snapshot();
    (now.client - s.client, now.host - s.host)
}

/// Resident memory of the host under test in MiB (VmRSS), when its pid is known.
pub fn host_rss_mib() -> Option<f64> {
    let pid = HOST_PID.get()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}
