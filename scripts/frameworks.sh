#!/usr/bin/env bash
# The framework and legacy-client suites (docs/compat-frameworks.md), against a debug
# endpoint of their own on the embedded broker:
#
#   query_boto3   boto3 1.28.80 / botocore 1.31.80, the last Query-protocol SQS client: a
#                 focused file plus the current boto3 suite's SQS and SNS files
#   extended      amazon-sqs-extended-client, with moto's server standing in for S3
#   celery        Celery 5.7 over kombu's SQS transport, a worker subprocess
#   node          sqs-consumer 14 + sqs-producer 8
#   jms           the Amazon SQS Java Messaging Library 2.1.4 (Maven)
#   dramatiq      Dramatiq 2.2 over dramatiq-sqs 0.4, workers in the test process
#   taskiq        taskiq 0.13 over taskiq-aio-sqs 2.1, taskiq's Receiver in the test process
#   symfony       Symfony Messenger 5.4's Amazon SQS transport, then Symfony Notifier 5.4's
#                 Amazon SNS bridge publishing to topics that fan out to queues (Debian's
#                 packages, PHP 8.2; two PHP files, a count line each)
#   spring        Spring Cloud AWS 3.4 (SQS and SNS starters) on Spring Boot 3.5 (Maven)
#   gocdk         the Go CDK's pubsub conformance suite for SNS/SQS, live, on an endpoint of
#                 its own (scripts/gocdk-conformance.sh)
#   keda          KEDA 2.21's aws-sqs-queue scaler (Go; its first build takes minutes)
#
# Installs what it needs, idempotently: Python venvs under ~/.cache/queen-sqs (kept across
# clones; rebuilt when their requirements file changes), npm packages in
# tests/compat/node-frameworks, Maven artifacts in ~/.m2, Debian's PHP and Symfony packages
# (apt-get, as root or through sudo). Ports are picked at run time (the
# host's: port 0) and each server is checked to be the process listening on its port
# before any suite runs (scripts/lib/ports.sh).
# QUEEN_SQS_FRAMEWORKS_BROKER picks the broker behind the endpoint: embedded (default), or
# engine: the released Queen engine (scripts/queen-engine.sh; `install` it first) on a
# throwaway PostgreSQL cluster, both on free ports, fronted by the host through QUEEN_URL.
# QUEEN_SQS_FRAMEWORKS (default "query_boto3 extended celery node jms dramatiq taskiq symfony spring gocdk keda") picks suites.
# Exit status is non-zero if any suite failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=lib/ports.sh
. scripts/lib/ports.sh
MODE=${QUEEN_SQS_FRAMEWORKS_BROKER:-embedded}
case "$MODE" in embedded | engine) ;; *)
  echo "QUEEN_SQS_FRAMEWORKS_BROKER must be embedded or engine, not '$MODE'" >&2
  exit 2
  ;;
esac
SUITES=${QUEEN_SQS_FRAMEWORKS:-query_boto3 extended celery node jms dramatiq taskiq symfony spring gocdk keda}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/queen-sqs
mkdir -p "$CACHE"

# A venv at $1 holding the requirements files $2...; rebuilt only when they change.
venv() {
  local dir=$1
  shift
  local stamp
  stamp=$(cat "$@" | sha256sum | cut -d' ' -f1)
  if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.requirements-sha256" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  rm -rf "$dir"
  python3 -m venv "$dir"
  local args=()
  for f in "$@"; do args+=(-r "$f"); done
  "$dir/bin/pip" install --quiet --disable-pip-version-check "${args[@]}"
  echo "$stamp" >"$dir/.requirements-sha256"
}

wants() { [[ " $SUITES " == *" $1 "* ]]; }

echo "== installing (cached in $CACHE, ~/.m2, node_modules)"
VQ=$CACHE/venv-query
VF=$CACHE/venv-frameworks
VD=$CACHE/venv-dramatiq
VT=$CACHE/venv-taskiq
wants query_boto3 && venv "$VQ" tests/compat/query_boto3/requirements.txt
wants dramatiq && venv "$VD" tests/compat/dramatiq/requirements.txt
wants taskiq && venv "$VT" tests/compat/taskiq/requirements.txt
if wants extended || wants celery; then
  venv "$VF" tests/compat/celery/requirements.txt tests/compat/extended/requirements.txt
