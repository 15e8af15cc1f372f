#!/usr/bin/env bash
# Direct TLS (issue 20): sslyze and openssl against a live walletvault-server serving HTTPS itself.
#
#   scripts/tls_scan.sh [--server PATH] [--keep]
#
# Expects the server already built (`swift build`; default binary .build/debug/walletvault-server).
# Installs sslyze (scripts/tls_scan_requirements.txt, pinned) into .build/tls-scan-venv when missing or
# when the requirements changed. Makes a throwaway PKI with openssl in a temporary directory: a root CA,
# an intermediate CA, and two leaf certificates for 127.0.0.1 (ECDSA P-256 and RSA 2048), each served
# as a chain file (leaf, then intermediate). Then, one server at a time on a free loopback port:
#
#   ecdsa    tls.profile intermediate (the default), ECDSA chain: sslyze --mozilla_config=intermediate
#   rsa      tls.profile intermediate, RSA chain:                 sslyze --mozilla_config=intermediate
#   modern   tls.profile modern, ECDSA chain:                      sslyze --mozilla_config=modern
#
# Each scan must end "OK - Compliant". sslyze is given the throwaway root (--certinfo_ca_file), so its
# certificate path check runs against the served chain instead of being excused. For every server:
# curl with only the root as trust anchor fetches /healthz (the intermediate must be served); and
# `openssl s_client -tls1` and `-tls1_1` (with -cipher DEFAULT@SECLEVEL=0, so Debian's OpenSSL is willing)
# must get no session, after the same client completed both handshakes with a local `openssl s_server`,
# which shows the refusal is the server's. The intermediate server must also fail sslyze's "modern"
# check (it offers TLS 1.2): a scan that cannot fail proves nothing.
#
# Prints a summary of each sslyze scan; the full outputs are left in .build/tls-scan/.
# Last line: "tls_scan: N passed, M failed". Exit status 0 when every check passed, 1 on any failure,
# 2 on a setup error.
set -euo pipefail
# Everything runs inside main, which bash reads whole before running: editing or checking out
# this file while a run is going cannot change what the run does.
main() {

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SERVER=${WV_SERVER_BINARY:-$ROOT/.build/debug/walletvault-server}
VENV=$ROOT/.build/tls-scan-venv
REQUIREMENTS=$ROOT/scripts/tls_scan_requirements.txt
OUT=$ROOT/.build/tls-scan
KEEP=no

usage() { sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --server) SERVER=${2:?--server needs a path}; shift ;;
        --keep) KEEP=yes ;;
        -h|--help) usage; exit 0 ;;
        *) echo "tls_scan: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

say() { echo "tls_scan: $*"; }
die() { echo "tls_scan: $*" >&2; echo "tls_scan: FAILED (setup)"; exit 2; }
PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); say "ok   $*"; }
fail() { FAILED=$((FAILED + 1)); say "FAIL $*"; }

[ -x "$SERVER" ] || die "no server binary at $SERVER (run 'swift build' first)"
command -v openssl >/dev/null || die "openssl is required"
command -v curl >/dev/null || die "curl is required"

# --- sslyze in a venv, reinstalled when the pinned requirements change ----------------------
STAMP=$VENV/.requirements.sha256
WANT=$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)
if [ ! -x "$VENV/bin/sslyze" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    say "installing sslyze into $VENV"
    command -v python3 >/dev/null || die "python3 is required"
    python3 -m venv "$VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQUIREMENTS" || die "pip install failed"
    echo "$WANT" > "$STAMP"
fi
PY=$VENV/bin/python

WORK=$(mktemp -d "${TMPDIR:-/tmp}/wv-tls-scan.XXXXXX")
SERVER_PID=
CONTROL_PID=
stop_server() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
    [ -z "$SERVER_PID" ] || wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}
