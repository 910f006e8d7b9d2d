#!/usr/bin/env bash
# Drains side by side: for each host binary (HOSTS="label=path ..."), on each broker (the
# embedded one, and queen-engine 1.3.0 on a throwaway PostgreSQL with scripts/queen-engine.env
# plus ENGINE_EXTRA), at each consumer count (CLIENTS, default "4 16 64"): the `drain`
# scenario (5,000 messages sent with SendMessageBatch, then Receive 10 with a 1 s long poll +
# DeleteMessageBatch until all are deleted), RUNS times; then `drain100k` once at 16
# consumers when BIG=1. Writes bench/results/drain-<UTC stamp>.md.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
HOSTS="${HOSTS:-after=/work/target-release/release/queen-sqs-host}"
CLIENTS="${CLIENTS:-4 16 64}"
RUNS="${RUNS:-3}"
BIG="${BIG:-0}"
BROKERS="${BROKERS:-embedded engine}"
PG_PORT="${BENCH_PG_PORT:-25542}"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$here/results/drain-$stamp.md"
(cd "$here" && nice -n 10 cargo build --release --quiet)
BENCH="$here/target/release/queen-sqs-bench"

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "$root/scripts/queen-engine.sh" stop "$work" bench || true
  QUEEN_TEST_PG_PORT=$PG_PORT "$root/scripts/queen-engine.sh" pg-stop "$work" || true
  rm -rf "$work"
}
trap cleanup EXIT
if [[ " $BROKERS " == *" engine "* ]]; then
  "$root/scripts/queen-engine.sh" install
  QUEEN_TEST_PG_PORT=$PG_PORT "$root/scripts/queen-engine.sh" pg-start "$work"
  QUEEN_ENGINE_EXTRA_ENV="${ENGINE_EXTRA:-}" QUEEN_TEST_PG_PORT=$PG_PORT \
    "$root/scripts/queen-engine.sh" start "$work" bench 19620
fi

start_host() { # label, binary, port, broker
  local dir="$work/$1-$4"
  mkdir -p "$dir"
  local extra=(--broker-listen "127.0.0.1:$(($3 + 1))")
  local envs=(QUEEN_SQS_CREDENTIALS=test:test: QUEEN_SQS_HANDLE_SECRET=bench-secret-0123456789)
  if [ "$4" = engine ]; then
    extra=()
    envs+=(QUEEN_URL=http://127.0.0.1:19620)
  fi
  env "${envs[@]}" "$2" serve --listen "127.0.0.1:$3" --data-dir "$dir" "${extra[@]}" \
    >"$dir/host.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$3/healthz" && return 0
    sleep 0.1
  done
  echo "host $1 on $3 did not start" >&2
  return 1
}

{
  echo "# Drains side by side, $stamp"
  echo
  echo "- hosts: $HOSTS"
  echo "- engine: queen-engine 1.3.0, settings scripts/queen-engine.env${ENGINE_EXTRA:+ plus $ENGINE_EXTRA}"
  echo "- machine: $(nproc) cores, client and server on the same machine; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- $RUNS runs per cell; cells are median (min–max); 'empty calls' counts receives that came back empty before the drain ended"
} >"$out"

port=19630
for h in $HOSTS; do
  label=${h%%=*}
  bin=${h#*=}
  for broker in $BROKERS; do
    start_host "$label" "$bin" "$port" "$broker"
    pid=${pids[-1]}
    for c in $CLIENTS; do
      echo "== $label / $broker / $c consumers" | tee -a "$out"
      "$BENCH" drain --sqs "http://127.0.0.1:$port" --clients "$c" --runs "$RUNS" \
        --host-pid "$pid" 2>&1 | grep -E '^\||^###|^\[' | tee -a "$out"
    done
    if [ "$BIG" = 1 ]; then
      echo "== $label / $broker / 16 consumers, 100,000 messages" | tee -a "$out"
      "$BENCH" drain100k --sqs "http://127.0.0.1:$port" --clients 16 --runs 1 \
        --host-pid "$pid" 2>&1 | grep -E '^\||^###|^\[' | tee -a "$out"
    fi
    kill "$pid" 2>/dev/null || true
    port=$((port + 2))
  done
done
echo "wrote $out"
