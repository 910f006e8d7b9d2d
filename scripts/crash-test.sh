#!/usr/bin/env bash
# Crash test under load (issue 10): tests/crash/crash_under_load.py against a host binary.
# 16 senders and 16 receivers (a standard and a FIFO queue); the host, with its embedded
# broker in process, is SIGKILLed at a random moment ROUNDS times and restarted on the same
# data directory; then the queues are drained and the script checks that every acknowledged
# send was received and that no message was held by two live receipt handles.
#
# Builds nothing. Environment:
#   HOST    the host binary (default /work/target-release/release/queen-sqs-host)
#   ROUNDS  kills (default 20)
#   PORT    the endpoint's port (default 0: the kernel picks one at the first start, the
#           restarts reuse it; after every start the listener is checked to be the host the
#           test started)
#   SEED    the run's random seed (default: random, printed in the report)
#   KEEP    1 keeps the work directory (data dir, host log, events.json) even on success;
#           it is always kept when a check fails (its path is on stderr)
# Writes bench/results/crash-<UTC stamp>.md; exits with the Python script's status.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
HOST="${HOST:-/work/target-release/release/queen-sqs-host}"
ROUNDS="${ROUNDS:-20}"
PORT="${PORT:-0}"
PY="$root/tests/compat/.venv/bin/python"
if [[ ! -x "$HOST" ]]; then
  echo "no host binary at $HOST (build it: cargo build --release -p queen-sqs-host)" >&2
  exit 2
fi
if [[ ! -x "$PY" ]]; then
  echo "no venv at tests/compat/.venv (python3 -m venv tests/compat/.venv && tests/compat/.venv/bin/pip install -r tests/compat/requirements.txt)" >&2
  exit 2
fi
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$root/bench/results/crash-$stamp.md"
mkdir -p "$root/bench/results"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
args=(--host-bin "$HOST" --rounds "$ROUNDS" --port "$PORT")
[[ -n "${SEED:-}" ]] && args+=(--seed "$SEED")
[[ "${KEEP:-0}" == 1 ]] && args+=(--keep)
t0=$(date +%s)
set +e
"$PY" "$root/tests/crash/crash_under_load.py" "${args[@]}" >"$report"
rc=$?
set -e
t1=$(date +%s)
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"
{
  echo "# Crash test under load, $stamp"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); host binary: $HOST ($(stat -c '%y' "$HOST" | cut -d. -f1))"
  echo "- clone at run time (not necessarily what the binary was built from): $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- src host || echo ' + uncommitted changes under src/ host/')"
  echo "- machine: $(nproc) cores, client and host on the same machine; load average at start: $load_start, at end: $load_end"
  echo "- 16 senders + 16 receivers (12 + 12 on a standard queue, 4 + 4 on a FIFO queue with 10 groups), VisibilityTimeout 20 s, $ROUNDS rounds of 1-5 s load then SIGKILL + restart; script wall time $((t1 - t0)) s; exit status $rc"
  echo
  cat "$report"
} >"$out"
cat "$out"
echo "report: $out" >&2
exit "$rc"
