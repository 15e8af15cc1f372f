#!/usr/bin/env bash
# API conformance: schemathesis against a live development server, checked against docs/openapi.yaml.
#
#   scripts/conformance.sh [--max-examples N] [--seed N] [--server PATH] [--spec PATH]
#
# Expects the server already built (`swift build`; default binary .build/debug/walletvault-server).
# Installs schemathesis (scripts/conformance_requirements.txt, pinned) into .build/conformance-venv
# when missing or when the requirements changed. Starts `walletvault-server --dev` on a free
# loopback port with a throwaway data directory, mints an OIDC token from /dev-oidc/token and a
# session token through D1, and runs schemathesis (phases examples, coverage, fuzzing, stateful)
# with each token bound to its security scheme: oidcAccessToken for D1, sessionToken for
# /wallet-backup.ashx. Checks: not_a_server_error, status_code_conformance,
# content_type_conformance, response_schema_conformance, response_headers_conformance, and two of
# this script's own (wallet_backup_actions, session_token_exchange; see below). Then it reads
# /metrics and fails on any 5xx the server counted. The server is stopped on exit, whatever happens.
#
# The dev-only /dev-oidc/* operations are never run.
#
# Environment: WV_CONFORMANCE_MAX_EXAMPLES (default 100, about a minute on 2 cores),
# WV_CONFORMANCE_SEED (default random; printed, and replays a run), WV_SERVER_BINARY,
# WV_CONFORMANCE_WORKERS (default 1: with 2, CPython 3.11.7 can raise "AST constructor recursion
# depth mismatch" inside Hypothesis).
# Last line: "conformance: N passed, M failed". Exit status 0 when every check passed, 1 on any
# failure, 2 on a setup error. The JSON report is left in .build/conformance-report.json.
set -euo pipefail
# Everything runs inside main, which bash reads whole before running: editing or checking out
# this file while a run is going cannot change what the run does.
main() {

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SERVER=${WV_SERVER_BINARY:-$ROOT/.build/debug/walletvault-server}
VENV=$ROOT/.build/conformance-venv
REQUIREMENTS=$ROOT/scripts/conformance_requirements.txt
SPEC=$ROOT/docs/openapi.yaml
MAX_EXAMPLES=${WV_CONFORMANCE_MAX_EXAMPLES:-100}
SEED=${WV_CONFORMANCE_SEED:-}
WORKERS=${WV_CONFORMANCE_WORKERS:-1}
REPORT=$ROOT/.build/conformance-report.json
# A long-poll whose If-None-Match matches (the stateful phase sends the ETag a save answered) is held for its whole
# `wait`; the server's longest wait is lowered so each stays inside schemathesis's 10 s request timeout.
MAX_WAIT=3

usage() { sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --max-examples) MAX_EXAMPLES=${2:?--max-examples needs a number}; shift ;;
        --seed) SEED=${2:?--seed needs a number}; shift ;;
        --server) SERVER=${2:?--server needs a path}; shift ;;
        --spec) SPEC=${2:?--spec needs a path}; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "conformance: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

say() { echo "conformance: $*"; }
die() { echo "conformance: $*" >&2; echo "conformance: FAILED (setup)"; exit 2; }

[ -x "$SERVER" ] || die "no server binary at $SERVER (run 'swift build' first)"
[ -f "$SPEC" ] || die "no $SPEC"

