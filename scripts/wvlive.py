"""Shared helpers for the live-server scripts (hostile corpus, crash test, soak).

Starts the built `walletvault-server` on a free 127.0.0.1 port with a generated test issuer, mints
tokens, speaks raw HTTP/1.1 over sockets, and builds seed-shaped blobs. Only 127.0.0.1 is ever used.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".build", "hostile-venv")
REQUIREMENTS = os.path.join(ROOT, "Tests", "Hostile", "requirements.txt")


def ensure_cryptography() -> None:
    """Re-executes the calling script inside .build/hostile-venv when `cryptography` is missing."""
    try:
        import cryptography  # noqa: F401
        return
    except ImportError:
        pass
    python = os.path.join(VENV, "bin", "python3")
    if os.path.abspath(sys.executable) == os.path.abspath(python):
        sys.exit("cryptography is missing even inside %s" % VENV)
    if not os.path.exists(python):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        subprocess.check_call([python, "-m", "pip", "install", "-q", "-r", REQUIREMENTS])
    os.execv(python, [python] + sys.argv)


ensure_cryptography()

from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils  # noqa: E402


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64u_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


def compact(header: dict | str | bytes, claims: dict | str | bytes) -> str:
    """base64url(header).base64url(payload), from dicts (compact JSON) or raw text."""
    def part(value):
        if isinstance(value, dict):
            value = json.dumps(value, separators=(",", ":"))
        if isinstance(value, str):
            value = value.encode()
        return b64u(value)
    return part(header) + "." + part(claims)


class Signer:
    """One issuer key: RS256 (RSA 2048), PS256 or ES256 (P-256)."""

    def __init__(self, kid: str, alg: str):
        self.kid, self.alg = kid, alg
        if alg in ("RS256", "PS256"):
            self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            self.key = ec.generate_private_key(ec.SECP256R1())

    def jwk(self) -> dict:
        public = self.key.public_key().public_numbers()
        if self.alg in ("RS256", "PS256"):
            return {"kty": "RSA", "kid": self.kid, "use": "sig", "alg": self.alg,
                    "n": b64u(int_bytes(public.n)), "e": b64u(int_bytes(public.e))}
        return {"kty": "EC", "kid": self.kid, "use": "sig", "alg": "ES256", "crv": "P-256",
                "x": b64u(public.x.to_bytes(32, "big")), "y": b64u(public.y.to_bytes(32, "big"))}

    def public_pem(self, fmt=serialization.PublicFormat.SubjectPublicKeyInfo) -> bytes:
        return self.key.public_key().public_bytes(serialization.Encoding.PEM, fmt)

    def public_der(self) -> bytes:
        return self.key.public_key().public_bytes(serialization.Encoding.DER,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo)

    def signature(self, signing_input: bytes, der_ecdsa: bool = False) -> bytes:
        if self.alg == "RS256":
            return self.key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
        if self.alg == "PS256":
            return self.key.sign(signing_input, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())
        der = self.key.sign(signing_input, ec.ECDSA(hashes.SHA256()))
        if der_ecdsa:
            return der
        r, s = utils.decode_dss_signature(der)
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    def sign(self, claims: dict | str | bytes, typ: str | None = "at+jwt", header: dict | None = None,
             alg: str | None = None, kid: str | None = "", der_ecdsa: bool = False) -> str:
        head = {"alg": alg or self.alg}
        if kid is not None:
            head["kid"] = kid or self.kid
        if typ is not None:
            head["typ"] = typ
        if header:
            head.update(header)
        signing_input = compact(head, claims)
        return signing_input + "." + b64u(self.signature(signing_input.encode(), der_ecdsa))


def hs256(secret: bytes, header: dict, claims: dict | str | bytes) -> str:
    signing_input = compact(header, claims)
    return signing_input + "." + b64u(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest())


@dataclass
class Issuer:
    issuer: str
    audience: str
    signers: dict[str, Signer]

    @classmethod
    def make(cls, issuer: str, prefix: str, audience: str = "wallet-app", algs=("RS256", "PS256", "ES256")):
        return cls(issuer, audience, {alg: Signer(f"{prefix}-{alg.lower()}", alg) for alg in algs})

    def jwks(self) -> dict:
        return {"keys": [signer.jwk() for signer in self.signers.values()]}

    def claims(self, sub="alice", azp="oem-a", now=None, **edits) -> dict:
        now = int(now or time.time())
        claims = {"iss": self.issuer, "aud": self.audience, "sub": sub, "azp": azp, "client_id": azp,
                  "iat": now, "exp": now + 300, "jti": secrets.token_hex(8)}
        for key, value in edits.items():
            if value is DROP:
                claims.pop(key, None)
            else:
                claims[key] = value
        return {key: value for key, value in claims.items() if value is not DROP}

    def token(self, sub="alice", azp="oem-a", alg="RS256", typ="at+jwt", **edits) -> str:
        return self.signers[alg].sign(self.claims(sub=sub, azp=azp, **edits), typ=typ)


DROP = object()


# ---------------------------------------------------------------------------------------------------------------
# Raw HTTP/1.1


@dataclass
class Reply:
    status: int
    reason: str
    headers: dict[str, str]
    body: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def error(self) -> str | None:
        try:
            value = json.loads(self.body)
        except ValueError:
            return None
        return value.get("error") if isinstance(value, dict) else None

    def json(self):
        return json.loads(self.body)


def parse_replies(data: bytes) -> list[Reply]:
    """Every complete response in `data` (each framed by Content-Length, or running to the end)."""
    replies = []
    while data:
        end = data.find(b"\r\n\r\n")
        if end < 0 or not data.startswith(b"HTTP/"):
            break
        head = data[:end].decode("latin-1").split("\r\n")
        match = re.match(r"HTTP/\d\.\d (\d{3}) ?(.*)", head[0])
        if not match:
            break
        headers = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        rest = data[end + 4:]
        status = int(match.group(1))
        # A 304, a 204 and a 1xx end at their header section whatever Content-Length says (RFC 9112 §6.3): a 304
        # names the length its 200 would have had (RFC 9110 §8.6).
        length = "0" if status in (204, 304) or 100 <= status < 200 else headers.get("content-length")
        if length is not None and length.isdigit():
            body, data = rest[:int(length)], rest[int(length):]
        else:
            body, data = rest, b""
        replies.append(Reply(status, match.group(2), headers, body))
    return replies


class Connection:
    """One TCP connection to the server; sends bytes as told and reads what comes back."""

    def __init__(self, port: int, timeout: float = 10.0, tls: bool = False):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls:
            # The server's own self-signed certificate (ServerSetup with tls): the bytes inside are what is tested.
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            self.sock = context.wrap_socket(self.sock)
        self.timeout = timeout
        self.broken = False

    def send(self, data: bytes) -> bool:
        if self.broken:
            return False
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.broken = True
            return False

    def half_close(self):
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def read_all(self, limit: int = 4 << 20, timeout: float | None = None) -> tuple[bytes, bool]:
        """Reads until the server closes (True) or the timeout passes (False)."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        data = b""
        while len(data) < limit:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return data, False
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return data, False
            except OSError:
                return data, True
            if not chunk:
                return data, True
            data += chunk
        return data, False

    def read_reply(self, timeout: float | None = None) -> Reply | None:
        """Reads exactly one response framed by Content-Length (keep-alive use)."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        data = b""
        while True:
            end = data.find(b"\r\n\r\n")
            if end >= 0:
                replies = parse_replies(data)
                if replies:
                    length = replies[0].headers.get("content-length")
                    if length is None or replies[0].status in (204, 304) or len(data) >= end + 4 + int(length):
                        return replies[0]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except (socket.timeout, OSError):
                return None
            if not chunk:
                return None
            data += chunk

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def request_bytes(method: str, target: str | bytes, headers: list[tuple[str, str]] | None = None,
                  body: bytes | None = None, content_length: bool = True, close: bool = True,
                  version: str = "HTTP/1.1") -> bytes:
    if isinstance(target, str):
        target = target.encode()
    lines = [method.encode() + b" " + target + b" " + version.encode(), b"Host: 127.0.0.1"]
    for name, value in headers or []:
        lines.append(name.encode() + b": " + (value if isinstance(value, bytes) else value.encode("latin-1")))
    if body is not None and content_length:
        lines.append(b"Content-Length: %d" % len(body))
    if close:
        lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n" + (body or b"")


def exchange(port: int, data: bytes, timeout: float = 10.0) -> tuple[list[Reply], bool]:
    """Sends `data` on a fresh connection, reads until close; returns the responses and whether it closed."""
    connection = Connection(port, timeout)
    try:
        connection.send(data)
        raw, closed = connection.read_all()
        return parse_replies(raw), closed
    finally:
        connection.close()


def http(port: int, method: str, target: str, headers=None, body: bytes | None = None, token: str | None = None,
         timeout: float = 10.0) -> Reply | None:
    headers = list(headers or [])
    if token is not None:
        headers.append(("Authorization", "Bearer " + token))
    replies, _ = exchange(port, request_bytes(method, target, headers, body), timeout)
    return replies[0] if replies else None


# ---------------------------------------------------------------------------------------------------------------
# Blobs


def blob(marker: str = "v1", hint: str = "test device", cipher_bytes: int = 32, **edits) -> dict:
    cipher = marker.encode()[:cipher_bytes].ljust(cipher_bytes, b"Z")
    value = {"v": 1,
             "wrappedDeks": [{"kek_id": "device-" + marker, "dek_cipher": b64u(bytes([7]) * 40)}],
             "cipher": b64u(cipher), "iv": b64u(bytes([1]) * 12), "tag": b64u(bytes([2]) * 16),
             "updatedUtc": "2026-08-12T19:00:00Z", "hint": hint}
    for key, item in edits.items():
        if item is DROP:
            value.pop(key, None)
        else:
            value[key] = item
    return value


def blob_bytes(marker: str = "v1", **kwargs) -> bytes:
    return json.dumps(blob(marker, **kwargs), separators=(",", ":"), sort_keys=True).encode()


# ---------------------------------------------------------------------------------------------------------------
# The server


def server_binary() -> str:
    return os.environ.get("WALLETVAULT_SERVER_BIN", os.path.join(ROOT, ".build", "debug", "walletvault-server"))


@dataclass
class ServerSetup:
    """A config directory with a test issuer (and a second one), session keys and pepper."""
    directory: str
    max_blob_bytes: int = 65536
    saves_per_hour: int = 100000
    connection_timeout: int = 3
    max_connections: int = 1024
    max_connections_per_ip: int = 0
    header_timeout: float = 20
    threads: int = 4
    database: str | None = None
    tls: bool = False  # serve HTTPS directly, with a self-signed P-256 certificate for 127.0.0.1
    issuer: Issuer = field(default_factory=lambda: Issuer.make("https://idp.test", "idp"))
    other: Issuer = field(default_factory=lambda: Issuer.make("https://other-idp.test", "other", algs=("RS256",)))
    session_secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))

    def write(self) -> str:
        os.makedirs(self.directory, exist_ok=True)
        def dump(name, value):
            with open(os.path.join(self.directory, name), "w") as handle:
                json.dump(value, handle)
        dump("idp-jwks.json", self.issuer.jwks())
        dump("other-jwks.json", self.other.jwks())
        dump("session-keys.json", [{"kid": "s1", "secret": b64u(self.session_secret)}])
        with open(os.path.join(self.directory, "pepper"), "wb") as handle:
            handle.write(b"hostile-test-pepper-0123456789abcdef")
        config = {
            "listen": "127.0.0.1:0",
            "database": self.database or "sqlite:vault.sqlite",
            "issuers": [
                {"issuer": self.issuer.issuer, "jwks_file": "idp-jwks.json", "audiences": [self.issuer.audience],
                 "allowed_azp": ["oem-a", "oem-b"]},
                {"issuer": self.other.issuer, "jwks_file": "other-jwks.json", "audiences": [self.other.audience],
                 "allowed_azp": ["oem-a"]},
            ],
            "session_keys_file": "session-keys.json",
            "storage_key_pepper_file": "pepper",
            "threads": self.threads,
            "limits": {"max_blob_bytes": self.max_blob_bytes, "saves_per_hour": self.saves_per_hour,
                       "connection_timeout_seconds": self.connection_timeout,
                       "max_connections": self.max_connections,
                       "max_connections_per_ip": self.max_connections_per_ip,
                       "header_timeout_seconds": self.header_timeout},
        }
        if self.tls:
            self.write_certificate()
            config["tls"] = {"certificate_file": "tls-cert.pem", "key_file": "tls-key.pem"}
        path = os.path.join(self.directory, "config.json")
        dump("config.json", config)
        return path

    def write_certificate(self):
        import datetime
        import ipaddress
        from cryptography import x509
        from cryptography.x509.oid import NameOID
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
        now = datetime.datetime.now(datetime.timezone.utc)
        certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                       .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
                       .not_valid_after(now + datetime.timedelta(days=1))
                       .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                      critical=False)
                       .sign(key, hashes.SHA256()))
        with open(os.path.join(self.directory, "tls-cert.pem"), "wb") as handle:
            handle.write(certificate.public_bytes(serialization.Encoding.PEM))
        with open(os.path.join(self.directory, "tls-key.pem"), "wb") as handle:
            handle.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))

    def session_token(self, sub="alice", azp="oem-a", oidc_iss=None, typ="wallet-session+jwt", kid="s1",
                      secret=None, now=None, alg="HS256", **edits) -> str:
        """A session token minted here with the server's own secret (for forging variants)."""
        now = int(now or time.time())
        claims = {"iss": "walletvault", "aud": "wallet-backup", "sub": sub, "azp": azp,
                  "oidc_iss": oidc_iss or self.issuer.issuer, "scope": "wallet-backup.ashx",
                  "iat": now, "nbf": now, "exp": now + 600, "jti": secrets.token_hex(8)}
        for key, value in edits.items():
            if value is DROP:
                claims.pop(key, None)
            else:
                claims[key] = value
        claims = {key: value for key, value in claims.items() if value is not DROP}
        header = {"alg": alg, "kid": kid}
        if typ is not None:
            header["typ"] = typ
        return hs256(secret or self.session_secret, header, claims)


