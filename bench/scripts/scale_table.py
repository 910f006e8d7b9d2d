#!/usr/bin/env python3
"""Renders scale.sh's JSON lines: per metric the median rate, p50 and p99 over the runs, the
host's resident memory after the runs (max), and the load averages."""
import json
import statistics
import sys
from collections import OrderedDict

path, stamp = sys.argv[1:3]
rows = OrderedDict()
for line in open(path):
    r = json.loads(line)
    m = r["metric"]
    if "#" in m:  # backlog repetitions: "@10000: SendMessage x16 #2"
        m = m.split(" #")[0]
    rows.setdefault(m, []).append(r)

print(f"# Scale curve, {stamp}\n")
print("Release host on the embedded broker, AWS SDK for Rust client on the same 2 cores. "
      "Cells: median over the runs (min–max for the rate); memory: the host's VmRSS right after "
      "the run (largest of the runs).\n")
print("| measurement | runs | rate /s median (min–max) | p50 ms | p99 ms | host RSS MiB | load averages |")
print("|---|---|---|---|---|---|---|")
for m, rs in rows.items():
    res = [r["result"] for r in rs]
    rates = [x["rate"] for x in res]
    p50 = statistics.median(x["p50_ms"] for x in res)
    p99 = statistics.median(x["p99_ms"] for x in res)
    rss = max((x.get("host_rss_mib") or 0) for x in res)
    la = ", ".join(sorted(set(r.get("loadavg", "").split(" ")[0] for r in rs)))
    print(f"| {m} | {len(res)} | {statistics.median(rates):,.0f} ({min(rates):,.0f}–{max(rates):,.0f}) "
          f"| {p50:.2f} | {p99:.2f} | {rss:.0f} | {la} |")
