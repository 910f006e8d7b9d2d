#!/usr/bin/env bash
# Storage after a sustained drain (issue 19, defect 11): for each broker given as label=path
# (a `queen-sqs-broker-runner` from bench/broker-runner, built against the tree to measure),
# and each queue shape on a fresh data dir, runs `queen-sqs-bench storage` and then counts
# what the store still holds (rows and payload bytes, with the sqlite3 CLI) and its files
# after a clean shutdown.
#
#   bench/scripts/storage.sh before=/path/a after=/path/b
#
# Environment: BENCH_STORAGE_MESSAGES (1,000,000 delivered per shape), BENCH_STORAGE_BYTES
# (1,024 B bodies), BENCH_STORAGE_LEFT (10,000 left queued), BENCH_STORAGE_BACKLOG (10,000),
# CLIENTS (16: half push, half pop + ack), SHAPES ("0 1": standard, FIFO-like).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
BENCH="${BENCH:-$here/target/release/queen-sqs-bench}"
PORT="${PORT:-19495}"
export QUEEN_SQS_BROKER_TOKEN=storage-bench-token-0123456789
for spec in "$@"; do
  label=${spec%%=*} bin=${spec#*=}
  for shape in ${SHAPES:-0 1}; do
    d=$(mktemp -d)
    "$bin" "127.0.0.1:$PORT" "$d" >"$d.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/health" && break; sleep 0.1; done
    echo "#### $label ($bin), shape $shape"
    BENCH_STORAGE_SHAPES=$shape "$BENCH" storage --queen "http://127.0.0.1:$PORT" \
      --sqs http://127.0.0.1:1 --host-pid "$pid" --data-dir "$d" --clients "${CLIENTS:-16}" \
      | grep "^|"
    echo
    echo "stored messages (rows, payload bytes): $(sqlite3 "$d/queen.sqlite3" \
      'SELECT COUNT(*) || ", " || COALESCE(SUM(LENGTH(payload)), 0) FROM messages')"
    echo "dedup rows kept without payload: $(sqlite3 "$d/queen.sqlite3" 'SELECT COUNT(*) FROM spent' 2>/dev/null || echo 'n/a (no spent table)')"
    echo "free pages / pages: $(sqlite3 "$d/queen.sqlite3" 'PRAGMA freelist_count' | tr -d '\n') / $(sqlite3 "$d/queen.sqlite3" 'PRAGMA page_count')"
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
    echo "files after shutdown: $(ls -l "$d" | awk 'NR>1 {printf "%s %s B; ", $9, $5}')"
    echo
    rm -rf "$d" "$d.log"
  done
done
