#!/usr/bin/env bash
# Loads (D3) over direct TLS (issue 31). libmicrohttpd cannot `sendfile` under TLS: a body kept in a file is read
# into its buffer and encrypted there. This measures what that path costs: LOAD_USERS users saved through a plain
# --dev server, then the same data served by a TLS server (a config with a `tls` section, a throwaway ECDSA P-256
# certificate), and wrk loading a random user's blob over https, beside the same server's plain-HTTP loads of the
# same users (the --dev server restarted on the same data). Prints, on stderr and stdout, requests/s, p99 and the
# server's CPU per request for both.
# Usage: scripts/bench_tls_loads.sh   (after `swift build -c release`)
# Env: LOAD_USERS (default 2000), DURATION (10), CONNECTIONS (64), WARMUP (5), WV_SERVER_BINARY
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
USERS=${LOAD_USERS:-2000}
WARMUP=${WARMUP:-5}
BIN=${WV_SERVER_BINARY:-.build/release/walletvault-server}
work=$(mktemp -d)
server_pid=""
stop_server() { if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; fi; }
trap 'stop_server; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
source scripts/bench_common.sh
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
cpu_us() { awk -v t="$1" -v r="$2" -v d="$DURATION" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (r > 0 ? t * 1e6 / hz / (r * d) : 0) }'; }

write_done_lua "$work/done.lua"

start_dev_server "$work/dev" --saves-per-hour 1000000000
echo "bench_tls_loads.sh: saving $USERS users through D2 (SQLite), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 scripts/bench_populate.py "$base" "$USERS" "$work"
write_random_load_lua "$work/load.lua" "$USERS"

row() { # scheme url -> prints one line
  measure "$2/" "$work/load.lua" "$WARMUP" >/dev/null
  local ticks rps p99 bad err
  ticks=$(cpu_ticks "$server_pid")
  read -r rps p99 bad err < <(measure "$2/" "$work/load.lua" "$DURATION")
  echo "bench_tls_loads.sh: $1 $USERS users: $rps req/s p99 $p99 ms, $(cpu_us $(($(cpu_ticks "$server_pid") - ticks)) "$rps") µs CPU/req (non-2xx $bad, socket errors $err)"
}
# Plain HTTP on the same data, after a restart: the blob cache then holds none of it, as under TLS below.
stop_server
start_dev_server "$work/dev" --saves-per-hour 1000000000
row http "$base"
stop_server

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
  -days 1 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
port=$(free_port)
# The session tokens name the development issuer they were minted from (`oidc_iss`) and the --dev server's session
# issuer: the TLS server must know both to accept them.
oidc_iss=$(python3 - "$work/tokens.lua" <<'PY'
import base64, json, re, sys
token = re.search(r'"([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)"', open(sys.argv[1]).read()).group(1)
payload = token.split(".")[1]
print(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["oidc_iss"])
PY
)
cat >"$work/tls.json" <<JSON
{ "listen": "127.0.0.1:$port",
  "database": "sqlite:$work/dev/vault.sqlite",
  "issuers": [ { "issuer": "$oidc_iss", "jwks_uri": "https://idp.invalid/jwks.json", "audiences": ["wallet-app"] } ],
  "session_issuer": "walletvault-dev",
  "session_keys_file": "$work/dev/session-keys.json",
  "storage_key_pepper_file": "$work/dev/storage-key-pepper",
  "limits": { "max_connections_per_ip": 0 },
  "tls": { "certificate_file": "$work/cert.pem", "key_file": "$work/key.pem" } }
JSON
"$BIN" --config "$work/tls.json" --quiet >"$work/tls.out" 2>"$work/tls.err" &
server_pid=$!
for _ in $(seq 100); do grep -q listening "$work/tls.out" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$work/tls.out" || { echo "bench_tls_loads.sh: the TLS server did not start" >&2; cat "$work/tls.err" >&2; exit 1; }
row https "https://127.0.0.1:$port"
