#!/usr/bin/env python3
"""Renders compare.sh's JSON lines as two tables. The first: per scenario and target the median
rate (the round trip: its p50) with min-max over the runs, the ratios of every queen target to
each peer present (ElasticMQ, LocalStack), and the load averages seen before the runs. SNS rows
are publishes/s, each followed by a deliveries/s row (subscribers x publishes). The second:
the server's CPU per message (user + system time of the process given to the bench as
--host-pid, divided by the messages; for queen on its embedded broker that process holds the
broker too, so it is the whole server).

    compare_table.py FILE.jsonl STAMP RUNS SECS
"""
import json
import math
import statistics
import sys
from collections import defaultdict

PEERS = ("elasticmq", "localstack")
NAMES = {"elasticmq": "ElasticMQ", "localstack": "LocalStack"}

path, stamp, runs, secs = sys.argv[1:5]
rates = defaultdict(dict)  # (scenario, clients, metric) -> target -> [(value, load)]
cpu = defaultdict(lambda: defaultdict(list))  # row key -> target -> [host µs per item]
fanout = {}  # row key -> subscribers per publish
short = []  # row key -> runs where fewer deliveries reached the queues than expected
skipped = defaultdict(dict)  # (scenario, clients) -> target -> why
failed = defaultdict(lambda: defaultdict(int))  # (scenario, clients) -> target -> runs failed
targets, keys = [], []

for line in open(path):
    line = line.strip()
    if not line:
        continue
    r = json.loads(line)
    t = r["target"]
    if t not in targets:
        targets.append(t)
    if "result" not in r:
        if r.get("skipped"):
            skipped[(r["scenario"], r["clients"])][t] = f"n/a ({r['skipped']})"
        else:
            failed[(r["scenario"], r["clients"])][t] += 1
        continue
    metric = r["metric"]
    if metric.strip().startswith("of which"):
        continue
    res = r["result"]
    if metric.startswith("round trip"):
        value = res.get("p50_ms")
        if value is None:
            lat = sorted(res.get("lat_us") or [])
            value = lat[len(lat) // 2] / 1000 if lat else math.nan
    else:
        value = res.get("rate") or (res["items"] / res["secs"] if res.get("secs") else 0)
    key = (r["scenario"], r["clients"], metric.split(" (")[0])
    if key not in keys:
        keys.append(key)
    rates[key].setdefault(t, []).append((value, r.get("loadavg", "")))
    per = res.get("host_cpu_us_per_item")
    if per is None and res.get("items"):
        per = res.get("host_cpu_s", 0) * 1e6 / res["items"]
    if per is not None:
        cpu[key][t].append(per)
    if res.get("fanout"):
        fanout[key] = res["fanout"]
        got, want = res.get("delivered"), res.get("deliveries_expected")
        if got is not None and want and got < want:
            short.append(f"{t}, {metric}, run {r.get('run', 0) + 1}: {got:,} of {want:,}")

peers = [p for p in PEERS if p in targets]
subjects = [t for t in targets if t not in PEERS]
ratio_cols = [(t, p) for p in peers for t in subjects]


def spread(values, digits):
    med = statistics.median(values)
    if len(values) == 1:
        return med, f"{med:,.{digits}f}"
    return med, f"{med:,.{digits}f} ({min(values):,.{digits}f}–{max(values):,.{digits}f})"


def label(scen, clients, metric):
    return metric if f"x{clients}" in metric else f"{metric} x{clients}"


def missing(scen, clients, t):
    if (scen, clients) in skipped and t in skipped[(scen, clients)]:
        return skipped[(scen, clients)][t]
    return "failed" if failed[(scen, clients)].get(t) else "—"


def failures(scen, clients, t):
    n = failed[(scen, clients)].get(t, 0)
    return f" + {n} failed" if n else ""


versus = " and ".join(NAMES[p] for p in peers) or "no peer"
print(f"# queen-sqs vs {versus}, {stamp}\n")
print(f"{runs} interleaved run(s) of {secs} s (drains: until 5,000 are deleted; SNS: 1 s warm-up, "
      f"then {secs} s); AWS SDK for Rust load generator on the same machine as the servers; "
      "queues and topics with default attributes. Cells: median (min–max) over the runs; rates "
      "in messages/s (SNS: publishes/s, and deliveries/s = subscribers × publishes), the round "
      "trip as p50 ms. A ratio over 1 means the queen target did better (more per second, or a "
      "shorter round trip). n/a: the peer does not offer the service. Load averages: the lowest "
      "and highest 1-minute load average read before the row's runs.\n")
head = ["scenario"] + targets + [f"{t} / {p}" for t, p in ratio_cols] + ["load averages"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for key in keys:
    scen, clients, metric = key
    is_rtt = metric.startswith("round trip")
    digits = 2 if is_rtt else 0
    by_t = rates[key]
    med, cells, loads = {}, [], []
    for t in targets:
        vals = by_t.get(t)
        if not vals:
            cells.append(missing(scen, clients, t))
            continue
        loads += [x[1] for x in vals]
        med[t], cell = spread([x[0] for x in vals], digits)
        cells.append(cell + failures(scen, clients, t))

    def ratio(t, p, m=med):
        if m.get(t) and m.get(p):
            return f"{(m[p] / m[t]) if is_rtt else (m[t] / m[p]):.2f}×"
        return "—"

    la = [float(l.split()[0]) for l in loads if l]
    la = (f"{min(la):.2f}" if min(la) == max(la) else f"{min(la):.2f}–{max(la):.2f}") if la else ""
    print(f"| {label(scen, clients, metric)} | " + " | ".join(cells) + " | "
          + " | ".join(ratio(t, p) for t, p in ratio_cols) + f" | {la} |")
    if key in fanout:
        k = fanout[key]
        dmed, dcells = {}, []
        for t in targets:
            vals = by_t.get(t)
            if not vals:
                dcells.append(missing(scen, clients, t))
                continue
            dmed[t], cell = spread([x[0] * k for x in vals], 0)
            dcells.append(cell)
        print(f"| … deliveries/s ({k} × publishes) | " + " | ".join(dcells) + " | "
              + " | ".join(ratio(t, p, dmed) for t, p in ratio_cols) + " | |")

if short:
    print("\nFewer deliveries were found in the subscribed queues (within 60 s of the last "
          "publish) than subscribers × publishes:\n")
    for s in short:
        print(f"- {s}")

print("\n## Server CPU per message\n")
print("User + system CPU of the server process (the pid passed as --host-pid: the queen-sqs-host "
      "with its embedded broker, the ElasticMQ JVM, the LocalStack Python process) during the "
      "timed part of each run, divided by the messages it handled; the round trip per round trip "
      "(3 requests), SNS per publish (all its deliveries included, as far as the server made them "
      "before the run ended). /proc counts 10 ms ticks, so short runs are coarse. Median "
      "(min–max) µs.\n")
head = ["scenario"] + [f"{t} µs/msg" for t in targets]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for key in keys:
    scen, clients, metric = key
    cells = []
    for t in targets:
        vals = cpu[key].get(t)
        cells.append(spread(vals, 0)[1] if vals else missing(scen, clients, t))
    print(f"| {label(scen, clients, metric)} | " + " | ".join(cells) + " |")
