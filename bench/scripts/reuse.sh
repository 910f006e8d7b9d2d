#!/usr/bin/env bash
# A host switch on and off, side by side: two release hosts from ONE binary on the embedded
# broker, SWITCH=ON and SWITCH=OFF (default QUEEN_SQS_REUSE_INSTANCES=1 / =0; e.g.
# SWITCH=QUEEN_SQS_METRICS ON=on OFF=off), the same scenarios against each (default: send
# batch rtt drain), RUNS runs of SECS s, 16 concurrent callers, interleaved.
# Writes bench/results/<name>-<UTC stamp>.md (name: reuse, or NAME).
# Usage: [SWITCH=… ON=… OFF=… NAME=…] bench/scripts/reuse.sh [SCENARIO...]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
HOST="${HOST:-/work/target-release/release/queen-sqs-host}"
SECS="${SECS:-10}"
RUNS="${RUNS:-3}"
SWITCH="${SWITCH:-QUEEN_SQS_REUSE_INSTANCES}"
ON="${ON:-1}"
OFF="${OFF:-0}"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$here/results/${NAME:-reuse}-$stamp.md"
(cd "$here" && nice -n 10 cargo build --release --quiet)
BENCH="$here/target/release/queen-sqs-bench"
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(send batch rtt drain)

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

start_host() { # switch value, port
  env QUEEN_SQS_CREDENTIALS=test:test: QUEEN_SQS_HANDLE_SECRET=bench-secret-0123456789 \
    "$SWITCH=$1" \
    "$HOST" serve --listen "127.0.0.1:$2" --data-dir "$work/host-$2" >"$work/host-$2.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$2/healthz" && return 0
    sleep 0.1
  done
  echo "host on $2 did not start" >&2
  return 1
}

{
  echo "# $SWITCH=$ON vs $SWITCH=$OFF, $stamp"
  echo
  echo "- host: \`$HOST\` ($(stat -c %y "$HOST" | cut -d. -f1)), commit $(git -C "$here" rev-parse --short HEAD)"
  echo "- machine: $(nproc) cores, client and server on the same machine; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- $RUNS runs of $SECS s per cell, 16 concurrent callers; cells are median (min–max)"
} >"$out"
# Both hosts up at once and the runs interleaved (on, off, on, off, ...), so that the
# machine's load drifts over both alike.
start_host "$ON" 19660
on_pid=${pids[-1]}
start_host "$OFF" 19662
off_pid=${pids[-1]}
for run in $(seq "$RUNS"); do
  for side in on off; do
    if [ "$side" = on ]; then port=19660 pid=$on_pid; else port=19662 pid=$off_pid; fi
    echo "== $SWITCH $side, run $run" | tee -a "$out"
    "$BENCH" "${scenarios[@]}" --sqs "http://127.0.0.1:$port" --secs "$SECS" --runs 1 \
      --clients 16 --host-pid "$pid" 2>&1 | grep -E '^\[' | tee -a "$out"
  done
done
echo "wrote $out"