fi
if wants symfony; then
  # Symfony Messenger and its SQS transport, Symfony Notifier and its SNS bridge, as Debian
  # ships them (no Composer here).
  PHP_PKGS=(php-cli php-symfony-messenger php-symfony-amazon-sqs-messenger php-async-aws-sqs php-symfony-event-dispatcher
    php-symfony-notifier php-symfony-amazon-sns-notifier php-async-aws-sns php-symfony-http-client)
  if ! dpkg -s "${PHP_PKGS[@]}" >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PHP_PKGS[@]}" >/dev/null ||
      { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PHP_PKGS[@]}" >/dev/null; }
  fi
fi
if wants node; then
  (cd tests/compat/node-frameworks && npm install --no-audit --no-fund --loglevel=error)
fi

cargo build -p queen-sqs-host --quiet
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/queen-sqs-host"
DATA=$(mktemp -d)
# The engine's cluster is PostgreSQL's own directory (owned by its user), not under $DATA.
ENGINE_DIR=$(mktemp -d)
S3_PORT=$(ports_free 1)
export QUEEN_SQS_CREDENTIALS="test:test:"
export QUEEN_SQS_HANDLE_SECRET="frameworks-suite-handle-secret-0123"

HOST_PID=""
MOTO_PID=""
cleanup() {
  for pid in $HOST_PID $MOTO_PID; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$MODE" = engine ]; then
    scripts/queen-engine.sh stop "$ENGINE_DIR" frameworks || true
    scripts/queen-engine.sh pg-stop "$ENGINE_DIR" || true
  fi
  rm -rf "$DATA" "$ENGINE_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$MODE" = engine ]; then
  read -r ENGINE_PORT QUEEN_TEST_PG_PORT < <(ports_free 2)
  export QUEEN_TEST_PG_PORT
  echo "== the Queen engine on 127.0.0.1:$ENGINE_PORT (PostgreSQL on $QUEEN_TEST_PG_PORT)"
  scripts/queen-engine.sh pg-start "$ENGINE_DIR"
  scripts/queen-engine.sh start "$ENGINE_DIR" frameworks "$ENGINE_PORT"
  QUEEN_URL="http://127.0.0.1:$ENGINE_PORT" "$BIN" serve --listen "127.0.0.1:0" \
    --data-dir "$DATA/host" >"$DATA/serve.log" 2>&1 &
else
  "$BIN" serve --listen "127.0.0.1:0" --data-dir "$DATA" >"$DATA/serve.log" 2>&1 &
fi
HOST_PID=$!
if wants extended; then
  # moto's server stands in for S3 (real S3 is not reachable here); only S3 calls go to it.
  "$VF/bin/moto_server" -H 127.0.0.1 -p "$S3_PORT" >"$DATA/moto.log" 2>&1 &
  MOTO_PID=$!
fi
ports_host_up "the host" "$DATA/serve.log" "$HOST_PID" 120 || { cat "$DATA/serve.log"; exit 1; }
PORT=$HOST_PORT
if [ -n "$MOTO_PID" ]; then
  ports_wait "moto (S3)" "http://127.0.0.1:$S3_PORT/moto-api/" "$S3_PORT" "$MOTO_PID" 60 || { cat "$DATA/moto.log"; exit 1; }
fi

export QUEEN_SQS_ENDPOINT="http://127.0.0.1:$PORT"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true

status=0
results=()
# run NAME COUNT-PATTERN COMMAND...: runs a suite, keeps its output, records its verdict,
# the count line its runner printed and its time.
run() {
  local name=$1 pattern=$2 started=$SECONDS log="$DATA/$1.out" verdict=passed
  shift 2
  echo "== $name"
  if ! "$@" 2>&1 | tee "$log"; then verdict=FAILED; status=1; fi
  local counts
  counts=$(grep -E "$pattern" "$log" | sed -E 's/\x1b\[[0-9;]*m//g; s/^[[:space:]#=]*(\[[A-Z]+\])?[[:space:]]*//' | paste -sd'|' - | sed 's/|/; /g')
  results+=("$(printf '%-12s %-7s %4ds  %s' "$name" "$verdict" $((SECONDS - started)) "$counts")")
}

