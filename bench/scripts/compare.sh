#!/usr/bin/env bash
# Side by side in one sitting: a release queen-sqs-host on its embedded broker (with NORMAL=1,
# the default, also one with QUEEN_SQS_BROKER_FLUSH=normal; with ENGINE=1 also the same host
# over queen-engine 1.3.0) against the peers named in PEERS:
#   elasticmq   ElasticMQ 1.7.1 (org.elasticmq:elasticmq-server_2.13 from Maven Central, run
#               on this machine's Java 17; SQS only, so the SNS rows are not run on it)
#   localstack  LocalStack (localstack-core 2026.3.0 run without docker from a Python 3.13
#               venv in ~/.cache/queen-sqs), SERVICES=sqs,sns
# with the same AWS SDK for Rust load generator and queues created with default attributes
# everywhere. Runs are interleaved (queen, ..., elasticmq, localstack, queen, ...) so drift in
# the machine's load hits every target. Every server listens on a port picked at run time and
# is checked to be the process this script started (scripts/lib/ports.sh).
# Writes bench/results/compare-<UTC stamp>.md (medians, min–max, ratios to each peer, server
# CPU per message, load averages) and the raw runs as compare-<stamp>.jsonl.
#
#   HOST=/work/target-release/release/queen-sqs-host RUNS=3 SECS=10 bench/scripts/compare.sh
#
# Environment:
#   HOST       release queen-sqs-host with `serve` (default /work/target-release/release/...)
#   RUNS SECS  interleaved runs (3) and seconds per timed run (10)
#   PEERS      peers to start, space-separated (default "elasticmq localstack"; "" for none)
#   NORMAL     1 (default): also a host with QUEEN_SQS_BROKER_FLUSH=normal
#   ENGINE     1: also the host over queen-engine 1.3.0 on a throwaway PostgreSQL
#   SCENARIOS  keep only these bench scenarios, space-separated (e.g. "fifo-drain sns3");
#              default every row below
#   SNS_RAW    1: also SNS rows with RawMessageDelivery subscriptions (sns1raw, sns10raw)
#   (the httpK rows publish to K http subscribers, receivers in the bench process; their
#   latency column is publish-to-POST, not the call's)
#   WARMUP     1 (default): before run 1, 2 s of SendMessage and one drain against every
#              target, not recorded (the JVM and Python peers compile their hot paths)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=../../scripts/lib/ports.sh
. "$root/scripts/lib/ports.sh"
HOST="${HOST:-/work/target-release/release/queen-sqs-host}"
RUNS="${RUNS:-3}"
SECS="${SECS:-10}"
ENGINE="${ENGINE:-0}"
NORMAL="${NORMAL:-1}"
WARMUP="${WARMUP:-1}"
PEERS="${PEERS-elasticmq localstack}"
SCENARIOS="${SCENARIOS:-}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/queen-sqs"
LS_VENV="$CACHE/localstack-venv"
EMQ_VERSION=1.7.1
EMQ_HOME="$CACHE/elasticmq-$EMQ_VERSION"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$here/results/compare-$stamp"
for p in $PEERS; do
  case "$p" in elasticmq | localstack) ;; *) echo "PEERS: unknown peer '$p' (elasticmq, localstack)" >&2; exit 2 ;; esac
done
peer() { [[ " $PEERS " == *" $1 "* ]]; }
[ -x "$HOST" ] || { echo "HOST=$HOST is not an executable queen-sqs-host" >&2; exit 2; }
(cd "$here" && nice -n 10 cargo build --release --quiet)
BENCH="$here/target/release/queen-sqs-bench"

