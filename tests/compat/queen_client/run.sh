#!/usr/bin/env bash
# Runs the official Queen Python client (queen-mq 2.6.0) against the embedded broker.
# Creates tests/compat/.venv if needed, starts the broker_only example on a free port with
# a throwaway data dir and a fresh bearer token, runs pytest with QUEEN_URL and
# QUEEN_SQS_BROKER_TOKEN, and stops the broker.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
venv="$root/tests/compat/.venv"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import queen, pytest" 2>/dev/null; then
  "$venv/bin/pip" install -q "queen-mq==2.6.0" pytest
fi

cargo build -q --manifest-path "$root/Cargo.toml" -p queen-sqs-host --no-default-features --example broker_only
bin="${CARGO_TARGET_DIR:-$root/target}/debug/examples/broker_only"

data="$(mktemp -d)"
log="$data/broker.log"
QUEEN_SQS_BROKER_TOKEN="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
export QUEEN_SQS_BROKER_TOKEN
"$bin" 127.0.0.1:0 "$data/db" >"$log" 2>&1 &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

addr=""
for _ in $(seq 1 100); do
  addr="$(sed -n 's/^listening on //p' "$log" | head -n1)"
  [ -n "$addr" ] && break
  sleep 0.1
done
if [ -z "$addr" ]; then
  echo "broker did not start:" >&2
  cat "$log" >&2
  exit 1
fi

QUEEN_URL="http://$addr" "$venv/bin/python" -m pytest -q "$here" "$@"
