#!/usr/bin/env python3
"""Builds a many-user data set for scripts/bench_loads.sh through the server's real endpoints.

    bench_populate.py BASE_URL USERS OUT_DIR [--files] [--tokens-only] [--prefix P] [--threads N]

For each user `P-<i>` (i = 0 .. USERS-1): an access token from the development issuer (/dev-oidc/token), a session
token from D1, and, unless --tokens-only, a save through D2 of a 64 KiB vault blob of its own (random ciphertext, so
no two users' bytes are alike). Every save must answer 200 with the blob's exact length, else the script fails.

Writes OUT_DIR/tokens.lua (`tokens = {...}`, the session tokens in user order) and with --files also
OUT_DIR/files/<i>.json, the exact bytes user i saved, for nginx to serve as the anchor's data set. --tokens-only
mints new session tokens for users already saved (they last ten minutes), from the access tokens kept in
OUT_DIR/oidc.txt when that is under 50 minutes old (the development issuer's last an hour): D1 alone is fast, while
signing an access token costs an RSA signature each.

Concurrency: N threads (default 8), each with one keep-alive connection; saves then share the server's group commits.
"""
import argparse
import base64
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

BLOB_BYTES = 65536


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_blob(user: int) -> bytes:
    """A valid vault blob of exactly 65536 bytes whose cipher is random (trailing JSON whitespace pads the size)."""
    blob = {"v": 1, "wrappedDeks": [{"kek_id": "bench", "dek_cipher": b64(os.urandom(40))}],
            "iv": b64(os.urandom(12)), "tag": b64(os.urandom(16)), "updatedUtc": "2026-08-12T19:00:00Z",
            "hint": f"bench {user}", "cipher": ""}
    room = BLOB_BYTES - len(json.dumps(blob, separators=(",", ":")))
    blob["cipher"] = b64(os.urandom(room * 3 // 4))  # at most `room` letters; canonical (no cut letters)
    text = json.dumps(blob, separators=(",", ":")).encode()
    return text + b" " * (BLOB_BYTES - len(text))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("users", type=int)
    parser.add_argument("out")
    parser.add_argument("--files", action="store_true")
    parser.add_argument("--tokens-only", action="store_true")
    parser.add_argument("--prefix", default="load")
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    url = urllib.parse.urlsplit(args.base)
    local = threading.local()

    def request(method: str, path: str, body: bytes = b"", headers: dict | None = None) -> tuple[int, bytes]:
        for attempt in range(3):
            if not hasattr(local, "connection"):
                local.connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
            try:
                local.connection.request(method, path, body=body, headers=headers or {})
                response = local.connection.getresponse()
                return response.status, response.read()
            except (http.client.HTTPException, OSError):
                local.connection.close()
                del local.connection
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    if args.files:
        os.makedirs(os.path.join(args.out, "files"), exist_ok=True)

    oidc_path = os.path.join(args.out, "oidc.txt")
    kept: list[str] = []
    if args.tokens_only and os.path.exists(oidc_path) and time.time() - os.path.getmtime(oidc_path) < 50 * 60:
        with open(oidc_path) as file:
            kept = file.read().split()
        if len(kept) != args.users:
            kept = []

    def one(user: int) -> tuple[str, str]:
        if kept:
            oidc = kept[user]
        else:
            form = f"sub={args.prefix}-{user}&azp=bench-wallet".encode()
            status, body = request("POST", "/dev-oidc/token", form, {"Content-Type": "application/x-www-form-urlencoded"})
            assert status == 200, (status, body[:200])
            oidc = json.loads(body)["access_token"]
        status, body = request("POST", "/wallet-session-token.ashx", headers={"Authorization": f"Bearer {oidc}"})
        assert status == 200, (status, body[:200])
        session = json.loads(body)["access_token"]
        if not args.tokens_only:
            blob = make_blob(user)
            status, body = request("POST", "/wallet-backup.ashx?action=save", blob,
                                   {"Authorization": f"Bearer {session}", "Content-Type": "application/json"})
            assert status == 200 and json.loads(body)["bytes"] == len(blob), (status, body[:200])
            if args.files:
                with open(os.path.join(args.out, "files", f"{user}.json"), "wb") as file:
                    file.write(blob)
        return oidc, session

    with ThreadPoolExecutor(args.threads) as pool:
        pairs = list(pool.map(one, range(args.users), chunksize=64))
    tokens = [session for _, session in pairs]
    if not kept:
        with open(oidc_path, "w") as file:
            file.write("\n".join(oidc for oidc, _ in pairs) + "\n")
    with open(os.path.join(args.out, "tokens.lua"), "w") as file:
        file.write("tokens = {" + ",".join(f'"{token}"' for token in tokens) + "}\n")
    print(f"bench_populate.py: {args.users} users {'minted' if args.tokens_only else 'saved'}", file=sys.stderr)


if __name__ == "__main__":
    main()
