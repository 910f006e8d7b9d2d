#!/usr/bin/env bash
# The queue console in a real browser: starts a debug host with the console on (embedded
# broker, fresh data dir, free loopback ports), runs tests/console (the page's SigV4 signer
# in Node, then the page in Debian's headless Chromium driven by playwright-core: sign in,
# create, send, receive, delete), stops the host.
#
# Installs what it needs: Debian's `chromium` (apt-get, as root or through sudo; Playwright's
# own browser download is not used) and tests/console's npm packages. Screenshots are kept
# in the directory printed at the end (target/console-artifacts unless
# QUEEN_SQS_CONSOLE_ARTIFACTS names another; never committed).
#
# Knobs: CHROMIUM (a browser binary), QUEEN_SQS_HOST_BIN (a prebuilt queen-sqs-host).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=lib/ports.sh
. scripts/lib/ports.sh

CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
if [ -z "$CHROMIUM" ]; then
  echo "== installing Debian's chromium"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null ||
    { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
  CHROMIUM=$(command -v chromium)
fi
export CHROMIUM
echo "== $("$CHROMIUM" --headless --no-sandbox --version 2>/dev/null || echo chromium) ($CHROMIUM)"

echo "== tests/console: npm install"
(cd tests/console && npm install --no-audit --no-fund --loglevel=error)

if [ -z "${QUEEN_SQS_HOST_BIN:-}" ]; then
  cargo build -p queen-sqs-host --quiet
  QUEEN_SQS_HOST_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/queen-sqs-host"
fi
ARTIFACTS=${QUEEN_SQS_CONSOLE_ARTIFACTS:-$ROOT/target/console-artifacts}
rm -rf "$ARTIFACTS"
mkdir -p "$ARTIFACTS"
export QUEEN_SQS_CONSOLE_ARTIFACTS=$ARTIFACTS

SCRATCH=$(mktemp -d)
HOST_PID=""
cleanup() {
  if [ -n "$HOST_PID" ]; then
    kill "$HOST_PID" 2>/dev/null || true
    wait "$HOST_PID" 2>/dev/null || true
  fi
  rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

QUEEN_SQS_CONSOLE=on \
  QUEEN_SQS_CREDENTIALS="test:test:" \
  QUEEN_SQS_HANDLE_SECRET="console-test-handle-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')" \
  QUEEN_SQS_BROKER_TOKEN="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')" \
  "$QUEEN_SQS_HOST_BIN" serve --listen "127.0.0.1:0" --broker-listen "127.0.0.1:0" \
  --data-dir "$SCRATCH/data" >"$SCRATCH/serve.log" 2>&1 &
HOST_PID=$!
# Port 0 for both listeners; the ports are read back and checked to be this host's.
ports_host_up "the host" "$SCRATCH/serve.log" "$HOST_PID" 120 || { cat "$SCRATCH/serve.log"; exit 1; }
PORT=$HOST_PORT
echo "== host with the console on http://127.0.0.1:$PORT/console/ (pid $HOST_PID)"

status=0
(cd tests/console && QUEEN_SQS_ENDPOINT="http://127.0.0.1:$PORT" \
  node --test --test-concurrency=1 sigv4.test.mjs console.test.mjs) || status=1
if [ $status != 0 ]; then
  echo "== host log (tail)"
  tail -40 "$SCRATCH/serve.log"
fi
echo "== console screenshots in $ARTIFACTS: $(ls "$ARTIFACTS" | tr '\n' ' ')"
exit $status
