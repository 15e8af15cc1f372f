#!/usr/bin/env bash
# The checks `make test` runs after the parallel Swift tests, side by side, and their output one after the other.
#
#   scripts/checks_side_by_side.sh BIN_DIR TIMED_SUITES [SWIFT_BUILD_FLAGS...]
#
# Run one after another they took 135 s, most of it waiting: the suites that time a live server's deadlines use
# 5 s of CPU in 27 s, the hostile corpus and the TLS scan wait on sockets. Only API conformance (schemathesis) and
# the Kotlin build keep a core busy, so they run beside the waiting ones in four lanes:
#   1. the timed Swift suites, one test at a time (they stay apart from the parallel Swift run, see the Makefile);
#   2. API conformance against docs/openapi.yaml;
#   3. the Kotlin library's build and tests (with its end-to-end test against the Swift binaries);
#   4. the format vectors' second reader, then the hostile corpus, then nginx in front of the server (the corpus's
#      desync shapes through deploy/nginx-tls.conf), then the TLS scan.
# Every lane starts its own servers on free loopback ports (and the timed suites their own PostgreSQL cluster), so
# none sees another's traffic. Each lane's output goes to a file and is printed whole when all are done, in the order
# above, with its exit status and wall time; the script fails if any lane failed, and says which.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 BIN_DIR TIMED_SUITES [SWIFT_BUILD_FLAGS...]" >&2; exit 2; }
bin=$1
timed=$2
shift 2
logs=$(mktemp -d "${TMPDIR:-/tmp}/wv-checks.XXXXXX")
trap 'rm -rf "$logs"' EXIT
# An interrupted run stops every lane (each one's servers and clusters clean up after themselves).
trap 'kill $(jobs -p) 2>/dev/null; exit 130' INT
trap 'kill $(jobs -p) 2>/dev/null; exit 143' TERM

lane() {  # name command... : runs the command with its output in the lane's log, then records status and seconds
  local name=$1 started=$SECONDS
  shift
  "$@" >"$logs/$name.log" 2>&1
  echo "$? $((SECONDS - started))" >"$logs/$name.status"
}

started=$SECONDS
lane timed scripts/with-postgres.sh swift test --skip-build "$@" --no-parallel --filter "$timed" &
lane conformance env WV_SERVER_BINARY="$bin/walletvault-server" scripts/conformance.sh &
lane kotlin env WALLETVAULT_BIN_DIR="$bin" android/build.sh &
lane sockets sh -c "scripts/crosscheck.sh && WALLETVAULT_SERVER_BIN='$bin/walletvault-server' python3 scripts/hostile.py \
  && WALLETVAULT_SERVER_BIN='$bin/walletvault-server' python3 scripts/nginx_front.py \
  && WV_SERVER_BINARY='$bin/walletvault-server' scripts/tls_scan.sh" &
wait

failed=""
for name in timed conformance kotlin sockets; do
  read -r status seconds <"$logs/$name.status"
  echo "──── $name: exit $status after ${seconds} s"
  cat "$logs/$name.log"
  [ "$status" = 0 ] || failed="$failed $name"
done
echo "──── side by side: $((SECONDS - started)) s in all"
if [ -n "$failed" ]; then
  echo "checks failed:$failed"
  exit 1
fi