# ElasticMQ: the server jar and its runtime dependencies, resolved once by Maven into the
# cache (bench/elasticmq/pom.xml); later runs reuse the directory.
if peer elasticmq && [ ! -f "$EMQ_HOME/lib/.complete" ]; then
  command -v mvn >/dev/null || { echo "ElasticMQ needs Maven (mvn) to fetch its jars once" >&2; exit 1; }
  command -v java >/dev/null || { echo "ElasticMQ needs Java (17 or later)" >&2; exit 1; }
  rm -rf "$EMQ_HOME/lib" "$EMQ_HOME/lib.partial"
  mkdir -p "$EMQ_HOME"
  echo "fetching ElasticMQ $EMQ_VERSION and its dependencies into $EMQ_HOME/lib" >&2
  nice -n 10 mvn -q -B -Dstyle.color=never -f "$here/elasticmq/pom.xml" -Delasticmq.version="$EMQ_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$EMQ_HOME/lib.partial" >&2
  ls "$EMQ_HOME/lib.partial"/elasticmq-server_2.13-"$EMQ_VERSION".jar >/dev/null
  mv "$EMQ_HOME/lib.partial" "$EMQ_HOME/lib"
  touch "$EMQ_HOME/lib/.complete"
fi

if peer localstack && [ ! -x "$LS_VENV/bin/python" ]; then
  py=""
  for v in "$HOME"/.pyenv/versions/3.13*/bin/python python3.13; do
    if command -v "$v" >/dev/null 2>&1; then py="$v"; break; fi
  done
  [ -n "$py" ] || { echo "LocalStack 2026.3 needs Python >= 3.13 (warnings.deprecated)" >&2; exit 1; }
  "$py" -m venv "$LS_VENV"
  "$LS_VENV/bin/pip" install --quiet --disable-pip-version-check 'localstack-core[runtime]==2026.3.0' \
    'cbor2<6' 'pyopenssl==24.3.0' 'cryptography<45' service_identity
fi

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$ENGINE" = 1 ]; then
    "$root/scripts/queen-engine.sh" stop "$work" bench || true
    QUEEN_TEST_PG_PORT=${PG_PORT:-0} "$root/scripts/queen-engine.sh" pg-stop "$work" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
fail_start() { # name, log
  echo "!! $1 did not come up; the end of its log:" >&2
  tail -n 30 "$2" >&2 || true
  exit 1
}

# target: name=sqs url=pid for CPU=services (sqs or sqs,sns)
targets=()

QUEEN_SQS_BROKER_TOKEN="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export QUEEN_SQS_BROKER_TOKEN
mkdir -p "$work/q"
QUEEN_SQS_CREDENTIALS=test:test: QUEEN_SQS_HANDLE_SECRET=bench-secret-0123456789 \
  "$HOST" serve --listen 127.0.0.1:0 --broker-listen 127.0.0.1:0 --data-dir "$work/q" \
  >"$work/q/log" 2>&1 &
pids+=($!)
Q_PID=${pids[-1]}
ports_host_up queen "$work/q/log" "$Q_PID" 120 || fail_start queen "$work/q/log"
Q_BROKER="http://127.0.0.1:$HOST_BROKER_PORT"
targets+=("queen=http://127.0.0.1:$HOST_PORT=$Q_PID=sqs,sns")
if [ "$NORMAL" = 1 ]; then
  # The same host with QUEEN_SQS_BROKER_FLUSH=normal: commits not flushed one by one (what an
  # in-memory emulator such as LocalStack or ElasticMQ never does either).
  mkdir -p "$work/n"
  QUEEN_SQS_BROKER_FLUSH=normal QUEEN_SQS_CREDENTIALS=test:test: QUEEN_SQS_HANDLE_SECRET=bench-secret-0123456789 \
    "$HOST" serve --listen 127.0.0.1:0 --broker-listen 127.0.0.1:0 --data-dir "$work/n" \
    >"$work/n/log" 2>&1 &
  pids+=($!)
  ports_host_up queen-flush-normal "$work/n/log" "${pids[-1]}" 120 || fail_start queen-flush-normal "$work/n/log"
  targets+=("queen-flush-normal=http://127.0.0.1:$HOST_PORT=${pids[-1]}=sqs,sns")
