#!/usr/bin/env bash
# The facade on the released Queen engine, side by side: the same scenarios against
#   A. a release host with QUEEN_URL at queen-engine 1.3.0 (on a throwaway PostgreSQL,
#      settings from scripts/queen-engine.env), the native rows driving that engine directly;
#   B. a release host on its embedded broker.
# Writes bench/results/engine-<UTC stamp>.md. Usage: bench/scripts/engine.sh [SCENARIO...]
# (default: send drain overhead). Needs the release host (HOST) and builds the bench.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
HOST="${HOST:-/work/target-release/release/queen-sqs-host}"
SECS="${SECS:-10}"
RUNS="${RUNS:-3}"
PG_PORT="${BENCH_PG_PORT:-25532}"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$here/results/engine-$stamp"
(cd "$here" && nice -n 10 cargo build --release --quiet)
BENCH="$here/target/release/queen-sqs-bench"
"$root/scripts/queen-engine.sh" install

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "$root/scripts/queen-engine.sh" stop "$work" bench || true
  QUEEN_TEST_PG_PORT=$PG_PORT "$root/scripts/queen-engine.sh" pg-stop "$work" || true
}
trap cleanup EXIT
QUEEN_TEST_PG_PORT=$PG_PORT "$root/scripts/queen-engine.sh" pg-start "$work"
QUEEN_TEST_PG_PORT=$PG_PORT "$root/scripts/queen-engine.sh" start "$work" bench 19520

start_host() { # $1 = sqs port, then extra env
  local port=$1; shift
  env QUEEN_SQS_CREDENTIALS=test:test: QUEEN_SQS_HANDLE_SECRET=bench-secret-0123456789 "$@" \
    "$HOST" serve --listen "127.0.0.1:$port" --data-dir "$work/host-$port" ${HOST_ARGS:-} \
    >"$work/host-$port.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && return 0
    sleep 0.1
  done
  echo "host on $port did not start" >&2; return 1
}
start_host 19500 QUEEN_URL=http://127.0.0.1:19520
engine_host=${pids[-1]}
# The embedded broker's port wants a bearer token; the bench sends it on B's native rows.
EMBEDDED_TOKEN="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
HOST_ARGS="--broker-listen 127.0.0.1:19511" start_host 19510 QUEEN_SQS_BENCH=embedded \
  QUEEN_SQS_BROKER_TOKEN="$EMBEDDED_TOKEN"
embedded_host=${pids[-1]}

scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(send drain overhead)
{
  echo "# queen-sqs on queen-engine 1.3.0 vs the embedded broker, $stamp"
  echo
  echo "- host: \`$HOST\`, commit $(git -C "$root" rev-parse --short HEAD); engine settings: scripts/queen-engine.env"
  echo "- machine: $(nproc) cores; client, host, engine and PostgreSQL on the same machine"
  echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- $SECS s per timed run, $RUNS runs; cells are median (min–max)"
  echo
  echo "## A. facade on queen-engine (native rows: the engine driven directly)"
} >"$out.md"
"$BENCH" "${scenarios[@]}" --sqs http://127.0.0.1:19500 --queen http://127.0.0.1:19520 \
  --secs "$SECS" --runs "$RUNS" --host-pid "$engine_host" >>"$out.md"
echo -e "\n## B. facade on the embedded broker\n" >>"$out.md"
QUEEN_SQS_BROKER_TOKEN="$EMBEDDED_TOKEN" \
  "$BENCH" "${scenarios[@]}" --sqs http://127.0.0.1:19510 --queen http://127.0.0.1:19511 \
  --secs "$SECS" --runs "$RUNS" --host-pid "$embedded_host" >>"$out.md"
echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out.md"
echo "wrote $out.md"
