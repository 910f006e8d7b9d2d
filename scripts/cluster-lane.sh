#!/usr/bin/env bash
# The cluster lane: two facade replicas over a two-node Queen engine cluster, as one CI step.
#
#   throwaway PostgreSQL ── ONE database ──┬── engine node1 ◀─mesh─▶ engine node2
#                                          │        ▲                    ▲
#                                          │   facade replica 1     facade replica 2
#                                          │        ▲                    ▲
#                                          └────────┴── round-robin front (per request)
#
# Then, against that cluster:
#   1. the real-client suites through the front (boto3 + aws CLI with pytest, the JS SDK v3
#      and v2 with node --test), every request alternating replicas;
#   2. tests/cluster (pytest, boto3) against the replicas directly: a cross-replica long
#      poll, 1,000 messages alternating replicas, SIGKILL of engine node1 under load (no
#      acknowledged message lost), readiness while it is down and after its restart.
#
# Everything it starts it stops (trap), loopback only, every port a free one, and every
# server is checked to be the process listening on its port (scripts/lib/ports.sh). Exit status
# non-zero if anything failed; the last line is "N passed, M failed" over all suites.
#
# Knobs (environment):
#   QUEEN_SQS_HOST_BIN         a prebuilt queen-sqs-host (default: `cargo build -p
#                              queen-sqs-host` and target/debug/queen-sqs-host)
#   QUEEN_CLUSTER_SUITES       which suites, space-separated (default: "python node cluster";
#                              "bench" adds bench/cluster/send.sh, SendMessage x16 through one
#                              replica vs through the front, which needs the bench crate built)
#   QUEEN_CLUSTER_PG_PORT      PostgreSQL's port (default: a free one)
#   QUEEN_CLUSTER_KEEP=1       keep the scratch directory (logs) even when everything passed
#   QUEEN_CLUSTER_PYTEST_ARGS  extra arguments for both pytest runs (e.g. -k / --deselect)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LANE_STARTED=$SECONDS
SUITES=${QUEEN_CLUSTER_SUITES:-python node cluster}

echo "################################################################"
echo "## cluster lane: 2 facade replicas, 2 Queen engine nodes (mesh), 1 PostgreSQL"
echo "## $(date -u '+%Y-%m-%dT%H:%M:%SZ'), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "################################################################"

# --- prerequisites ---------------------------------------------------------------------
if [ -n "${QUEEN_SQS_HOST_BIN:-}" ]; then
  BIN=$QUEEN_SQS_HOST_BIN
else
  echo "== building the host (debug)"
  cargo build -p queen-sqs-host --quiet
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/queen-sqs-host"
fi
[ -x "$BIN" ] || { echo "no host binary at $BIN" >&2; exit 1; }
scripts/queen-engine.sh install
if [ ! -x tests/compat/.venv/bin/python ]; then
  echo "== Python clients (venv at tests/compat/.venv)"
  # shellcheck source=lib/venv.sh
  . scripts/lib/venv.sh
  compat_venv "-r tests/compat/requirements.txt" "--no-deps -r tests/compat/requirements-nodeps.txt"
fi
if [[ " $SUITES " == *" node "* ]] && [ ! -d tests/compat/node/node_modules ]; then
  echo "== Node clients"
  (cd tests/compat/node && npm install --no-audit --no-fund --loglevel=error)
fi
PY="$ROOT/tests/compat/.venv/bin/python"
export PATH="$ROOT/tests/compat/.venv/bin:$PATH"

# --- the cluster ---------------------------------------------------------------------------
DIR=$(mktemp -d /tmp/queen-cluster-lane.XXXXXX)
# shellcheck source=lib/ports.sh
. scripts/lib/ports.sh
# Eight distinct free loopback ports, held together while chosen.
read -r P_PG P_E1 P_E2 P_M1 P_M2 P_F1 P_F2 P_FRONT < <(ports_free 8)
P_PG=${QUEEN_CLUSTER_PG_PORT:-$P_PG}
export QUEEN_TEST_PG_PORT=$P_PG
DB=cluster
SYNC_SECRET="cluster-lane-sync-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
HANDLE_SECRET="cluster-lane-handle-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
# Per node: the mesh on, the other node as its one peer, loopback everywhere; mesh events
# (peer down / recovered) logged, with timestamps, in DIR/nodeN.log.
mesh_env() { # own mesh port, peer mesh port, server id
  echo "QUEEN_SYNC_ENABLED=true QUEEN_MESH_PORT=$1 QUEEN_MESH_PEERS=127.0.0.1:$2 QUEEN_SERVER_ID=$3" \
    "QUEEN_SYNC_SECRET=$SYNC_SECRET QUEEN_MESH_BIND_ADDR=127.0.0.1 QUEEN_MESH_ADVERTISE_HOST=127.0.0.1" \
    "LOG_LEVEL=warn,mesh=info"
}
ENV_E1=$(mesh_env "$P_M1" "$P_M2" cluster-node1)
ENV_E2=$(mesh_env "$P_M2" "$P_M1" cluster-node2)

