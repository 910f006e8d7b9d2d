#!/usr/bin/env bash
# Sequential SendMessage throughput (boto3, 500 sends, median of 3 runs) through:
#   host        queen-sqs-host serve, its broker in process
#   host+net    queen-sqs-host serve with QUEEN_URL at the broker run alone (same hop as below)
#   gateway     tests/gateway (proxy-wasm, 2 VMs) with the cluster at the broker run alone
# Debug builds of everything, as scripts/gateway-lane.sh builds them. Not part of the lane.
#
#   tests/gateway/bench/run.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../../.."
N=${1:-500}
PY=tests/compat/.venv/bin/python
BIN=target/debug/queen-sqs-host
WASM=target/wasm32-wasip1/debug/queen_sqs.wasm
cargo build --quiet -p queen-sqs-host
cargo build --quiet --target wasm32-wasip1 --features proxy-wasm -p queen-sqs
DIR=$(mktemp -d /tmp/queen-gateway-bench.XXXXXX)
(cd tests/gateway && go build -o "$DIR/queen-gateway" .)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$DIR"' EXIT
read -r P_BROKER P_HOST P_HOSTNET P_GW < <("$PY" -c '
import socket
ss = [socket.socket() for _ in range(4)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
TOKEN=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
SECRET="bench-handle-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
up() { for _ in $(seq 240); do curl -fsS -m 2 -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.25; done; echo "no $1" >&2; exit 1; }

QUEEN_SQS_BROKER_TOKEN=$TOKEN "$BIN" broker --listen "127.0.0.1:$P_BROKER" --data-dir "$DIR/broker" >"$DIR/broker.log" 2>&1 &
PIDS+=($!)
up "http://127.0.0.1:$P_BROKER/health"
QUEEN_SQS_HANDLE_SECRET=$SECRET "$BIN" serve --listen "127.0.0.1:$P_HOST" --data-dir "$DIR/host" >"$DIR/host.log" 2>&1 &
PIDS+=($!)
QUEEN_URL="http://127.0.0.1:$P_BROKER" QUEEN_SQS_HANDLE_SECRET=$SECRET QUEEN_SQS_CREDENTIALS="test:test:$TOKEN" \
  "$BIN" serve --listen "127.0.0.1:$P_HOSTNET" --data-dir "$DIR/hostnet" >"$DIR/hostnet.log" 2>&1 &
PIDS+=($!)
printf '{"QUEEN_URL":"http://127.0.0.1:%s","QUEEN_SQS_CREDENTIALS":"test:test:%s","QUEEN_SQS_HANDLE_SECRET":"%s"}' \
  "$P_BROKER" "$TOKEN" "$SECRET" >"$DIR/plugin.json"
"$DIR/queen-gateway" -listen "127.0.0.1:$P_GW" -wasm "$WASM" -config "$DIR/plugin.json" \
  -cluster "queen=127.0.0.1:$P_BROKER" -workers 2 >"$DIR/gateway.log" 2>&1 &
PIDS+=($!)
for p in $P_HOST $P_HOSTNET $P_GW; do up "http://127.0.0.1:$p/readyz"; done

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for row in "host:$P_HOST" "host+net:$P_HOSTNET" "gateway:$P_GW"; do
  name=${row%%:*} port=${row##*:}
  runs=()
  for _ in 1 2 3; do runs+=("$("$PY" tests/gateway/bench/sends.py "http://127.0.0.1:$port" "$N")"); done
  median=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p)
  printf '%-9s %s sends: %s msg/s (runs %s), load %s\n' "$name" "$N" "$median" "${runs[*]}" "$(cut -d' ' -f1-3 /proc/loadavg)"
done
