#!/usr/bin/env bash
# SendMessage, 16 concurrent callers, through ONE facade replica vs through the round-robin
# front over TWO replicas (each on its own engine node of the mesh cluster), plus the front
# over replica 1 alone (what the proxy hop itself costs). Run inside the cluster lane:
#
#   QUEEN_CLUSTER_SUITES=bench scripts/cluster-lane.sh
#   QUEEN_SQS_HOST_BIN=/path/to/release/queen-sqs-host QUEEN_CLUSTER_SUITES=bench scripts/cluster-lane.sh
#
# The client is the bench crate's AWS SDK for Rust harness (`queen-sqs-bench send`: 1 s
# warm-up, then SECS s, a fresh queue per run); build it once with
# `(cd bench && nice -n 10 cargo build --release)`. RUNS rounds, each round measuring the
# three targets back to back (so load drift hits all three alike); cells are median
# (min-max). Writes bench/cluster/results/send-<UTC stamp>.md.
#
# Environment (from the lane): CLUSTER_REPLICA_1, CLUSTER_FRONT, CLUSTER_REPLICA_1_PORT,
# CLUSTER_DIR, CLUSTER_HOST_BIN, CLUSTER_PY; SECS (default 10), RUNS (default 3), CLIENTS (16).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
BENCH="${QUEEN_SQS_BENCH_BIN:-$root/bench/target/release/queen-sqs-bench}"
SECS="${SECS:-10}"
RUNS="${RUNS:-3}"
CLIENTS="${CLIENTS:-16}"
[ -x "$BENCH" ] || { echo "no bench binary at $BENCH: (cd bench && nice -n 10 cargo build --release)" >&2; exit 1; }

# A second front, over replica 1 only: the proxy hop without the second replica.
# shellcheck source=../../scripts/lib/ports.sh
. "$root/scripts/lib/ports.sh"
solo_port=$(ports_free 1)
"$CLUSTER_PY" "$root/tests/cluster/front.py" "$solo_port" "$CLUSTER_REPLICA_1_PORT" >"$CLUSTER_DIR/front-solo.log" 2>&1 &
solo_pid=$!
trap 'kill $solo_pid 2>/dev/null || true; wait $solo_pid 2>/dev/null || true' EXIT
ports_wait "the solo front" "http://127.0.0.1:$solo_port/healthz" "$solo_port" "$solo_pid" 10 || exit 1

targets=("replica 1 direct|$CLUSTER_REPLICA_1" "front -> replicas 1+2|$CLUSTER_FRONT" "front -> replica 1 only|http://127.0.0.1:$solo_port")
json="$CLUSTER_DIR/bench-send.jsonl"
: >"$json"
for run in $(seq 1 "$RUNS"); do
  for t in "${targets[@]}"; do
    name=${t%%|*} url=${t#*|}
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    echo "-- run $run: $name ($url), load average $load"
    "$BENCH" send --sqs "$url" --secs "$SECS" --runs 1 --clients "$CLIENTS" --json "$CLUSTER_DIR/one.jsonl" >/dev/null
    python3 - "$CLUSTER_DIR/one.jsonl" "$name" "$load" "$run" >>"$json" <<'EOF'
import json, sys
line = [l for l in open(sys.argv[1]).read().splitlines() if l.strip()][-1]
d = json.loads(line)
d.update(target=sys.argv[2], load_before=sys.argv[3], round=int(sys.argv[4]))
print(json.dumps(d))
EOF
    rm -f "$CLUSTER_DIR/one.jsonl"
  done
done

mkdir -p "$here/results"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out="$here/results/send-$stamp.md"
python3 - "$json" "$CLUSTER_HOST_BIN" "$SECS" "$RUNS" "$CLIENTS" "$(uptime)" >"$out" <<'EOF'
import json, statistics, sys, subprocess
path, host, secs, runs, clients, up = sys.argv[1:]
rows = [json.loads(l) for l in open(path) if l.strip()]
order = []
for r in rows:
    if r["target"] not in order:
        order.append(r["target"])
try:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
except Exception:
    commit = "?"
profile = "release" if "release" in host else "debug" if "debug" in host else "?"
print(f"# SendMessage x{clients}: one replica vs the round-robin front over two\n")
print(f"- host: `{host}` ({profile} build), commit {commit}; each replica fronts its own queen-engine 1.3.0 node, the two nodes meshed over one PostgreSQL database")
print(f"- client: bench/ `queen-sqs-bench send` (AWS SDK for Rust, one client, {clients} concurrent callers, 1 s warm-up, {secs} s timed, a fresh queue per run)")
print("- front: tests/cluster/front.py (Python asyncio, one process), alternating replicas per request")
print(f"- machine: 2 cores shared by client, front, both replicas, both engines and PostgreSQL (and by other work on the box); `uptime` at the end: {up.strip()}")
print(f"- {runs} rounds, each measuring the three targets back to back; cells: median (min–max)\n")
print("| target | msg/s | p50 ms | p99 ms | errors | load average before each run |")
print("|---|---|---|---|---|---|")
for t in order:
    rs = [r for r in rows if r["target"] == t]
    rate = [r["result"]["rate"] for r in rs]
    p50 = [r["result"]["p50_ms"] for r in rs]
    p99 = [r["result"]["p99_ms"] for r in rs]
    errs = sum(r["result"]["errors"] for r in rs)
    fmt = lambda xs, d: f"{statistics.median(xs):.{d}f} ({min(xs):.{d}f}–{max(xs):.{d}f})"
    print(f"| {t} | {fmt(rate, 0)} | {fmt(p50, 2)} | {fmt(p99, 2)} | {errs} | {' / '.join(r['load_before'] for r in rs)} |")
EOF
echo
cat "$out"
echo
echo "(written to ${out#"$root"/})"
