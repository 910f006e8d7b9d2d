#!/usr/bin/env bash
# The scale curve: a release queen-sqs-host on its embedded broker, SendMessage and the
# drain (Receive 10 + DeleteBatch until 5,000 are deleted) at 1, 4, 16, 64 and 256
# concurrent clients, RUNS times each, then the backlog scenario (SendMessage and Receive 10
# + DeleteBatch with 10^4, 10^5 and 10^6 messages queued). Every row carries the host's
# resident memory right after it. Writes bench/results/scale-<UTC stamp>.md.
#
#   HOST=/work/target-release/release/queen-sqs-host RUNS=3 SECS=10 bench/scripts/scale.sh
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
HOST="${HOST:-/work/target-release/release/queen-sqs-host}"
RUNS="${RUNS:-3}"
SECS="${SECS:-10}"
CLIENTS="${CLIENTS:-1 4 16 64 256}"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$here/results/scale-$stamp"
(cd "$here" && nice -n 10 cargo build --release --quiet)
BENCH="$here/target/release/queen-sqs-bench"
work="$(mktemp -d)"
QUEEN_SQS_BROKER_TOKEN="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export QUEEN_SQS_BROKER_TOKEN
QUEEN_SQS_CREDENTIALS=test:test: QUEEN_SQS_HANDLE_SECRET=bench-secret-0123456789 \
  "$HOST" serve --listen 127.0.0.1:19430 --broker-listen 127.0.0.1:19431 --data-dir "$work" \
  >"$work/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:19430/healthz && break; sleep 0.1; done
for c in $CLIENTS; do
  for s in send drain; do
    echo "== $s x$c (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    "$BENCH" "$s" --sqs http://127.0.0.1:19430 --queen http://127.0.0.1:19431 --secs "$SECS" \
      --runs "$RUNS" --clients "$c" --host-pid "$pid" --json "$out.jsonl" >/dev/null
  done
done
echo "== backlog x16 (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
"$BENCH" backlog --sqs http://127.0.0.1:19430 --queen http://127.0.0.1:19431 --secs "$SECS" \
  --clients 16 --host-pid "$pid" --json "$out.jsonl" >/dev/null
"$here/scripts/scale_table.py" "$out.jsonl" "$stamp" >"$out.md"
cat "$out.md"
echo "wrote $out.md"
