#!/usr/bin/env bash
# The jco lane: the component served by `jco serve` (the Bytecode Alliance's JavaScript
# component toolchain: it transpiles the component to JavaScript + core wasm and runs it on
# Node with the preview2 shim) instead of our host, over the embedded broker run alone, and
# the same real-client suites as scripts/compat.sh against it, plus tests/jco (20 s long
# polls, a send during one):
#
#   queen-sqs-host broker ◀── QUEEN_URL ── jco serve --isolate-requests worker <queen_sqs.wasm>
#      (SQLite, tmp dir)   (bearer token)       ▲
#                                               └── boto3 + aws CLI (pytest), the Queen
#                                                   client (pytest, broker direct),
#                                                   @aws-sdk v3 and aws-sdk v2 (node --test)
#
# jco is pinned in tests/jco/package.json (npm, installed into tests/jco/node_modules).
# `jco serve` without options runs every request on one component instance on Node's main
# thread, and the shim makes the component's blocking waits real blocking waits: one request
# at a time, so a send waits behind an open long poll. `--isolate-requests worker` serves
# each request in a one-shot worker thread (its own fresh instance) from a prewarmed pool,
# which answers requests side by side; this lane runs that mode (docs/deploy/jco.md).
#
# Everything it starts it stops (trap; jco serve runs in its own session, since it spawns
# the Node process that serves); loopback only, every port a free one. Exit status is
# non-zero if anything failed; the last line is "N passed, M failed" over all suites.
#
# Knobs (environment):
#   QUEEN_SQS_HOST_BIN     a prebuilt queen-sqs-host (default: the debug build)
#   QUEEN_SQS_COMPONENT    a prebuilt component (default: the debug queen_sqs.wasm)
#   QUEEN_JCO_SUITES       which suites, space-separated (default "jco python node")
#   QUEEN_JCO_POOL         jco's prewarmed request workers (default 8)
#   QUEEN_JCO_ISOLATE      worker (default), instance or none (jco's default: one instance):
#                          the other two serve one request at a time, and the send-during-a-
#                          poll test of tests/jco fails under them (that is what it checks)
#   QUEEN_JCO_PYTEST_ARGS  extra pytest arguments for the python suite (e.g. -k / --deselect)
#   QUEEN_JCO_KEEP=1       keep the scratch directory (logs) even when all passed
set -euo pipefail
cd "$(dirname "$0")/.."
SUITES=${QUEEN_JCO_SUITES:-jco python node}
POOL=${QUEEN_JCO_POOL:-8}
ISOLATE=${QUEEN_JCO_ISOLATE:-worker}
case "$ISOLATE" in
  worker) MODE=(--isolate-requests worker --isolate-worker-pool-size "$POOL") ;;
  instance) MODE=(--isolate-requests instance) ;;
  none) MODE=() ;;
  *) echo "QUEEN_JCO_ISOLATE: worker, instance or none" >&2; exit 2 ;;
esac
LANE_NAME=jco
LANE_TITLE="the component under \`jco serve ${MODE[*]}\`, embedded broker alone"
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

# --- the broker and jco serve ----------------------------------------------------------------
lane_start_broker
P_SERVE=$(lane_free_ports 1)
HANDLE_SECRET="jco-lane-handle-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
echo "== jco serve ${MODE[*]} on 127.0.0.1:$P_SERVE -> $BROKER_URL"
# The shim hands the component Node's environment as wasi:cli/environment: only what the
# component is meant to read. setsid: jco spawns the serving Node process as its child, and
# the whole session is stopped at the end.
env -i PATH="$PATH" HOME="${HOME:-/tmp}" \
  QUEEN_URL="$BROKER_URL" \
  QUEEN_SQS_HANDLE_SECRET="$HANDLE_SECRET" \
  QUEEN_SQS_CREDENTIALS="test:test:$BROKER_TOKEN" \
  setsid node "$JCO" serve --host 127.0.0.1 --port "$P_SERVE" \
  "${MODE[@]}" \
  --jco-dir "$DIR/transpiled" "$COMPONENT" >"$DIR/serve.log" 2>&1 &
PID_SERVE=$!
lane_track_pid "-$PID_SERVE"
ENDPOINT="http://127.0.0.1:$P_SERVE"
wait_http "$ENDPOINT/healthz" 180 "$PID_SERVE"
wait_http "$ENDPOINT/readyz" 30 "$PID_SERVE"
echo "== endpoint up after $((SECONDS - LANE_STARTED)) s"

# --- the suites --------------------------------------------------------------------------------
lane_client_env "$ENDPOINT"
if [[ " $SUITES " == *" jco "* ]]; then
  run_suite "jco (20 s long polls)" pytest 120 \
    "$PY" -m pytest -q -rfE -p no:cacheprovider tests/jco
fi
lane_standard_suites "$SUITES" "${QUEEN_JCO_PYTEST_ARGS:-}"
lane_finish "$PID_SERVE"