fi
if [ "$ENGINE" = 1 ]; then
  read -r PG_PORT ENGINE_PORT <<<"$(ports_free 2)"
  "$root/scripts/queen-engine.sh" install
  QUEEN_TEST_PG_PORT=$PG_PORT "$root/scripts/queen-engine.sh" pg-start "$work"
  QUEEN_ENGINE_EXTRA_ENV="${ENGINE_EXTRA:-}" QUEEN_TEST_PG_PORT=$PG_PORT \
    "$root/scripts/queen-engine.sh" start "$work" bench "$ENGINE_PORT"
  mkdir -p "$work/e"
  QUEEN_URL=http://127.0.0.1:$ENGINE_PORT QUEEN_SQS_CREDENTIALS=test:test: QUEEN_SQS_HANDLE_SECRET=bench-secret-0123456789 \
    "$HOST" serve --listen 127.0.0.1:0 --data-dir "$work/e" >"$work/e/log" 2>&1 &
  pids+=($!)
  ports_host_up engine "$work/e/log" "${pids[-1]}" 120 || fail_start engine "$work/e/log"
  targets+=("engine=http://127.0.0.1:$HOST_PORT=${pids[-1]}=sqs,sns")
fi

if peer elasticmq; then
  # ElasticMQ in memory, one JVM; its queue URLs name the port it listens on.
  EMQ_PORT="$(ports_free 1)"
  mkdir -p "$work/emq"
  cat >"$work/emq/elasticmq.conf" <<EOF
include classpath("application.conf")
node-address {
  protocol = http
  host = "127.0.0.1"
  port = $EMQ_PORT
  context-path = ""
}
rest-sqs {
  enabled = true
  bind-hostname = "127.0.0.1"
  bind-port = $EMQ_PORT
  sqs-limits = strict
}
aws {
  region = "us-east-1"
  accountId = "000000000000"
}
EOF
  (cd "$work/emq" && exec java -Dconfig.file="$work/emq/elasticmq.conf" -cp "$EMQ_HOME/lib/*" \
    org.elasticmq.server.Main >"$work/emq/log" 2>&1) &
  pids+=($!)
  EMQ_PID=${pids[-1]}
  up=0
  for _ in $(seq 240); do
    if curl -fsS -m 3 -o /dev/null -d Action=ListQueues "http://127.0.0.1:$EMQ_PORT/" 2>/dev/null; then
      up=1; break
    fi
    kill -0 "$EMQ_PID" 2>/dev/null || break
    sleep 0.25
  done
  [ "$up" = 1 ] && ports_check elasticmq "$EMQ_PORT" "$EMQ_PID" || fail_start elasticmq "$work/emq/log"
  targets+=("elasticmq=http://127.0.0.1:$EMQ_PORT=$EMQ_PID=sqs")
fi

if peer localstack; then
  # LocalStack, SQS and SNS, in its host mode (the services loaded at start).
  LS_PORT="$(ports_free 1)"
  mkdir -p "$work/ls"
  (cd "$work/ls" && GATEWAY_LISTEN=127.0.0.1:$LS_PORT SERVICES=sqs,sns EAGER_SERVICE_LOADING=1 \
    LOCALSTACK_VOLUME_DIR="$work/ls/vol" SQS_ENDPOINT_STRATEGY=path DISABLE_EVENTS=1 SKIP_SSL_CERT_DOWNLOAD=1 \
    exec "$LS_VENV/bin/python" -m localstack.runtime.main >"$work/ls/log" 2>&1) &
  pids+=($!)
  LS_PID=${pids[-1]}
  ports_wait localstack "http://127.0.0.1:$LS_PORT/_localstack/health" "$LS_PORT" "$LS_PID" 300 \
    || fail_start localstack "$work/ls/log"
  targets+=("localstack=http://127.0.0.1:$LS_PORT=$LS_PID=sqs,sns")
fi

