#!/usr/bin/env bash
# Starts a debug endpoint on the embedded broker (a fresh data dir) and runs the
# real-client suites against it: boto3 + the aws CLI (pytest), the JS SDK v3 and v2
# (node --test), and the official Queen Python client against the broker alone.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$ROOT/tests/compat/.venv/bin:$PATH"

cargo build -p queen-sqs-host --quiet
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/queen-sqs-host"
DATA=$(mktemp -d)
PORT=${QUEEN_SQS_TEST_PORT:-19324}
BROKER_PORT=${QUEEN_SQS_TEST_BROKER_PORT:-16632}
export QUEEN_SQS_CREDENTIALS="test:test:"
export QUEEN_SQS_HANDLE_SECRET="compat-suite-handle-secret-0123"
"$BIN" serve --listen "127.0.0.1:$PORT" --broker-listen "127.0.0.1:$BROKER_PORT" --data-dir "$DATA" >"$DATA/serve.log" 2>&1 &
HOST_PID=$!
trap 'kill $HOST_PID 2>/dev/null || true; wait $HOST_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then break; fi
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$DATA/serve.log"; exit 1; }

export QUEEN_SQS_ENDPOINT="http://127.0.0.1:$PORT"
export QUEEN_URL="http://127.0.0.1:$BROKER_PORT"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true

status=0
echo "== pytest: boto3, the aws CLI, the Queen client"
python -m pytest -q tests/compat/python tests/compat/queen_client || status=1
echo "== node --test: @aws-sdk v3 and aws-sdk v2"
(cd tests/compat/node && node --test --test-concurrency=1 ./*.test.mjs) || status=1
exit $status
