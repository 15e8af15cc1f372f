#!/usr/bin/env bash
# make soak: ten minutes of mixed traffic from 64 keep-alive connections, 500 slow connections half way through.
#
#   scripts/soak.sh            # 600 s
#   scripts/soak.sh 120        # a shorter run (say so when quoting its figures)
#   SOAK_RATE=200 SOAK_SLOW=500 scripts/soak.sh 600
#
# Uses the debug build unless WALLETVAULT_SERVER_BIN names another binary (e.g. .build/release/walletvault-server).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${WALLETVAULT_SERVER_BIN:-}" ] && [ ! -x .build/debug/walletvault-server ]; then swift build; fi
exec python3 scripts/soak.py --duration "${1:-${SOAK_SECONDS:-600}}" --rate "${SOAK_RATE:-128}" \
  --connections "${SOAK_CONNECTIONS:-64}" --slow "${SOAK_SLOW:-500}"