# The current boto3 suite's tests that use parameters botocore 1.31.80 does not have
# (MessageSystemAttributeNames, 2024): the focused file covers those calls the old way.
NEWER_PARAMS=(
  test_boto3_sqs.py::test_send_receive_delete_with_attributes_and_md5s
  test_boto3_sqs.py::test_delete_and_visibility_batches
  test_boto3_sqs.py::test_visibility_timeout_expiry_redelivers
  test_boto3_sqs.py::test_fifo_order_per_group
  test_boto3_sqs.py::test_redrive_to_dead_letter_queue_and_move_back
  test_boto3_sns.py::test_fifo_topic_to_two_fifo_queues_keeps_group_order
)
query_suite() {
  local deselect=() ok=0
  for t in "${NEWER_PARAMS[@]}"; do deselect+=(--deselect "tests/compat/python/$t"); done
  PYTHONPATH=tests/compat/query_boto3 "$VQ/bin/python" -m pytest -q -p no:cacheprovider -p query_guard \
    tests/compat/python/test_boto3_sqs.py tests/compat/python/test_boto3_sns.py "${deselect[@]}" || ok=1
  (cd tests/compat/query_boto3 && PYTHONPATH=. "$VQ/bin/python" -m pytest -q -p no:cacheprovider -p query_guard .) || ok=1
  return $ok
}

PYTEST_COUNT='^[0-9]+ (passed|failed)|(passed|failed).* in [0-9.]+s'
if wants query_boto3; then run query_boto3 "$PYTEST_COUNT" query_suite; fi
if wants extended; then
  run extended "$PYTEST_COUNT" env AWS_ENDPOINT_URL_S3="http://127.0.0.1:$S3_PORT" \
    "$VF/bin/python" -m pytest -q -p no:cacheprovider tests/compat/extended
fi
if wants celery; then
  run celery "$PYTEST_COUNT" env PATH="$VF/bin:$PATH" \
    "$VF/bin/python" -m pytest -q -p no:cacheprovider tests/compat/celery
fi
if wants node; then
  run node '^# (pass|fail) ' bash -c 'cd tests/compat/node-frameworks && node --test --test-concurrency=1 ./*.test.mjs'
fi
if wants dramatiq; then
  run dramatiq "$PYTEST_COUNT" "$VD/bin/python" -m pytest -q -p no:cacheprovider tests/compat/dramatiq
fi
if wants taskiq; then
  run taskiq "$PYTEST_COUNT" "$VT/bin/python" -m pytest -q -p no:cacheprovider tests/compat/taskiq
fi
# Both PHP files run even if the first fails; each prints its own "# N passed, M failed".
symfony_suite() {
  local ok=0
  php tests/compat/symfony/messenger_test.php || ok=1
  php tests/compat/symfony/notifier_test.php || ok=1
  return $ok
}
if wants symfony; then
  run symfony '^# [0-9]+ passed' symfony_suite
fi
if wants jms; then
  run jms '^\[[A-Z]+\] Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' bash -c 'cd tests/compat/java-jms && mvn -B -ntp test'
fi
if wants spring; then
  run spring '^\[[A-Z]+\] Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' bash -c 'cd tests/compat/spring && mvn -B -ntp test'
fi
if wants gocdk; then
  run gocdk '^[0-9]+ passed, [0-9]+ failed' scripts/gocdk-conformance.sh
fi
if wants keda; then
  run keda '^(ok|FAIL)\s' bash -c 'set -o pipefail; cd tests/compat/keda && go test -count=1 -v ./... | grep -E "^(--- |ok|FAIL|PASS)|_test.go:"'
fi

echo
echo "== framework suites (endpoint $QUEEN_SQS_ENDPOINT, $MODE broker)"
printf '%s\n' "${results[@]}"
exit $status
