#!/usr/bin/env bash
# make bench: every benchmark of docs/PERFORMANCE.md in one run, printed as ONE markdown table (each measured path
# beside its anchor from the same run) and saved to $BENCH_OUT (default .build/bench/bench-<UTC time>.md, also
# copied to .build/bench/latest.md).
#   scripts/bench.sh          load (D3) of one user vs nginx; D1 mint vs openssl speed rsa2048 verify
#   scripts/bench_loads.sh    load (D3) of 20 000 random users vs nginx on 20 000 files (SQLite), vs pgbench (PostgreSQL)
#   scripts/bench_storage.sh  save (D2) on PostgreSQL vs pgbench, on SQLite vs a Python sqlite3 insert loop
#   scripts/bench_longpoll.sh long-poll wake-up after a save (one node, two PostgreSQL nodes); 20 000 held long-polls: RSS, load vs nginx
#   scripts/bench_crypto.sh   seal/open a 1 MiB vault vs openssl speed aes-256-gcm; Argon2id vs the argon2 CLI
#   scripts/bench_android.sh  the Kotlin library on the JVM: seal/open 1 MiB vs raw JVM AES-GCM; Argon2id vs the argon2 CLI
# The scripts run one after the other, never at once (two cores). Progress and diagnostics go to stderr.
# Usage: scripts/bench_all.sh   (after `swift build -c release`; make bench builds it)
# Env: DURATION, CONNECTIONS (HTTP runs), LOAD_USERS, LOAD_CURVE (many-user loads), USERS (saves), MINT_USERS, SECONDS_PER_RUN, ROUNDS, ARGON2_RUNS (envelope runs).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .build/release/walletvault-server ] || { echo "bench_all.sh: build first: swift build -c release" >&2; exit 1; }
stamp=$(date -u +%Y-%m-%dT%H%MZ)
mkdir -p .build/bench
out=${BENCH_OUT:-.build/bench/bench-$stamp.md}
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%MZ)
for script in scripts/bench.sh scripts/bench_loads.sh scripts/bench_storage.sh scripts/bench_longpoll.sh scripts/bench_crypto.sh scripts/bench_android.sh; do
  echo "bench_all.sh: running $script" >&2
  "$script" >>"$rows"
done
finished=$(date -u +%H:%MZ)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

{
  echo "WalletVault benchmark, $started to $finished, $(nproc) cores, release build; wrk -t2 -c${CONNECTIONS:-64} -d${DURATION:-10}s;"
  echo "load average (1/5/15 min) $load_before at the start, $load_after at the end"
  echo
  echo "| path | value | anchor (same run) | anchor value | ratio | goal |"
  echo "|---|---:|---|---:|---:|---|"
  cat "$rows"
} | tee "$out"
[ -n "${BENCH_OUT:-}" ] || cp "$out" .build/bench/latest.md
echo "bench_all.sh: table saved to $out" >&2
