#!/usr/bin/env bash
# make crash-test: a save storm from 64 clients, SIGKILL at random moments, restart and verify, 20 rounds.
#
#   scripts/crash_test.sh                                   # SQLite, 20 rounds, 64 clients, 32 users
#   CRASH_ROUNDS=5 CRASH_CLIENTS=16 scripts/crash_test.sh   # shorter
#   scripts/with-postgres.sh env CRASH_DATABASE=postgres scripts/crash_test.sh
#                                                           # PostgreSQL (needs the postgres branch's store)
#   CRASH_DATABASE=postgresql://... CRASH_INTEGRITY='...' scripts/crash_test.sh   # any other database URL
#
# With CRASH_DATABASE=postgres the URL is $WALLETVAULT_TEST_POSTGRES_URL (set by scripts/with-postgres.sh) and
# the integrity check, unless CRASH_INTEGRITY says otherwise, is amcheck's bt_index_check on every index of the
# public schema plus a full read of every table (heap corruption fails the scan).
# Uses the debug build (.build/debug/walletvault-server) unless WALLETVAULT_SERVER_BIN names another binary.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${WALLETVAULT_SERVER_BIN:-}" ] && [ ! -x .build/debug/walletvault-server ]; then swift build; fi
database=${CRASH_DATABASE:-sqlite}
integrity=${CRASH_INTEGRITY:-}
if [ "$database" = postgres ]; then
  database=${WALLETVAULT_TEST_POSTGRES_URL:?run under scripts/with-postgres.sh or set WALLETVAULT_TEST_POSTGRES_URL}
  psql="${WALLETVAULT_TEST_PGBIN:+$WALLETVAULT_TEST_PGBIN/}psql"
  if [ -z "$integrity" ]; then
    integrity="$psql -v ON_ERROR_STOP=1 -Atq '$database' -c 'CREATE EXTENSION IF NOT EXISTS amcheck' \
      -c \"SELECT bt_index_check(c.oid, true) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE c.relnamespace = 'public'::regnamespace\" \
      -c \"DO \\\$\\\$ DECLARE t record; BEGIN FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = 'public'
           LOOP EXECUTE format('SELECT count(*) FROM (SELECT * FROM %I) s', t.tablename); END LOOP; END \\\$\\\$\" >/dev/null"
  fi
fi
args=(--rounds "${CRASH_ROUNDS:-20}" --clients "${CRASH_CLIENTS:-64}" --users "${CRASH_USERS:-32}" --database "$database")
[ -n "$integrity" ] && args+=(--integrity-command "$integrity")
[ -n "${CRASH_SEED:-}" ] && args+=(--seed "$CRASH_SEED")
exec python3 scripts/crash_test.py "${args[@]}" "$@"
