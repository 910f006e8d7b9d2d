#!/usr/bin/env bash
# The released Queen engine (`queen-engine` 1.3.0 from crates.io, on PostgreSQL) for the
# real-Queen test lanes.
#
#   scripts/queen-engine.sh install          PostgreSQL from Debian if missing, and the
#                                            `queen` binary built once into the user cache
#   scripts/queen-engine.sh pg-start DIR     a throwaway PostgreSQL cluster in DIR on
#                                            $QUEEN_TEST_PG_PORT (loopback, trust auth;
#                                            required: pick it with free-port), checked to
#                                            be the postmaster listening there
#   scripts/queen-engine.sh pg-stop DIR
#   scripts/queen-engine.sh start DIR NAME PORT [DB]
#                                            one engine node on 127.0.0.1:PORT over database
#                                            DB (default NAME), log in DIR/NAME.log, pid in
#                                            DIR/NAME.pid; answers once /health is up and
#                                            the process listening on PORT is that node
#   scripts/queen-engine.sh stop DIR NAME
#   scripts/queen-engine.sh bin              prints the engine binary's path
#   scripts/queen-engine.sh free-port        prints a loopback TCP port free right now
#
# The engine runs at its DEFAULT settings except those in scripts/queen-engine.env (the
# same list the Rust test support compiles in; docs/operations.md says why);
# QUEEN_ENGINE_EXTRA_ENV adds more, space-separated NAME=VALUE.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"

ENGINE_VERSION=1.3.0
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/queen-sqs"
ENGINE_ROOT="$CACHE/queen-engine-$ENGINE_VERSION"
ENGINE_BIN="$ENGINE_ROOT/bin/queen"
PG_PORT="${QUEEN_TEST_PG_PORT:-}"
# shellcheck source=lib/ports.sh
. "$HERE/lib/ports.sh"
need_pg_port() {
  [ -n "$PG_PORT" ] || { echo "queen-engine.sh: set QUEEN_TEST_PG_PORT (e.g. \$(scripts/queen-engine.sh free-port))" >&2; exit 2; }
}
PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"

install() {
  if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
    echo "== installing PostgreSQL from Debian"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
  if [ ! -x "$ENGINE_BIN" ]; then
    echo "== building queen-engine $ENGINE_VERSION into $ENGINE_ROOT (once per machine, ~6 min)"
    mkdir -p "$CACHE"
    # LTO off and more codegen units: a 2-core machine builds it in minutes, not tens.
    CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
      CARGO_TARGET_DIR="$CACHE/engine-target" \
      cargo install queen-engine --version "$ENGINE_VERSION" --locked --quiet \
      --root "$ENGINE_ROOT"
  fi
}

as_postgres() {
  # PostgreSQL refuses to run as root.
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start() {
  local dir=$1
  PG_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  as_postgres "$PG_BIN/initdb" -D "$dir/pg" -U postgres -A trust --no-sync >/dev/null
  as_postgres "$PG_BIN/pg_ctl" -D "$dir/pg" -l "$dir/pg.log" -w -t 60 \
    -o "-p $PG_PORT -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=400 -c shared_buffers=256MB" \
    start >/dev/null
  # pg_ctl daemonises the postmaster: it is ours if it is the pid in our data directory.
  local pm
  pm=$(head -1 "$dir/pg/postmaster.pid" 2>/dev/null || true)
  [ -n "$pm" ] || { echo "!! PostgreSQL in $dir wrote no postmaster.pid" >&2; return 1; }
  ports_check "PostgreSQL ($dir)" "$PG_PORT" "$pm"
}

pg_stop() {
  local dir=$1
  PG_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
  [ -d "$dir/pg" ] && as_postgres "$PG_BIN/pg_ctl" -D "$dir/pg" -m immediate stop >/dev/null 2>&1 || true
}

start() {
  local dir=$1 name=$2 port=$3 db=${4:-$2}
  psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qAtc "SELECT 1 FROM pg_database WHERE datname='$db'" postgres \
    | grep -q 1 || psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE \"$db\"" postgres
  mkdir -p "$dir/$name-buffers"
  local settings=() line
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in '' | '#'*) ;; *) settings+=("$line") ;; esac
  done <"$HERE/queen-engine.env"
  # The mesh port is not listened on with sync off; it is set (free, loopback) regardless.
  local mesh_port
  mesh_port=$(free_port)
  # shellcheck disable=SC2086
  env "${settings[@]}" PG_PORT="$PG_PORT" PG_DATABASE="$db" PORT="$port" \
    QUEEN_MESH_PORT="$mesh_port" FILE_BUFFER_DIR="$dir/$name-buffers" \
    ${QUEEN_ENGINE_EXTRA_ENV:-} \
    "$ENGINE_BIN" >>"$dir/$name.log" 2>&1 &
  echo $! >"$dir/$name.pid"
  if ports_wait "queen engine $name" "http://127.0.0.1:$port/health" "$port" "$(cat "$dir/$name.pid")" 60; then
    return 0
  fi
  echo "queen engine $name did not come up on port $port:" >&2
  tail -30 "$dir/$name.log" >&2
  return 1
}

free_port() { ports_free 1; }

stop() {
  local dir=$1 name=$2
  local pid
  pid=$(cat "$dir/$name.pid" 2>/dev/null || true)
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  fi
}

case "${1:-}" in
  install) install ;;
  pg-start) need_pg_port; pg_start "$2" ;;
  pg-stop) pg_stop "$2" ;;
  start) need_pg_port; start "$2" "$3" "$4" "${5:-}" ;;
  stop) stop "$2" "$3" ;;
  bin) echo "$ENGINE_BIN" ;;
  free-port) free_port ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
