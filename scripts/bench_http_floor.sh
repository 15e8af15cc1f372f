#!/usr/bin/env bash
# The floor under the load rows (issues 30 and 31): walletvault-server, a libmicrohttpd server that does nothing but
# answer (scripts/mhd_floor.c: the same daemon flags and limits, no session check, no storage), and nginx, in the same
# minutes, on the same blobs. Two loads, ROUNDS times (default 3), each pass DURATION seconds (default 6) at random
# users after a warm-up of WARMUP seconds (default 5) walking every user in order, wrk -t2 -c CONNECTIONS (default 64):
#   one user   the server's blob-cache hit, the floor from one buffer, nginx with sendfile off (bench.sh's anchor)
#   many users LOAD_USERS (default 20 000) users at random: the server's missed loads from body files, the floor
#              opening each file and sending it with sendfile, nginx with sendfile on (bench_loads.sh's anchor)
# The floor and nginx get the server's request shapes: the same URL length does not matter to them, but each request
# carries the user's real session token as the server's do, so every side reads as many request bytes.
# Prints one line per pass: what, loads/s, p99 ms, CPU (user + system) per load in µs and its user-space part.
# Usage: swift build -c release && scripts/bench_http_floor.sh
# Env: ROUNDS, DURATION, WARMUP, CONNECTIONS, LOAD_USERS, WV_SERVER_BINARY (default .build/release/walletvault-server).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6}
WARMUP=${WARMUP:-5}
CONNECTIONS=${CONNECTIONS:-64}
USERS=${LOAD_USERS:-20000}
BIN=${WV_SERVER_BINARY:-.build/release/walletvault-server}
work=$(mktemp -d)
server_pid=""; nginx_pid=""; floor_pid=""; nginx_pids=""
stop_server() { if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; fi; }
stop_floor() { if [ -n "$floor_pid" ]; then kill "$floor_pid" 2>/dev/null || true; wait "$floor_pid" 2>/dev/null || true; floor_pid=""; fi; }
# shellcheck disable=SC2086
trap 'stop_server; stop_floor; [ -n "$nginx_pids" ] && kill $nginx_pids 2>/dev/null; rm -rf "$work"' EXIT
source scripts/bench_common.sh
cc -O2 -o "$work/mhd_floor" scripts/mhd_floor.c -lmicrohttpd

start_server() { start_dev_server "$work/dev" --database "sqlite:$work/dev/vault.sqlite" --saves-per-hour 1000000000; }
start_floor() { # mode path -> sets floor_pid and floor_base
  local port
  port=$(free_port)
  "$work/mhd_floor" "$port" "$1" "$2" >"$work/floor.out" &
  floor_pid=$!
  for _ in $(seq 50); do grep -q listening "$work/floor.out" 2>/dev/null && break; sleep 0.1; done
  floor_base="http://127.0.0.1:$port"
}
cpu_ticks() { # pids... -> "user system" clock ticks summed
  local pid user=0 system=0 u s
  for pid in "$@"; do read -r u s < <(awk '{print $14, $15}' "/proc/$pid/stat"); user=$((user + u)); system=$((system + s)); done
  echo "$user $system"
}
load_lua() { # file users kind(server|files) mode(random|warm) -> requests for random users (or, warm, every user
  # in order, threads interleaved, as bench_loads.sh's warm-up walks them), each with the user's session token: the
  # server's load, or /<i>.json for the floor and nginx
  local target='"/wallet-backup.ashx?action=load"'
  [ "$3" = server ] || target='"/" .. (i - 1) .. ".json"'
  { cat "$work/tokens.lua"; echo "local n, mode = $2, \"$4\""; cat <<LUA
local requests = {}
prepare = function()
  for i = 1, n do requests[i] = wrk.format("GET", $target, {["Authorization"] = "Bearer " .. tokens[i]}) end
end
LUA
    cat <<'LUA'
request = function()
  if mode == "warm" then counter = counter + 2; return requests[counter % n + 1] end
  return requests[math.random(n)]
end
LUA
    cat "$work/done.lua"; } >"$1"
}
pass() { # label users kind url pids... : a warm walk of every user, then the measured pass at random users
  local label=$1 users=$2 kind=$3 url=$4 u0 s0 u1 s1 rps p99 bad err
  shift 4
  load_lua "$work/warm.lua" "$users" "$kind" warm; load_lua "$work/random.lua" "$users" "$kind" random
  measure "$url" "$work/warm.lua" "$WARMUP" >/dev/null
  read -r u0 s0 < <(cpu_ticks "$@")
  read -r rps p99 bad err < <(measure "$url" "$work/random.lua" "$DURATION")
  read -r u1 s1 < <(cpu_ticks "$@")
  awk -v l="$label" -v r="$rps" -v p="$p99" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v d="$DURATION" -v bad="$bad" \
    -v e="$err" -v hz="$(getconf CLK_TCK)" 'BEGIN { n = r * d; printf "%s: %.0f loads/s, p99 %.1f ms, %.1f µs CPU per load (%.1f user; non-2xx %d, socket errors %d)\n", l, r, p, (u + s) * 1e6 / hz / n, u * 1e6 / hz / n, bad, e }'
}

chmod 755 "$work"
write_done_lua "$work/done.lua"
start_server
python3 scripts/bench_populate.py "$base" "$USERS" "$work" --files >&2
start_nginx "$work/files" off; nginx_off=$nginx_base; nginx_off_pids=$(pgrep -P "$nginx_pid" | tr '\n' ' ')
nginx_pids="$nginx_pid"
start_nginx "$work/files" on; nginx_on=$nginx_base; nginx_on_pids=$(pgrep -P "$nginx_pid" | tr '\n' ' ')
nginx_pids="$nginx_pids $nginx_pid"
for round in $(seq "$ROUNDS"); do
  # One user: a server that has just saved user 0 holds it in its blob cache.
  stop_server; start_server
  python3 scripts/bench_populate.py "$base" 1 "$work" >/dev/null
  pass "round $round, one user, server from memory" 1 server "$base/" "$server_pid"
  start_floor memory "$work/files/0.json"
  pass "round $round, one user, floor from memory" 1 files "$floor_base/" "$floor_pid"
  stop_floor
  # shellcheck disable=SC2086
  pass "round $round, one user, nginx sendfile off" 1 files "$nginx_off/" $nginx_off_pids
  # Many users: a server started on the data set holds none of it in its blob cache.
  stop_server; start_server
  python3 scripts/bench_populate.py "$base" "$USERS" "$work" --tokens-only >/dev/null
  pass "round $round, $USERS users, server from body files" "$USERS" server "$base/" "$server_pid"
  start_floor files "$work/files"
  pass "round $round, $USERS users, floor from files" "$USERS" files "$floor_base/" "$floor_pid"
  stop_floor
  # shellcheck disable=SC2086
  pass "round $round, $USERS users, nginx sendfile on" "$USERS" files "$nginx_on/" $nginx_on_pids
done
