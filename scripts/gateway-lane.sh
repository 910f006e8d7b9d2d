#!/usr/bin/env bash
# The proxy-wasm gateway lane: the proxy-wasm build of queen-sqs (a core module for
# wasm32-wasip1, `--features proxy-wasm`, src/gateway/) in a real proxy-wasm host — MOSN's
# mosn.io/proxy-wasm-go-host on a wazero VM, embedded in a small Go gateway (tests/gateway)
# — over the embedded broker run alone, and the same real-client suites as
# scripts/compat.sh through it:
#
#   queen-sqs-host broker ◀── cluster "queen" ── queen-gateway (tests/gateway, 2 VMs)
#      (SQLite, tmp dir)     (proxy_http_call,       ▲  queen_sqs.wasm as an HTTP filter's
#                             bearer token)          │  local response
#                                                    └── boto3 + aws CLI (pytest), the Queen
#                                                        client (pytest, broker direct),
#                                                        @aws-sdk v3 and aws-sdk v2 (node)
#
# First the gateway's own checks (tests/gateway/gateway_test.go: plugin configuration,
# refusals before the core, an unknown cluster, randomness per VM), then the suites.
# Needs Go (the machine's); the Go modules come from the module proxy into ~/go, the
# gateway binary is built into the scratch directory. Everything it starts it stops
# (trap); loopback only, every port a free one. The last line is "N passed, M failed".
#
# Knobs (environment):
#   QUEEN_SQS_GATEWAY_WASM     a prebuilt module (default: `cargo build --target
#                              wasm32-wasip1 --features proxy-wasm -p queen-sqs`, debug)
#   QUEEN_SQS_HOST_BIN         a prebuilt queen-sqs-host (default: the debug build)
#   QUEEN_GATEWAY_SUITES       which suites, space-separated (default "python node")
#   QUEEN_GATEWAY_PYTEST_ARGS  extra pytest arguments (e.g. -k / --deselect)
#   QUEEN_GATEWAY_WORKERS      VMs in the gateway (default 2, one per core here)
#   QUEEN_GATEWAY_KEEP=1       keep the scratch directory (logs) even when all passed
set -euo pipefail
cd "$(dirname "$0")/.."
SUITES=${QUEEN_GATEWAY_SUITES:-python node}
WORKERS=${QUEEN_GATEWAY_WORKERS:-2}
LANE_NAME=gateway
LANE_TITLE="the proxy-wasm build under MOSN's proxy-wasm-go-host + wazero, embedded broker alone"
LANE_KEEP=${QUEEN_GATEWAY_KEEP:-0}
# shellcheck source=lib/suites.sh
. scripts/lib/suites.sh
lane_init

# --- builds ------------------------------------------------------------------------------
command -v go >/dev/null || { echo "the gateway lane needs Go (go on PATH)" >&2; exit 1; }
echo "== $(go version)"
rustup target add wasm32-wasip1 >/dev/null 2>&1 || rustup target add wasm32-wasip1
if [ -n "${QUEEN_SQS_GATEWAY_WASM:-}" ]; then
  WASM=$QUEEN_SQS_GATEWAY_WASM
else
  echo "== building the proxy-wasm module (debug, wasm32-wasip1, --features proxy-wasm)"
  cargo build --quiet --target wasm32-wasip1 --features proxy-wasm -p queen-sqs
  WASM="$TARGET_DIR/wasm32-wasip1/debug/queen_sqs.wasm"
fi
[ -f "$WASM" ] || { echo "no module at $WASM" >&2; exit 1; }
WASM=$(cd "$(dirname "$WASM")" && pwd)/$(basename "$WASM")
lane_build_host
echo "== building the gateway (tests/gateway: proxy-wasm-go-host v0.2.0, wazero)"
GATEWAY="$DIR/queen-gateway"
(cd tests/gateway && go build -o "$GATEWAY" .)

# --- the gateway's own checks ------------------------------------------------------------
# `go test -v` counted into "# pass N" / "# fail M", the lines run_suite reads.
run_suite "gateway checks (go test)" node 300 bash -c '
  cd tests/gateway
  out=$(QUEEN_SQS_GATEWAY_WASM="$1" go test -count=1 -v ./... 2>&1); rc=$?
  printf "%s\n" "$out" | grep -vE "^[0-9/]+ [0-9:]+ gateway"
  echo "# pass $(grep -c -- "^--- PASS" <<<"$out")"
  echo "# fail $(grep -c -- "^--- FAIL" <<<"$out")"
  exit $rc' gotest "$WASM"

# --- the broker and the gateway ----------------------------------------------------------
lane_start_broker
P_GATEWAY=$(lane_free_ports 1)
HANDLE_SECRET="gateway-lane-handle-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
# The plugin configuration: the component's environment as a JSON object, plus the cluster.
cat >"$DIR/plugin.json" <<EOF
{
  "QUEEN_URL": "$BROKER_URL",
  "QUEEN_SQS_UPSTREAM_CLUSTER": "queen",
  "QUEEN_SQS_CREDENTIALS": "test:test:$BROKER_TOKEN",
  "QUEEN_SQS_HANDLE_SECRET": "$HANDLE_SECRET"
}
EOF
echo "== gateway on 127.0.0.1:$P_GATEWAY ($WORKERS VMs), cluster queen -> $BROKER_URL"
"$GATEWAY" -listen "127.0.0.1:$P_GATEWAY" -wasm "$WASM" -config "$DIR/plugin.json" \
  -cluster "queen=${BROKER_URL#http://}" -workers "$WORKERS" >"$DIR/gateway.log" 2>&1 &
PID_GATEWAY=$!
lane_track_pid "$PID_GATEWAY"
ENDPOINT="http://127.0.0.1:$P_GATEWAY"
wait_http "$ENDPOINT/healthz" 120 "$PID_GATEWAY"
wait_http "$ENDPOINT/readyz" 30 "$PID_GATEWAY"
echo "== endpoint up after $((SECONDS - LANE_STARTED)) s"

# --- the suites (as scripts/compat.sh runs them) -------------------------------------------
lane_client_env "$ENDPOINT"
# The module makes no calls beyond its broker: SNS HTTP/S deliveries are not tested here
# (tests/compat/python/test_sns_http.py).
export QUEEN_SQS_COMPAT_RUNTIME=gateway
lane_standard_suites "$SUITES" "${QUEEN_GATEWAY_PYTEST_ARGS:-}"
if grep -q "wasm trap" "$DIR/gateway.log"; then
  echo "!! the module trapped during the run:"
  grep -m5 "wasm trap" "$DIR/gateway.log"
  lane_failed=1
fi
lane_finish "$PID_GATEWAY"