class Server:
    """The built binary, started with `--config` on a free port; `kill()` is SIGKILL, `restart()` reuses the config."""

    def __init__(self, setup: ServerSetup, quiet: bool = True, port: int = 0):
        self.setup = setup
        self.config = setup.write()
        self.quiet = quiet
        self.log_path = os.path.join(setup.directory, "server.log")
        self.process = None
        self.port = port
        self.start()

    def start(self):
        arguments = [server_binary(), "--config", self.config]
        if self.port:
            arguments += ["--listen", f"127.0.0.1:{self.port}"]
        if self.quiet:
            arguments.append("--quiet")
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        line = self.process.stdout.readline().decode()
        match = re.search(r"https?://127\.0\.0\.1:(\d+)", line)
        if not match:
            self.process.kill()
            raise RuntimeError("server did not start: %r\n%s" % (line, self.log_tail()))
        self.port = int(match.group(1))

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self):
        if self.alive():
            self.process.send_signal(signal.SIGKILL)
        if self.process:
            self.process.wait()

    def stop(self):
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log_tail(self, lines: int = 20) -> str:
        try:
            with open(self.log_path, "rb") as handle:
                return b"\n".join(handle.read().splitlines()[-lines:]).decode("utf-8", "replace")
        except OSError:
            return ""

    def mint(self, access_token: str) -> str:
        reply = http(self.port, "POST", "/wallet-session-token.ashx", token=access_token)
        if reply is None or reply.status != 200:
            raise RuntimeError("mint failed: %s" % (reply and (reply.status, reply.body)))
        return reply.json()["access_token"]


def temp_directory(prefix: str) -> str:
    return tempfile.mkdtemp(prefix=prefix)


def remove_directory(path: str):
    shutil.rmtree(path, ignore_errors=True)
