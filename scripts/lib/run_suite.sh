# run_suite, shared by the lanes (scripts/lib/suites.sh, scripts/cluster-lane.sh). Sourced.
# Runs one suite under a time limit, its output teed to $DIR/suite-<name>.out, and adds its
# counts to the caller's totals. Uses the caller's globals: DIR, SUITE_PID (so the caller's
# cleanup can stop a running suite), total_pass, total_fail, results, lane_failed.
# Kinds: pytest and node (counts read from their output), script (one check: its exit status).

run_suite() { # name, kind (pytest|node|script), time limit, command...
  local name=$1 kind=$2 limit=$3
  shift 3
  local out="$DIR/suite-${name//[^A-Za-z0-9]/-}.out" started=$SECONDS rc=0 pass=0 fail=0
  echo
  echo "== suite $name (limit ${limit}s): $*"
  # In the background and waited for, so a SIGTERM/SIGINT to the lane is acted on at once
  # (bash defers traps while a foreground command runs); the cleanup stops the suite.
  set +e
  timeout -k 10 "$limit" "$@" > >(tee "$out") 2>&1 &
  SUITE_PID=$!
  wait "$SUITE_PID"
  rc=$?
  SUITE_PID=""
  set -e
  sleep 0.2 # let tee catch up
  if [ "$kind" = pytest ]; then
    local last
    last=$(grep -E '[0-9]+ (passed|failed|errors?)' "$out" | tail -1 || true)
    pass=$(grep -oE '[0-9]+ passed' <<<"$last" | grep -oE '[0-9]+' || echo 0)
    fail=$(( $(grep -oE '[0-9]+ failed' <<<"$last" | grep -oE '[0-9]+' || echo 0) +
      $(grep -oE '[0-9]+ errors?' <<<"$last" | grep -oE '[0-9]+' || echo 0) ))
  elif [ "$kind" = script ]; then
    if [ "$rc" = 0 ]; then pass=1; else fail=1; fi
  else
    pass=$(grep -E '^# pass [0-9]+' "$out" | tail -1 | grep -oE '[0-9]+' || echo 0)
    fail=$(( $(grep -E '^# fail [0-9]+' "$out" | tail -1 | grep -oE '[0-9]+' || echo 0) +
      $(grep -E '^# cancelled [0-9]+' "$out" | tail -1 | grep -oE '[0-9]+' || echo 0) ))
  fi
  if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
    fail=1 # timed out or crashed without a failure of its own: counts as one
  fi
  [ "$rc" = 124 ] && echo "!! suite $name hit its ${limit}s limit"
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
  local verdict=passed
  [ "$rc" = 0 ] && [ "$fail" = 0 ] || { verdict=FAILED; lane_failed=1; }
  results+=("$(printf '%-48s %-7s %4d passed %3d failed  %4ds' "$name" "$verdict" "$pass" "$fail" $((SECONDS - started)))")
}
