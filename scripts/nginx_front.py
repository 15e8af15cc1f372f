#!/usr/bin/env python3
"""The documented deployment under attack (issue 29): nginx with deploy/nginx-tls.conf in front of the server.

Starts the built walletvault-server on a free 127.0.0.1 port, and the real nginx (Debian's nginx-light) with
deploy/nginx-tls.conf as written, but for its addresses (127.0.0.1, free ports, the server's port as the upstream) and
a self-signed certificate. Then sends every desync shape of the hostile corpus (hostile.desync_shapes) to nginx over
TLS, one connection each, and checks after each one:

  * the server logged exactly as many requests as nginx forwarded to it (nginx's access log, $upstream_status): a
    request hidden inside another would be one more at the server than nginx knows of;
  * nginx answered the client, never with 500, 502, 503 or 504 (the server failed or sent what nginx could not
    read; nginx's own refusals, a 501 for a coding it does not know among them, are fine);
  * a control request (GET /healthz) on a new connection then gets the server's own 200: nginx keeps its upstream
    connections alive, so a left-over answer on one of them would be handed to the next client.

Prints one line per shape (nginx's answer, forwarded, answered by the server) and `N passed, M failed`; exits 1 on any
failure, 0 also when nginx is missing only if WV_NGINX_OPTIONAL=1 (make test installs it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile  # noqa: E402
import wvlive  # noqa: E402

DEPLOY = os.path.join(wvlive.ROOT, "deploy", "nginx-tls.conf")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def substitute(text: str, pattern: str, replacement: str) -> str:
    """One substitution that must match: a changed deploy/nginx-tls.conf fails here, not silently."""
    changed, count = re.subn(pattern, replacement, text, flags=re.MULTILINE)
    if count == 0:
        raise SystemExit(f"nginx_front.py: deploy/nginx-tls.conf no longer has {pattern!r}; update this script")
    return changed


def nginx_config(work: str, upstream: int, plain: int, tls: int) -> str:
    with open(DEPLOY) as handle:
        site = handle.read()
    site = substitute(site, r"server 127\.0\.0\.1:8080;", f"server 127.0.0.1:{upstream};")
    site = substitute(site, r"^\s*listen \[::\]:\d+.*$", "")
    site = substitute(site, r"listen 80;", f"listen 127.0.0.1:{plain};")
    site = substitute(site, r"listen 443 ssl http2;", f"listen 127.0.0.1:{tls} ssl http2;")
    site = substitute(site, r"ssl_certificate\s+\S+;", f"ssl_certificate {work}/tls-cert.pem;")
    site = substitute(site, r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {work}/tls-key.pem;")
    with open(os.path.join(work, "walletvault.conf"), "w") as handle:
        handle.write(site)
    temp = "\n".join(f"  {kind}_temp_path {work}/{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return f"""daemon off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 256; }}
