#!/usr/bin/env bash
# Paired missed loads of two or more server builds on one data set (issue 31): LOAD_USERS (default 20 000) users
# with a 64 KiB blob each are saved once through D2; then, ROUNDS times (default 4), each build in turn is started on
# that data (so its blob cache is empty and every load is a miss), session tokens are minted, wrk warms up for WARMUP
# seconds and then loads random users for DURATION seconds. Prints one line per run: build, loads/s, p99 ms, and the
# server's CPU (user + system) per load in µs, the figure that moves least on a shared machine, and its threads'
# context switches per load, voluntary and involuntary (a thread preempted by wrk on the shared cores counts as one).
# Usage: scripts/bench_load_pairs.sh BINARY...   (e.g. two copies of .build/release/walletvault-server)
# Env: LOAD_USERS (20000), ROUNDS (4), DURATION (10), WARMUP (4), CONNECTIONS (64).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 BINARY..." >&2; exit 2; }
USERS=${LOAD_USERS:-20000}
ROUNDS=${ROUNDS:-4}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-4}
CONNECTIONS=${CONNECTIONS:-64}
work=$(mktemp -d)
server_pid=""; nginx_pid=""
stop_server() { if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; fi; }
trap 'stop_server; rm -rf "$work"' EXIT
source scripts/bench_common.sh
write_done_lua "$work/done.lua"
switches() { # -> "voluntary involuntary" summed over the server's threads
  cat /proc/"$server_pid"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt/ { v += $2 } /^nonvoluntary_ctxt/ { n += $2 } END { print v, n }'
}
start() { BIN=$1 start_dev_server "$work/dev" --database "sqlite:$work/dev/vault.sqlite" --saves-per-hour 1000000000; }

start "$1"
python3 scripts/bench_populate.py "$base" "$USERS" "$work" >&2
for round in $(seq "$ROUNDS"); do
  for binary in "$@"; do
    stop_server
    start "$binary"
    python3 scripts/bench_populate.py "$base" "$USERS" "$work" --tokens-only >&2
    write_random_load_lua "$work/load.lua" "$USERS"
    measure "$base/" "$work/load.lua" "$WARMUP" >/dev/null
    before=$(awk '{print $14 + $15}' "/proc/$server_pid/stat")
    read -r voluntary0 involuntary0 < <(switches)
    read -r rps p99 bad errors < <(measure "$base/" "$work/load.lua" "$DURATION")
    after=$(awk '{print $14 + $15}' "/proc/$server_pid/stat")
    read -r voluntary1 involuntary1 < <(switches)
    awk -v b="$binary" -v r="$rps" -v p="$p99" -v t=$((after - before)) -v d="$DURATION" -v hz="$(getconf CLK_TCK)" \
      -v bad="$bad" -v e="$errors" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
      -v sv=$((voluntary1 - voluntary0)) -v si=$((involuntary1 - involuntary0)) \
      'BEGIN { n = r * d; printf "%s round '"$round"': %.0f loads/s, p99 %.1f ms, %.1f µs CPU/load, %.2f + %.2f switches/load (non-2xx %d, socket errors %d, load average %s)\n", b, r, p, t * 1e6 / hz / n, sv / n, si / n, bad, e, l }'
  done
done
