#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz / libFuzzer) of the parsers and codecs, a fixed
# number of executions per target. Not part of CI: it needs the nightly toolchain and
# about 15-30 minutes of a core. Installs cargo-fuzz (into ~/.cargo/bin) if missing.
#
#   scripts/fuzz.sh                    every target, FUZZ_RUNS executions each
#   scripts/fuzz.sh sigv4 wire_json    only these targets
#
# Targets (fuzz/fuzz_targets/, what each asserts is at the top of its file):
#   wire_json       AWS JSON 1.0 decoding, then the whole service on the request
#   wire_query      Query form decoding (body vs URL, re-spelt escapes), then the service
#   xml_writer      XML answers written and read back with quick-xml, leaf by leaf
#   sigv4           SigV4 header/presigned parsing; an independent signer's requests verify
#   receipt_handle  receipt-handle open on hostile tokens; mint -> open round trips
#   filter_policy   SNS filter-policy parse + match; $or/AND compositions; probes
#
# Environment:
#   FUZZ_RUNS       executions per target (default 2000000: 1.2e7 over the six targets)
#   FUZZ_SANITIZER  cargo-fuzz sanitizer (default none: the crate is safe Rust; the build
#                   keeps debug assertions and overflow checks either way)
#   FUZZ_NICE       niceness of the build and the runs (default 10)
#
# Each target's working corpus is fuzz/corpus/<target> (not committed), seeded from the
# committed fuzz/seeds/<target>; a crash is saved under fuzz/artifacts/<target>/ and
# reproduced with `cargo +nightly fuzz run -s none <target> <file>`. Exit status is
# non-zero if any target crashed (the other targets still run).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${FUZZ_RUNS:-2000000}
SANITIZER=${FUZZ_SANITIZER:-none}
NICE=${FUZZ_NICE:-10}
ALL=(wire_json wire_query xml_writer sigv4 receipt_handle filter_policy)
if [ $# -gt 0 ]; then TARGETS=("$@"); else TARGETS=("${ALL[@]}"); fi

# Longest input libFuzzer may try, per target.
max_len() {
  case $1 in
    receipt_handle) echo 9000 ;;  # past the 8192-character token cap
    filter_policy) echo 8192 ;;
    *) echo 4096 ;;
  esac
}

if ! rustup toolchain list | grep -q '^nightly'; then
  echo "== installing the nightly toolchain (cargo-fuzz needs it)"
  rustup toolchain install nightly --profile minimal
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

echo "== building ${#TARGETS[@]} target(s) (sanitizer: $SANITIZER)"
for t in "${TARGETS[@]}"; do
  nice -n "$NICE" cargo +nightly fuzz build -s "$SANITIZER" "$t"
done

LOGDIR=fuzz/target/logs
mkdir -p "$LOGDIR"
failed=0
total_runs=0
total_secs=0
rows=()
for t in "${TARGETS[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  seeds=()
  [ -d "fuzz/seeds/$t" ] && seeds=("fuzz/seeds/$t")
  dict=()
  [ -f "fuzz/dicts/$t.dict" ] && dict=("-dict=fuzz/dicts/$t.dict")
  before=$(ls "fuzz/artifacts/$t" | wc -l)
  log="$LOGDIR/$t.log"
  echo "== $t: $RUNS executions, max_len $(max_len "$t")"
  start=$(date +%s.%N)
  status=0
  nice -n "$NICE" cargo +nightly fuzz run -s "$SANITIZER" "$t" "fuzz/corpus/$t" "${seeds[@]}" -- \
    -runs="$RUNS" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "${dict[@]}" >"$log" 2>&1 || status=$?
  end=$(date +%s.%N)
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }')
  runs=$(grep -a 'stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}' || true)
  runs=${runs:-0}
  after=$(ls "fuzz/artifacts/$t" | wc -l)
  crashes=$((after - before))
  if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi
  if [ "$crashes" -ne 0 ]; then
    failed=1
    echo "!! $t FAILED (exit $status); log: $log"
    grep -a -A12 'panicked at' "$log" | head -30 || true
    for f in $(ls -t "fuzz/artifacts/$t" | head -n "$crashes"); do
      echo "   input fuzz/artifacts/$t/$f (base64): $(base64 -w0 "fuzz/artifacts/$t/$f")"
    done
  fi
  echo "   $t: $runs executions in ${secs} s, $crashes crash(es)"
  rows+=("$(printf '%-16s %12s %8s %8s' "$t" "$runs" "$secs" "$crashes")")
  total_runs=$((total_runs + runs))
  total_secs=$((total_secs + secs))
done

echo
printf '%-16s %12s %8s %8s\n' target executions seconds crashes
printf '%s\n' "${rows[@]}"
printf '%-16s %12s %8s\n' total "$total_runs" "$total_secs"
exit $failed
