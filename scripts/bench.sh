#!/usr/bin/env bash
# HTTP benchmark of the release server (--dev, SQLite), each path beside its anchor measured in the same run:
#   load (D3) of a 64 KiB blob  vs  nginx serving the same 64 KiB file (goal: >= 1.0x, p99 <= 10 ms);
#   D1 mint (RS256 access token in, session token out)  vs  `openssl speed rsa2048` RS256-size verifications/s
#   (goal, issue 17: >= 0.5x, p99 <= 10 ms).
# Prints markdown table rows (| path | value | anchor | anchor value | ratio | goal |) on stdout, everything else
# on stderr; scripts/bench_all.sh (make bench) prints the header and the rows of every bench script.
# Usage: scripts/bench.sh   (after `swift build -c release`)
# Env: DURATION (seconds per measurement, default 10), CONNECTIONS (default 64), MINT_USERS (default 256),
#      LOAD_ROUNDS (alternating rounds of the load and nginx, default 3; medians, see measure_alternating),
#      WV_SERVER_BINARY (default .build/release/walletvault-server; another build for paired comparisons).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
MINT_USERS=${MINT_USERS:-256}
LOAD_ROUNDS=${LOAD_ROUNDS:-3}
BIN=${WV_SERVER_BINARY:-.build/release/walletvault-server}
work=$(mktemp -d)
server_pid=""; nginx_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
source scripts/bench_common.sh

write_sample_blob "$work/blob.json"
cp "$work/blob.json" "$work/static.json"
chmod 755 "$work"; chmod 644 "$work/static.json"

start_dev_server "$work/data" --saves-per-hour 100000000
oidc=$(curl -sf -X POST "$base/dev-oidc/token" -d sub=bench -d azp=bench-wallet | python3 -c 'import sys,json;print(json.load(sys.stdin)["access_token"])')
session=$(curl -sf -X POST "$base/wallet-session-token.ashx" -H "Authorization: Bearer $oidc" | python3 -c 'import sys,json;print(json.load(sys.stdin)["access_token"])')
curl -sf -X POST "$base/wallet-backup.ashx?action=save" -H "Authorization: Bearer $session" -H 'Content-Type: application/json' --data-binary @"$work/blob.json" >/dev/null

# D1: one RS256 access token per user from the development issuer (RSA 2048, verified against its fixed JWKS; the
# server keeps no cache of verified access tokens, so every request verifies one signature and mints one token).
python3 - "$base" "$MINT_USERS" "$work/mint-tokens.lua" <<'PY'
import json, sys, urllib.request
base, users, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
tokens = []
for user in range(users):
    request = urllib.request.Request(base + "/dev-oidc/token", data=f"sub=mint-{user}&azp=bench-wallet".encode(), method="POST")
    tokens.append(json.load(urllib.request.urlopen(request))["access_token"])
open(out, "w").write("tokens = {" + ",".join(f'"{t}"' for t in tokens) + "}\n")
PY

# nginx's default, sendfile off, as this anchor has always been measured.
start_nginx "$work" off

wrk_done_lua >"$work/done.lua"
cat "$work/done.lua" >"$work/static.lua"
{ echo "wrk.headers[\"Authorization\"] = \"Bearer $session\""; cat "$work/done.lua"; } >"$work/load.lua"
# Every request is built once, in init(), as wrk's SCRIPTING guide advises: building one in request() each time
# cost wrk 1-3 µs of the two cores the server shares with it (docs/PERFORMANCE.md, D1 mint).
cat "$work/mint-tokens.lua" - "$work/done.lua" >"$work/mint.lua" <<'LUA'
local requests, counter = {}, 0
init = function()
  for i, token in ipairs(tokens) do
    requests[i] = wrk.format("POST", "/wallet-session-token.ashx", {["Authorization"] = "Bearer " .. token}, "")
  end
end
request = function()
  counter = counter % #requests + 1
  return requests[counter]
end
LUA

# A warm-up pass of each first (2 s), as scripts/bench_loads.sh does for its many-user rows.
wrk -t2 -c"$CONNECTIONS" -d2s "$nginx_base/static.json" >/dev/null
wrk -t2 -c"$CONNECTIONS" -d2s -s "$work/load.lua" "$base/wallet-backup.ashx?action=load" >/dev/null
read -r load_rps load_p99 nginx_rps nginx_p99 load_ratio load_bad load_err nginx_bad nginx_err < <(measure_alternating \
  "bench.sh: load | nginx" "$LOAD_ROUNDS" "$base/wallet-backup.ashx?action=load" "$work/load.lua" \
  "$nginx_base/static.json" "$work/static.lua" "$DURATION")
read -r mint_rps mint_p99 mint_bad mint_err < <(measure "$base/wallet-session-token.ashx" "$work/mint.lua" "$DURATION")
kill "$server_pid" "$nginx_pid" 2>/dev/null || true; wait 2>/dev/null || true; server_pid=""; nginx_pid=""

# The anchor for D1: RSA 2048 public-key operations (RS256 verification) per second, one core, same run.
# OpenSSL 3.0 prints "rsa 2048 bits <sign s> <verify s> <sign/s> <verify/s>".
rsa_verify=$(openssl speed -seconds "$DURATION" rsa2048 2>/dev/null | awk '$1 == "rsa" && $2 == "2048" { print $NF; exit }')
[ -n "$rsa_verify" ] || { echo "bench.sh: could not read verify/s from openssl speed rsa2048" >&2; exit 1; }

echo "bench.sh: non-2xx: load $load_bad, mint $mint_bad, nginx $nginx_bad; socket errors: load $load_err, mint $mint_err, nginx $nginx_err" >&2
awk -v lr="$load_rps" -v lp="$load_p99" -v nr="$nginx_rps" -v np="$nginx_p99" -v ratio="$load_ratio" -v rounds="$LOAD_ROUNDS" \
    -v mr="$mint_rps" -v mp="$mint_p99" -v rv="$rsa_verify" -v c="$CONNECTIONS" -v users="$MINT_USERS" -v lbad="$load_bad" \
    -v mbad="$mint_bad" 'BEGIN {
  met = (ratio >= 1.0 && lp <= 10 && lbad == 0) ? "met" : "not met"
  printf "| load 64 KiB (D3), SQLite, %d connections | %.0f req/s, p99 %.1f ms | nginx serving the same 64 KiB file (p99 %.1f ms; %d alternating rounds, medians, ratio = median of the rounds’ ratios) | %.0f req/s | %.2f× | ≥ 1.0×, p99 ≤ 10 ms (%s) |\n", c, lr, lp, np, rounds, nr, ratio, met
  printf "| D1 mint, RS256 access token → session token, %d connections, %d users | %.0f req/s, p99 %.1f ms%s | `openssl speed rsa2048` verify (RS256 verification), one core | %.0f verify/s | %.2f× | ≥ 0.5×, p99 ≤ 10 ms (%s) |\n", c, users, mr, mp, (mbad > 0 ? sprintf(", %d non-2xx", mbad) : ""), rv, mr / rv, (mr / rv >= 0.5 && mp <= 10 && mbad == 0 ? "met" : "not met")
}'
