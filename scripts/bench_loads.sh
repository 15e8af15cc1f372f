#!/usr/bin/env bash
# Loads (D3) when the users do not fit in the server's memory (issue 19), each row beside its anchor from the same run:
#   SQLite:     LOAD_USERS (default 20 000) users with a 64 KiB blob each, every request a random user's session token
#               (a wrk Lua script), beside nginx (2 workers, sendfile) serving the same blobs as LOAD_USERS distinct
#               files, every request a random file. Goal: >= 1.0x, p99 <= 10 ms.
#               LOAD_CURVE (e.g. "500 2000") adds rows for random users among the first 500, 2 000, ... of the same
#               data set, each beside nginx picking among the same number of files.
#   PostgreSQL: the same number of users saved on a throwaway cluster, beside pgbench running the server's own load
#               SELECT for a random user (custom script, -M prepared, same cluster). Goal: >= 0.8x. The node runs
#               with its body cache (body_cache_directory; PG_BODY_CACHE_BYTES, default 1 GiB, the server's default)
#               unless PG_BODY_CACHE=off.
# Every blob goes through the real save endpoint (D2; scripts/bench_populate.py). Both sides of every row get a warm-up
# pass first (WARMUP seconds, default 5: wrk walks every token or file in order, pgbench runs its script), so files,
# database and the server's caches are warm. The server's resident memory after its SQLite runs is in the row.
# Prints markdown table rows (| path | value | anchor | anchor value | ratio | goal |) on stdout, everything else on
# stderr; scripts/bench_all.sh (make bench) prints the header and the rows of every bench script.
# Usage: scripts/bench_loads.sh   (after `swift build -c release`; starts a throwaway PostgreSQL cluster unless
#        WALLETVAULT_TEST_POSTGRES_URL names one, as under scripts/with-postgres.sh)
# Env: DURATION (seconds per measurement, default 10), CONNECTIONS (default 64), LOAD_USERS (20000), LOAD_CURVE (""),
#      WARMUP (5), LOAD_DATABASES ("sqlite postgres"), WV_SERVER_BINARY (default .build/release/walletvault-server),
#      PG_BODY_CACHE (on), PG_BODY_CACHE_BYTES (1073741824).
set -euo pipefail
cd "$(dirname "$0")/.."
DATABASES=${LOAD_DATABASES:-sqlite postgres}
if [[ " $DATABASES " == *" postgres "* && -z "${WALLETVAULT_TEST_POSTGRES_URL:-}" ]]; then exec scripts/with-postgres.sh "$0" "$@"; fi
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
USERS=${LOAD_USERS:-20000}
CURVE=${LOAD_CURVE:-}
WARMUP=${WARMUP:-5}
BIN=${WV_SERVER_BINARY:-.build/release/walletvault-server}
work=$(mktemp -d)
server_pid=""; nginx_pid=""
stop_server() { if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; fi; }
cleanup() {
  stop_server
  if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
source scripts/bench_common.sh
load_average() { cut -d' ' -f1-3 /proc/loadavg; }

start_server() { # database [server options...]
  start_dev_server "$work/dev" --database "$1" --saves-per-hour 1000000000 "${@:2}"
}

# wrk scripts. done() prints: successful requests/s (non-2xx/3xx excluded), p99 ms, non-2xx/3xx count, socket errors.
# Each thread seeds its own random sequence; `warm` walks every item in order instead (threads interleaved).
write_done_lua "$work/done.lua"
# What the server's and nginx's scripts share: each request is built once, in init() (their prepare(), which
# write_done_lua's init calls), and request() hands out the next one of a warm walk or a random one.
cat >"$work/pick.lua" <<'LUA'
requests = {}
request = function()
  if mode == "warm" then counter = counter + 2; return requests[counter % n + 1] end
  return requests[math.random(n)]
end
LUA
server_lua() { # users mode(random|warm) -> script path
  local script="$work/server-$1-$2.lua"
  { cat "$work/tokens.lua"; echo "local n, mode = $1, \"$2\""; cat <<'LUA'
prepare = function()
  for i = 1, n do requests[i] = wrk.format("GET", "/wallet-backup.ashx?action=load", {["Authorization"] = "Bearer " .. tokens[i]}) end
end
LUA
    cat "$work/pick.lua" "$work/done.lua"; } >"$script"
  echo "$script"
}
nginx_lua() { # files mode -> script path
  local script="$work/nginx-$1-$2.lua"
  { echo "local n, mode = $1, \"$2\""; cat <<'LUA'
prepare = function()
  for i = 1, n do requests[i] = wrk.format("GET", "/" .. (i - 1) .. ".json") end
end
LUA
    cat "$work/pick.lua" "$work/done.lua"; } >"$script"
  echo "$script"
}
# CPU time (user + system, clock ticks) of processes, and per request: on a shared machine the CPU a request costs
# moves much less than requests per second do.
cpu_ticks() { local total=0 pid; for pid in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$total"; }
cpu_us() { awk -v t="$1" -v r="$2" -v d="$DURATION" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (r > 0 ? t * 1e6 / hz / (r * d) : 0) }'; }
# Session tokens last ten minutes: mint new ones (from the kept access tokens) once those in hand are five minutes old,
# so a large data set's saves, or a long curve, never measure expired tokens (401s).
fresh_tokens() {
  if [ $(($(date +%s) - minted_at)) -gt 300 ]; then
    minted_at=$(date +%s)
    python3 scripts/bench_populate.py "$base" "$USERS" "$work" --tokens-only
  fi
}
fmt_users() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/ &/;ta'; }  # 20000 -> "20 000"

if [[ " $DATABASES " == *" sqlite "* ]]; then
  start_server "sqlite:$work/dev/vault.sqlite"
  echo "bench_loads.sh: saving $USERS users through D2 (SQLite), load average $(load_average)" >&2
  minted_at=$(date +%s)
  python3 scripts/bench_populate.py "$base" "$USERS" "$work" --files
  chmod 755 "$work" "$work/files"
  start_nginx "$work/files" on
  measure "$nginx_base/" "$(nginx_lua "$USERS" warm)" "$WARMUP" >/dev/null
  fresh_tokens
  measure "$base/" "$(server_lua "$USERS" warm)" "$WARMUP" >/dev/null
  for n in $CURVE "$USERS"; do
    [ "$n" -le "$USERS" ] || continue
    fresh_tokens
    started_load=$(load_average)
    nginx_workers=$(pgrep -P "$nginx_pid" | tr '\n' ' ')
    # shellcheck disable=SC2086
    ticks=$(cpu_ticks $nginx_workers)
    read -r nginx_rps nginx_p99 nginx_bad nginx_err < <(measure "$nginx_base/" "$(nginx_lua "$n" random)" "$DURATION")
    # shellcheck disable=SC2086
    nginx_cpu=$(cpu_us $(($(cpu_ticks $nginx_workers) - ticks)) "$nginx_rps")
    ticks=$(cpu_ticks "$server_pid")
    read -r load_rps load_p99 load_bad load_err < <(measure "$base/" "$(server_lua "$n" random)" "$DURATION")
    load_cpu=$(cpu_us $(($(cpu_ticks "$server_pid") - ticks)) "$load_rps")
    rss_kib=$(awk '/^VmRSS/ {print $2}' "/proc/$server_pid/status")
    hwm_kib=$(awk '/^VmHWM/ {print $2}' "/proc/$server_pid/status")
    echo "bench_loads.sh: SQLite $n users: server $load_rps req/s p99 $load_p99 ms, $load_cpu µs CPU/req (non-2xx $load_bad, socket errors $load_err)," \
      "nginx $nginx_rps req/s p99 $nginx_p99 ms, $nginx_cpu µs CPU/req (non-2xx $nginx_bad, socket errors $nginx_err); server RSS $((rss_kib / 1024)) MiB" \
      "(peak $((hwm_kib / 1024)) MiB); load average $started_load before, $(load_average) after" >&2
    awk -v lr="$load_rps" -v lp="$load_p99" -v nr="$nginx_rps" -v np="$nginx_p99" -v c="$CONNECTIONS" -v u="$(fmt_users "$n")" \
        -v lbad="$load_bad" -v rss="$((rss_kib / 1024))" 'BEGIN {
      met = (lr / nr >= 1.0 && lp <= 10 && lbad == 0) ? "met" : "not met"
      printf "| load 64 KiB (D3), SQLite, %d connections, %s users, random | %.0f req/s, p99 %.1f ms%s, RSS %d MiB after | nginx serving %s distinct 64 KiB files at random (sendfile; p99 %.1f ms) | %.0f req/s | %.2f× | ≥ 1.0×, p99 ≤ 10 ms (%s) |\n", c, u, lr, lp, (lbad > 0 ? sprintf(", %d non-2xx", lbad) : ""), rss, u, np, nr, lr / nr, met
    }'
  done
  stop_server
  kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=""
  rm -rf "$work/files" "$work/dev"
fi

if [[ " $DATABASES " == *" postgres "* ]]; then
  URL=$WALLETVAULT_TEST_POSTGRES_URL
  PGBIN=${WALLETVAULT_TEST_PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)}
  cache_bytes=${PG_BODY_CACHE_BYTES:-1073741824}
  cache_args=(--body-cache-directory "$work/body-cache" --body-cache-bytes "$cache_bytes")
  cache_label="node body cache $((cache_bytes >> 20)) MiB"
  [ "${PG_BODY_CACHE:-on}" = off ] && { cache_args=(); cache_label="no body cache"; }
  start_server "$URL" "${cache_args[@]}"
  echo "bench_loads.sh: saving $USERS users through D2 (PostgreSQL), load average $(load_average)" >&2
  minted_at=$(date +%s)
  python3 scripts/bench_populate.py "$base" "$USERS" "$work"
  # pgbench picks a user by number; this table numbers the stored users' keys (a primary-key lookup inside the query).
  "$PGBIN/psql" -q "$URL" >&2 <<'SQL'
