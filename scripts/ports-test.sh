#!/usr/bin/env bash
# The test scripts' own check (issue 21 item 10): a suite runs only against the process its
# script started, on ports picked at run time. Against a foreign HTTP server that answers
# 200 on every path (so a health check alone is fooled by it), on a port the test holds:
#
#   1. scripts/lib/ports.sh: ports_wait / ports_check refuse the foreign server whether "our"
#      server failed to bind, is still starting, or never listens; they accept our server and
#      a child of it (jco serve's Node process); ports_free gives distinct bindable ports;
#      ports_from_log reads a port back and gives up when its process exits.
#   2. the lanes' wait_http (scripts/lib/suites.sh, scripts/cluster-lane.sh) refuses it too.
#   3. the real host: `serve --listen` on the held port fails ports_host_up (the host cannot
#      bind; the old readiness check, a curl of /healthz, is shown to pass there: the
#      control), and `serve --listen 127.0.0.1:0 --broker-listen 127.0.0.1:0` passes with
#      both ports read back.
#   4. no fixed port is left in scripts/ or in the suites' endpoint settings, and every
#      script that health-checks a server uses the checked helpers.
#
# Needs python3, curl, ss; builds the debug host unless QUEEN_SQS_HOST_BIN names one
# (QUEEN_PORTS_TEST_NO_HOST=1 skips part 3). Prints "N passed, M failed"; exit status 1 on
# any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=lib/ports.sh
. scripts/lib/ports.sh

