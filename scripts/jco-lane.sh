#!/usr/bin/env bash
# The jco lane: the component run on Node by jco (the Bytecode Alliance's JavaScript
# component toolchain: it transpiles the component to JavaScript + core wasm and runs it
# with its preview2 shim) instead of our host, over the embedded broker run alone, with the
# same real-client suites as scripts/compat.sh plus tests/jco (20 s long polls, a send
# during one), once per way of serving:
#
#   queen-sqs-host broker ◀── QUEEN_URL ── worker: jco serve --isolate-requests worker
#      (SQLite, tmp dir)   (bearer token)   pool:   jco transpile + tests/jco/serve-pool.mjs
#                                                ▲
#                                                └── boto3 + aws CLI (pytest), the Queen
#                                                    client (pytest, broker direct),
#                                                    @aws-sdk v3 and aws-sdk v2 (node --test)
#
# jco and its shim are pinned in tests/jco/package.json (npm, into tests/jco/node_modules).
# `jco serve` without options runs every request on one component instance on Node's main
# thread, and the shim makes the component's waits blocking waits: one request at a time,
# so a send waits behind an open long poll. `--isolate-requests worker` answers requests
# side by side, each in a one-shot worker thread with a fresh instance (slow: a worker is
# started per request). serve-pool.mjs keeps N long-lived workers that reuse their
# instance. docs/deploy/jco.md has the modes, numbers and limits.
#
# Everything it starts it stops (trap; servers run in their own session, since jco serve
# spawns the Node process that serves); loopback only, every port a free one. Exit status
# is non-zero if anything failed; the last line is "N passed, M failed" over all suites.
#
# Knobs (environment):
#   QUEEN_SQS_HOST_BIN     a prebuilt queen-sqs-host (default: the debug build)
#   QUEEN_SQS_COMPONENT    a prebuilt component (default: the debug queen_sqs.wasm)
#   QUEEN_JCO_MODES        ways of serving, space-separated, each running the suites
#                          (default "worker pool"): worker, pool, instance (jco serve
#                          --isolate-requests instance) or none (plain jco serve); the last
#                          two answer one request at a time, and the send-during-a-poll
#                          tests fail under them (that is what those tests check)
#   QUEEN_JCO_SUITES       which suites, space-separated (default "jco python node")
#   QUEEN_JCO_POOL         workers of the worker and pool modes (default 8)
#   QUEEN_JCO_PYTEST_ARGS  extra pytest arguments for the python suite (e.g. -k / --deselect)
#   QUEEN_JCO_KEEP=1       keep the scratch directory (logs) even when all passed
set -euo pipefail
cd "$(dirname "$0")/.."
MODES=${QUEEN_JCO_MODES:-worker pool}
SUITES=${QUEEN_JCO_SUITES:-jco python node}
POOL=${QUEEN_JCO_POOL:-8}
LANE_NAME=jco
LANE_TITLE="the component on Node under jco ($MODES), embedded broker alone"
LANE_KEEP=${QUEEN_JCO_KEEP:-0}
# shellcheck source=lib/suites.sh
. scripts/lib/suites.sh
lane_init

# --- prerequisites ---------------------------------------------------------------------
JCO="$ROOT/tests/jco/node_modules/@bytecodealliance/jco/dist/jco.js"
want=$(sed -n 's/.*"@bytecodealliance\/jco": "\(.*\)".*/\1/p' tests/jco/package.json)
have=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' tests/jco/node_modules/@bytecodealliance/jco/package.json 2>/dev/null || true)
if [ "$have" != "$want" ]; then
  echo "== jco $want from npm (into tests/jco/node_modules)"
  (cd tests/jco && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "== jco $(node "$JCO" --version) on Node $(node --version)"
lane_build_component
lane_build_host
lane_start_broker
HANDLE_SECRET="jco-lane-handle-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
# The SNS delivery route's token: no host loop calls the route here, the tests do
# (tests/compat/python/test_sns_http.py).
export QUEEN_SQS_DELIVERY_TOKEN="jco-lane-delivery-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

# Starts the component served one way; sets PID_SERVE and ENDPOINT. The shim hands the
# component Node's environment as wasi:cli/environment: only what the component reads.
start_server() { # mode
  local mode=$1 port out="$DIR/$1"
  local env=(env -i PATH="$PATH" HOME="${HOME:-/tmp}" QUEEN_URL="$BROKER_URL"
    QUEEN_SQS_HANDLE_SECRET="$HANDLE_SECRET" QUEEN_SQS_CREDENTIALS="test:test:$BROKER_TOKEN"
    QUEEN_SQS_DELIVERY_TOKEN="$QUEEN_SQS_DELIVERY_TOKEN")
  local serve=(node "$JCO" serve --host 127.0.0.1 --jco-dir "$out")
  port=$(lane_free_ports 1)
  echo
  echo "== mode $mode on 127.0.0.1:$port -> $BROKER_URL"
  case $mode in
    worker) serve+=(--isolate-requests worker --isolate-worker-pool-size "$POOL") ;;
    instance) serve+=(--isolate-requests instance) ;;
    none) ;;
    pool)
      node "$JCO" transpile "$COMPONENT" -o "$out" --name queen_sqs \
        --instantiation sync --no-typescript --quiet
      echo '{"type":"module"}' >"$out/package.json"
      serve=(node tests/jco/serve-pool.mjs "$out" queen_sqs 127.0.0.1 "$port" "$POOL") ;;
    *) echo "unknown mode $mode (worker, pool, instance, none)" >&2; exit 2 ;;
  esac
  [ "$mode" = pool ] || serve+=(--port "$port" "$COMPONENT")
  echo "   ${serve[*]}"
  "${env[@]}" setsid "${serve[@]}" >"$DIR/serve-$mode.log" 2>&1 &
  PID_SERVE=$!
  lane_track_pid "-$PID_SERVE"
  ENDPOINT="http://127.0.0.1:$port"
  wait_http "$ENDPOINT/healthz" 180 "$PID_SERVE"
  wait_http "$ENDPOINT/readyz" 30 "$PID_SERVE"
}

for mode in $MODES; do
  start_server "$mode"
  lane_client_env "$ENDPOINT"
  # The suites' one runtime-specific allowance (tests/compat/python/test_sqs_protocol.py).
  export QUEEN_SQS_COMPAT_RUNTIME=jco
  if [[ " $SUITES " == *" jco "* ]]; then
    run_suite "$mode: jco (20 s long polls)" pytest 120 \
      "$PY" -m pytest -q -rfE -p no:cacheprovider tests/jco
  fi
  lane_standard_suites "$SUITES" "${QUEEN_JCO_PYTEST_ARGS:-}" "" "$mode: "
  if ! kill -0 "$PID_SERVE" 2>/dev/null; then
    echo "!! mode $mode: the server exited during the run"
    lane_failed=1
  fi
  kill -- "-$PID_SERVE" 2>/dev/null || true
  wait "$PID_SERVE" 2>/dev/null || true
done
lane_finish
