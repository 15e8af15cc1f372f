#!/usr/bin/env bash
# Benchmarks the release server beside its anchors, in one run on this machine.
# Usage: make bench   (or scripts/bench.sh after `swift build -c release`)
# Env: DURATION (seconds per measurement, default 10), CONNECTIONS (default 64).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
BIN=.build/release/walletvault-server
work=$(mktemp -d)
server_pid=""; nginx_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# The 64 KiB blob: a valid vault whose cipher fills the size.
python3 - "$work/blob.json" <<'PY'
import base64, json, os, sys
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
blob = {"v": 1, "wrappedDeks": [{"kek_id": "bench", "dek_cipher": b64(os.urandom(40))}],
        "cipher": "", "iv": b64(os.urandom(12)), "tag": b64(os.urandom(16)),
        "updatedUtc": "2026-08-12T19:00:00Z", "hint": "bench"}
base = len(json.dumps(blob, separators=(",", ":")))
blob["cipher"] = b64(os.urandom((65536 - base) * 3 // 4))[: 65536 - base]
text = json.dumps(blob, separators=(",", ":"))
blob["cipher"] = blob["cipher"][: len(blob["cipher"]) - (len(text) - 65536)]
while len(blob["cipher"]) % 4 == 1: blob["cipher"] = blob["cipher"][:-1]
open(sys.argv[1], "w").write(json.dumps(blob, separators=(",", ":")))
PY
cp "$work/blob.json" "$work/static.json"
chmod 755 "$work"; chmod 644 "$work/static.json"

port=$(free_port)
"$BIN" --dev --quiet --listen "127.0.0.1:$port" --data-dir "$work/data" --saves-per-hour 100000000 >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 50); do grep -q listening "$work/server.out" 2>/dev/null && break; sleep 0.1; done
base="http://127.0.0.1:$port"
oidc=$(curl -sf -X POST "$base/dev-oidc/token" -d sub=bench -d azp=bench-wallet | python3 -c 'import sys,json;print(json.load(sys.stdin)["access_token"])')
session=$(curl -sf -X POST "$base/wallet-session-token.ashx" -H "Authorization: Bearer $oidc" | python3 -c 'import sys,json;print(json.load(sys.stdin)["access_token"])')
curl -sf -X POST "$base/wallet-backup.ashx?action=save" -H "Authorization: Bearer $session" -H 'Content-Type: application/json' --data-binary @"$work/blob.json" >/dev/null

nginx_port=$(free_port)
cat >"$work/nginx.conf" <<NGINX
worker_processes 2;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  server { listen 127.0.0.1:$nginx_port; root $work; location / { default_type application/json; } }
}
NGINX
nginx -c "$work/nginx.conf" &
nginx_pid=$!
sleep 0.5

cat >"$work/save.lua" <<LUA
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer $session"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$work/blob.json", "rb"); wrk.body = f:read("*a"); f:close()
LUA
cat >"$work/load.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $session"
LUA
cat >>"$work/save.lua" <<'LUA'
done = function(summary, latency, requests)
  io.write(string.format("RESULT %.1f %.3f %d %d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(99) / 1000, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA
grep -A5 '^done' "$work/save.lua" >>"$work/load.lua"
cp "$work/load.lua" "$work/static.lua"; sed -i '1d' "$work/static.lua"

measure() { # name url script
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" -s "$3" "$2" | awk '/^RESULT/ {print $2, $3, $4, $5}'
}
read -r nginx_rps nginx_p99 nginx_bad nginx_err < <(measure nginx "http://127.0.0.1:$nginx_port/static.json" "$work/static.lua")
read -r load_rps load_p99 load_bad load_err < <(measure load "$base/wallet-backup.ashx?action=load" "$work/load.lua")
read -r save_rps save_p99 save_bad save_err < <(measure save "$base/wallet-backup.ashx?action=save" "$work/save.lua")

echo
echo "WalletVault benchmark — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, wrk -t2 -c$CONNECTIONS -d${DURATION}s, 64 KiB blob"
printf '| %-26s | %12s | %9s | %-28s | %12s | %7s | %-24s |\n' path "req/s" "p99 ms" anchor "anchor req/s" ratio goal
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..28})" "$(printf -- '-%.0s' {1..14})" "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..30})" "$(printf -- '-%.0s' {1..14})" "$(printf -- '-%.0s' {1..9})" "$(printf -- '-%.0s' {1..26})"
ratio() { python3 -c "print(f'{$1/$2:.2f}x')"; }
printf '| %-26s | %12s | %9s | %-28s | %12s | %7s | %-24s |\n' "load 64 KiB (D3)" "$load_rps" "$load_p99" "nginx static 64 KiB (p99 $nginx_p99 ms)" "$nginx_rps" "$(ratio "$load_rps" "$nginx_rps")" ">= 1.0x, p99 <= 10 ms"
printf '| %-26s | %12s | %9s | %-28s | %12s | %7s | %-24s |\n' "save 64 KiB (D2, fsync)" "$save_rps" "$save_p99" "nginx static 64 KiB" "$nginx_rps" "$(ratio "$save_rps" "$nginx_rps")" "(reported)"
echo "non-2xx: load $load_bad, save $save_bad, nginx $nginx_bad; socket errors: load $load_err, save $save_err, nginx $nginx_err"