DIR=$(mktemp -d /tmp/queen-ports-test.XXXXXX)
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -- "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "${p#-}" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
expect_ok() { # what, command...
  local what=$1
  shift
  if "$@" 2>"$DIR/err"; then ok "$what"; else bad "$what: $(tr '\n' ' ' <"$DIR/err")"; fi
}
expect_refused() { # what, command... (must fail and say so on stderr)
  local what=$1
  shift
  if "$@" 2>"$DIR/err"; then
    bad "$what: accepted"
  elif grep -q '!!' "$DIR/err"; then
    ok "$what: refused ($(head -1 "$DIR/err" | cut -c1-150))"
  else
    bad "$what: failed without saying why"
  fi
}

# An HTTP server answering 200 to every GET: what a stray endpoint, or anything else on
# the port, looks like to a health check.
cat >"$DIR/any200.py" <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
serve200() { exec python3 "$DIR/any200.py" "$1" >>"$DIR/any200.log" 2>&1; }
start_bg() { # var, command...: starts it, tracks it, sets var to its pid
  local var=$1
  shift
  "$@" &
  printf -v "$var" '%s' $!
  PIDS+=("${!var}")
}
wait_listen() { # port: until something listens there (5 s)
  local i
  for i in $(seq 1 50); do ss -ltnH "sport = :$1" | grep -q . && return 0; sleep 0.1; done
  return 1
}

echo "== 1. scripts/lib/ports.sh"
read -r F G H < <(ports_free 3)
start_bg FOREIGN serve200 "$F"
wait_listen "$F" || { echo "the foreign server did not start"; exit 1; }
if curl -fsS -m 3 -o /dev/null "http://127.0.0.1:$F/healthz"; then
  ok "control: the foreign server answers /healthz 200 on $F (a health check alone accepts it)"
else
  bad "control: the foreign server does not answer"
fi

# Ours cannot bind the held port and exits; the foreign one keeps answering.
start_bg OURS serve200 "$F"
expect_refused "ours failed to bind $F, the foreign server answers" \
  ports_wait "ours" "http://127.0.0.1:$F/healthz" "$F" "$OURS" 10
# Ours is alive but slow to listen (or listens elsewhere).
start_bg SLOW sleep 60
expect_refused "ours is alive but not listening, the foreign server answers" \
  ports_wait "ours" "http://127.0.0.1:$F/healthz" "$F" "$SLOW" 10
expect_refused "ports_check names the foreign pid" ports_check "ours" "$F" "$SLOW"
grep -q "pid $FOREIGN " "$DIR/err" && ok "the refusal names pid $FOREIGN" || bad "the refusal does not name pid $FOREIGN: $(cat "$DIR/err")"
# Nothing listens, ours is alive: a bounded wait that fails.
expect_refused "nothing listens on $H" ports_wait "ours" "http://127.0.0.1:$H/healthz" "$H" "$SLOW" 2

# Ours on a free port; and a server that is a child of the process we started.
start_bg MINE serve200 "$G"
expect_ok "ours on $G is accepted" ports_wait "ours" "http://127.0.0.1:$G/healthz" "$G" "$MINE" 10
read -r G2 < <(ports_free 1)
# In a session of its own, stopped as a group (the child would outlive its parent).
setsid bash -c "python3 '$DIR/any200.py' $G2 & wait" &
PARENT=$!
PIDS+=("-$PARENT")
expect_ok "a child of ours on $G2 is accepted" ports_wait "ours" "http://127.0.0.1:$G2/" "$G2" "$PARENT" 10
expect_refused "our server's port checked against another pid" ports_check "ours" "$G" "$PARENT"

# ports_free: distinct, bindable.
read -r -a five < <(ports_free 5)
if [ ${#five[@]} = 5 ] && [ "$(printf '%s\n' "${five[@]}" | sort -u | wc -l)" = 5 ] &&
  python3 -c 'import socket,sys
for p in sys.argv[1:]:
    s = socket.socket(); s.bind(("127.0.0.1", int(p))); s.close()' "${five[@]}"; then
  ok "ports_free 5: ${five[*]}"
else
  bad "ports_free 5: ${five[*]}"
fi

# ports_from_log.
echo "x: SQS/SNS endpoint on http://127.0.0.1:4321" >"$DIR/a.log"
got=$(ports_from_log "$DIR/a.log" 'endpoint on http://127\.0\.0\.1:([0-9]+)' "$SLOW" 5)
[ "$got" = 4321 ] && ok "ports_from_log reads 4321" || bad "ports_from_log read '$got'"
: >"$DIR/b.log"
expect_refused "ports_from_log gives up when the process exits" \
  ports_from_log "$DIR/b.log" 'endpoint on http://127\.0\.0\.1:([0-9]+)' "$OURS" 5

echo "== 2. the lanes' wait_http"
expect_refused "scripts/lib/suites.sh wait_http against the foreign server" bash -c '
  . scripts/lib/suites.sh
  wait_http "http://127.0.0.1:$1/healthz" 10 "$2"' suites "$F" "$SLOW"
expect_ok "scripts/lib/suites.sh wait_http against ours" bash -c '
  . scripts/lib/suites.sh
  wait_http "http://127.0.0.1:$1/healthz" 10 "$2"' suites "$G" "$MINE"
# cluster-lane.sh's own copy, taken out of the script.
sed -n '/^wait_http() {/,/^}/p' scripts/cluster-lane.sh >"$DIR/cluster_wait.sh"
if [ -s "$DIR/cluster_wait.sh" ]; then
  expect_refused "scripts/cluster-lane.sh wait_http against the foreign server" bash -c '
    . scripts/lib/ports.sh; dump_logs() { :; }; . "$3"
    wait_http "http://127.0.0.1:$1/healthz" 10 "$2"' cluster "$F" "$SLOW" "$DIR/cluster_wait.sh"
else
  bad "no wait_http in scripts/cluster-lane.sh"
fi

echo "== 3. the host"
if [ "${QUEEN_PORTS_TEST_NO_HOST:-0}" = 1 ]; then
  echo "   skipped (QUEEN_PORTS_TEST_NO_HOST=1)"
else
  BIN=${QUEEN_SQS_HOST_BIN:-}
  if [ -z "$BIN" ]; then
    cargo build -p queen-sqs-host --quiet
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/queen-sqs-host"
  fi
  export QUEEN_SQS_CREDENTIALS="test:test:" QUEEN_SQS_HANDLE_SECRET="ports-test-handle-secret-0123456789"
  "$BIN" serve --listen "127.0.0.1:$F" --data-dir "$DIR/h1" >"$DIR/h1.log" 2>&1 &
  H1=$!
  PIDS+=("$H1")
  # The old scripts/compat.sh readiness: curl /healthz on the port it chose. Fooled.
  if curl -fsS -m 3 -o /dev/null "http://127.0.0.1:$F/healthz"; then
    ok "control: the old readiness check (curl :$F/healthz) passes with the host not listening"
  else
    bad "control: curl :$F/healthz failed"
  fi
  expect_refused "the host on the held port $F" ports_host_up "the host" "$DIR/h1.log" "$H1" 60
  "$BIN" serve --listen "127.0.0.1:0" --broker-listen "127.0.0.1:0" --data-dir "$DIR/h2" >"$DIR/h2.log" 2>&1 &
  H2=$!
  PIDS+=("$H2")
  if ports_host_up "the host" "$DIR/h2.log" "$H2" 120 2>"$DIR/err" &&
    [ -n "$HOST_PORT" ] && [ -n "$HOST_BROKER_PORT" ] && [ "$HOST_PORT" != "$HOST_BROKER_PORT" ]; then
    ok "the host on port 0: endpoint $HOST_PORT and broker $HOST_BROKER_PORT read back, both pid $H2's"
  else
    bad "the host on port 0: $(cat "$DIR/err"; tail -5 "$DIR/h2.log")"
  fi
fi

echo "== 4. no fixed ports"
FILES=(scripts/*.sh scripts/lib/*.sh bench/cluster/send.sh
  tests/compat/node/support.mjs tests/compat/node-frameworks/support.mjs
  tests/compat/python/conftest.py tests/compat/extended/conftest.py tests/compat/celery/tasksapp.py
  tests/compat/queen_client/test_queen_client.py tests/jco/test_long_poll.py
  tests/compat/java-jms/src/test/java/queensqs/jms/Jms.java tests/crash/crash_under_load.py)
# A loopback address with a port number, or a PORT variable with a numeric fallback.
hits=$(grep -nE '(127\.0\.0\.1|localhost):[1-9][0-9]{2,4}([^0-9]|$)|PORT[A-Z_]*:-[1-9]|default=[1-9][0-9]{3,4}\b' \
  "${FILES[@]}" | grep -v '^scripts/ports-test.sh:' || true)
if [ -z "$hits" ]; then ok "no fixed port in ${#FILES[@]} files"; else bad "fixed ports: $hits"; fi
unchecked=()
for f in scripts/*.sh bench/cluster/send.sh; do
  [ "$f" = scripts/ports-test.sh ] && continue
  if grep -qE '/health(z)?\b' "$f" && ! grep -qE 'lib/(ports|suites)\.sh' "$f"; then unchecked+=("$f"); fi
done
if [ ${#unchecked[@]} = 0 ]; then
  ok "every script that health-checks a server sources lib/ports.sh or lib/suites.sh"
else
  bad "health-checked without lib/ports.sh: ${unchecked[*]}"
fi

echo
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
