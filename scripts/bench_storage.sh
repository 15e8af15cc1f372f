#!/usr/bin/env bash
# Storage benchmark: the server's save path (D2, 64 KiB blob) on PostgreSQL and on SQLite, each beside
# an anchor that writes the same 64 KiB rows to the same database engine in the same run.
#   PostgreSQL: pgbench inserting 64 KiB rows on the same cluster (goal: server >= 1.0x, issue 17; was 0.7x).
#   SQLite:     a Python sqlite3 loop inserting 64 KiB rows, WAL + synchronous=FULL (goal: server >= 1.0x).
# Prints markdown table rows (| path | value | anchor | anchor value | ratio | goal |) on stdout, everything else
# on stderr; scripts/bench_all.sh (make bench) prints the header and the rows of every bench script.
# Usage: scripts/bench_storage.sh  (after `swift build -c release`; starts a throwaway cluster unless
#        WALLETVAULT_TEST_POSTGRES_URL names one, as under scripts/with-postgres.sh)
# Env: DURATION (seconds per measurement, default 10), CONNECTIONS (default 64), USERS (default 256),
#      WV_SERVER_BINARY (default .build/release/walletvault-server; another build for paired comparisons),
#      DB_POOL (PostgreSQL connections the server gets, default CONNECTIONS: the pgbench anchor's -c, so both sides
#      write through as many database connections; the server's own default, database_pool_size, is 8;
#      DB_POOL=default passes no flag, for builds before --database-pool-size).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${WALLETVAULT_TEST_POSTGRES_URL:-}" ]; then exec scripts/with-postgres.sh "$0" "$@"; fi
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
DB_POOL=${DB_POOL:-$CONNECTIONS}
pool_args=(--database-pool-size "$DB_POOL"); [ "$DB_POOL" = default ] && pool_args=()
USERS=${USERS:-256}
BIN=${WV_SERVER_BINARY:-.build/release/walletvault-server}
PGBIN=${WALLETVAULT_TEST_PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)}
URL=$WALLETVAULT_TEST_POSTGRES_URL
work=$(mktemp -d)
server_pid=""
stop_server() { if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; fi; }
trap 'stop_server; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# A valid vault blob of exactly 65536 bytes, and the same bytes as hex for the anchors.
python3 - "$work" <<'PY'
import base64, json, os, sys
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
blob = {"v": 1, "wrappedDeks": [{"kek_id": "bench", "dek_cipher": b64(os.urandom(40))}], "cipher": "",
        "iv": b64(os.urandom(12)), "tag": b64(os.urandom(16)), "updatedUtc": "2026-08-12T19:00:00Z", "hint": "bench"}
