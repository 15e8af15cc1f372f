# What scripts/bench.sh, scripts/bench_loads.sh and scripts/bench_longpoll.sh share; sourced, never run. Each caller sets `work` (a scratch
# directory) and `BIN` (the server binary) first, and kills `server_pid` and `nginx_pid` on exit.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

write_sample_blob() { # file -> a valid vault blob of exactly 64 KiB whose cipher fills the size
  python3 - "$1" <<'PY'
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
}

start_dev_server() { # data-dir [server arguments...] -> sets server_pid and base; exits when the server does not start
  local data=$1 port
  shift
  port=$(free_port)
  "$BIN" --dev --quiet --listen "127.0.0.1:$port" --data-dir "$data" "$@" >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
  for _ in $(seq 100); do grep -q listening "$work/server.out" 2>/dev/null && break; sleep 0.1; done
  grep -q listening "$work/server.out" || { echo "$(basename "$0"): the server did not start" >&2; cat "$work/server.err" >&2; exit 1; }
  base="http://127.0.0.1:$port"
}

start_nginx() { # root sendfile(on|off) -> sets nginx_pid and nginx_base; two workers, no access log
  local port
  port=$(free_port)
  cat >"$work/nginx.conf" <<NGINX
worker_processes 2;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile $2;
  server { listen 127.0.0.1:$port; root $1; location / { default_type application/json; } }
}
NGINX
  nginx -c "$work/nginx.conf" >&2 &
  nginx_pid=$!
  sleep 0.5
  nginx_base="http://127.0.0.1:$port"
}

# wrk's done(), appended to every wrk script: successful requests/s (non-2xx/3xx excluded), p99 ms, non-2xx/3xx
# count, socket errors, on one line that `measure` reads.
wrk_done_lua() {
  cat <<'LUA'
done = function(summary, latency, requests)
  io.write(string.format("RESULT %.1f %.3f %d %d\n", (summary.requests - summary.errors.status) / (summary.duration / 1e6),
    latency:percentile(99) / 1000, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA
}

write_done_lua() { # file -> the end of every wrk script here: each thread seeds its own random sequence, starts
  # its `counter` at its id (a warm walk steps it) and runs the script's prepare() if it has one, and done() prints
  # the RESULT line measure() reads
  cat >"$1" <<'LUA'
local next_id = 0
setup = function(thread) thread:set("id", next_id); next_id = next_id + 1 end
init = function(args) math.randomseed(os.time() * 1000 + id); counter = id; if prepare then prepare() end end
LUA
  wrk_done_lua >>"$1"
}

measure() { # url script seconds -> "rate p99 non2xx socket_errors"
  wrk -t2 -c"$CONNECTIONS" -d"${3}s" -s "$2" "$1" | awk '/^RESULT/ {print $2, $3, $4, $5}'
}

# One pass of the server and one of its anchor can fall in different minutes of a shared two-core machine's speed
# (nginx's rate moved 39% between two runs a minute apart, docs/PERFORMANCE.md): this measures them in turn ROUNDS
# times, the order swapped each round (A B, B A, A B, ...), and prints the medians of each side's rate and p99, the
# median of the rounds' ratios A/B, and each side's summed non-2xx and socket errors, as "rate_a p99_a rate_b p99_b
# ratio bad_a err_a bad_b err_b". Each round goes to stderr, prefixed by `label`.
measure_alternating() { # label rounds url_a script_a url_b script_b seconds
  local label=$1 rounds=$2 ua=$3 sa=$4 ub=$5 sb=$6 seconds=$7 round a b rounds_out=""
  for round in $(seq "$rounds"); do
    if [ $((round % 2)) = 1 ]; then
      a=$(measure "$ua" "$sa" "$seconds"); b=$(measure "$ub" "$sb" "$seconds")
    else
      b=$(measure "$ub" "$sb" "$seconds"); a=$(measure "$ua" "$sa" "$seconds")
    fi
    echo "$label round $round: $a | $b" >&2
    rounds_out="$rounds_out$a $b"$'\n'
  done
  printf '%s' "$rounds_out" | python3 -c '
import statistics, sys
rows = [list(map(float, line.split())) for line in sys.stdin if line.strip()]
column = lambda i: [row[i] for row in rows]
ratios = [row[0] / row[4] if row[4] else 0.0 for row in rows]
median = statistics.median
print(median(column(0)), median(column(1)), median(column(4)), median(column(5)), median(ratios),
      int(sum(column(2))), int(sum(column(3))), int(sum(column(6))), int(sum(column(7))))'
}

write_random_load_lua() { # file users -> a wrk script loading (D3) a random user of `$work/tokens.lua` per request,
  # ending in `$work/done.lua` (write_done_lua). Each user's request is built once, in init() (prepare), as the mint
  # and save scripts build theirs and wrk's SCRIPTING guide advises: building it in request() cost wrk 8-13 µs per
  # load of the two cores the server shares with it (docs/PERFORMANCE.md, "Loads from body files").
  { cat "$work/tokens.lua"; echo "local n = $2"; cat <<'LUA'
local requests = {}
prepare = function()
  for i = 1, n do requests[i] = wrk.format("GET", "/wallet-backup.ashx?action=load", {["Authorization"] = "Bearer " .. tokens[i]}) end
end
request = function() return requests[math.random(n)] end
LUA
    cat "$work/done.lua"; } >"$1"
}