# --- schemathesis in a venv, reinstalled when the pinned requirements change --------------
STAMP=$VENV/.requirements.sha256
WANT=$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)
if [ ! -x "$VENV/bin/schemathesis" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    say "installing schemathesis into $VENV"
    command -v python3 >/dev/null || die "python3 is required"
    python3 -m venv "$VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQUIREMENTS" || die "pip install failed"
    echo "$WANT" > "$STAMP"
fi
PY=$VENV/bin/python

# --- a throwaway development server ------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wv-conformance.XXXXXX")
SERVER_PID=
cleanup() {
    local status=$?
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$SERVER" --dev --listen 127.0.0.1:0 --data-dir "$WORK/data" --saves-per-hour 100000 --max-wait-seconds "$MAX_WAIT" --quiet \
    > "$WORK/server.out" 2> "$WORK/server.err" &
SERVER_PID=$!
PORT=
for _ in $(seq 1 300); do
    PORT=$(sed -n 's|^walletvault-server listening on http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$WORK/server.out" | head -n1)
    [ -n "$PORT" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.err" >&2; die "the server exited during startup"; }
    sleep 0.1
done
[ -n "$PORT" ] || die "the server did not report its port within 30 s"
BASE=http://127.0.0.1:$PORT
say "server pid $SERVER_PID on $BASE"

# --- tokens: OIDC access token from the dev issuer, then a session token through D1 ---------
read -r OIDC_TOKEN SESSION_TOKEN < <("$PY" - "$BASE" <<'EOF'
import json, sys, urllib.parse, urllib.request
base = sys.argv[1]
def post(path, data=None, headers=None):
    request = urllib.request.Request(base + path, data=data or b"", headers=headers or {}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)
form = urllib.parse.urlencode({"sub": "conformance-user", "azp": "conformance-app"}).encode()
oidc = post("/dev-oidc/token", form, {"Content-Type": "application/x-www-form-urlencoded"})["access_token"]
session = post("/wallet-session-token.ashx", headers={"Authorization": "Bearer " + oidc})["access_token"]
print(oidc, session)
EOF
) || die "could not mint tokens"
[ -n "${SESSION_TOKEN:-}" ] || die "could not mint tokens"
export WV_OIDC_TOKEN=$OIDC_TOKEN WV_SESSION_TOKEN=$SESSION_TOKEN

# --- the document under test ----------------------------------------------------------------
WV_MAX_WAIT=$MAX_WAIT "$PY" - "$SPEC" "$WORK/openapi.yaml" <<'EOF'
import os, sys, yaml
source, target = sys.argv[1], sys.argv[2]
with open(source) as handle:
    spec = yaml.safe_load(handle)
# Random subject tokens only ever meet 401: give the examples phase one real RFC 8693 exchange.
form = spec["paths"]["/wallet-session-token.ashx"]["post"]["requestBody"]["content"]["application/x-www-form-urlencoded"]
form["examples"] = {"valid_exchange": {"value": {
    "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
    "subject_token": os.environ["WV_OIDC_TOKEN"],
    "subject_token_type": "urn:ietf:params:oauth:token-type:access_token"}}}
# The server runs with --max-wait-seconds MAX_WAIT: the document says so too, so both sides of it are generated.
spec["components"]["parameters"]["WaitQuery"]["schema"]["maximum"] = int(os.environ["WV_MAX_WAIT"])
with open(target, "w") as handle:
    yaml.safe_dump(spec, handle, sort_keys=False, allow_unicode=True)
EOF
# One operation per method serves several actions, so the document's response unions cannot tie a
# body to an action. wallet_backup_actions does, per request: a listed action is never answered 405
# or invalid_action; a 200 has that action's body; ETags agree with sync_ids; save reports its size.
# session_token_exchange: D1 with the real OIDC token (header or exact form) must answer 200.
export WV_ACTIONS=load,versions,save,delete WV_MAX_WAIT=$MAX_WAIT
cat > "$WORK/wv_checks.py" <<'EOF'
import json
import os
from urllib.parse import parse_qs, urlsplit

import schemathesis

ACTIONS = set(os.environ.get("WV_ACTIONS", "load,save").split(","))
METHODS = {"load": {"GET", "HEAD"}, "versions": {"GET", "HEAD"}, "save": {"POST"}, "delete": {"POST"}}
SYNC_ID_LENGTH = len("2026-08-12T19:00:00.000Z")
MAX_WAIT = int(os.environ["WV_MAX_WAIT"])


def _json(response):
    try:
        return json.loads(response.content)
    except ValueError:
        raise AssertionError(f"{response.status_code} body is not JSON: {response.content[:200]!r}")


def _header(response, name):
    for key, value in response.headers.items():
        if key.lower() == name:
            return value[0] if isinstance(value, list) else value
    return None


OIDC_TOKEN = os.environ["WV_OIDC_TOKEN"]


@schemathesis.check
def session_token_exchange(ctx, response, case):
    """D1 with the valid OIDC token, as a bearer header or as the exact RFC 8693 form, must answer 200."""
    request = response.request
    if urlsplit(request.url).path != "/wallet-session-token.ashx" or request.method.upper() != "POST":
        return None
    body = request.body or b""
    body = body.encode() if isinstance(body, str) else body
    form_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if form_type == "application/x-www-form-urlencoded" and body:
        fields = {name: values[0] for name, values in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
        valid = fields.get("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange" \
            and fields.get("subject_token_type") == "urn:ietf:params:oauth:token-type:access_token" \
            and fields.get("subject_token") == OIDC_TOKEN
    else:
        valid = request.headers.get("Authorization") == "Bearer " + OIDC_TOKEN
    if valid and response.status_code != 200:
        raise AssertionError(f"a valid token exchange was answered {response.status_code}")
    return None


@schemathesis.check
def wallet_backup_actions(ctx, response, case):
    """Ties each /wallet-backup.ashx answer to the action asked for."""
    request = response.request
    url = urlsplit(request.url)
    if url.path != "/wallet-backup.ashx":
        return None
    values = parse_qs(url.query, keep_blank_values=True).get("action")
    action = values[0] if values else None
    method = request.method.upper()
    status = response.status_code
    if action not in ACTIONS or method not in METHODS[action]:
        return None
    if status == 405:
        raise AssertionError(f"{method} action={action} is documented but was answered 405")
    if method == "HEAD":
        return None
    if status == 400 and _json(response).get("error") == "invalid_action":
        raise AssertionError(f"action={action} is documented but was answered invalid_action")
    query = parse_qs(url.query, keep_blank_values=True)
    if action == "load" and method == "GET" and "wait" in query:
        wait = query["wait"][0]
        valid = wait.isascii() and wait.isdigit() and 1 <= len(wait) <= 3 and int(wait) <= MAX_WAIT and "sync_id" not in query
        if status == 400 and _json(response).get("error") == "invalid_wait":
            assert not valid, f"wait={wait!r} is valid but was answered invalid_wait"
        if status in (200, 304, 404, 429):
            assert valid, f"wait={wait!r} (sync_id {'sync_id' in query}) was answered {status}, not invalid_wait"
    etag = _header(response, "etag")
    if status == 304:
        sent = {name.lower() for name in request.headers}
        assert action == "load" and "if-none-match" in sent, "304 without If-None-Match on action=load"
    if status == 409:
        body = _json(response)
        if body.get("sync_id") is None:
            assert etag is None, "409 with sync_id null must not send an ETag"
        else:
            assert etag == f'"{body["sync_id"]}"', f"409 ETag {etag!r} is not the quoted sync_id {body['sync_id']!r}"
    if status != 200:
        return None
    body = _json(response)
    if action == "load":
        required = {"v", "wrappedDeks", "cipher", "iv", "tag", "updatedUtc"}
        assert isinstance(body, dict) and required <= body.keys(), "action=load 200 is not a stored vault blob"
        assert etag and len(etag) == SYNC_ID_LENGTH + 2, f"action=load 200 without a sync_id ETag: {etag!r}"
        assert _header(response, "cache-control") == "no-store", "action=load 200 without Cache-Control: no-store"
    elif action == "versions":
        assert isinstance(body, dict) and set(body) == {"versions"}, 'action=versions 200 is not {"versions": [...]}'
        ids = [entry["sync_id"] for entry in body["versions"]]
        assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids), "versions are not newest first"
    elif action == "save":
        assert isinstance(body, dict) and set(body) == {"ok", "sync_id", "bytes"}, "action=save 200 is not a SaveResult"
        assert etag == f'"{body["sync_id"]}"', f"save ETag {etag!r} is not the quoted sync_id {body['sync_id']!r}"
        sent = request.body or b""
        sent = sent.encode() if isinstance(sent, str) else sent
        assert body["bytes"] == len(sent), f"save reports {body['bytes']} bytes, {len(sent)} were sent"
    elif action == "delete":
        assert body == {"ok": True}, 'action=delete 200 is not {"ok": true}'
    return None
EOF

cat > "$WORK/schemathesis.toml" <<'EOF'
[auth.openapi.oidcAccessToken]
bearer = "${WV_OIDC_TOKEN}"

[auth.openapi.sessionToken]
bearer = "${WV_SESSION_TOKEN}"
EOF

# --- schemathesis ---------------------------------------------------------------------------
SEED=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
CHECKS=not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance,wallet_backup_actions,session_token_exchange
say "schemathesis: max-examples $MAX_EXAMPLES, seed $SEED, workers $WORKERS"
rm -f "$REPORT"
set +e
(cd "$WORK" && SCHEMATHESIS_HOOKS="$WORK/wv_checks.py" "$VENV/bin/schemathesis" --config-file "$WORK/schemathesis.toml" --no-color run "$WORK/openapi.yaml" \
    --url "$BASE" \
    --checks "$CHECKS" \
    --exclude-tag dev-only \
    --phases examples,coverage,fuzzing,stateful \
    --max-examples "$MAX_EXAMPLES" \
    --seed "$SEED" \
    --workers "$WORKERS" \
    --request-timeout 10 \
    --generation-database none \
    --suppress-health-check all \
    --report json --report-json-path "$REPORT")
ST_STATUS=$?
set -e

# --- afterwards: the server must be alive and must not have answered any 5xx -----------------
curl -s --max-time 5 "$BASE/metrics" > "$WORK/metrics.txt" || true
say "answers the server counted (route status count):"
sed -n 's/^walletvault_http_requests_total{route="\([^"]*\)",status="\([0-9]*\)"} \([0-9]*\)$/    \1 \2 \3/p' "$WORK/metrics.txt"
if grep -q '^walletvault_http_requests_total' "$WORK/metrics.txt"; then
    SERVER_ERRORS=$(awk '/^walletvault_http_requests_total\{.*status="5[0-9][0-9]"\}/ { sum += $NF } END { print sum + 0 }' \
        "$WORK/metrics.txt")
else
    SERVER_ERRORS=unknown
fi
ALIVE=yes
kill -0 "$SERVER_PID" 2>/dev/null || ALIVE=no

# The counts schemathesis recorded: "<operations tested>|<cases generated>|<cases failed or errored>|<phases>".
COUNTS=$("$PY" - "$REPORT" <<'EOF' 2>/dev/null || echo "?|0|0|no report"
import json, sys
report = json.load(open(sys.argv[1]))
operations, cases = report["operations"], report["test_cases"]
bad = cases.get("with_failures", 0) + cases.get("errored", 0) + sum(e.get("count", 0) for e in report.get("errors", []))
phases = ", ".join(f"{name} {info['status']}" for name, info in report["phases"].items())
print(f"{operations['tested']}/{operations['total']}|{cases['generated']}|{bad}|{phases}")
EOF
)
IFS='|' read -r OPS CASES BAD PHASES <<< "$COUNTS"
[ "$ST_STATUS" = 0 ] || [ "$BAD" != 0 ] || BAD=1
PASSED=$(( CASES > BAD ? CASES - BAD : 0 ))
say "schemathesis exit $ST_STATUS; operations tested $OPS; phases: $PHASES; seed $SEED"
say "server: $SERVER_ERRORS 5xx answers counted, alive: $ALIVE"
if [ "$ST_STATUS" = 0 ] && [ "$SERVER_ERRORS" = 0 ] && [ "$ALIVE" = yes ]; then
    echo "conformance: $PASSED passed, 0 failed"
    exit 0
fi
[ "$ALIVE" = yes ] || tail -n 20 "$WORK/server.err" >&2
[ "$SERVER_ERRORS" = 0 ] || [ "$BAD" != 0 ] || BAD=1
echo "conformance: $PASSED passed, $BAD failed"
exit 1
}
main "$@"
