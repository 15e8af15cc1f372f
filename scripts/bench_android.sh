#!/usr/bin/env bash
# The Kotlin library's two benchmark rows (issue 16), in bench_all.sh's table format, on the JVM with Debian's packages:
#   seal/open a 1 MiB vault beside the same JVM's raw AES-256-GCM on 1 MiB (paired alternating rounds, medians);
#   Argon2id at the format's default costs (BouncyCastle) beside the Debian `argon2` CLI, with the JVM's peak heap.
# Env: ANDROID_ROUNDS (seal/open rounds, default 15), ANDROID_ARGON2_RUNS (default 7).
set -euo pipefail
cd "$(dirname "$0")/.."
android/build.sh compile >&2
android/build.sh bench all "${ANDROID_ROUNDS:-15}" "${ANDROID_ARGON2_RUNS:-7}" 2> >(grep -v 'Xverify' >&2)