cleanup() {
    local status=$?
    stop_server
    if [ -n "$CONTROL_PID" ]; then kill "$CONTROL_PID" 2>/dev/null || true; wait "$CONTROL_PID" 2>/dev/null || true; fi
    if [ "$KEEP" = yes ]; then echo "tls_scan: kept $WORK" >&2; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
rm -rf "$OUT"
mkdir -p "$OUT"

# --- a throwaway PKI: root, intermediate, ECDSA and RSA leaves for 127.0.0.1 ------------------
# The extensions are what an RFC 5280 path validator (sslyze uses pyca/cryptography's) requires.
PKI=$WORK/pki
mkdir -p "$PKI"
(
    cd "$PKI"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout root.key -out root.pem -days 2 \
        -subj "/CN=WalletVault tls_scan root" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    printf '%s\n' "basicConstraints=critical,CA:TRUE,pathlen:0" "keyUsage=critical,keyCertSign,cRLSign" \
        "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid" > intermediate.ext
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout intermediate.key -out intermediate.csr \
        -subj "/CN=WalletVault tls_scan intermediate"
    openssl x509 -req -in intermediate.csr -CA root.pem -CAkey root.key -CAcreateserial -days 2 \
        -extfile intermediate.ext -out intermediate.pem
    printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
        "extendedKeyUsage=serverAuth" "subjectAltName=IP:127.0.0.1" \
        "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid" > leaf.ext
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ecdsa.key -out ecdsa.csr -subj "/CN=127.0.0.1"
    openssl req -new -newkey rsa:2048 -nodes -keyout rsa.key -out rsa.csr -subj "/CN=127.0.0.1"
    for kind in ecdsa rsa; do
        openssl x509 -req -in "$kind.csr" -CA intermediate.pem -CAkey intermediate.key -CAcreateserial -days 2 \
            -extfile leaf.ext -out "$kind.pem"
        cat "$kind.pem" intermediate.pem > "$kind-chain.pem"
    done
    openssl verify -CAfile root.pem -untrusted intermediate.pem ecdsa.pem rsa.pem
) > "$WORK/pki.log" 2>&1 || { cat "$WORK/pki.log" >&2; die "could not make the test certificates"; }
say "test PKI: root -> intermediate -> {ECDSA P-256, RSA 2048} leaves for 127.0.0.1"

printf '[{"kid":"tls-scan","secret":"%s"}]\n' "$(head -c 32 /dev/urandom | basenc --base64url | tr -d '=\n')" \
    > "$WORK/session-keys.json"
head -c 32 /dev/urandom > "$WORK/pepper"

# --- one server ------------------------------------------------------------------------------
# start_server NAME CHAIN KEY PROFILE: writes a config (the issuer's JWKS URL is never fetched: nothing
# here presents a token) and sets PORT from the line the server prints.
start_server() {
    local name=$1 chain=$2 key=$3 profile=$4 directory=$WORK/$1
    mkdir -p "$directory"
    cat > "$directory/config.json" <<EOF
{ "listen": "127.0.0.1:0",
  "database": "sqlite:$directory/vault.sqlite",
  "issuers": [ { "issuer": "https://idp.invalid", "jwks_uri": "https://idp.invalid/jwks.json", "audiences": ["wallet-app"] } ],
  "session_keys_file": "$WORK/session-keys.json",
  "storage_key_pepper_file": "$WORK/pepper",
  "limits": { "max_connections_per_ip": 0 },
  "tls": { "certificate_file": "$chain", "key_file": "$key", "profile": "$profile" } }
EOF
    "$SERVER" --config "$directory/config.json" --quiet > "$directory/server.out" 2> "$directory/server.err" &
    SERVER_PID=$!
    PORT=
    for _ in $(seq 1 300); do
        PORT=$(sed -n 's|^walletvault-server listening on https://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$directory/server.out" | head -n1)
        [ -n "$PORT" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$directory/server.err" >&2; die "the $name server exited during startup"; }
        sleep 0.1
    done
    [ -n "$PORT" ] || die "the $name server did not report an https port within 30 s"
}

# sslyze_scan NAME PROFILE: runs sslyze against the running server, prints a summary of the JSON result,
# and echoes the compliance verdict line.
sslyze_scan() {
    local name=$1 profile=$2
    set +e
    "$PY" -m sslyze "127.0.0.1:$PORT" --mozilla_config="$profile" --certinfo_ca_file "$PKI/root.pem" \
        --json_out "$OUT/$name-$profile.json" > "$OUT/$name-$profile.txt" 2>&1
    SSLYZE_STATUS=$?
    set -e
    VERDICT=$(sed -n "s|^ *127\.0\.0\.1:$PORT: ||p" "$OUT/$name-$profile.txt" | head -n1)
}

summarize() {
    "$PY" - "$1" <<'EOF' || echo "    (no JSON result)"
import json, sys
result = json.load(open(sys.argv[1]))["server_scan_results"][0]
scans = result["scan_result"]
for field, label in [("ssl_2_0_cipher_suites", "SSL 2.0"), ("ssl_3_0_cipher_suites", "SSL 3.0"),
                     ("tls_1_0_cipher_suites", "TLS 1.0"), ("tls_1_1_cipher_suites", "TLS 1.1"),
                     ("tls_1_2_cipher_suites", "TLS 1.2"), ("tls_1_3_cipher_suites", "TLS 1.3")]:
    accepted = [suite["cipher_suite"]["name"] for suite in scans[field]["result"]["accepted_cipher_suites"]]
    print(f"    {label}: " + (", ".join(accepted) if accepted else "refused"))
curves = scans["elliptic_curves"]["result"]["supported_curves"] or []
print("    groups: " + ", ".join(curve["name"] for curve in curves))
deployment = scans["certificate_info"]["result"]["certificate_deployments"][0]
chain = deployment["received_certificate_chain"]
print(f"    certificate chain sent: {len(chain)} certificates, {chain[0]['public_key']['algorithm']}"
      f" {chain[0]['public_key']['key_size']} bits; verified against the test root:"
      f" {'yes' if deployment['verified_certificate_chain'] else 'no'}")
checks = [("compression", scans["tls_compression"]["result"]["supports_compression"] is False),
          ("heartbleed", scans["heartbleed"]["result"]["is_vulnerable_to_heartbleed"] is False),
          ("ccs injection", scans["openssl_ccs_injection"]["result"]["is_vulnerable_to_ccs_injection"] is False),
          ("robot", scans["robot"]["result"]["robot_result"].startswith("NOT_VULNERABLE")),
          ("secure renegotiation", scans["session_renegotiation"]["result"]["supports_secure_renegotiation"]),
          ("TLS_FALLBACK_SCSV", scans["tls_fallback_scsv"]["result"]["supports_fallback_scsv"]),
          ("extended master secret", scans["tls_extended_master_secret"]["result"]["supports_ems_extension"])]
print("    " + ", ".join(f"{name} {'ok' if good else 'NOT OK'}" for name, good in checks))
EOF
}

# legacy_refused NAME: TLS 1.0 and 1.1 handshakes against the running server must not produce a session.
legacy_refused() {
    local name=$1 version
    for version in tls1 tls1_1; do
        set +e
        timeout 20 openssl s_client -connect "127.0.0.1:$PORT" "-$version" -cipher 'DEFAULT@SECLEVEL=0' \
            -CAfile "$PKI/root.pem" < /dev/null > "$OUT/$name-$version.txt" 2>&1
        local status=$?
        set -e
        # A ClientHello went out ("written N bytes", N > 0) and no cipher was agreed.
        if [ "$status" != 0 ] && grep -q 'Cipher is (NONE)' "$OUT/$name-$version.txt" \
            && grep -Eq 'SSL handshake has read [0-9]+ bytes and written [1-9][0-9]* bytes' "$OUT/$name-$version.txt"; then
            pass "$name: openssl s_client -$version refused by the server"
        else
            fail "$name: openssl s_client -$version was not refused (see $OUT/$name-$version.txt)"
        fi
    done
}

# --- control: this openssl can do TLS 1.0 and 1.1 when the server allows them -----------------
# s_server ends a connection when its stdin reaches end of file (only -quiet and -brief stop that, and
# they also hide the ACCEPT line naming the port): give it a FIFO held open here, which never does.
mkfifo "$WORK/control.stdin"
exec 3<> "$WORK/control.stdin"
for version in tls1 tls1_1; do
    openssl s_server -accept 127.0.0.1:0 -cert "$PKI/ecdsa.pem" -key "$PKI/ecdsa.key" "-$version" \
        -cipher 'DEFAULT@SECLEVEL=0' -naccept 1 <&3 > "$WORK/control.out" 2>&1 &
    CONTROL_PID=$!
    CONTROL_PORT=
    for _ in $(seq 1 100); do
        CONTROL_PORT=$(sed -n 's|^ACCEPT 127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$WORK/control.out" | head -n1)
        [ -n "$CONTROL_PORT" ] && break
        sleep 0.05
    done
    [ -n "$CONTROL_PORT" ] || die "openssl s_server did not start"
    set +e
    timeout 20 openssl s_client -connect "127.0.0.1:$CONTROL_PORT" "-$version" -cipher 'DEFAULT@SECLEVEL=0' \
        < /dev/null > "$OUT/control-$version.txt" 2>&1
    set -e
    kill "$CONTROL_PID" 2>/dev/null || true
    wait "$CONTROL_PID" 2>/dev/null || true
    CONTROL_PID=
    if grep -Eq 'Protocol *: TLSv1(\.1)?$' "$OUT/control-$version.txt" && ! grep -q 'Cipher is (NONE)' "$OUT/control-$version.txt"; then
        pass "control: openssl s_client -$version completes a handshake with openssl s_server"
    else
        fail "control: openssl s_client -$version cannot do $version even with openssl s_server, so its refusals below prove nothing"
    fi
done
exec 3>&-

# --- the servers -------------------------------------------------------------------------------
for entry in "ecdsa ecdsa intermediate" "rsa rsa intermediate" "modern ecdsa modern"; do
    read -r name kind profile <<< "$entry"
    start_server "$name" "$PKI/$kind-chain.pem" "$PKI/$kind.key" "$profile"
    say "$name: server pid $SERVER_PID on https://127.0.0.1:$PORT (tls.profile $profile, $kind chain)"

    if curl -s --max-time 10 --cacert "$PKI/root.pem" "https://127.0.0.1:$PORT/healthz" | grep -q '"ok"'; then
        pass "$name: curl trusting only the root fetches /healthz (leaf + intermediate served)"
    else
        fail "$name: curl trusting only the root could not fetch /healthz"
    fi

    sslyze_scan "$name" "$profile"
    say "$name: sslyze --mozilla_config=$profile: ${VERDICT:-no verdict} (exit $SSLYZE_STATUS)"
    summarize "$OUT/$name-$profile.json"
    if [ "$SSLYZE_STATUS" = 0 ] && [ "$VERDICT" = "OK - Compliant." ]; then
        pass "$name: sslyze --mozilla_config=$profile compliant"
    else
        sed -n '/COMPLIANCE AGAINST/,$p' "$OUT/$name-$profile.txt"
        fail "$name: sslyze --mozilla_config=$profile not compliant (see $OUT/$name-$profile.txt)"
    fi

    if [ "$profile" = intermediate ] && [ "$name" = ecdsa ]; then
        sslyze_scan "$name" modern
        if [ "$SSLYZE_STATUS" != 0 ] && grep -q 'tls_versions:.*TLSv1.2' "$OUT/$name-modern.txt"; then
            pass "$name: sslyze --mozilla_config=modern finds TLS 1.2 (the scan can fail)"
        else
            fail "$name: sslyze --mozilla_config=modern did not flag TLS 1.2 on an intermediate server: ${VERDICT:-no verdict}"
        fi
    fi

    legacy_refused "$name"
    kill -0 "$SERVER_PID" 2>/dev/null && pass "$name: server alive after the scans" || fail "$name: server died during the scans"
    stop_server
done

echo "tls_scan: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
}
main "$@"
