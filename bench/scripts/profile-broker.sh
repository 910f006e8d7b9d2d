#!/usr/bin/env bash
# perf profile of the embedded broker under the native pop(10) + batch ack load at one grid
# point (default 1,000 lanes, 100,000 queued), for each binary given as label=path; prints
# the rate and the top symbols of the broker's writer thread and of the whole process.
#
#   bench/scripts/profile-broker.sh before=/path/a after=/path/b [GRID]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
GRID="${GRID:-1000:100000}"
BENCH="$here/target/release/queen-sqs-bench"
export QUEEN_SQS_BROKER_TOKEN=profile-token-0123456789
for spec in "$@"; do
  label=${spec%%=*} bin=${spec#*=}
  d=$(mktemp -d)
  "$bin" broker --listen 127.0.0.1:19490 --data-dir "$d" >"$d/log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:19490/health && break; sleep 0.2; done
  perf record -e cpu-clock -F 499 -g -p "$pid" -o "$d/perf.data" >/dev/null 2>&1 &
  perf_pid=$!
  echo "### $label ($bin), grid $GRID, load $(cut -d' ' -f1-3 /proc/loadavg)"
  BENCH_BROKER_GRID=$GRID "$BENCH" broker --queen http://127.0.0.1:19490 --sqs http://127.0.0.1:1 \
    --runs 1 --secs 8 --host-pid "$pid" 2>/dev/null | grep "^| [0-9]"
  kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true
  echo
  echo "writer thread, top symbols (share of all samples):"
  perf report -i "$d/perf.data" --no-children --comm broker-writer --sort sym -g none 2>/dev/null \
    | grep -v "^#" | grep -v "^$" | head -12 || true
  echo
  echo "by thread and object:"
  perf report -i "$d/perf.data" --no-children --sort comm,dso -g none 2>/dev/null \
    | grep -v "^#" | grep -v "^$" | head -8 || true
  echo
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$d"
done
