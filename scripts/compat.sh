#!/usr/bin/env bash
# Starts a debug endpoint and runs the real-client suites against it: boto3 + the aws CLI
# (pytest), the JS SDK v3 and v2 (node --test), the AWS SDKs for Go v2, Java v2 and Rust,
# and the official Queen Python client against the broker alone.
#
# QUEEN_SQS_COMPAT_BROKER picks the broker behind the endpoint:
#   embedded (default)  the host's embedded broker on a fresh data dir; its port wants a
#                       bearer token (QUEEN_SQS_BROKER_TOKEN, generated here and exported
#                       for the Queen client suite)
#   engine              the released Queen engine (scripts/queen-engine.sh; `install` it
#                       first) on a throwaway PostgreSQL cluster, every port a free one;
#                       the host fronts it through QUEEN_URL
#
# Every port is picked at run time (the host listens on port 0 and prints what it got) and
# the suites run only once the process answering on each port is checked to be the one
# started here (scripts/lib/ports.sh): a stray server on some port fails the run loudly.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$ROOT/tests/compat/.venv/bin:$PATH"
MODE=${QUEEN_SQS_COMPAT_BROKER:-embedded}
case "$MODE" in embedded | engine) ;; *)
  echo "QUEEN_SQS_COMPAT_BROKER must be embedded or engine, not '$MODE'" >&2
  exit 2
  ;;
esac
export QUEEN_SQS_COMPAT_BROKER=$MODE
# shellcheck source=lib/ports.sh
. scripts/lib/ports.sh

cargo build -p queen-sqs-host --quiet
# The AWS SDK for Rust suite is a package of its own (tests/compat/rust), built into the
# user's cache so that a second run, or the other lane, does not build the SDK again.
RUST_SDK_TARGET=${XDG_CACHE_HOME:-$HOME/.cache}/queen-sqs/rust-sdk-target
(cd tests/compat/rust && CARGO_TARGET_DIR="$RUST_SDK_TARGET" cargo test --locked --quiet --no-run)
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/queen-sqs-host"
DATA=$(mktemp -d)
export QUEEN_SQS_CREDENTIALS="test:test:"
export QUEEN_SQS_HANDLE_SECRET="compat-suite-handle-secret-0123"

HOST_PID=""
cleanup() {
  if [ -n "$HOST_PID" ]; then
    kill "$HOST_PID" 2>/dev/null || true
    wait "$HOST_PID" 2>/dev/null || true
  fi
  if [ "$MODE" = engine ]; then
    scripts/queen-engine.sh stop "$DATA" compat || true
    scripts/queen-engine.sh pg-stop "$DATA" || true
    rm -rf "$DATA"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$MODE" = engine ]; then
  unset QUEEN_SQS_BROKER_TOKEN # the engine runs with auth off: no token
  read -r ENGINE_PORT QUEEN_TEST_PG_PORT < <(ports_free 2)
  export QUEEN_TEST_PG_PORT
  echo "== the Queen engine on 127.0.0.1:$ENGINE_PORT (PostgreSQL on $QUEEN_TEST_PG_PORT, files in $DATA)"
  scripts/queen-engine.sh pg-start "$DATA"
  scripts/queen-engine.sh start "$DATA" compat "$ENGINE_PORT"
  BROKER_URL="http://127.0.0.1:$ENGINE_PORT"
  QUEEN_URL="$BROKER_URL" "$BIN" serve --listen "127.0.0.1:0" --data-dir "$DATA/host" \
    >"$DATA/serve.log" 2>&1 &
  HOST_PID=$!
else
  # The broker port's bearer token (the component reaches the broker in process, without it).
  QUEEN_SQS_BROKER_TOKEN=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  export QUEEN_SQS_BROKER_TOKEN
  "$BIN" serve --listen "127.0.0.1:0" --broker-listen "127.0.0.1:0" --data-dir "$DATA" >"$DATA/serve.log" 2>&1 &
  HOST_PID=$!
fi
ports_host_up "the host" "$DATA/serve.log" "$HOST_PID" 120 || { cat "$DATA/serve.log"; exit 1; }
PORT=$HOST_PORT
[ "$MODE" = engine ] || BROKER_URL="http://127.0.0.1:$HOST_BROKER_PORT"
echo "== the host (pid $HOST_PID) on 127.0.0.1:$PORT, broker $BROKER_URL: checked to be ours"

export QUEEN_SQS_ENDPOINT="http://127.0.0.1:$PORT"
export QUEEN_URL="$BROKER_URL"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true

status=0
echo "== pytest: boto3, the aws CLI, the Queen client ($MODE broker)"
python -m pytest -q tests/compat/python tests/compat/queen_client || status=1
echo "== node --test: @aws-sdk v3 and aws-sdk v2 ($MODE broker)"
(cd tests/compat/node && node --test --test-concurrency=1 ./*.test.mjs) || status=1
echo "== go test: the AWS SDK for Go v2 ($MODE broker)"
(cd tests/compat/go && go test -count=1 -v ./... | grep -E '^(--- |=== RUN|ok|FAIL|PASS)') || status=1
echo "== mvn test: the AWS SDK for Java v2 ($MODE broker)"
(cd tests/compat/java && mvn -B -ntp test) || status=1
echo "== cargo test: the AWS SDK for Rust ($MODE broker)"
(cd tests/compat/rust && CARGO_TARGET_DIR="$RUST_SDK_TARGET" cargo test --locked -q -- --test-threads=4) || status=1
exit $status