room = 65536 - len(json.dumps(blob, separators=(",", ":")))
room -= room % 4 == 1  # unpadded base64url is never 4k+1 long; 3n bytes of it encode n*4/3 rounded up
blob["cipher"] = b64(os.urandom(room * 3 // 4))
text = json.dumps(blob, separators=(",", ":")).encode()
text += b" " * (65536 - len(text))  # trailing JSON whitespace pads to the exact size
open(f"{sys.argv[1]}/blob.json", "wb").write(text)
open(f"{sys.argv[1]}/blob.hex", "w").write(text.hex())
PY

# Starts the release server in dev mode on `database`, mints one session token per user, writes save.lua.
start_server() { # database
  local port; port=$(free_port)
  "$BIN" --dev --quiet --listen "127.0.0.1:$port" --data-dir "$work/dev" --database "$1" "${pool_args[@]}" \
    --saves-per-hour 1000000000 >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
  for _ in $(seq 100); do grep -q listening "$work/server.out" 2>/dev/null && break; sleep 0.1; done
  base="http://127.0.0.1:$port"
  python3 - "$base" "$USERS" "$work/tokens.lua" <<'PY'
import json, sys, urllib.request
base, users, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def post(path, data=b"", headers={}):
    return json.load(urllib.request.urlopen(urllib.request.Request(base + path, data=data, headers=headers, method="POST")))
tokens = []
for user in range(users):
    oidc = post("/dev-oidc/token", f"sub=bench-{user}&azp=bench-wallet".encode())["access_token"]
    tokens.append(post("/wallet-session-token.ashx", headers={"Authorization": f"Bearer {oidc}"})["access_token"])
open(out, "w").write("tokens = {" + ",".join(f'"{t}"' for t in tokens) + "}\n")
PY
  cat "$work/tokens.lua" - >"$work/save.lua" <<LUA
local requests, counter = {}, 0
-- Each user's request is built once, in init(), as wrk's SCRIPTING guide advises: copying the 64 KiB body into a
-- new request string every time cost wrk CPU on the cores the server and PostgreSQL share with it.
init = function()
  local f = io.open("$work/blob.json", "rb"); local body = f:read("*a"); f:close()
  for i, token in ipairs(tokens) do
    requests[i] = wrk.format("POST", "/wallet-backup.ashx?action=save",
      {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"}, body)
  end
end
request = function()
  counter = counter % #requests + 1
  return requests[counter]
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT %.1f %d %d\n", (summary.requests - summary.errors.status) / (summary.duration / 1e6), summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA
}

measure_server() { # -> "successful saves/s, non-2xx count, socket errors"
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" -s "$work/save.lua" "$base/wallet-backup.ashx?action=save" | awk '/^RESULT/ {print $2, $3, $4}'
}

# PostgreSQL: the server, then pgbench inserting the same bytes as a 64 KiB BYTEA row per transaction.
start_server "$URL"
read -r pg_rps pg_bad pg_err < <(measure_server)
stop_server
"$PGBIN/psql" -q "$URL" -c "CREATE TABLE bench_rows (id BIGSERIAL PRIMARY KEY, body BYTEA NOT NULL)" >&2
printf "INSERT INTO bench_rows (body) VALUES ('\\\\x%s');\n" "$(cat "$work/blob.hex")" >"$work/insert.sql"
pgbench_rps=$("$PGBIN/pgbench" -n -c "$CONNECTIONS" -j 2 -T "$DURATION" -f "$work/insert.sql" "$URL" 2>/dev/null \
  | awk '/^tps/ {print $3; exit}')
"$PGBIN/psql" -q "$URL" -c "DROP TABLE bench_rows" >&2
# For the reader, not the table: the same insert into a table whose body is stored as the server stores its bodies
# (EXTERNAL: out of line, no compression attempt), so the two rows can be compared at the same storage setting.
"$PGBIN/psql" -q "$URL" -c "CREATE TABLE bench_rows (id BIGSERIAL PRIMARY KEY, body BYTEA NOT NULL)" \
  -c "ALTER TABLE bench_rows ALTER COLUMN body SET STORAGE EXTERNAL" >&2
pgbench_external_rps=$("$PGBIN/pgbench" -n -c "$CONNECTIONS" -j 2 -T "$DURATION" -f "$work/insert.sql" "$URL" 2>/dev/null \
  | awk '/^tps/ {print $3; exit}')
"$PGBIN/psql" -q "$URL" -c "DROP TABLE bench_rows" >&2
echo "bench_storage.sh: pgbench into a STORAGE EXTERNAL table, as the server stores bodies: $pgbench_external_rps tx/s; server $pg_rps saves/s ($(awk -v a="$pg_rps" -v b="$pgbench_external_rps" 'BEGIN {printf "%.2f", a / b}')x of it)" >&2

# SQLite: the server on a fresh file, then one writer inserting the same bytes with the same durability.
start_server "sqlite:$work/vault.sqlite"
read -r sqlite_rps sqlite_bad sqlite_err < <(measure_server)
stop_server
sqlite_anchor_rps=$(python3 - "$work/anchor.sqlite" "$work/blob.json" "$DURATION" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode = WAL"); db.execute("PRAGMA synchronous = FULL")
db.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
body = open(sys.argv[2], "rb").read()
count, end = 0, time.monotonic() + float(sys.argv[3])
start = time.monotonic()
while time.monotonic() < end:
    db.execute("INSERT INTO rows (body) VALUES (?)", (body,))  # autocommit: one synced transaction per row
    count += 1
print(f"{count / (time.monotonic() - start):.1f}")
PY
)

echo "bench_storage.sh: non-2xx: PostgreSQL $pg_bad, SQLite $sqlite_bad; socket errors: PostgreSQL $pg_err, SQLite $sqlite_err" >&2
pg_version=$("$PGBIN/postgres" --version | awk '{print $3}' | cut -d. -f1)
awk -v pr="$pg_rps" -v pa="$pgbench_rps" -v sr="$sqlite_rps" -v sa="$sqlite_anchor_rps" -v c="$CONNECTIONS" -v u="$USERS" \
    -v pv="$pg_version" -v dp="$([ "$DB_POOL" = default ] && echo 8 || echo "$DB_POOL")" -v pbad="$pg_bad" -v sbad="$sqlite_bad" 'BEGIN {
  printf "| save 64 KiB (D2), PostgreSQL %s, %d connections, %d users, database pool %d | %.0f req/s%s | `pgbench -c%d` INSERT of the same 64 KiB row, same cluster | %.0f tx/s | %.2f× | ≥ 1.0× (%s) |\n", pv, c, u, dp, pr, (pbad > 0 ? sprintf(", %d non-2xx", pbad) : ""), c, pa, pr / pa, (pr / pa >= 1.0 ? "met" : "not met")
  printf "| save 64 KiB (D2), SQLite, %d connections, %d users | %.0f req/s%s | Python `sqlite3` INSERT of the same 64 KiB row, WAL, `synchronous=FULL` | %.0f rows/s | %.2f× | ≥ 1.0× (%s) |\n", c, u, sr, (sbad > 0 ? sprintf(", %d non-2xx", sbad) : ""), sa, sr / sa, (sr / sa >= 1.0 ? "met" : "not met")
}'
