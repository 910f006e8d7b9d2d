#!/usr/bin/env bash
# The Go CDK's pubsub driver conformance suite for SNS/SQS (gocloud.dev/pubsub/awssnssqs's
# own tests over gocloud.dev/pubsub/drivertest), run live against a debug endpoint of its own
# on the embedded broker. scripts/frameworks.sh runs it as its `gocdk` suite.
#
# The suite normally replays recordings of AWS; `-record` makes it call the service instead,
# and the AWS SDK for Go v2 it is built on takes the endpoint from AWS_ENDPOINT_URL. Its
# harness names nonexistent topics and queues in AWS account 456752665576, so the endpoint
# runs as that account (QUEEN_SQS_ACCOUNT_ID). Record mode writes its recordings beside the
# tests, so the module's source is copied out of Go's read-only module cache into the user
# cache, with the test binary built once per version. AWS_CA_BUNDLE is dropped: the SDK
# refuses a custom CA bundle with the suite's recording HTTP client.
#
# Prints "N passed, M failed, K skipped"; exits non-zero if any case failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=lib/ports.sh
. scripts/lib/ports.sh
VERSION=v0.49.0
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/queen-sqs/gocdk-$VERSION
TEST_BIN=$CACHE/awssnssqs.test

if [ ! -x "$TEST_BIN" ]; then
  echo "== building the Go CDK $VERSION awssnssqs tests (cached in $CACHE)"
  scratch=$(mktemp -d)
  (cd "$scratch" && go mod init scratch >/dev/null 2>&1 && go mod download -json "gocloud.dev@$VERSION") >"$scratch/download.json"
  src=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Dir"])' "$scratch/download.json")
  rm -rf "$CACHE" "$scratch"
  mkdir -p "$CACHE"
  cp -r "$src" "$CACHE/src"
  chmod -R u+w "$CACHE/src"
  (cd "$CACHE/src" && go test -c -o "$TEST_BIN.partial" ./pubsub/awssnssqs)
  mv "$TEST_BIN.partial" "$TEST_BIN"
fi

cargo build -p queen-sqs-host --quiet
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/queen-sqs-host"
DATA=$(mktemp -d)
HOST_PID=""
cleanup() {
  if [ -n "$HOST_PID" ]; then
    kill "$HOST_PID" 2>/dev/null || true
    wait "$HOST_PID" 2>/dev/null || true
  fi
  rm -rf "$DATA"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

QUEEN_SQS_ACCOUNT_ID=456752665576 QUEEN_SQS_CREDENTIALS="test:test:" \
  QUEEN_SQS_HANDLE_SECRET="gocdk-suite-handle-secret-0123456789" \
  "$BIN" serve --listen "127.0.0.1:0" --data-dir "$DATA/host" >"$DATA/serve.log" 2>&1 &
HOST_PID=$!
ports_host_up "the host" "$DATA/serve.log" "$HOST_PID" 120 || { cat "$DATA/serve.log"; exit 1; }
echo "== the Go CDK $VERSION conformance suite against http://127.0.0.1:$HOST_PORT (pid $HOST_PID, checked to be ours)"

# A run's recordings would be read as goldens by nothing, but start clean anyway.
find "$CACHE/src/pubsub/awssnssqs/testdata" -name '*.replay' -newer "$TEST_BIN" -delete 2>/dev/null || true
set +e
(cd "$CACHE/src/pubsub/awssnssqs" &&
  env -u AWS_CA_BUNDLE AWS_ENDPOINT_URL="http://127.0.0.1:$HOST_PORT" \
    AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-2 AWS_EC2_METADATA_DISABLED=true \
    "$TEST_BIN" -test.run 'TestConformance|TestFIFO' -test.v -record) >"$DATA/run.log" 2>&1
set -e
# Leaf cases only: a parent test's line repeats its children's verdicts.
grep -E '^\s+--- (PASS|FAIL|SKIP): ' "$DATA/run.log" | grep -Ev '/TestAs \(' >"$DATA/cases" || true
cat "$DATA/cases"
grep -E 'drivertest.go:[0-9]+: [^R]' "$DATA/run.log" | sort -u || true
passed=$(grep -c -- '--- PASS: ' "$DATA/cases" || true)
failed=$(grep -c -- '--- FAIL: ' "$DATA/cases" || true)
skipped=$(grep -c -- '--- SKIP: ' "$DATA/cases" || true)
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && grep -q '^PASS$' "$DATA/run.log"
