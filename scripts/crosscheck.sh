#!/usr/bin/env bash
# Format cross-check: Tests/VaultEnvelopeTests/Vectors/format/crosscheck.py, a reader of the blob format written
# from docs/FORMAT.md alone with Python `cryptography`, reads every committed vector (positive ones must open to
# what their key.json says, negative ones must be refused with their `expect_error`).
#
#   scripts/crosscheck.sh [VECTOR_DIRECTORY]
#
# Installs cryptography (scripts/crosscheck_requirements.txt, pinned) into .build/crosscheck-venv when missing or
# when the requirements changed. Exit status: crosscheck.py's (0 all as expected, 1 a vector disagrees, 2 no
# vectors), or 2 on a setup error.
set -euo pipefail
main() {

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=$ROOT/.build/crosscheck-venv
REQUIREMENTS=$ROOT/scripts/crosscheck_requirements.txt
SCRIPT=$ROOT/Tests/VaultEnvelopeTests/Vectors/format/crosscheck.py

say() { echo "crosscheck: $*"; }
die() { echo "crosscheck: $*" >&2; echo "crosscheck: FAILED (setup)"; exit 2; }

STAMP=$VENV/.requirements.sha256
WANT=$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    say "installing cryptography into $VENV"
    command -v python3 >/dev/null || die "python3 is required"
    python3 -m venv "$VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQUIREMENTS" || die "pip install failed"
    echo "$WANT" > "$STAMP"
fi

exec "$VENV/bin/python" "$SCRIPT" "$@"
}
main "$@"
