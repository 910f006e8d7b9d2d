#!/usr/bin/env python3
"""Renders compare.sh's JSON lines as one table: per scenario and target the median rate (or
p50 for the round trip) with min-max, the load averages, and the ratios to LocalStack."""
import json
import statistics
import sys
from collections import defaultdict

path, stamp, runs, secs = sys.argv[1:5]
rows = defaultdict(list)  # (scenario, clients, metric, target) -> [(value, load)]
for line in open(path):
    r = json.loads(line)
    res = r["result"]
    metric = r["metric"]
    if metric.strip().startswith("of which"):
        continue
    if metric.startswith("round trip"):
        lat = sorted(res.get("lat_us") or [])
        value = res.get("p50_ms") or (lat[len(lat) // 2] / 1000 if lat else float("nan"))
    else:
        value = res.get("rate") or (res["items"] / res["secs"] if res.get("secs") else 0)
    rows[(r["scenario"], r["clients"], metric.split(" (")[0], r["target"])].append(
        (value, r.get("loadavg", "")))

targets = []
for k in rows:
    if k[3] not in targets:
        targets.append(k[3])
keys = []
for k in rows:
    if k[:3] not in keys:
        keys.append(k[:3])

print(f"# queen-sqs vs LocalStack, {stamp}\n")
print(f"{runs} interleaved runs of {secs} s (drains: until 5,000 are deleted); AWS SDK for Rust "
      "load generator on the same 2 cores; queues with default attributes. Cells: median "
      "(min–max); rates in messages/s, the round trip as p50 ms.\n")
head = "| scenario | " + " | ".join(targets) + " | " + " | ".join(
    f"{t} / localstack" for t in targets if t != "localstack") + " | load averages |"
print(head)
print("|" + "---|" * (2 + len(targets) + len([t for t in targets if t != "localstack"])))
for (scen, clients, metric) in keys:
    med = {}
    cells = []
    loads = []
    for t in targets:
        vals = rows.get((scen, clients, metric, t), [])
        if not vals:
            cells.append("—")
            continue
        v = [x[0] for x in vals]
        loads += [x[1] for x in vals]
        med[t] = statistics.median(v)
        digits = 2 if scen == "rtt" else 0
        cells.append(f"{med[t]:,.{digits}f} ({min(v):,.{digits}f}–{max(v):,.{digits}f})")
    ratios = []
    for t in targets:
        if t == "localstack":
            continue
        if t in med and "localstack" in med and med["localstack"] and med[t]:
            r = med["localstack"] / med[t] if scen == "rtt" else med[t] / med["localstack"]
            ratios.append(f"{r:.1f}×")
        else:
            ratios.append("—")
    la = sorted(set(l.split()[0] for l in loads if l))
    label = metric if f"x{clients}" in metric else f"{metric} x{clients}"
    print(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios)
          + f" | {', '.join(la)} |")
