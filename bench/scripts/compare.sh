#!/usr/bin/env bash
# Side by side in one sitting: a release queen-sqs-host on its embedded broker (with NORMAL=1,
# the default, also one with QUEEN_SQS_BROKER_FLUSH=normal; with ENGINE=1 also the same host
# over queen-engine 1.3.0) against LocalStack (localstack-core
# 2026.3.0 run without docker from a Python 3.13 venv in ~/.cache/queen-sqs), the same AWS
# SDK for Rust load generator, queues created with default attributes on both. Runs are
# interleaved (queen, localstack, queen, ...) so drift in the machine's load hits both.
# Writes bench/results/compare-<UTC stamp>.md (medians, min–max, ratios, load averages).
#
#   HOST=/work/target-release/release/queen-sqs-host RUNS=3 SECS=10 bench/scripts/compare.sh
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
HOST="${HOST:-/work/target-release/release/queen-sqs-host}"
RUNS="${RUNS:-3}"
SECS="${SECS:-10}"
ENGINE="${ENGINE:-0}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/queen-sqs"
LS_VENV="$CACHE/localstack-venv"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$here/results/compare-$stamp"
(cd "$here" && nice -n 10 cargo build --release --quiet)
BENCH="$here/target/release/queen-sqs-bench"

if [ ! -x "$LS_VENV/bin/python" ]; then
  py=""
  for v in "$HOME"/.pyenv/versions/3.13*/bin/python python3.13; do
    if command -v "$v" >/dev/null 2>&1; then py="$v"; break; fi
  done
  [ -n "$py" ] || { echo "LocalStack 2026.3 needs Python >= 3.13 (warnings.deprecated)" >&2; exit 1; }
  "$py" -m venv "$LS_VENV"
  "$LS_VENV/bin/pip" install --quiet --disable-pip-version-check 'localstack-core[runtime]==2026.3.0' \
    'cbor2<6' 'pyopenssl==24.3.0' 'cryptography<45' service_identity
fi

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$ENGINE" = 1 ]; then
    "$root/scripts/queen-engine.sh" stop "$work" bench || true
    QUEEN_TEST_PG_PORT=$PG_PORT "$root/scripts/queen-engine.sh" pg-stop "$work" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
wait_http() { # url
  for _ in $(seq 300); do curl -s -o /dev/null "$1" && return 0; sleep 0.2; done
  echo "$1 did not answer" >&2; return 1
}

# LocalStack, SQS only, in its host mode.
mkdir -p "$work/ls"
(cd "$work/ls" && GATEWAY_LISTEN=127.0.0.1:19566 SERVICES=sqs LOCALSTACK_VOLUME_DIR="$work/ls/vol" \
  SQS_ENDPOINT_STRATEGY=path DISABLE_EVENTS=1 SKIP_SSL_CERT_DOWNLOAD=1 \
  exec "$LS_VENV/bin/python" -m localstack.runtime.main >"$work/ls/log" 2>&1) &
pids+=($!)
LS_PID=${pids[-1]}

QUEEN_SQS_BROKER_TOKEN="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export QUEEN_SQS_BROKER_TOKEN
mkdir -p "$work/q"
QUEEN_SQS_CREDENTIALS=test:test: QUEEN_SQS_HANDLE_SECRET=bench-secret-0123456789 \
  "$HOST" serve --listen 127.0.0.1:19400 --broker-listen 127.0.0.1:19401 --data-dir "$work/q" \
  >"$work/q/log" 2>&1 &
pids+=($!)
Q_PID=${pids[-1]}
targets=("queen=http://127.0.0.1:19400=$Q_PID")
if [ "${NORMAL:-1}" = 1 ]; then
  # The same host with QUEEN_SQS_BROKER_FLUSH=normal: commits not flushed one by one (what an
  # in-memory emulator such as LocalStack never does either).
  mkdir -p "$work/n"
  QUEEN_SQS_BROKER_FLUSH=normal QUEEN_SQS_CREDENTIALS=test:test: QUEEN_SQS_HANDLE_SECRET=bench-secret-0123456789 \
    "$HOST" serve --listen 127.0.0.1:19410 --broker-listen 127.0.0.1:19411 --data-dir "$work/n" \
    >"$work/n/log" 2>&1 &
  pids+=($!)
  targets+=("queen-flush-normal=http://127.0.0.1:19410=${pids[-1]}")
  wait_http http://127.0.0.1:19410/healthz
fi
if [ "$ENGINE" = 1 ]; then
  PG_PORT="${BENCH_PG_PORT:-25543}"
  "$root/scripts/queen-engine.sh" install
  QUEEN_TEST_PG_PORT=$PG_PORT "$root/scripts/queen-engine.sh" pg-start "$work"
  QUEEN_ENGINE_EXTRA_ENV="${ENGINE_EXTRA:-}" QUEEN_TEST_PG_PORT=$PG_PORT \
    "$root/scripts/queen-engine.sh" start "$work" bench 19620
  mkdir -p "$work/e"
  QUEEN_URL=http://127.0.0.1:19620 QUEEN_SQS_CREDENTIALS=test:test: QUEEN_SQS_HANDLE_SECRET=bench-secret-0123456789 \
    "$HOST" serve --listen 127.0.0.1:19420 --data-dir "$work/e" >"$work/e/log" 2>&1 &
  pids+=($!)
  targets+=("engine=http://127.0.0.1:19420=${pids[-1]}")
  wait_http http://127.0.0.1:19420/healthz
fi
targets+=("localstack=http://127.0.0.1:19566=$LS_PID")
wait_http http://127.0.0.1:19400/healthz
wait_http http://127.0.0.1:19566/_localstack/health

# scenario label | bench scenario | clients
scenarios=(
  "SendMessage x16|send|16"
  "SendMessage x1|send|1"
  "SendMessageBatch(10) x16|batch|16"
  "drain 5,000 x4|drain|4"
  "drain 5,000 x16|drain|16"
  "round trip x1|rtt|1"
)
export BENCH_DEFAULT_QUEUES=1
for run in $(seq "$RUNS"); do
  for s in "${scenarios[@]}"; do
    IFS='|' read -r label scen clients <<<"$s"
    for t in "${targets[@]}"; do
      IFS='=' read -r name url pid <<<"$t"
      la="$(cut -d' ' -f1-3 /proc/loadavg)"
      echo "== run $run: $label on $name (load $la)" >&2
      "$BENCH" "$scen" --sqs "$url" --queen http://127.0.0.1:19401 --secs "$SECS" --runs 1 \
        --clients "$clients" --host-pid "$pid" --json "$work/$name.jsonl" >/dev/null \
        || echo "   $label on $name failed" >&2
    done
  done
done
cat "$work"/*.jsonl >"$out.jsonl" 2>/dev/null || true
for t in "${targets[@]}"; do
  IFS='=' read -r name _ _ <<<"$t"
  sed "s/^{/{\"target\":\"$name\",/" "$work/$name.jsonl"
done >"$out.jsonl"
"$here/scripts/compare_table.py" "$out.jsonl" "$stamp" "$RUNS" "$SECS" >"$out.md"
cat "$out.md"
echo "wrote $out.md"
