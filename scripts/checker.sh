#!/usr/bin/env bash
# The model-based checker (tests/checker, issue 19 item 2) against a debug host, on the
# embedded broker, on the released Queen engine, or both (the default):
#
#   scripts/checker.sh [embedded|engine|both] [--seconds N] [--seed N]... [--ops N] [--shrink]
#                      [any other tests/checker/driver.py argument]
#
#   --seconds N   the operation phase of each seed (default 12; a seed also spends ~10 s
#                 starting its host and 7-45 s draining)
#   --seed N      run only this seed (repeatable): a replay. Without it each broker runs the
#                 fixed seeds below plus one fresh seed, printed before it runs.
#   --ops N       operations per seed at most
#
# Fixed seeds (the profile and topology follow from the seed: seed % 4 picks clean, faults,
# kills or chaos; embedded seeds with seed % 5 == 4 use the host's in-process broker):
#   embedded: 4 (clean, in-process broker), 1 (proxy faults), 3 (faults + kills)
#   engine:   8 (clean), 1 (faults), 3 (faults + kills)
#
# Builds only `cargo build -p queen-sqs-host` (debug; waits for another build's cargo lock);
# QUEEN_SQS_CHECKER_BIN names a host binary to use instead (no build).
# Every server gets a port it picked and is checked to be the process listening there. The
# last line is "N passed, M failed" over seeds x invariants; the exit status is non-zero on
# any violation.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

MODE=both
PASS=()
SEEDS=()
SECS=12
while [ $# -gt 0 ]; do
  case "$1" in
    embedded | engine | both) MODE=$1 ;;
    --seconds) SECS=$2; shift ;;
    --seed) SEEDS+=("$2"); shift ;;
    -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
    *) PASS+=("$1") ;;
  esac
  shift
done

if [ -n "${QUEEN_SQS_CHECKER_BIN:-}" ]; then
  # A host binary of its own (a long run that must not meet a rebuild of target/).
  BIN=$QUEEN_SQS_CHECKER_BIN
else
  echo "== building the debug host (cargo build -p queen-sqs-host)"
  cargo build -p queen-sqs-host --quiet
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/queen-sqs-host"
fi

echo "== Python (venv at tests/compat/.venv)"
# shellcheck source=lib/venv.sh
. scripts/lib/venv.sh
compat_venv "-r tests/compat/requirements.txt" "-r tests/checker/requirements.txt"
PY=tests/compat/.venv/bin/python
export AWS_EC2_METADATA_DISABLED=true

OUT=$(mktemp -d)
ENGINE_DIR=""
cleanup() {
  if [ -n "$ENGINE_DIR" ]; then
    scripts/queen-engine.sh stop "$ENGINE_DIR" checker || true
    scripts/queen-engine.sh pg-stop "$ENGINE_DIR" || true
    rm -rf "$ENGINE_DIR"
  fi
  rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

seed_args() { # fixed seeds...
  local a=()
  if [ ${#SEEDS[@]} -gt 0 ]; then
    for s in "${SEEDS[@]}"; do a+=(--seed "$s"); done
  else
    a+=(--seeds "$1" --fresh)
  fi
  echo "${a[@]}"
}

status=0
passed=0
failed=0
tally() { # output file
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -1 || true)
  if [ -z "$line" ]; then
    failed=$((failed + 1))
    status=1
    return
  fi
  passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
  failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
}

run_driver() { # label, out file, args...
  local label=$1 out=$2
  shift 2
  local started=$SECONDS
  echo "== checker on the $label broker"
  set +e
  "$PY" tests/checker/driver.py --bin "$BIN" --seconds "$SECS" "$@" "${PASS[@]}" 2>&1 | tee "$out"
  local rc=${PIPESTATUS[0]}
  set -e
  [ "$rc" = 0 ] || status=1
  tally "$out"
  echo "-- $label: $((SECONDS - started))s"
}

if [ "$MODE" = embedded ] || [ "$MODE" = both ]; then
  # shellcheck disable=SC2046
  run_driver embedded "$OUT/embedded.txt" --broker embedded $(seed_args 4,1,3)
fi

if [ "$MODE" = engine ] || [ "$MODE" = both ]; then
  ENGINE="$(scripts/queen-engine.sh bin)"
  if [ ! -x "$ENGINE" ]; then
    # Someone else's build may be under way: wait for it rather than start a second one.
    for _ in $(seq 1 360); do
      pgrep -f 'cargo install queen-engine' >/dev/null || break
      [ -x "$ENGINE" ] && break
      sleep 5
    done
    [ -x "$ENGINE" ] || scripts/queen-engine.sh install
  fi
  ENGINE_DIR=$(mktemp -d)
  QUEEN_TEST_PG_PORT=$(scripts/queen-engine.sh free-port)
  export QUEEN_TEST_PG_PORT
  EP=$(scripts/queen-engine.sh free-port)
  echo "== PostgreSQL on 127.0.0.1:$QUEEN_TEST_PG_PORT, the Queen engine on 127.0.0.1:$EP ($ENGINE_DIR)"
  scripts/queen-engine.sh pg-start "$ENGINE_DIR"
  scripts/queen-engine.sh start "$ENGINE_DIR" checker "$EP"
  # shellcheck disable=SC2046
  run_driver engine "$OUT/engine.txt" --broker engine --engine-url "http://127.0.0.1:$EP" \
    --engine-pid "$(cat "$ENGINE_DIR/checker.pid")" $(seed_args 8,1,3)
fi

[ "$failed" = 0 ] || status=1
echo "$passed passed, $failed failed"
exit $status