PIDS_FACADE=()
PID_FRONT=""
SUITE_PID=""
CLEANED=0
lane_failed=0
cleanup() {
  [ "$CLEANED" = 1 ] && return 0
  CLEANED=1
  if [ -n "$SUITE_PID" ]; then kill "$SUITE_PID" 2>/dev/null || true; wait "$SUITE_PID" 2>/dev/null || true; fi
  if [ -n "$PID_FRONT" ]; then kill "$PID_FRONT" 2>/dev/null || true; wait "$PID_FRONT" 2>/dev/null || true; fi
  for pid in "${PIDS_FACADE[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS_FACADE[@]}"; do wait "$pid" 2>/dev/null || true; done
  scripts/queen-engine.sh stop "$DIR" node1 >/dev/null 2>&1 || true
  scripts/queen-engine.sh stop "$DIR" node2 >/dev/null 2>&1 || true
  scripts/queen-engine.sh pg-stop "$DIR" >/dev/null 2>&1 || true
  if [ -f "$DIR/pg/postmaster.pid" ]; then # pg-stop missing or failed: stop it here
    local pg_bin
    pg_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
    if [ "$(id -u)" = 0 ]; then
      runuser -u postgres -- "$pg_bin/pg_ctl" -D "$DIR/pg" -m immediate stop >/dev/null 2>&1 || true
    else
      "$pg_bin/pg_ctl" -D "$DIR/pg" -m immediate stop >/dev/null 2>&1 || true
    fi
  fi
  if [ "$lane_failed" = 0 ] && [ "${QUEEN_CLUSTER_KEEP:-0}" != 1 ]; then
    rm -rf "$DIR"
  else
    echo "== logs kept in $DIR"
  fi
}
trap 'lane_failed=1; cleanup' EXIT
trap 'exit 130' INT TERM

dump_logs() {
  for f in "$DIR"/node1.log "$DIR"/node2.log "$DIR"/facade1.log "$DIR"/facade2.log "$DIR"/front.log; do
    [ -s "$f" ] && { echo "--- tail $f"; tail -15 "$f"; }
  done
  return 0
}