# scenario label | bench scenario | clients | service the target must offer
scenarios=(
  "SendMessage x16|send|16|sqs"
  "SendMessage x1|send|1|sqs"
  "SendMessageBatch(10) x16|batch|16|sqs"
  "drain 5,000 x4|drain|4|sqs"
  "drain 5,000 x16|drain|16|sqs"
  "FIFO drain 5,000 in 16 groups x16|fifo-drain|16|sqs"
  "round trip x1|rtt|1|sqs"
  "SNS Publish, 1 subscriber x1|sns1|1|sns"
  "SNS Publish, 1 subscriber x16|sns1|16|sns"
  "SNS Publish, 3 subscribers x1|sns3|1|sns"
  "SNS Publish, 3 subscribers x16|sns3|16|sns"
  "SNS Publish, 10 subscribers x1|sns10|1|sns"
  "SNS Publish, 10 subscribers x16|sns10|16|sns"
  # HTTP subscribers: receivers of the bench process (bench/src/webhooks.rs).
  "SNS Publish, 1 HTTP subscriber x16|http1|16|sns"
  "SNS Publish, 10 HTTP subscribers x16|http10|16|sns"
  "SNS Publish, 100 HTTP subscribers x1|http100|1|sns"
)
if [ "${SNS_RAW:-0}" = 1 ]; then
  # The same publishes to RawMessageDelivery subscriptions: no signed JSON envelope.
  scenarios+=(
    "SNS Publish, 1 raw subscriber x16|sns1raw|16|sns"
    "SNS Publish, 10 raw subscribers x16|sns10raw|16|sns"
  )
fi
if [ -n "$SCENARIOS" ]; then
  kept=()
  for s in "${scenarios[@]}"; do
    IFS='|' read -r _ scen _ _ <<<"$s"
    [[ " $SCENARIOS " == *" $scen "* ]] && kept+=("$s")
  done
  [ ${#kept[@]} -gt 0 ] || { echo "SCENARIOS='$SCENARIOS' keeps no row" >&2; exit 2; }
  scenarios=("${kept[@]}")
fi
export BENCH_DEFAULT_QUEUES=1
echo "targets: ${targets[*]}" >&2

if [ "$WARMUP" = 1 ]; then
  for t in "${targets[@]}"; do
    IFS='=' read -r name url pid _ <<<"$t"
    echo "== warm-up on $name" >&2
    "$BENCH" send drain --sqs "$url" --queen "$Q_BROKER" --secs 2 --runs 1 --clients 16 \
      --host-pid "$pid" >/dev/null 2>&1 || echo "   warm-up on $name failed" >&2
  done
fi

for run in $(seq "$RUNS"); do
  for s in "${scenarios[@]}"; do
    IFS='|' read -r label scen clients needs <<<"$s"
    for t in "${targets[@]}"; do
      IFS='=' read -r name url pid services <<<"$t"
      if [[ ",$services," != *",$needs,"* ]]; then
        # Recorded so the table can tell "not offered" from "failed".
        echo "{\"scenario\":\"$scen\",\"clients\":$clients,\"run\":$((run - 1)),\"skipped\":\"no ${needs^^}\"}" \
          >>"$work/$name.jsonl"
        continue
      fi
      la="$(cut -d' ' -f1-3 /proc/loadavg)"
      echo "== run $run: $label on $name (load $la)" >&2
      if ! "$BENCH" "$scen" --sqs "$url" --queen "$Q_BROKER" --secs "$SECS" --runs 1 \
        --clients "$clients" --host-pid "$pid" --json "$work/$name.jsonl" >/dev/null; then
        echo "   $label on $name failed" >&2
        echo "{\"scenario\":\"$scen\",\"clients\":$clients,\"run\":$((run - 1)),\"failed\":true}" \
          >>"$work/$name.jsonl"
      fi
    done
  done
done
for t in "${targets[@]}"; do
  IFS='=' read -r name _ _ _ <<<"$t"
  if [ -f "$work/$name.jsonl" ]; then
    sed "s/^{/{\"target\":\"$name\",/" "$work/$name.jsonl"
  fi
done >"$out.jsonl"
"$here/scripts/compare_table.py" "$out.jsonl" "$stamp" "$RUNS" "$SECS" >"$out.md"
cat "$out.md"
echo "wrote $out.md and $out.jsonl"
