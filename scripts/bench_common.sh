# What scripts/bench.sh and scripts/bench_loads.sh share; sourced, never run. Each caller sets `work` (a scratch
# directory) and `BIN` (the server binary) first, and kills `server_pid` and `nginx_pid` on exit.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

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

measure() { # url script seconds -> "rate p99 non2xx socket_errors"
  wrk -t2 -c"$CONNECTIONS" -d"${3}s" -s "$2" "$1" | awk '/^RESULT/ {print $2, $3, $4, $5}'
}
