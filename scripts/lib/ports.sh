# Ports picked at run time, and the check that whoever answers on one is the process we
# started (issue 21 item 10). Sourced by every script in scripts/ that starts a server.
#
#   ports_free N                 N distinct free loopback TCP ports, space-separated
#   ports_from_log LOG ERE PID S the port a server printed (ERE's first group) in LOG, once it
#                                has, within S seconds; fails if PID exits first. For servers
#                                told to listen on port 0 (queen-sqs-host serve/broker): no
#                                window between choosing the port and binding it.
#   ports_check NAME PORT PID    every process listening on PORT is PID or a descendant of it
#                                (`ss -ltnp`; a child such as the Node process `jco serve`
#                                spawns counts as ours); otherwise says who is there, loudly,
#                                on stderr, and fails
#   ports_wait NAME URL PORT PID S
#                                waits up to S seconds for URL to answer 2xx (giving up at
#                                once if PID exits), then ports_check: a server that answers
#                                but is not ours fails the wait
#   ports_host_up NAME LOG PID [S]
#                                for `queen-sqs-host serve --listen 127.0.0.1:0
#                                [--broker-listen 127.0.0.1:0]`: reads the endpoint's port (and
#                                the embedded broker's, when it has one) from LOG, waits for
#                                /healthz, checks both ports are PID's. Sets HOST_PORT and
#                                HOST_BROKER_PORT (empty without an embedded broker).
#
# A process we cannot see (another user's, without privileges) is not ours: the check fails.

ports_free() { # n
  python3 -c '
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "${1:-1}"
}

# The pids listening on PORT (any local address), one per line.
ports_listeners() { # port
  ss -ltnpH "sport = :$1" 2>/dev/null | grep -oE 'pid=[0-9]+' | cut -d= -f2 | sort -un
}

# True if PID is ANCESTOR or one of its descendants.
ports_descends() { # pid, ancestor
  local p=$1 n=0
  while [ -n "$p" ] && [ "$p" -gt 0 ] && [ $n -lt 64 ]; do
    [ "$p" = "$2" ] && return 0
    p=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null)
    n=$((n + 1))
  done
  return 1
}

ports_who() { # pid: "pid (command line)"
  local cmd
  cmd=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | cut -c1-120)
  echo "$1 (${cmd:-?})"
}

ports_check() { # name, port, pid
  local name=$1 port=$2 pid=$3 l any=0 bad=()
  command -v ss >/dev/null || { echo "!! $name: ss (iproute2) is needed to see who listens on port $port" >&2; return 1; }
  for l in $(ports_listeners "$port"); do
    any=1
    ports_descends "$l" "$pid" || bad+=("$(ports_who "$l")")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "!! $name: port $port is answered by pid ${bad[*]}, not by the process this script started (pid $pid): refusing to run against it" >&2
    return 1
  fi
  if [ "$any" = 0 ]; then
    if ss -ltnH "sport = :$port" 2>/dev/null | grep -q .; then
      echo "!! $name: port $port is listened on by a process we cannot see, not by pid $pid: refusing to run against it" >&2
    else
      echo "!! $name: nothing listens on port $port (expected pid $pid)" >&2
    fi
    return 1
  fi
  return 0
}

ports_wait() { # name, url, port, pid, seconds
  local name=$1 url=$2 port=$3 pid=$4 until=$((SECONDS + $5))
  while :; do
    if curl -fsS -m 3 -o /dev/null "$url" 2>/dev/null; then
      ports_check "$name" "$port" "$pid"
      return
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "!! $name (pid $pid) exited before $url answered" >&2
      return 1
    fi
    if [ $SECONDS -ge "$until" ]; then
      echo "!! $name: nothing answered at $url within $5 s" >&2
      return 1
    fi
    sleep 0.25
  done
}

ports_from_log() { # log, extended regex with one group, pid, seconds
  local log=$1 ere=$2 pid=$3 until=$((SECONDS + $4)) port
  while :; do
    port=$(sed -nE "s|.*$ere.*|\\1|p" "$log" 2>/dev/null | head -1)
    if [ -n "$port" ]; then
      echo "$port"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "!! pid $pid exited before printing /$ere/ in $log" >&2
      return 1
    fi
    if [ $SECONDS -ge "$until" ]; then
      echo "!! no /$ere/ in $log within $4 s" >&2
      return 1
    fi
    sleep 0.1
  done
}

ports_host_up() { # name, log, pid, [seconds]
  local name=$1 log=$2 pid=$3 secs=${4:-120}
  HOST_PORT=""
  HOST_BROKER_PORT=""
  HOST_PORT=$(ports_from_log "$log" 'SQS/SNS endpoint on http://127\.0\.0\.1:([0-9]+)' "$pid" "$secs") || return 1
  # The embedded broker's line comes before the endpoint's.
  HOST_BROKER_PORT=$(sed -nE 's|.*embedded broker on http://127\.0\.0\.1:([0-9]+).*|\1|p' "$log" | head -1)
  ports_wait "$name" "http://127.0.0.1:$HOST_PORT/healthz" "$HOST_PORT" "$pid" "$secs" || return 1
  if [ -n "$HOST_BROKER_PORT" ]; then
    ports_check "$name (embedded broker)" "$HOST_BROKER_PORT" "$pid" || return 1
  fi
  return 0
}
