#!/usr/bin/env bash
# One user's 64 KiB load three ways, CPU per load (docs/PERFORMANCE.md, "Session of 2026-12-03 (second)"): the server
# that saved the user (a blob-cache hit, sent from memory), the same server restarted on the same files (every load a
# miss, sent from its body file with sendfile), and nginx serving that blob as a file. ROUNDS times (default 3), each
# for DURATION seconds (default 6) after a 2 s warm-up, with wrk -t2 -c CONNECTIONS (default 64). Prints one line per
# pass: what was loaded, loads/s, p99 ms, CPU (user + system) per load in µs, and for the server its threads'
# voluntary and involuntary context switches per load.
# Usage: scripts/bench_one_user_paths.sh   (after `swift build -c release`)
# Env: ROUNDS, DURATION, CONNECTIONS, SENDFILE (nginx's sendfile, on|off, default off as in bench.sh's anchor),
#      WV_SERVER_BINARY (default .build/release/walletvault-server).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6}
CONNECTIONS=${CONNECTIONS:-64}
SENDFILE=${SENDFILE:-off}
BIN=${WV_SERVER_BINARY:-.build/release/walletvault-server}
work=$(mktemp -d)
server_pid=""; nginx_pid=""
stop_server() { if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; fi; }
trap 'stop_server; [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null; rm -rf "$work"' EXIT
source scripts/bench_common.sh

cpu_ticks() { local total=0 pid; for pid in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$total"; }
switches() { cat /proc/"$1"/task/*/status | awk '/^voluntary_ctxt_switches/ {v += $2} /^nonvoluntary_ctxt_switches/ {n += $2} END {print v, n}'; }
# pass label url script pids...: one measured pass and its line
pass() {
  local label=$1 url=$2 script=$3 before after rps p99 bad err v0 n0 v1 n1 extra=""
  shift 3
  measure "$url" "$script" 2 >/dev/null
  before=$(cpu_ticks "$@"); read -r v0 n0 < <(switches "$1")
  read -r rps p99 bad err < <(measure "$url" "$script" "$DURATION")
  after=$(cpu_ticks "$@"); read -r v1 n1 < <(switches "$1")
  [ "$label" = nginx ] || extra=$(awk -v v=$((v1 - v0)) -v n=$((n1 - n0)) -v r="$rps" -v d="$DURATION" \
    'BEGIN { printf ", %.2f voluntary and %.2f involuntary switches per load", v / (r * d), n / (r * d) }')
  awk -v l="$label" -v r="$rps" -v p="$p99" -v t=$((after - before)) -v d="$DURATION" -v bad="$bad" -v x="$extra" \
    -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%s: %.0f loads/s, p99 %.1f ms, %.1f µs CPU per load (non-2xx %d)%s\n", l, r, p, t * 1e6 / hz / (r * d), bad, x }'
}

chmod 755 "$work"
start_dev_server "$work/dev" --database "sqlite:$work/dev/vault.sqlite"
python3 scripts/bench_populate.py "$base" 1 "$work" --files >/dev/null
write_done_lua "$work/done.lua"; write_random_load_lua "$work/load.lua" 1
mkdir -p "$work/www"; cp "$work/files/0.json" "$work/www/blob.json"
start_nginx "$work/www" "$SENDFILE"
cp "$work/done.lua" "$work/nginx.lua"
workers=$(pgrep -P "$nginx_pid" | tr '\n' ' ')
for round in $(seq "$ROUNDS"); do
  # The server that saves the user holds it in its blob cache; one started on the same files holds nothing.
  stop_server; start_dev_server "$work/dev" --database "sqlite:$work/dev/vault.sqlite"
  python3 scripts/bench_populate.py "$base" 1 "$work" >/dev/null
  pass "round $round, from memory" "$base/" "$work/load.lua" "$server_pid"
  stop_server; start_dev_server "$work/dev" --database "sqlite:$work/dev/vault.sqlite"
  pass "round $round, from its file" "$base/" "$work/load.lua" "$server_pid"
  # shellcheck disable=SC2086
  pass nginx "$nginx_base/blob.json" "$work/nginx.lua" $workers
done
