#!/usr/bin/env bash
# Runs every queen-sqs benchmark against a release host on the embedded broker and writes
# bench/results/<UTC stamp>.md and .json. Usage: bench/scripts/run.sh [SCENARIO...]
# Needs: the release host (HOST, default /work/target-release/release/queen-sqs-host),
# the bench binary (built here if missing), and wrk for the unknown-action figure.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
HOST="${HOST:-/work/target-release/release/queen-sqs-host}"
SECS="${SECS:-10}"
RUNS="${RUNS:-3}"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$here/results/run-$stamp"
mkdir -p "$here/results"
(cd "$here" && nice -n 10 cargo build --release --quiet)
BENCH="$here/target/release/queen-sqs-bench"

# The embedded broker's port wants a bearer token: the hosts get it, and the bench sends it
# on its native rows (bench/src/native.rs).
QUEEN_SQS_BROKER_TOKEN="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
export QUEEN_SQS_BROKER_TOKEN

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

start_host() { # $1 = auth sigv4|off, $2 = sqs port, $3 = broker port
  local dir; dir="$(mktemp -d)"
  QUEEN_SQS_AUTH="$1" QUEEN_SQS_CREDENTIALS=test:test: QUEEN_SQS_HANDLE_SECRET=bench-secret-0123456789 \
    "$HOST" serve --listen "127.0.0.1:$2" --broker-listen "127.0.0.1:$3" --data-dir "$dir" \
    >"${TMPDIR:-/tmp}/queen-sqs-bench-host-$2.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$2/" && return 0
    sleep 0.1
  done
  echo "host on $2 did not start" >&2; return 1
}

{
  echo "# queen-sqs benchmark run $stamp"
  echo
  echo "- host: \`$HOST\` ($(stat -c %y "$HOST" | cut -d. -f1)), commit $(git -C "$here" rev-parse --short HEAD)"
  echo "- machine: $(nproc) cores, $(uname -r); client and server on the same machine"
  echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- $SECS s per timed run, $RUNS runs; cells are median (min–max)"
} >"$out.md"

scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(send batch drain rtt overhead backlog wrk)
for s in "${scenarios[@]}"; do
  if [ "$s" = wrk ]; then
    start_host off 19410 19411
    {
      echo; echo "### wrk: unknown action (JSON, auth off), 10 s, 2 threads"; echo
      echo "| connections | run | requests/s | p50 | p99 | load average |"; echo "|---|---|---|---|---|---|"
    } >>"$out.md"
    for c in 16 64; do
      for r in $(seq "$RUNS"); do
        la="$(cut -d' ' -f1-3 /proc/loadavg)"
        res="$(wrk -t2 -c"$c" -d10s --latency -s "$here/scripts/unknown_action.lua" http://127.0.0.1:19410/)"
        rps="$(awk '/Requests\/sec/ {print $2}' <<<"$res")"
        p50="$(awk '$1=="50%" {print $2}' <<<"$res")"
        p99="$(awk '$1=="99%" {print $2}' <<<"$res")"
        non2xx="$(awk '/Non-2xx/ {print $NF}' <<<"$res")"
        echo "| $c | $r | $rps | $p50 | $p99 | $la |" >>"$out.md"
        echo "{\"scenario\":\"wrk\",\"connections\":$c,\"run\":$r,\"rps\":$rps,\"p50\":\"$p50\",\"p99\":\"$p99\",\"non2xx\":\"$non2xx\",\"loadavg\":\"$la\"}" >>"$out.json"
      done
    done
    { echo; echo "component: \`$(ls -l /work/target-release/component/*/wasm32-wasip2/release/queen_sqs.wasm | awk '{print $5, $NF}')\`"; } >>"$out.md"
  else
    [ -n "${SQS_HOST_PID:-}" ] || { start_host sigv4 19400 19401; SQS_HOST_PID="${pids[-1]}"; }
    "$BENCH" "$s" --secs "$SECS" --runs "$RUNS" --json "$out.json" --host-pid "$SQS_HOST_PID" >>"$out.md"
  fi
done
echo "wrote $out.md"