http {{
{temp}
  log_format front '$status|$upstream_status|$request_method';
  access_log {work}/access.log front;
  include {work}/walletvault.conf;
}}
"""


def lines_of(path: str) -> list[str]:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def server_requests(path: str) -> int:
    count = 0
    for line in lines_of(path):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "route" in record:
            count += 1
    return count


def read_until_quiet(connection: wvlive.Connection, quiet: float = 0.4, total: float = 6.0) -> bytes:
    """What nginx sends until it closes, or has been silent `quiet` seconds after sending something."""
    deadline = time.monotonic() + total
    data = b""
    while time.monotonic() < deadline:
        connection.sock.settimeout(quiet if data else max(0.05, deadline - time.monotonic()))
        try:
            chunk = connection.sock.recv(65536)
        except (socket.timeout, TimeoutError):
            if data:
                break
            continue
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data


def main() -> int:
    if shutil.which("nginx") is None:
        print("nginx_front.py: nginx is not installed (make deps installs nginx-light)")
        return 0 if os.environ.get("WV_NGINX_OPTIONAL") == "1" else 1
    directory = wvlive.temp_directory("wv-nginx-front-")
    # nginx's workers may run as another user than its master (root here): let them into the directory.
    os.chmod(directory, 0o755)
    server = wvlive.Server(wvlive.ServerSetup(os.path.join(directory, "server")), quiet=False)
    context = hostile.Context(server)
    work = os.path.join(directory, "nginx")
    os.makedirs(work)
    wvlive.ServerSetup(work).write_certificate()
    tls_port = free_port()
    with open(os.path.join(work, "nginx.conf"), "w") as handle:
        handle.write(nginx_config(work, server.port, free_port(), tls_port))
    nginx = subprocess.Popen(["nginx", "-c", os.path.join(work, "nginx.conf")], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    failures = passed = 0
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", tls_port), timeout=1).close()
                break
            except OSError:
                if nginx.poll() is not None or time.monotonic() > deadline:
                    print("nginx did not start:", nginx.stderr.read().decode() if nginx.poll() is not None else "",
                          "\n".join(lines_of(os.path.join(work, "error.log"))[-5:]))
                    return 1
                time.sleep(0.1)
        access = os.path.join(work, "access.log")
        log = server.log_path
        for name, build, *_ in hostile.desync_shapes():
            # Built first: a shape's session token is minted from the server directly, which it logs too.
            steps = [step for step in build(context) if isinstance(step, bytes)]
            time.sleep(0.2)
            seen_access, seen_server = len(lines_of(access)), server_requests(log)
            connection = wvlive.Connection(tls_port, 8.0, tls=True)
            for step in steps:
                connection.send(step)
            raw = read_until_quiet(connection)
            connection.close()
            answers = [int(code) for code in re.findall(rb"HTTP/1\.[01] (\d{3}) ", raw)]
            # nginx writes its access line once the exchange ends; the server's line once it answered.
            forwarded, answered, lines = 0, 0, []
            settle = time.monotonic() + 3
            while time.monotonic() < settle:
                lines = lines_of(access)[seen_access:]
                forwarded = sum(1 for line in lines if line.split("|")[1:2] not in (["-"], []))
                answered = server_requests(log) - seen_server
                if len(lines) >= max(1, len(answers)) and answered == forwarded:
                    break
                time.sleep(0.05)
            problems = []
            if not answers:
                problems.append("nginx sent no answer")
            # nginx's own refusals may be any status (it answers 501 to a coding it does not know); a 500, 502, 503 or
            # 504 means the server behind it failed or sent what nginx could not read.
            if any(code in (500, 502, 503, 504) for code in answers):
                problems.append(f"an upstream failure from nginx {answers}")
            if answered != forwarded:
                problems.append(f"the server answered {answered} requests, nginx forwarded {forwarded}")
            if any("," in line.split("|")[1] for line in lines if line.count("|") >= 2):
                problems.append("nginx tried more than one upstream answer")
            control = wvlive.Connection(tls_port, 8.0, tls=True)
            control.send(b"GET /healthz HTTP/1.1\r\nHost: vault.example.com\r\nConnection: close\r\n\r\n")
            replies = wvlive.parse_replies(control.read_all(timeout=8.0)[0])
            control.close()
            if not replies or replies[0].status != 200 or replies[0].body != b'{"status":"ok"}':
                problems.append(f"the control request then got {replies and (replies[0].status, replies[0].body[:60])}")
            verdict = "FAIL" if problems else "ok  "
            print(f"{verdict} {name}: nginx {answers or 'nothing'}, forwarded {forwarded}, answered by the server {answered}"
                  + (f" ({'; '.join(problems)})" if problems else ""))
            failures += bool(problems)
            passed += not problems
            # deploy/nginx-tls.conf allows 30 requests a second from one address (burst 60): stay under it.
            time.sleep(0.1)
    finally:
        nginx.terminate()
        try:
            nginx.wait(10)
        except subprocess.TimeoutExpired:
            nginx.kill()
        server.stop()
        if failures == 0:
            wvlive.remove_directory(directory)
        else:
            print(f"directory kept: {directory}")
    print(f"{passed} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
