# Shared by the lanes that serve the component with something other than our host
# (scripts/wasmtime-lane.sh, scripts/jco-lane.sh, and any lane alike): the client
# prerequisites, the builds, free ports, the embedded broker run alone, the real-client
# suites as scripts/compat.sh runs them, and a summary. Sourced, not run:
#
#   set -euo pipefail; cd "$(dirname "$0")/.."
#   LANE_NAME=jco LANE_KEEP=${QUEEN_JCO_KEEP:-0}
#   . scripts/lib/suites.sh
#   lane_init                       # scratch dir $DIR, traps, $PY, PATH with the venv
#   lane_build_component; lane_build_host      # $COMPONENT, $BIN
#   lane_start_broker                          # $BROKER_URL, $BROKER_TOKEN
#   ... start the server in the background; lane_track_pid $!; wait_http ...
#   lane_client_env "$ENDPOINT"
#   lane_standard_suites "python node" "-k not slow"
#   lane_finish                                # summary; exit status of the lane
#
# Every process a lane starts is registered with lane_track_pid and stopped on exit (in
# reverse order), the scratch directory removed unless something failed or LANE_KEEP=1.
# Ports are picked at run time, and wait_http only succeeds once the process listening on
# the URL's port is checked to be the pid it is given (or a child of it): scripts/lib/ports.sh.
# The last line printed is "N passed, M failed" over all suites.

ROOT=$PWD
LANE_STARTED=$SECONDS
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PY="$ROOT/tests/compat/.venv/bin/python"
LANE_PIDS=()
SUITE_PID=""
LANE_CLEANED=0
lane_failed=0
total_pass=0
total_fail=0
results=()

lane_init() {
  echo "################################################################"
  echo "## $LANE_NAME lane: ${LANE_TITLE:-}"
  echo "## $(date -u '+%Y-%m-%dT%H:%M:%SZ'), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "################################################################"
  DIR=$(mktemp -d "/tmp/queen-$LANE_NAME-lane.XXXXXX")
  trap 'lane_failed=1; lane_cleanup' EXIT
  trap 'exit 130' INT TERM
  lane_python_clients
  export PATH="$ROOT/tests/compat/.venv/bin:$PATH"
}

# A pid to stop at the end; "-PID" stops PID's whole process group (a server started with
# setsid that spawns its own children).
lane_track_pid() { LANE_PIDS+=("$1"); }