CREATE TABLE bench_keys AS SELECT (row_number() OVER (ORDER BY storage_key))::INT AS id, storage_key FROM vault_users;
ALTER TABLE bench_keys ADD PRIMARY KEY (id);
ANALYZE;
SQL
  cat >"$work/load.sql" <<SQL
\\set u random(1, $USERS)
SELECT sync_ms, updated_utc, hint, body FROM vault_versions WHERE storage_key = (SELECT storage_key FROM bench_keys WHERE id = :u) ORDER BY sync_ms DESC LIMIT 1;
SQL
  pgbench() { "$PGBIN/pgbench" -n -M prepared -c "$CONNECTIONS" -j 2 -T "$1" -f "$work/load.sql" "$URL" 2>/dev/null | awk '/^tps/ {print $3; exit}'; }
  pgbench "$WARMUP" >/dev/null
  fresh_tokens
  # The warm pass walks the users in order; with the body cache it must last until the cache is full (20 000 users
  # of 64 KiB fill 1 GiB in about 15 s here), or the measurement would include the filling.
  pg_warmup=$WARMUP; [ "${PG_BODY_CACHE:-on}" = off ] || pg_warmup=${PG_CACHE_WARMUP:-25}
  measure "$base/" "$(server_lua "$USERS" warm)" "$pg_warmup" >/dev/null
  started_load=$(load_average)
  ticks=$(cpu_ticks "$server_pid")
  read -r pg_rps pg_p99 pg_bad pg_err < <(measure "$base/" "$(server_lua "$USERS" random)" "$DURATION")
  pg_cpu=$(cpu_us $(($(cpu_ticks "$server_pid") - ticks)) "$pg_rps")
  pgbench_tps=$(pgbench "$DURATION")
  rss_kib=$(awk '/^VmRSS/ {print $2}' "/proc/$server_pid/status")
  echo "bench_loads.sh: PostgreSQL $USERS users: server $pg_rps req/s p99 $pg_p99 ms, $pg_cpu µs server CPU/req (non-2xx $pg_bad, socket errors $pg_err)," \
    "pgbench $pgbench_tps tx/s; server RSS $((rss_kib / 1024)) MiB; load average $started_load before, $(load_average) after" >&2
  stop_server
  pg_version=$("$PGBIN/postgres" --version | awk '{print $3}' | cut -d. -f1)
  awk -v pr="$pg_rps" -v pp="$pg_p99" -v pa="$pgbench_tps" -v c="$CONNECTIONS" -v u="$(fmt_users "$USERS")" -v pv="$pg_version" \
      -v pbad="$pg_bad" -v cl="$cache_label" 'BEGIN {
    printf "| load 64 KiB (D3), PostgreSQL %s, %d connections, %s users, random, %s | %.0f req/s, p99 %.1f ms%s | `pgbench -c%d -M prepared` running the server'"'"'s load SELECT for a random user, same cluster | %.0f tx/s | %.2f× | ≥ 0.8× (%s) |\n", pv, c, u, cl, pr, pp, (pbad > 0 ? sprintf(", %d non-2xx", pbad) : ""), c, pa, pr / pa, (pr / pa >= 0.8 && pbad == 0 ? "met" : "not met")
  }'
fi
