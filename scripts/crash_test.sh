#!/usr/bin/env bash
# make crash-test: a save storm from 64 clients, SIGKILL at random moments, restart and verify, 20 rounds.
# `make crash-test` runs it on SQLite and then on PostgreSQL (a throwaway cluster from scripts/with-postgres.sh).
#
#   scripts/crash_test.sh                                   # SQLite, 20 rounds, 64 clients, 32 users
#   CRASH_ROUNDS=5 CRASH_CLIENTS=16 scripts/crash_test.sh   # shorter
#   scripts/with-postgres.sh env CRASH_DATABASE=postgres scripts/crash_test.sh
#                                                           # PostgreSQL
#   CRASH_DATABASE=postgresql://... scripts/crash_test.sh   # another PostgreSQL database (role may CREATE EXTENSION)
#   CRASH_DATABASE=... CRASH_INTEGRITY='shell command' scripts/crash_test.sh   # an extra check, must exit 0
#
# With CRASH_DATABASE=postgres the URL is $WALLETVAULT_TEST_POSTGRES_URL (set by scripts/with-postgres.sh). After
# each kill, before the restart, crash_test.py checks the database where it lies: SQLite with PRAGMA
# integrity_check on a copy of the file and WAL; PostgreSQL with amcheck (bt_index_parent_check with
# heapallindexed on every index, verify_heapam with check_toast on every table, TOAST tables included, through
# psql); on both, every stored version row is read in full and must be one of the saves sent, byte for byte.
# Under scripts/with-postgres.sh every 4th round (CRASH_PG_CRASH_EVERY; 0 for never) also stops the cluster with
# `pg_ctl stop -m immediate` right after the SIGKILL, so PostgreSQL recovers from its WAL before the checks.
# Uses the debug build (.build/debug/walletvault-server) unless WALLETVAULT_SERVER_BIN names another binary.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${WALLETVAULT_SERVER_BIN:-}" ] && [ ! -x .build/debug/walletvault-server ]; then swift build; fi
database=${CRASH_DATABASE:-sqlite}
pg_crash_every=0
if [ "$database" = postgres ]; then
  database=${WALLETVAULT_TEST_POSTGRES_URL:?run under scripts/with-postgres.sh or set WALLETVAULT_TEST_POSTGRES_URL}
  # The throwaway cluster can be crashed too: every 4th round it is stopped -m immediate right after the SIGKILL.
  [ -n "${WALLETVAULT_TEST_PGCTL:-}" ] && pg_crash_every=${CRASH_PG_CRASH_EVERY:-4}
fi
args=(--rounds "${CRASH_ROUNDS:-20}" --clients "${CRASH_CLIENTS:-64}" --users "${CRASH_USERS:-32}" --database "$database"
      --postgres-crash-every "$pg_crash_every")
[ -n "${CRASH_INTEGRITY:-}" ] && args+=(--integrity-command "$CRASH_INTEGRITY")
[ -n "${CRASH_SEED:-}" ] && args+=(--seed "$CRASH_SEED")
exec python3 scripts/crash_test.py "${args[@]}" "$@"