lane_cleanup() {
  [ "$LANE_CLEANED" = 1 ] && return 0
  LANE_CLEANED=1
  if [ -n "$SUITE_PID" ]; then kill "$SUITE_PID" 2>/dev/null || true; wait "$SUITE_PID" 2>/dev/null || true; fi
  local i
  for ((i = ${#LANE_PIDS[@]} - 1; i >= 0; i--)); do
    kill -- "${LANE_PIDS[$i]}" 2>/dev/null || true
    wait "${LANE_PIDS[$i]#-}" 2>/dev/null || true
  done
  if [ "$lane_failed" = 0 ] && [ "${LANE_KEEP:-0}" != 1 ]; then
    rm -rf "$DIR"
  else
    echo "== logs kept in $DIR"
  fi
}

lane_python_clients() {
  if [ ! -x "$PY" ]; then
    echo "== Python clients (venv at tests/compat/.venv)"
    python3 -m venv tests/compat/.venv
    "$PY" -m pip install --quiet --disable-pip-version-check -r tests/compat/requirements.txt
  fi
}

lane_node_clients() {
  if [ ! -d tests/compat/node/node_modules ]; then
    echo "== Node clients"
    (cd tests/compat/node && npm install --no-audit --no-fund --loglevel=error)
  fi
}

# $COMPONENT: QUEEN_SQS_COMPONENT, or the debug build of the component.
lane_build_component() {
  rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
  if [ -n "${QUEEN_SQS_COMPONENT:-}" ]; then
    COMPONENT=$QUEEN_SQS_COMPONENT
  else
    echo "== building the component (debug, wasm32-wasip2)"
    cargo build --quiet --target wasm32-wasip2 -p queen-sqs
    COMPONENT="$TARGET_DIR/wasm32-wasip2/debug/queen_sqs.wasm"
  fi
  [ -f "$COMPONENT" ] || { echo "no component at $COMPONENT" >&2; exit 1; }
}

# $BIN: QUEEN_SQS_HOST_BIN, or the debug build of the host (for its embedded broker).
lane_build_host() {
  if [ -n "${QUEEN_SQS_HOST_BIN:-}" ]; then
    BIN=$QUEEN_SQS_HOST_BIN
  else
    echo "== building the host (debug), for its embedded broker"
    cargo build --quiet -p queen-sqs-host
    BIN="$TARGET_DIR/debug/queen-sqs-host"
  fi
  [ -x "$BIN" ] || { echo "no host binary at $BIN" >&2; exit 1; }
}

# shellcheck source=ports.sh
. "$ROOT/scripts/lib/ports.sh"

# Prints N distinct free loopback ports, held together while chosen.
lane_free_ports() { ports_free "$1"; }

lane_dump_logs() {
  local f
  for f in "$DIR"/*.log; do
    [ -s "$f" ] && { echo "--- tail $f"; tail -20 "$f"; }
  done
  return 0
}

# Waits for url to answer 2xx (giving up early if pid died), then checks that the process
# listening on the url's port is pid or a child of it.
wait_http() { # url, seconds, pid
  local port=${1#http://*:}
  port=${port%%/*}
  ports_wait "server pid $3" "$1" "$port" "$3" "$2" && return 0
  echo "nothing ready at $1 (or not the process started here)" >&2
  lane_dump_logs >&2
  return 1
}

# The embedded broker alone on a free port, with a fresh bearer token (the component
# forwards the one of the SigV4 credential that signed the request: give the server
# QUEEN_SQS_CREDENTIALS=test:test:$BROKER_TOKEN). Sets BROKER_URL, BROKER_TOKEN, PID_BROKER.
lane_start_broker() {
  local port
  BROKER_TOKEN=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  # Port 0: the broker binds what the kernel gives and prints it.
  QUEEN_SQS_BROKER_TOKEN="$BROKER_TOKEN" \
    "$BIN" broker --listen "127.0.0.1:0" --data-dir "$DIR/broker" >"$DIR/broker.log" 2>&1 &
  PID_BROKER=$!
  lane_track_pid "$PID_BROKER"
  port=$(ports_from_log "$DIR/broker.log" 'broker listening on http://127\.0\.0\.1:([0-9]+)' "$PID_BROKER" 60) ||
    { lane_dump_logs >&2; echo "the broker did not come up" >&2; exit 1; }
  BROKER_URL="http://127.0.0.1:$port"
  echo "== embedded broker alone on 127.0.0.1:$port (pid $PID_BROKER, $DIR/broker)"
  # The broker's liveness: its /health (open without the token).
  wait_http "$BROKER_URL/health" 60 "$PID_BROKER" || { echo "the broker did not come up" >&2; exit 1; }
}

# What the suites read: the endpoint, the broker (the Queen client suite goes direct), the
# credentials.
lane_client_env() {
  export QUEEN_SQS_ENDPOINT=$1
  export QUEEN_URL=$BROKER_URL
  export QUEEN_SQS_BROKER_TOKEN=$BROKER_TOKEN
  export QUEEN_SQS_COMPAT_BROKER=embedded
  export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
  export AWS_EC2_METADATA_DISABLED=true
}

. "$ROOT/scripts/lib/run_suite.sh"

# The suites of scripts/compat.sh: "python" (boto3, aws CLI, the Queen client; extra pytest
# arguments in $2, word-split) and "node" (@aws-sdk v3, aws-sdk v2; extra `node --test`
# arguments in $3, word-split); $4 prefixes the suites' names (a lane running them twice).
lane_standard_suites() {
  local suites=$1 prefix=${4:-}
  # shellcheck disable=SC2206
  local extra=(${2:-})
  if [[ " $suites " == *" python "* ]]; then
    run_suite "${prefix}python (boto3, aws CLI, Queen client)" pytest 600 \
      "$PY" -m pytest -q -rfE -p no:cacheprovider tests/compat/python tests/compat/queen_client "${extra[@]}"
  fi
  if [[ " $suites " == *" node "* ]]; then
    lane_node_clients
    # shellcheck disable=SC2206
    local node_extra=(${3:-})
    run_suite "${prefix}node (@aws-sdk v3, aws-sdk v2)" node 600 \
      bash -c 'cd tests/compat/node && exec node --test --test-concurrency=1 "$@" ./*.test.mjs' node "${node_extra[@]}"
  fi
}

# The summary and the lane's exit status; $1: a pid that must still be alive (the server).
lane_finish() {
  if [ -n "${1:-}" ] && ! kill -0 "$1" 2>/dev/null; then
    echo "!! the server exited during the run"
    lane_failed=1
  fi
  [ "$lane_failed" = 0 ] || lane_dump_logs
  echo
  echo "== summary"
  printf '  %s\n' "${results[@]}"
  local took=$((SECONDS - LANE_STARTED)) verdict=passed
  [ "$lane_failed" = 0 ] || verdict=FAILED
  echo "## $LANE_NAME lane: $verdict in $((took / 60))m$(printf '%02d' $((took % 60)))s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  lane_cleanup
  trap - EXIT
  echo "$total_pass passed, $total_fail failed"
  [ "$lane_failed" = 0 ]
}
