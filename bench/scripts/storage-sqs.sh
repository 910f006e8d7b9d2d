#!/usr/bin/env bash
# Storage after a sustained drain through the SQS facade (issue 19, "store within 2x of what
# is queued"): for each host given as label=path (a release `queen-sqs-host` with the
# `serve` feature), on a fresh data dir with the embedded broker, runs
# `queen-sqs-bench storage-sqs` (SendMessageBatch 10 / ReceiveMessage 10 + DeleteMessageBatch
# on one standard queue with default attributes, so every message in flight is held by its
# visibility timer), then counts what the store still holds with the sqlite3 CLI and the
# files after a clean shutdown.
#
#   bench/scripts/storage-sqs.sh after=$HOME/.cache/qs-release/release/queen-sqs-host
#
# Environment: BENCH_STORAGE_MESSAGES (1,000,000 deleted), BENCH_STORAGE_LEFT (10,000 left
# queued), BENCH_STORAGE_BACKLOG (10,000), CLIENTS (16: half send, half receive + delete).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
BENCH="${BENCH:-$here/target/release/queen-sqs-bench}"
# shellcheck source=../../scripts/lib/ports.sh
. "$here/../scripts/lib/ports.sh"
export QUEEN_SQS_CREDENTIALS="test:test:" # the bench client signs as test/test
export QUEEN_SQS_HANDLE_SECRET=storage-bench-handle-secret-0123
QUEEN_SQS_BROKER_TOKEN=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
export QUEEN_SQS_BROKER_TOKEN
for spec in "$@"; do
  label=${spec%%=*} bin=${spec#*=}
  d=$(mktemp -d)
  "$bin" serve --listen 127.0.0.1:0 --broker-listen 127.0.0.1:0 --data-dir "$d" >"$d.log" 2>&1 &
  pid=$!
  ports_host_up "$label" "$d.log" "$pid" 60 || { cat "$d.log"; exit 1; }
  echo "#### $label ($bin, pid $pid, port $HOST_PORT), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  "$BENCH" storage-sqs --sqs "http://127.0.0.1:$HOST_PORT" --queen "http://127.0.0.1:$HOST_BROKER_PORT" \
    --host-pid "$pid" --data-dir "$d" --clients "${CLIENTS:-16}" | grep "^|"
  echo
  db="$d/queen.sqlite3"
  echo "stored messages (rows, payload bytes): $(sqlite3 "$db" \
    'SELECT COUNT(*) || ", " || COALESCE(SUM(LENGTH(payload)), 0) FROM messages')"
  echo "visibility timers (rows, payload bytes): $(sqlite3 "$db" \
    'SELECT COUNT(*) || ", " || COALESCE(SUM(LENGTH(payload)), 0) FROM timers' 2>/dev/null || echo n/a)"
  echo "KV entries: $(sqlite3 "$db" 'SELECT COUNT(*) FROM kv' 2>/dev/null || echo n/a)"
  echo "free pages / pages: $(sqlite3 "$db" 'PRAGMA freelist_count' | tr -d '\n') / $(sqlite3 "$db" 'PRAGMA page_count')"
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
  echo "files after shutdown: $(find "$d" -maxdepth 1 -type f -printf '%f %s B; ')"
  echo
  rm -rf "$d" "$d.log"
done
