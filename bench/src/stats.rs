//! Latency samples and run summaries: percentiles of one run, median and spread of runs.

use serde_json::{json, Value};
use std::time::Duration;

/// What one timed run measured.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    /// Messages (or requests) completed.
    pub items: u64,
    /// Calls made (a batch call counts once).
    pub calls: u64,
    pub errors: u64,
    /// Calls that completed nothing (an empty receive).
    pub empty_calls: u64,
    pub secs: f64,
    /// Per-call latencies in microseconds, sorted.
    pub lat_us: Vec<u32>,
    /// CPU seconds spent during the run by the benchmark client and by the host.
    pub client_cpu: f64,
    pub host_cpu: f64,
    /// SNS runs: SQS subscribers per publish.
    pub fanout: Option<u64>,
    /// SNS runs: (messages found in the subscribed queues afterwards, fanout × publishes).
    pub delivered: Option<(u64, u64)>,
}

impl RunResult {
    pub fn rate(&self) -> f64 {
        if self.secs > 0.0 {
            self.items as f64 / self.secs
        } else {
            0.0
        }
    }

    pub fn pct_ms(&self, p: f64) -> f64 {
        percentile(&self.lat_us, p) as f64 / 1000.0
    }

    /// CPU microseconds per item: (client, host).
    pub fn cpu_us_per_item(&self) -> (f64, f64) {
        let n = self.items.max(1) as f64;
        (self.client_cpu * 1e6 / n, self.host_cpu * 1e6 / n)
    }

    pub fn to_json(&self) -> Value {
        let (client_us, host_us) = self.cpu_us_per_item();
        let mut v = json!({
            "client_cpu_s": self.client_cpu, "host_cpu_s": self.host_cpu,
            // CPU per item (message, publish, or round trip) of the bench and of the server
            // process given with --host-pid (null without one).
            "client_cpu_us_per_item": client_us,
            "host_cpu_us_per_item": crate::cpu::host_pid().map(|_| host_us),
            "items": self.items, "calls": self.calls, "errors": self.errors, "empty_calls": self.empty_calls,
            "secs": self.secs, "rate": self.rate(),
            "p50_ms": self.pct_ms(50.0), "p99_ms": self.pct_ms(99.0),
            // Read when the run is written down, right after it ended.
            "host_rss_mib": crate::cpu::host_rss_mib(),
        });
        if let Some(k) = self.fanout {
            v["fanout"] = json!(k);
            v["deliveries_per_s"] = json!(self.rate() * k as f64);
        }
        if let Some((got, want)) = self.delivered {
            v["delivered"] = json!(got);
            v["deliveries_expected"] = json!(want);
        }
        v
    }
}

/// Nearest-rank percentile of sorted data; 0 when empty.
pub fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn micros(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

/// Median, minimum and maximum of a metric over runs.
#[derive(Debug, Clone, Copy)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        if v.is_empty() {
            return Spread {
                median: 0.0,
                min: 0.0,
                max: 0.0,
            };
        }
        let median = if v.len() % 2 == 1 {
            v[v.len() / 2]
        } else {
            (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
        };
        Spread {
            median,
            min: v[0],
            max: v[v.len() - 1],
        }
    }

    /// `median (min–max)` with `digits` decimals.
    pub fn show(&self, digits: usize) -> String {
        format!(
            "{:.d$} ({:.d$}–{:.d$})",
            self.median,
            self.min,
            self.max,
            d = digits
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&[], 50.0), 0);
        let s = Spread::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
    }
}
