#!/usr/bin/env bash
# Runs CMD beside a throwaway PostgreSQL cluster, then stops and removes the cluster.
# Usage: scripts/with-postgres.sh CMD [ARGS...]   (exit code is CMD's)
# Exports for CMD:
#   WALLETVAULT_TEST_POSTGRES_URL  postgresql://walletvault@127.0.0.1:PORT/walletvault
#   WALLETVAULT_TEST_PGCTL         pg_ctl for this cluster (run as the cluster's owner; takes stop/start/... and pg_ctl flags)
#   WALLETVAULT_TEST_PGDATA        the cluster's data directory
#   WALLETVAULT_TEST_PGBIN         the PostgreSQL bin directory (psql, pgbench, ...)
# As root the cluster runs as the `postgres` user, since PostgreSQL refuses to run as root.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "with-postgres: installing postgresql" >&2
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
  pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
fi

as_owner=()
if [ "$(id -u)" = 0 ]; then as_owner=(runuser -u postgres --); fi

work=$(mktemp -d "${TMPDIR:-/tmp}/wv-pg.XXXXXX")
[ "$(id -u)" = 0 ] && chown postgres: "$work"
data="$work/data"
started=""
cleanup() {
  if [ -n "$started" ]; then "${as_owner[@]}" "$pgbin/pg_ctl" -D "$data" stop -m immediate -w >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"${as_owner[@]}" "$pgbin/initdb" -D "$data" -U walletvault --auth=trust -E UTF8 --no-sync >"$work/initdb.log" 2>&1 \
  || { cat "$work/initdb.log" >&2; exit 1; }

# A wrapper so tests (possibly root) can stop and restart this cluster with the right user and options.
cat >"$work/pg_ctl" <<SH
#!/bin/sh
exec ${as_owner[*]} "$pgbin/pg_ctl" -D "$data" -l "$work/postgres.log" "\$@"
SH
chmod 755 "$work/pg_ctl"

# Loopback TCP on a free port; a few random tries cover a port taken between the check and the start.
port=""
for _ in 1 2 3 4 5 6 7 8; do
  candidate=$((20000 + RANDOM % 40000))
  cat >>"$data/postgresql.conf" <<CONF
port = $candidate
listen_addresses = '127.0.0.1'
unix_socket_directories = '$work'
max_connections = 300
CONF
  if "$work/pg_ctl" start -w -t 60 >/dev/null 2>&1; then port=$candidate; break; fi
done
[ -n "$port" ] || { echo "with-postgres: cannot start PostgreSQL" >&2; cat "$work/postgres.log" >&2 || true; exit 1; }
started=1
"$pgbin/createdb" -h 127.0.0.1 -p "$port" -U walletvault walletvault

export WALLETVAULT_TEST_POSTGRES_URL="postgresql://walletvault@127.0.0.1:$port/walletvault"
export WALLETVAULT_TEST_PGCTL="$work/pg_ctl"
export WALLETVAULT_TEST_PGDATA="$data"
export WALLETVAULT_TEST_PGBIN="$pgbin"
echo "with-postgres: PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" >&2

# CMD runs in the background so a signal to this script is passed on at once instead of after CMD ends;
# the cluster is removed only once CMD is gone.
set +e
"$@" <&0 &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM
trap 'kill -INT "$child" 2>/dev/null' INT
while :; do
  wait "$child"
  status=$?
  kill -0 "$child" 2>/dev/null || break
done
exit "$status"
