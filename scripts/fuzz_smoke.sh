#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ (address sanitizer on), seeds each from the test corpora and runs it.
#
#   scripts/fuzz_smoke.sh                    # each target 60 s (make fuzz-smoke, CI)
#   FUZZ_SECONDS=600 scripts/fuzz_smoke.sh   # a longer campaign; FUZZ_TARGETS="FuzzJWT" to pick targets
#   FUZZ_JOBS=2 ...                          # parallel workers per target (libFuzzer -fork)
#
# Working corpora grow in Fuzz/corpus/<target>/ between runs (git-ignored); a crash leaves its input in
# Fuzz/artifacts/<target>/ and fails the script. Prints executions, coverage and corpus size per target.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-"FuzzShape FuzzPortableJSON FuzzJWT FuzzEnvelope"}
JOBS=${FUZZ_JOBS:-1}

if [ -z "${FUZZ_NO_BUILD:-}" ]; then
  (cd Fuzz && swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)
fi
BIN=$(cd Fuzz && swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --show-bin-path)

vectors_with_cipher_last() {  # dir -> copies of the format vectors in today's member order
  # The vectors predate writers putting `cipher` last; these copies reach the parser's cut of a last string.
  python3 - "$1" Tests/VaultEnvelopeTests/Vectors/format/*.blob.json <<'PY'
import json, os, sys
for path in sys.argv[2:]:
    blob = json.load(open(path))
    blob["cipher"] = blob.pop("cipher")
    with open(os.path.join(sys.argv[1], "last-" + os.path.basename(path)), "w") as out:
        out.write(json.dumps(blob, separators=(",", ":")))
PY
}

seed() {  # target -> fills Fuzz/corpus/<target>/seeds from the repository's test corpora
  local target=$1 dir=Fuzz/corpus/$1/seeds
  rm -rf "$dir" && mkdir -p "$dir"
  case $target in
    FuzzShape|FuzzPortableJSON)
      cp Tests/VaultJSONTests/Fixtures/JSONTestSuite/test_parsing/*.json "$dir/"
      for f in Tests/VaultEnvelopeTests/Vectors/format/*.blob.json; do cp "$f" "$dir/vector-$(basename "$f")"; done
      vectors_with_cipher_last "$dir" ;;
    FuzzEnvelope)
      for f in Tests/VaultEnvelopeTests/Vectors/format/*.blob.json; do cp "$f" "$dir/"; done
      vectors_with_cipher_last "$dir" ;;
    FuzzJWT)
      python3 - "$dir" <<'PY'
import hashlib, os, re, sys
out = sys.argv[1]
pattern = re.compile(r"[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*")
for folder in ("Tests/VaultJOSETests/Fixtures",):
    for name in sorted(os.listdir(folder)):
        text = open(os.path.join(folder, name), encoding="utf-8", errors="replace").read()
        for token in set(pattern.findall(text)):
            if token.startswith("ey"):
                path = os.path.join(out, hashlib.sha1(token.encode()).hexdigest()[:16])
                open(path, "w").write(token)
PY
      ;;
  esac
}

status=0
summary=""
for target in $TARGETS; do
  seed "$target"
  mkdir -p "Fuzz/corpus/$target/work" "Fuzz/artifacts/$target" Fuzz/logs
  log=Fuzz/logs/$target.log
  extra=()
  [ "$target" = FuzzShape ] && extra+=(-max_len=65536)
  [ "$target" = FuzzPortableJSON ] && extra+=(-max_len=65536 -dict=Fuzz/json.dict)
  [ "$target" = FuzzEnvelope ] && extra+=(-max_len=16384)
  [ "$JOBS" -gt 1 ] && extra+=(-fork="$JOBS" -ignore_crashes=0)
  echo "== $target: ${SECONDS_EACH}s, seeds $(ls "Fuzz/corpus/$target/seeds" | wc -l)"
  set +e
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/Fuzz/lsan.supp:print_suppressions=0} "$BIN/$target" "Fuzz/corpus/$target/work" "Fuzz/corpus/$target/seeds" \
    -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="Fuzz/artifacts/$target/" "${extra[@]}" > "$log" 2>&1
  rc=$?
  set -e
  execs=$( (grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" || true) | awk '{s+=$2} END {print s+0}')
  [ "$execs" = 0 ] && execs=$( (grep -Eo '^#[0-9]+' "$log" || true) | tail -1 | tr -d '#')
  cov=$( (grep -Eo 'cov: [0-9]+' "$log" || true) | tail -1 | awk '{print $2}')
  corpus=$(ls "Fuzz/corpus/$target/work" | wc -l)
  crashes=$(ls "Fuzz/artifacts/$target" | grep -cE '^(crash|leak|timeout|oom|slow-unit)-' || true)
  line="$target: rc=$rc executions=${execs:-?} coverage=${cov:-?} corpus=$corpus artifacts=$crashes"
  echo "$line"
  summary+="$line"$'\n'
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    status=1
    grep -E 'ERROR|SUMMARY|Fatal|Test unit written' "$log" | head -20 || true
  fi
done
printf '%s' "$summary"
exit $status