# Waits for url to answer 2xx (giving up early if pid died), then checks that the process
# listening on the url's port is pid (or a child of it).
wait_http() { # url, seconds, pid
  local port=${1#http://*:}
  port=${port%%/*}
  ports_wait "server pid $3" "$1" "$port" "$3" "$2" && return 0
  echo "nothing ready at $1 (or not the process started here)" >&2
  dump_logs >&2
  return 1
}

echo "== PostgreSQL on 127.0.0.1:$P_PG ($DIR)"
scripts/queen-engine.sh pg-start "$DIR"
echo "== engine node1 on 127.0.0.1:$P_E1 (mesh $P_M1), node2 on 127.0.0.1:$P_E2 (mesh $P_M2), database $DB"
QUEEN_ENGINE_EXTRA_ENV="$ENV_E1" scripts/queen-engine.sh start "$DIR" node1 "$P_E1" "$DB"
QUEEN_ENGINE_EXTRA_ENV="$ENV_E2" scripts/queen-engine.sh start "$DIR" node2 "$P_E2" "$DB"

start_facade() { # n, listen port, engine port
  QUEEN_URL="http://127.0.0.1:$3" QUEEN_SQS_CREDENTIALS="test:test:" QUEEN_SQS_HANDLE_SECRET="$HANDLE_SECRET" \
    "$BIN" serve --listen "127.0.0.1:$2" --data-dir "$DIR/facade$1-data" >"$DIR/facade$1.log" 2>&1 &
  PIDS_FACADE+=($!)
}
echo "== facade replica 1 on 127.0.0.1:$P_F1 -> node1, replica 2 on 127.0.0.1:$P_F2 -> node2"
start_facade 1 "$P_F1" "$P_E1"
start_facade 2 "$P_F2" "$P_E2"
wait_http "http://127.0.0.1:$P_F1/readyz" 90 "${PIDS_FACADE[0]}"
wait_http "http://127.0.0.1:$P_F2/readyz" 90 "${PIDS_FACADE[1]}"

echo "== round-robin front on 127.0.0.1:$P_FRONT -> $P_F1, $P_F2"
"$PY" tests/cluster/front.py "$P_FRONT" "$P_F1" "$P_F2" >"$DIR/front.log" 2>&1 &
PID_FRONT=$!
wait_http "http://127.0.0.1:$P_FRONT/readyz" 20 "$PID_FRONT"
echo "== cluster up after $((SECONDS - LANE_STARTED)) s"

# --- the suites ------------------------------------------------------------------------------
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true
export QUEEN_URL="http://127.0.0.1:$P_E1"
# shellcheck disable=SC2206
PYTEST_EXTRA=(${QUEEN_CLUSTER_PYTEST_ARGS:-})

total_pass=0
total_fail=0
results=()
. "$ROOT/scripts/lib/run_suite.sh"

FRONT_URL="http://127.0.0.1:$P_FRONT"
if [[ " $SUITES " == *" python "* ]]; then
  QUEEN_SQS_ENDPOINT=$FRONT_URL run_suite "compat-python (front)" pytest 240 \
    "$PY" -m pytest -q -p no:cacheprovider tests/compat/python "${PYTEST_EXTRA[@]}"
fi
if [[ " $SUITES " == *" node "* ]]; then
  QUEEN_SQS_ENDPOINT=$FRONT_URL run_suite "compat-node (front)" node 180 \
    bash -c 'cd tests/compat/node && exec node --test --test-concurrency=1 ./*.test.mjs'
fi
if [[ " $SUITES " == *" cluster "* ]]; then
  CLUSTER_REPLICA_1="http://127.0.0.1:$P_F1" CLUSTER_REPLICA_2="http://127.0.0.1:$P_F2" \
    CLUSTER_DIR="$DIR" CLUSTER_ENGINE_SCRIPT="$ROOT/scripts/queen-engine.sh" \
    CLUSTER_ENGINE_1_NAME=node1 CLUSTER_ENGINE_1_PORT="$P_E1" CLUSTER_ENGINE_1_DB="$DB" \
    CLUSTER_ENGINE_1_EXTRA_ENV="$ENV_E1" \
    run_suite "cluster (replicas direct)" pytest 240 \
    "$PY" -m pytest -q -s tests/cluster "${PYTEST_EXTRA[@]}"
fi
if [[ " $SUITES " == *" bench "* ]]; then
  CLUSTER_REPLICA_1="http://127.0.0.1:$P_F1" CLUSTER_REPLICA_1_PORT="$P_F1" CLUSTER_FRONT=$FRONT_URL \
    CLUSTER_DIR="$DIR" CLUSTER_HOST_BIN="$BIN" CLUSTER_PY="$PY" \
    run_suite "bench: SendMessage x16" script 900 bench/cluster/send.sh
fi

# --- closing note ----------------------------------------------------------------------------
kill "$PID_FRONT" 2>/dev/null || true
wait "$PID_FRONT" 2>/dev/null || true
PID_FRONT=""
echo
echo "== figures"
[ -s "$DIR/figures.txt" ] && sed 's/^/  /' "$DIR/figures.txt"
grep -h 'requests per upstream' "$DIR/front.log" | sed 's/^/  /' || true
for n in node1 node2; do
  grep -hE 'peer (down|recovered)|mesh.*started' "$DIR/$n.log" 2>/dev/null | sed "s/^/  $n: /" | tail -6 || true
done
[ "$lane_failed" = 0 ] || dump_logs
echo
echo "== summary"
printf '  %s\n' "${results[@]}"
took=$((SECONDS - LANE_STARTED))
verdict=passed
[ "$lane_failed" = 0 ] || verdict=FAILED
echo "## cluster lane: $verdict in $((took / 60))m$(printf '%02d' $((took % 60)))s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
cleanup
trap - EXIT
echo "$total_pass passed, $total_fail failed"
[ "$lane_failed" = 0 ]
