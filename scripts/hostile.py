#!/usr/bin/env python3
"""Hostile-input corpus against a live walletvault-server (issue 7).

Starts `.build/debug/walletvault-server` (or $WALLETVAULT_SERVER_BIN) on a free 127.0.0.1 port with a generated test
issuer, stores a canary blob, sends every case of the corpus and checks that each gets its documented status (and
error code), that no answer is a 5xx, that the server stays up, and that the canary blob is byte-for-byte unchanged
afterwards. Prints one line per failure and ends with `N passed, M failed`; exits 1 on any failure.

    python3 scripts/hostile.py            # run the corpus
    python3 scripts/hostile.py --list     # print every case with its expected answer
    python3 scripts/hostile.py -k token   # only cases whose name contains "token"

The corpus is generated below from data (JSONTestSuite `n_` files, field tables, token variants); each case names
the answer the README's API table documents, or, for framing errors libmicrohttpd answers before the service sees a
request, the answer docs/RELIABILITY.md lists.

The few cases that spend their time waiting (a stall to the idle timeout, a trickle) run on their own threads beside
the rest, which run one after another as before; results are printed in case order.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import select
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wvlive  # noqa: E402
from wvlive import DROP, Connection, Reply, b64u, exchange, request_bytes  # noqa: E402

CLOSED = "closed"  # expected: the connection is closed with no answer (a stalled request hitting the idle timeout)
SAVE = "/wallet-backup.ashx?action=save"
LOAD = "/wallet-backup.ashx?action=load"
MINT = "/wallet-session-token.ashx"
LIMIT = 65536
JSON_SUITE = os.path.join(wvlive.ROOT, "Tests", "VaultJSONTests", "Fixtures", "JSONTestSuite", "test_parsing")


@dataclass
class Outcome:
    status: int | None  # None: no answer
    error: str | None = None
    closed: bool = True
    note: str = ""
    extra_statuses: tuple = ()  # later answers on the same connection (must not be 5xx either)
    raw: bytes = b""  # everything the server sent (raw_run only)
    elapsed: float = 0.0  # seconds from the first byte sent to the connection closing or the read timing out


@dataclass
class Case:
    name: str
    run: Callable[["Context"], Outcome]
    status: int | str | tuple  # an int, CLOSED, or a tuple of ints where libmicrohttpd may answer either way
    error: str | None = None
    check: Callable[["Context", Outcome], str | None] | None = None  # extra assertion; returns a failure text
    # Dominated by deliberate waiting (a stall to the idle timeout, a trickle): run on its own thread beside the rest.
    waits: bool = False
    # Timing-sensitive: run first, before any waiting case starts, with no other connection of the corpus open.
    alone: bool = False


class Context:
    def __init__(self, server: wvlive.Server):
        self.server = server
        self.port = server.port
        self.setup = server.setup
        self.issuer = server.setup.issuer
        self.other = server.setup.other
        self.tokens: dict[str, str] = {}
        self.tokens_lock = threading.Lock()  # waiting cases mint their sessions from their own threads
        self.tls_port = 0  # the HTTPS server beside it, same issuer and session keys (desync cases)
        self.canary_body = b""
        self.canary_etag = ""
        self.attacker = wvlive.Signer("attacker-rs256", "RS256")

    def session(self, sub: str, azp: str = "oem-a", issuer=None) -> str:
        key = f"{sub}/{azp}/{(issuer or self.issuer).issuer}"
        with self.tokens_lock:
            if key not in self.tokens:
                self.tokens[key] = self.server.mint((issuer or self.issuer).token(sub=sub, azp=azp))
            return self.tokens[key]

    @property
    def canary(self) -> str:
        return self.session("canary")


def outcome_of(replies: list[Reply], closed: bool) -> Outcome:
    if not replies:
        return Outcome(None, None, closed)
    first = replies[0]
    return Outcome(first.status, first.error, closed, extra_statuses=tuple(r.status for r in replies[1:]))


def simple(method: str, target: str | bytes, headers=None, body: bytes | None = None, token: str | Callable | None = None,
           timeout: float = 10.0) -> Callable[[Context], Outcome]:
    def run(context: Context) -> Outcome:
        all_headers = list(headers or [])
        bearer = token(context) if callable(token) else token
        if bearer is not None:
            all_headers.append(("Authorization", "Bearer " + bearer))
        replies, closed = exchange(context.port, request_bytes(method, target, all_headers, body), timeout)
        return outcome_of(replies, closed)
    return run


def canary_save(body: bytes, headers=None) -> Callable[[Context], Outcome]:
    """A save as the canary user: whatever it is, it must not change the canary's blob."""
    return simple("POST", SAVE, [("Content-Type", "application/json")] + list(headers or []), body,
                  token=lambda c: c.canary)


def dumps(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


# ---------------------------------------------------------------------------------------------------------------
# Bodies


def json_suite_cases() -> list[Case]:
    cases = []
    for name in sorted(os.listdir(JSON_SUITE)):
        if not name.startswith("n_"):
            continue
        with open(os.path.join(JSON_SUITE, name), "rb") as handle:
            body = handle.read()
        if len(body) > LIMIT:
            cases.append(Case(f"json-suite {name} ({len(body)} bytes, over the cap)", canary_save(body), 413,
                              "blob_too_large"))
        else:
            cases.append(Case(f"json-suite {name}", canary_save(body), 400, "invalid_json"))
    return cases


def nested(depth: int, kind: str = "array") -> str:
    """A value nesting `depth` containers deep (depth 1 is one container)."""
    if kind == "array":
        return "[" * depth + "]" * depth
    return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)


def with_member(extra_json: str, marker: str = "canary") -> bytes:
    """The canary-shaped blob with one more member `x` holding raw JSON text."""
    base = wvlive.blob_bytes(marker)
    return base[:-1] + b',"x":' + extra_json.encode() + b"}"


def nesting_cases() -> list[Case]:
    cases = []
    # The blob object is depth 1, so `x` may nest 63 containers deep and no more.
    for depth, kind in [(64, "array"), (64, "object"), (65, "array"), (100, "object"), (2048, "array"), (30000, "array")]:
        total = depth + 1
        body = with_member(nested(depth, kind))
        if len(body) > LIMIT:
            continue
        cases.append(Case(f"nesting: member x {kind}s {depth} deep (document depth {total})", canary_save(body), 400,
                          "invalid_json"))
    for depth in (63, 62):
        cases.append(Case(f"nesting: member x arrays {depth} deep (document depth {depth + 1}) is accepted",
                          simple("POST", SAVE, [("Content-Type", "application/json")],
                                 with_member(nested(depth), marker=f"nest{depth}"), token=lambda c, d=depth: c.session(f"nest-{d}")),
                          200))
    cases.append(Case("nesting: top-level array 65 deep", canary_save(nested(65).encode()), 400, "invalid_json"))
    cases.append(Case("nesting: 32000 open brackets, never closed", canary_save(b"[" * 32000), 400, "invalid_json"))
    return cases


def duplicate_cases() -> list[Case]:
    base = wvlive.blob_bytes("canary")
    inner = base[1:-1].decode()
    cases = [
        ("top level: v twice", "{" + inner + ',"v":1}'),
        ("top level: cipher twice", "{" + inner + ',"cipher":"AAAA"}'),
        ("top level: hint twice (same value)", "{" + inner + ',"hint":"test device"}'),
        ("top level: updatedUtc twice", "{" + inner + ',"updatedUtc":"2026-08-12T19:00:00Z"}'),
        ("top level: wrappedDeks twice", "{" + inner + ',"wrappedDeks":[]}'),
        ("top level: spelled with a \\u escape", "{" + inner + ',"\\u0076":1}'),
        ("top level: unknown member twice", "{" + inner + ',"x":1,"x":2}'),
        ("wrappedDeks[0]: kek_id twice", None),
        ("wrappedDeks[0]: dek_cipher twice", None),
        ("wrappedDeks[1]: unknown member twice", None),
    ]
    out = []
    for name, text in cases:
        if text is None:
            value = wvlive.blob("canary")
            entry = dumps(value["wrappedDeks"][0]).decode()
            if "kek_id" in name:
                entry = entry[:-1] + ',"kek_id":"other"}'
                value_text = dumps(value).decode().replace(dumps(value["wrappedDeks"][0]).decode(), entry)
            elif "dek_cipher" in name:
                entry = entry[:-1] + ',"dek_cipher":"AAAA"}'
                value_text = dumps(value).decode().replace(dumps(value["wrappedDeks"][0]).decode(), entry)
            else:
                second = '{"kek_id":"k2","dek_cipher":"AAAA","label":"a","label":"b"}'
                value_text = dumps(value).decode().replace(entry, entry + "," + second)
            text = value_text
        out.append(Case(f"duplicate member: {name}", canary_save(text.encode()), 400, "invalid_vault_shape"))
    # Deeper levels inside an extra member: duplicates at document depths 2, 3, 10, 40 and 64.
    for depth in (2, 3, 10, 40, 64):
        dup = '{"d":1,"d":2}'
        text = '{"a":' * (depth - 2) + dup + "}" * (depth - 2)
        out.append(Case(f"duplicate member: at document depth {depth}", canary_save(with_member(text)), 400,
                        "invalid_vault_shape"))
    out.append(Case("duplicate member: in an object inside an array", canary_save(with_member('[1,{"d":1,"d":1}]')),
                    400, "invalid_vault_shape"))
    return out


def nul_name_cases() -> list[Case]:
    """Issue 17 §1: U+0000 in a member name, at any depth, is refused (a C-string reader sees a second member)."""
    base = wvlive.blob_bytes("canary")
    inner = base[1:-1].decode()
    cases = [
        ("in an extra member's object", with_member('{"a\\u0000b":1}')),
        ("a top-level name", "{" + inner + ',"x\\u0000":1}'),
        ("cipher\\u0000 beside cipher", "{" + inner + ',"cipher\\u0000":"AAAA"}'),
        ("v\\u0000 beside v", "{" + inner + ',"v\\u0000":2}'),
        ("in an object inside an array", with_member('[1,{"\\u0000":1}]')),
        ("40 levels deep", with_member('{"a":' * 38 + '{"d\\u0000":1}' + "}" * 38)),
    ]
    return [Case(f"NUL in a member name: {name}", canary_save(text if isinstance(text, bytes) else text.encode()), 400,
                 "invalid_vault_shape") for name, text in cases]


WRONG_VALUES = {
    "v": ['"1"', "1.0", "1e0", "true", "null", "[1]", '{"v":1}', "0", "2", "-1", "1.5"],
    "wrappedDeks": ["{}", '"x"', "null", "[]", "[1]", '["s"]', "[null]", "[[]]", "1", "true"],
    "cipher": ["1", "null", "[]", "{}", "true"],
    "iv": ["1", "null", "[]", "{}"],
    "tag": ["1", "null", "[]", "false"],
    "updatedUtc": ["1", "null", "[]", '"2026-08-12T21:00:00+02:00"', '"2026-08-12 19:00:00"', '"yesterday"',
                   '"2026-13-12T19:00:00Z"', '""', "1786561200"],
    "hint": ["1", "null", "[]", "{}", "true", '"' + "h" * 257 + '"'],
}
ENTRY_WRONG = {
    "kek_id": ["1", '""', "null", "[]", "true"],
    "dek_cipher": ["1", "null", "[]", '"a+b/"', '"AAAA="'],
}


def replace_member(blob: dict, name: str, raw: str | None) -> bytes:
    """The blob with member `name` set to raw JSON text (or removed when raw is None)."""
    value = dict(blob)
    value[name] = "__RAW__"
    text = dumps(value).decode()
    if raw is None:
        text = text.replace(f',"{name}":"__RAW__"', "").replace(f'"{name}":"__RAW__",', "")
    else:
        text = text.replace('"__RAW__"', raw)
    return text.encode()


def shape_cases() -> list[Case]:
    base = wvlive.blob("canary")
    cases = []
    for top in ["[]", '"s"', "1", "null", "true", "{}", "[" + dumps(base).decode() + "]"]:
        cases.append(Case(f"shape: top level is {top[:20]}", canary_save(top.encode()), 400, "invalid_vault_shape"))
    for field_name, values in WRONG_VALUES.items():
        if field_name != "hint":
            cases.append(Case(f"shape: {field_name} missing", canary_save(replace_member(base, field_name, None)), 400,
                              "invalid_vault_shape"))
        for raw in values:
            cases.append(Case(f"shape: {field_name} = {raw[:30]}", canary_save(replace_member(base, field_name, raw)),
                              400, "invalid_vault_shape"))
    too_many = dict(base, wrappedDeks=[{"kek_id": f"k{i}", "dek_cipher": "AAAA"} for i in range(65)])
    cases.append(Case("shape: wrappedDeks with 65 entries", canary_save(dumps(too_many)), 400, "invalid_vault_shape"))
    for field_name, values in ENTRY_WRONG.items():
        entry = dict(base["wrappedDeks"][0])
        entry.pop(field_name)
        cases.append(Case(f"shape: wrappedDeks[0].{field_name} missing", canary_save(dumps(dict(base, wrappedDeks=[entry]))),
                          400, "invalid_vault_shape"))
        for raw in values:
            entry_text = replace_member(base["wrappedDeks"][0], field_name, raw).decode()
            text = dumps(dict(base, wrappedDeks="__E__")).decode().replace('"__E__"', "[" + entry_text + "]")
            cases.append(Case(f"shape: wrappedDeks[0].{field_name} = {raw}", canary_save(text.encode()), 400,
                              "invalid_vault_shape"))
    # A good first entry does not excuse a bad second one.
    bad_second = dict(base, wrappedDeks=[base["wrappedDeks"][0], {"kek_id": "k2"}])
    cases.append(Case("shape: wrappedDeks[1] lacks dek_cipher", canary_save(dumps(bad_second)), 400, "invalid_vault_shape"))
    return cases


def base64_cases() -> list[Case]:
    base = wvlive.blob("canary")
    iv = base["iv"]      # 16 characters, 12 bytes
    tag = base["tag"]    # 22 characters, 16 bytes
    plus_slash = wvlive.base64.b64encode(b"\xfb\xff" * 6).decode()  # standard alphabet: '+' and '/'
    variants = {
        "iv": [("padded with =", iv + "="), ("standard alphabet + and /", plus_slash),
               ("a space inside", iv[:8] + " " + iv[8:]), ("an escaped newline inside", iv[:8] + "\\n" + iv[8:]),
               ("a tab at the end", iv + "\\t"), ("a non-ASCII letter", iv[:-1] + "\u00e9"),
               ("one character too many (length 1 mod 4)", iv + "A")],
        "tag": [("padded with ==", tag + "=="), ("standard alphabet", "+/" + tag[2:]),
                ("trailing bits set", tag[:-1] + "B"), ("leading space", " " + tag), ("CRLF inside", tag[:4] + "\\r\\n" + tag[4:])],
        "cipher": [("padded", "AAAA" + "AA=="), ("+ and /", "ab+/"), ("trailing bits set", "AB"),
                   ("length 1 mod 4", "AAAAA"), ("whitespace only", "    "), ("a dot", "AA.A"), ("percent-encoded", "AA%3D")],
        "dek_cipher": [("padded", "AAAAAA=="), ("+ and /", "+/+/"), ("trailing bits", "AAB"), ("space", "AA AA")],
    }
    cases = []
    for field_name, forms in variants.items():
        for label, text in forms:
            if field_name == "dek_cipher":
                entry = dict(base["wrappedDeks"][0], dek_cipher="__T__")
                value = dict(base, wrappedDeks=[entry])
            else:
                value = dict(base, **{field_name: "__T__"})
            body = dumps(value).decode().replace("__T__", text).encode()
            cases.append(Case(f"base64url: {field_name} {label}", canary_save(body), 400, "invalid_vault_shape"))
    for field_name, sizes in (("iv", (11, 13, 0, 16)), ("tag", (15, 17, 0, 12))):
        for size in sizes:
            body = dumps(dict(base, **{field_name: b64u(bytes([3]) * size)}))
            cases.append(Case(f"length: {field_name} of {size} bytes", canary_save(body), 400, "invalid_vault_shape"))
    return cases


def exact_size_blob(size: int, marker: str) -> bytes:
    """A valid blob of exactly `size` bytes, padded with an extra member."""
    prefix = wvlive.blob_bytes(marker)[:-1] + b',"pad":"'
    suffix = b'"}'
    return prefix + b"p" * (size - len(prefix) - len(suffix)) + suffix


def body_cases() -> list[Case]:
    good = wvlive.blob_bytes("canary")
    cases = [
        Case("body: empty", canary_save(b""), 400, "invalid_json"),
        Case("body: whitespace only", canary_save(b"   \n"), 400, "invalid_json"),
        Case("body: a UTF-8 BOM before the blob", canary_save(b"\xef\xbb\xbf" + good), 400, "invalid_json"),
        Case("body: trailing garbage after the blob", canary_save(good + b"x"), 400, "invalid_json"),
        Case("body: two blobs back to back", canary_save(good + good), 400, "invalid_json"),
        Case("body: an unclosed string after the blob", canary_save(good + b'"junk'), 400, "invalid_json"),
        Case("body: a quote after the blob and a newline", canary_save(good + b'\n"'), 400, "invalid_json"),
        Case("body: a raw NUL after the blob", canary_save(good + b"\x00"), 400, "invalid_json"),
        Case("body: a raw NUL inside a string", canary_save(good.replace(b"test device", b"test\x00device")), 400,
             "invalid_json"),
        Case("body: invalid UTF-8 byte in hint", canary_save(good.replace(b"test device", b"test \xff device")), 400,
             "invalid_json"),
        Case("body: overlong UTF-8 '/' in hint", canary_save(good.replace(b"test device", b"test \xc0\xaf")), 400,
             "invalid_json"),
        Case("body: UTF-16LE encoded blob", canary_save(good.decode().encode("utf-16-le")), 400, "invalid_json"),
        Case("body: lone surrogate escape in hint", canary_save(good.replace(b"test device", b"\\ud800")), 400,
             "invalid_json"),
        # Valid JSON (RFC 8259 allows U+0000 in names): parsed, then refused for its shape.
        Case("body: member name with \\u0000", canary_save(b'{"a\\u0000b":1}'), 400, "invalid_vault_shape"),
        Case("body: v = 1e400 (overflow)", canary_save(replace_member(wvlive.blob("canary"), "v", "1e400")), 400,
             "invalid_json"),
        # Past Int64 a number is read as a double, so v is not the integer 1.
        Case("body: v = 2^64 (integer overflow)", canary_save(replace_member(wvlive.blob("canary"), "v",
                                                                             "18446744073709551616")), 400, "invalid_vault_shape"),
        Case("body: NaN", canary_save(replace_member(wvlive.blob("canary"), "v", "NaN")), 400, "invalid_json"),
        Case("body: single quotes", canary_save(good.replace(b'"', b"'")), 400, "invalid_json"),
        Case("body: form-encoded instead of JSON", canary_save(b"v=1&cipher=AAAA"), 400, "invalid_json"),
        # Issue 17 §5: a save whose Content-Type is not JSON is 415, however well its bytes parse.
        *[Case(f"content-type: a valid blob sent as {media}", simple(
            "POST", SAVE, [("Content-Type", media)], wvlive.blob_bytes("evil"), token=lambda c: c.canary), 415,
            "unsupported_media_type") for media in ("text/plain", "multipart/form-data; boundary=x",
                                                    "application/x-www-form-urlencoded", "application/jsonx",
                                                    "application/json-patch+json")],
        Case("content-type: application/json; charset=utf-8 is accepted", simple(
            "POST", SAVE, [("Content-Type", "Application/JSON; charset=utf-8")], wvlive.blob_bytes("ct-user"),
            token=lambda c: c.session("ct-user")), 200),
        Case("content-type: none at all is taken for JSON", simple(
            "POST", SAVE, [], wvlive.blob_bytes("ct-none"), token=lambda c: c.session("ct-none")), 200),
        Case("size: exactly max_blob_bytes is accepted",
             simple("POST", SAVE, [("Content-Type", "application/json")], exact_size_blob(LIMIT, "limit"),
                    token=lambda c: c.session("limit-user")), 200),
        Case("size: max_blob_bytes + 1 is refused", canary_save(exact_size_blob(LIMIT + 1, "canary")), 413, "blob_too_large"),
        Case("size: max_blob_bytes + 1 with Expect: 100-continue",
             canary_save(exact_size_blob(LIMIT + 1, "canary"), [("Expect", "100-continue")]), 413, "blob_too_large"),
        Case("size: 3 MiB body sent whole", canary_save(b"[" + b"0," * (3 << 19) + b"0]"), 413, "blob_too_large"),
    ]
    return cases


# ---------------------------------------------------------------------------------------------------------------
# HTTP framing, over raw sockets


def raw_run(build: Callable[[Context], list], timeout: float = 12.0, tls: bool = False) -> Callable[[Context], Outcome]:
    """Runs a script of steps: bytes to send, a float to sleep, 'half-close'.

    A reader thread collects answers while the steps are sent, so an early answer (a 413 before the body is done)
    is read before the server closes the connection and a reset could discard it. With `tls` the script goes to the
    second server, which serves HTTPS itself.
    """
    def run(context: Context) -> Outcome:
        connection = Connection(context.tls_port if tls else context.port, timeout, tls=tls)
        started = time.monotonic()
        result: dict = {}
        reader = threading.Thread(target=lambda: result.update(zip(("raw", "closed"), connection.read_all(timeout=timeout))))
        if tls:
            # An SSL socket must not be read on one thread while written on another (OpenSSL's SSL object is not
            # thread-safe): over TLS the steps are sent first, then the answers read.
            for step in build(context):
                if isinstance(step, bytes):
                    connection.send(step)
            reader.run()
            connection.close()
            outcome = outcome_of(wvlive.parse_replies(result.get("raw", b"")), result.get("closed", False))
            outcome.raw = result.get("raw", b"")
            outcome.elapsed = time.monotonic() - started
            outcome.note = f"after {outcome.elapsed:.1f} s"
            return outcome
        reader.start()
        try:
            for step in build(context):
                if not reader.is_alive():
                    break
                if isinstance(step, (int, float)):
                    deadline = time.monotonic() + step
                    while reader.is_alive() and time.monotonic() < deadline:
                        time.sleep(0.05)
                elif step == "half-close":
                    connection.half_close()
                elif not connection.send(step):
                    break
            reader.join()
        finally:
            connection.close()
        outcome = outcome_of(wvlive.parse_replies(result.get("raw", b"")), result.get("closed", False))
        outcome.raw = result.get("raw", b"")
        outcome.elapsed = time.monotonic() - started
        outcome.note = f"after {outcome.elapsed:.1f} s"
        return outcome
    return run


def early_answer_run(pieces: int, piece_size: int, pause: float) -> Callable[[Context], Outcome]:
    """Sends a chunked save in `pieces` chunks of `piece_size` bytes, `pause` seconds apart, reading between them;
    the outcome notes how many pieces had gone out when the first byte of an answer arrived."""
    def run(context: Context) -> Outcome:
        connection = Connection(context.port, 15.0)
        sent, answered_after, raw = 0, None, b""
        try:
            connection.send(head(context, chunked=True))
            for _ in range(pieces):
                if not connection.send(chunks(b" " * piece_size, piece_size)[0]):
                    break
                sent += 1
                readable, _, _ = select.select([connection.sock], [], [], pause)
                if readable:
                    answered_after = sent
                    break
            connection.send(b"0\r\n\r\n")
            raw, closed = connection.read_all(timeout=10.0)
        finally:
            connection.close()
        outcome = outcome_of(wvlive.parse_replies(raw), closed)
        outcome.raw = raw
        outcome.note = (f"answered after {answered_after} of {pieces} pieces" if answered_after is not None
                        else f"no answer while {sent} of {pieces} pieces were sent")
        return outcome
    return run


def head(context: Context, target: str = SAVE, extra: list[str] = (), token: str | None = None,
         content_length: int | None = None, chunked: bool = False) -> bytes:
    lines = [f"POST {target} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json", "Connection: close",
             "Authorization: Bearer " + (token or context.canary)]
    if content_length is not None:
        lines.append(f"Content-Length: {content_length}")
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    lines += list(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def chunks(data: bytes, size: int) -> list[bytes]:
    return [b"%x\r\n" % len(data[i:i + size]) + data[i:i + size] + b"\r\n" for i in range(0, len(data), size)]


def framing_cases() -> list[Case]:
    good = wvlive.blob_bytes("canary")
    stall_note = "connection_timeout_seconds=3"
    cases = [
        Case("content-length: claims more than is sent, then stalls (idle timeout closes it)",
             raw_run(lambda c: [head(c, content_length=len(good) + 500) + good, 6.0], timeout=12), CLOSED, waits=True),
        Case("content-length: claims more than is sent, then half-closes",
             raw_run(lambda c: [head(c, content_length=len(good) + 500) + good, "half-close"]), CLOSED),
        Case("content-length: claims less than is sent (the cut body is not JSON)",
             raw_run(lambda c: [head(c, content_length=len(good) // 2) + good]), 400, "invalid_json",
             check=lambda c, o: "a later answer is 5xx" if any(s >= 500 for s in o.extra_statuses) else None),
        Case("content-length: claims 10 MB, nothing sent (refused before reading)",
             raw_run(lambda c: [head(c, content_length=10_000_000)]), 413, "blob_too_large"),
        Case("content-length: claims 2^63 (refused before reading)",
             raw_run(lambda c: [head(c, content_length=2**63 - 1)]), 413, "blob_too_large"),
        Case("content-length: negative", raw_run(lambda c: [head(c, extra=["Content-Length: -5"]) + good]), 400),
        Case("content-length: not a number", raw_run(lambda c: [head(c, extra=["Content-Length: 12abc"]) + good]), 400),
        Case("content-length: larger than 2^64", raw_run(
            lambda c: [head(c, extra=["Content-Length: 99999999999999999999999"]) + good]), (400, 413)),
        Case("chunked: grows past the cap in 8 KiB chunks",
             raw_run(lambda c: [head(c, chunked=True)] + chunks(b"[" + b"1," * 40000 + b"1]", 8192) + [b"0\r\n\r\n"]),
             413, "blob_too_large"),
        # libmicrohttpd 0.9 cannot queue an answer while a body is still arriving, so the server writes the 413 itself
        # once a chunked body passes the cap (plain HTTP), shuts its sending side, and drains the rest of the body up
        # to 4 MiB past the cap; past that it is cut. Before this, the 413 came only at the body's end.
        Case("chunked: 2.5 MiB sent in 64 KiB pieces 50 ms apart reads its 413 before it finishes sending",
             early_answer_run(pieces=40, piece_size=65536, pause=0.05), 413, "blob_too_large",
             check=lambda c, o: None if o.note.startswith("answered after") and int(o.note.split()[2]) <= 4
             else f"the 413 came late: {o.note}", alone=True),
        Case("chunked: grows to 2.5 MiB in 64 KiB chunks (413 as the cap passes, then closed)",
             raw_run(lambda c: [head(c, chunked=True)] + chunks(b" " * (5 << 19), 65536) + [b"0\r\n\r\n"]), 413,
             "blob_too_large", check=lambda c, o: None if o.closed else "the connection stayed open"),
        Case("chunked: grows to 4 MiB in 64 KiB chunks (413 as the cap passes)",
             raw_run(lambda c: [head(c, chunked=True)] + chunks(b" " * (4 << 20), 65536) + [b"0\r\n\r\n"]), 413,
             "blob_too_large"),
        Case("chunked: grows to 6 MiB in 64 KiB chunks (413 as the cap passes, cut past the 4 MiB drain allowance)",
             raw_run(lambda c: [head(c, chunked=True)] + chunks(b" " * (6 << 20), 65536) + [b"0\r\n\r\n"]), 413,
             "blob_too_large"),
        Case("chunked: 1 MiB past the cap, then the last chunk (answered as the cap passes)",
             raw_run(lambda c: [head(c, chunked=True)] + chunks(b" " * (1 << 20), 65536) + [b"0\r\n\r\n"]),
             413, "blob_too_large"),
        Case("chunked: one chunk declaring 1 GiB, 5 MiB of it sent (413 as the cap passes, then cut)",
             raw_run(lambda c: [head(c, chunked=True) + b"40000000\r\n"] + [b"x" * 65536] * 80), 413, "blob_too_large"),
        Case("chunked: one chunk declaring 1 GiB, 70 KB of it sent, then stall (413 as the cap passes)",
             raw_run(lambda c: [head(c, chunked=True) + b"40000000\r\n" + b"x" * 70000, 6.0]), 413, "blob_too_large"),
        Case("chunked: one chunk declaring 1 GiB, 60 KB of it sent, then stall (under the cap: the idle timeout closes it)",
             raw_run(lambda c: [head(c, chunked=True) + b"40000000\r\n" + b"x" * 60000, 6.0]), CLOSED, waits=True),
        Case("chunked: exactly the cap in 1000-byte chunks is accepted",
             raw_run(lambda c: [head(c, token=c.session("chunk-user"), chunked=True)]
                     + chunks(exact_size_blob(LIMIT, "chunk"), 1000) + [b"0\r\n\r\n"]), 200),
        Case("chunked: the cap plus one byte",
             raw_run(lambda c: [head(c, chunked=True)] + chunks(exact_size_blob(LIMIT + 1, "canary"), 1000) + [b"0\r\n\r\n"]),
             413, "blob_too_large"),
        Case("chunked: a chunk size that is not hex", raw_run(lambda c: [head(c, chunked=True) + b"zz\r\nabc\r\n0\r\n\r\n"]),
             400),
        Case("trickle: a valid blob in 12 pieces, 0.4 s apart (under the idle timeout) is accepted",
             raw_run(lambda c: [head(c, token=c.session("trickle-user"), content_length=len(wvlive.blob_bytes("trickle")))]
                     + [x for piece in split(wvlive.blob_bytes("trickle"), 12) for x in (piece, 0.4)], timeout=15), 200,
             waits=True),
        Case("trickle: the canary's bad body in 10 pieces, 0.4 s apart",
             raw_run(lambda c: [head(c, content_length=len(good) + 1)]
                     + [x for piece in split(good + b"x", 10) for x in (piece, 0.4)], timeout=15), 400, "invalid_json",
             waits=True),
        Case("trickle: headers one line every 0.5 s, then stall past the idle timeout",
             raw_run(lambda c: [x for line in head(c, content_length=len(good)).split(b"\r\n")[:4]
                                for x in (line + b"\r\n", 0.5)] + [6.0], timeout=12), CLOSED, waits=True),
        Case("trickle: body stalls half way", raw_run(lambda c: [head(c, content_length=len(good)) + good[:50], 6.0],
                                                      timeout=12), CLOSED, waits=True),
        Case("headers: 5000 small headers", raw_run(lambda c: [head(c, extra=[f"X-H{i}: v" for i in range(5000)],
                                                                    content_length=len(good)) + good]), 431),
        Case("headers: 20000 small headers", raw_run(lambda c: [head(c, extra=[f"X{i}: {i}" for i in range(20000)],
                                                                     content_length=len(good)) + good]), 431),
        Case("headers: one 100 KB header", raw_run(lambda c: [head(c, extra=["X-Big: " + "a" * 100_000],
                                                                   content_length=len(good)) + good]), 431),
        Case("headers: a 64 KB Authorization header", raw_run(
            lambda c: [head(c, token="e" * 65536, content_length=len(good)) + good]), 431),
        Case("headers: a 1 MB header line without end",
             raw_run(lambda c: [b"GET /healthz HTTP/1.1\r\nX-Big: " + b"a" * 1_000_000]), 431),
        Case("request line: 100 KB target", raw_run(lambda c: [f"GET {LOAD}&x={'a' * 100_000} HTTP/1.1\r\nHost: x\r\n\r\n".encode()]),
             (414, 431)),
        # libmicrohttpd's own answers to broken framing (docs/RELIABILITY.md lists them).
        Case("request line: garbage (dropped without an answer)", raw_run(lambda c: [b"HELLO\r\n\r\n"]), CLOSED),
        Case("request line: a NUL byte ends the path at '/' (unknown path)",
             raw_run(lambda c: [b"GET /\x00/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]), 404, "not_found"),
        Case("header: line without a colon", raw_run(lambda c: [b"GET /healthz HTTP/1.1\r\nHost: x\r\nnocolon\r\nConnection: close\r\n\r\n"]),
             400),
        Case("query: raw 0xFF bytes in the action", raw_run(
            lambda c: [b"POST /wallet-backup.ashx?action=sa\xffve HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"]),
             400),
        Case("query: %FF%FE as the action", simple("GET", "/wallet-backup.ashx?action=%FF%FE", token=lambda c: c.canary),
             400, "invalid_action"),
        Case("query: Latin-1 'lo%E4d' action", simple("GET", "/wallet-backup.ashx?action=lo%E4d", token=lambda c: c.canary),
             400, "invalid_action"),
        Case("query: overlong UTF-8 for 'a' in the action", simple(
            "GET", "/wallet-backup.ashx?action=lo%C1%A1d", token=lambda c: c.canary), 400, "invalid_action"),
        Case("query: non-UTF-8 extra parameter on a load still loads", simple(
            "GET", LOAD + "&x=%FF%C0%80", token=lambda c: c.canary), 200,
             check=lambda c, o: None),
        Case("query: raw 0x80-0xFF in the path", raw_run(
            lambda c: [b"GET /wallet-backup\xe4\xff.ashx?action=load HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]),
             (400, 404)),
    ]
    del stall_note
    return cases


SMUGGLED = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"


def count_status_lines(raw: bytes) -> int:
    """Status lines anywhere in what the server sent: a second answer starts right after the first one's body, not
    after a line end, so counting lines that start with `HTTP/1.` missed it."""
    return len(re.findall(rb"HTTP/1\.[01] \d{3} ", raw))


def answered_alone_and_closed(context: Context, outcome: Outcome) -> str | None:
    """One answer (one status line on the wire), then the connection closes at once, not at the idle timeout."""
    status_lines = count_status_lines(outcome.raw)
    if status_lines != 1:
        return f"{status_lines} status lines on the wire (a smuggled request answered, or an answer written twice)"
    if not outcome.closed or outcome.elapsed >= 2.0:
        return f"the connection was not closed after the answer ({outcome.note})"
    return None


def chunk_of(data: bytes) -> bytes:
    return b"%x\r\n" % len(data) + data + b"\r\n0\r\n\r\n"


def keep_alive_head(context: Context, extra: list[str], target: str = SAVE) -> bytes:
    """A save's head without `Connection: close`, so a second request on the connection would be read."""
    lines = [f"POST {target} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
             "Authorization: Bearer " + context.canary] + list(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def smuggling_cases() -> list[Case]:
    """Issue 17 §2 and §3: framing a proxy and this server could read two ways is answered once, then closed."""
    good = wvlive.blob_bytes("canary")
    body = chunk_of(good)
    get = lambda target, extra=b"": [b"GET " + target + b" HTTP/1.1\r\nHost: x\r\n" + extra + b"\r\n" + SMUGGLED]
    cases = [
        ("Content-Length then Transfer-Encoding, a request smuggled after",
         lambda c: [keep_alive_head(c, [f"Content-Length: {len(body)}", "Transfer-Encoding: chunked"]) + body + SMUGGLED],
         400, "malformed_request"),
        ("Transfer-Encoding then Content-Length, a request smuggled after",
         lambda c: [keep_alive_head(c, ["Transfer-Encoding: chunked", f"Content-Length: {len(body)}"]) + body + SMUGGLED],
         400, "malformed_request"),
        ("Content-Length 0 then N (the smuggled request as body for the second)",
         lambda c: [keep_alive_head(c, ["Content-Length: 0", f"Content-Length: {len(SMUGGLED)}"]) + SMUGGLED],
         400, "malformed_request"),
        ("Content-Length N then 0",
         lambda c: [keep_alive_head(c, [f"Content-Length: {len(SMUGGLED)}", "Content-Length: 0"]) + SMUGGLED],
         400, "malformed_request"),
        ("Content-Length twice with the same value",
         lambda c: [keep_alive_head(c, [f"Content-Length: {len(good)}"] * 2) + good + SMUGGLED], 400, "malformed_request"),
        ("a space before the colon of Content-Length",
         lambda c: [keep_alive_head(c, [f"Content-Length : {len(good)}"]) + good + SMUGGLED], 400, None),
        ("a space inside a field name", lambda c: get(b"/healthz", b"X Forwarded: a\r\n"), 400, None),
        ("a control byte in a field name", lambda c: get(b"/healthz", b"X-\x01A: a\r\n"), 400, "malformed_request"),
        ("a NUL in a field value", lambda c: get(b"/healthz", b"X-A: a\x00b\r\n"), 400, "malformed_request"),
        ("a NUL in the Authorization value",
         lambda c: get(LOAD.encode(), b"Authorization: Bearer " + c.canary.encode() + b"\x00junk\r\n"), 400,
         "malformed_request"),
        ("a bare CR in a field value", lambda c: get(b"/healthz", b"X-A: a\rb\r\n"), 400, "malformed_request"),
        ("HTTP/1.1 without Host", lambda c: [b"GET /healthz HTTP/1.1\r\n\r\n" + SMUGGLED], 400, "malformed_request"),
        ("HTTP/1.1 with two Host fields", lambda c: get(b"/healthz", b"Host: y\r\n"), 400, "malformed_request"),
        ("HTTP/1.0 with two Host fields",
         lambda c: [b"GET /healthz HTTP/1.0\r\nHost: x\r\nHost: y\r\n\r\n"], 400, "malformed_request"),
        ("Transfer-Encoding in HTTP/1.0",
         lambda c: [keep_alive_head(c, ["Transfer-Encoding: chunked"]).replace(b"HTTP/1.1", b"HTTP/1.0") + body], 400,
         "malformed_request"),
        # RFC 9112 §6.3: a final coding other than chunked leaves the length unknown, which is 400 (501 was answered).
        ("Transfer-Encoding: gzip", lambda c: [keep_alive_head(c, ["Transfer-Encoding: gzip"]) + good + SMUGGLED], 400,
         "malformed_request"),
        ("Transfer-Encoding: gzip, chunked",
         lambda c: [keep_alive_head(c, ["Transfer-Encoding: gzip, chunked"]) + body + SMUGGLED], 501, "not_implemented"),
        ("Transfer-Encoding: chunked twice",
         lambda c: [keep_alive_head(c, ["Transfer-Encoding: chunked", "Transfer-Encoding: chunked"]) + body + SMUGGLED],
         501, "not_implemented"),
        ("Content-Length 2^64 - 1 (libmicrohttpd's 'unknown')",
         lambda c: [keep_alive_head(c, ["Content-Length: 18446744073709551615"]) + good], 400, "malformed_request"),
        ("Content-Length 2^63 (past Int64)",
         lambda c: [keep_alive_head(c, ["Content-Length: 9223372036854775808"]) + good], 400, "malformed_request"),
        ("encoded NUL after the action of a save", lambda c: [keep_alive_head(
            c, [f"Content-Length: {len(good)}"], target=SAVE + "%00") + wvlive.blob_bytes("evil")], 400, "malformed_request"),
        ("encoded NUL after the action of a load", lambda c: get(
            (LOAD + "%00").encode(), b"Authorization: Bearer " + c.canary.encode() + b"\r\n"), 400, "malformed_request"),
        ("encoded NUL after a valid sync_id", lambda c: get(
            (LOAD + "&sync_id=" + c.canary_etag.strip('"') + "%00").encode(),
            b"Authorization: Bearer " + c.canary.encode() + b"\r\n"), 400, "malformed_request"),
        ("encoded NUL after the backup path", lambda c: get(
            b"/wallet-backup.ashx%00?action=load", b"Authorization: Bearer " + c.canary.encode() + b"\r\n"), 400,
         "malformed_request"),
        ("encoded NUL after /metrics", lambda c: get(b"/metrics%00"), 400, "malformed_request"),
        ("encoded NUL in an extra query value", lambda c: get(b"/healthz?x=a%00b"), 400, "malformed_request"),
    ]
    out = [Case(f"smuggling: {name}", raw_run(build), status, error, check=answered_alone_and_closed)
           for name, build, status, error in cases]
    # A Content-Length that is not digits (or past 2^63 - 1) was answered by libmicrohttpd 0.9.75 itself with its status
    # line and headers written twice (RELIABILITY.md finding 0). The header gate refuses it before libmicrohttpd reads
    # it (issue 29, finding 6): one answer, the service's, then closed.
    for value in ("12abc", "-5", "99999999999999999999999", "", "1_0", "0x10", "+5"):
        out.append(Case(f"smuggling: Content-Length {value[:12]!r} answered once (was libmicrohttpd's doubled head)",
                        raw_run(lambda c, value=value: [keep_alive_head(c, [f"Content-Length: {value}"]) + good + SMUGGLED]),
                        400, "malformed_request", check=answered_alone_and_closed))
    return out


def answered_in_order(count: int) -> Callable[[Context, Outcome], str | None]:
    """Exactly `count` answers on the wire, every one a 2xx-4xx, and the connection closed at once (no hang)."""
    def check(context: Context, outcome: Outcome) -> str | None:
        status_lines = count_status_lines(outcome.raw)
        if status_lines != count:
            return f"{status_lines} status lines on the wire, expected {count}"
        if not outcome.closed or outcome.elapsed >= 2.0:
            return f"the connection was not closed after the answers ({outcome.note})"
        return None
    return check


def not_modified_without_zero_length(context: Context, outcome: Outcome) -> str | None:
    """RFC 9110 §8.6: a 304's Content-Length is absent or the 200's, never the 0 of its empty body."""
    head = outcome.raw.split(b"\r\n\r\n")[0].lower()
    for line in head.split(b"\r\n"):
        if line.startswith(b"content-length:") and line.split(b":", 1)[1].strip() != str(len(context.canary_body)).encode():
            return f"the 304 carries {line.decode()!r}"
    return answered_alone_and_closed(context, outcome)


def fields_of(total: int, prefix: bytes) -> bytes:
    """`prefix` and header lines `X-Fill-N: vvv` after it, `total` bytes with their line ends."""
    lines, size, index = [], len(prefix), 0
    while total - size > 260:
        line = b"X-Fill-%03d: " % index + b"v" * 200 + b"\r\n"
        lines.append(line)
        size += len(line)
        index += 1
    rest = total - size - len(b"X-Last: \r\n")
    return prefix + b"".join(lines) + b"X-Last: " + b"v" * rest + b"\r\n"


def fields_of_count(fields: int, total: int, head: bytes) -> bytes:
    """`head` (request line and fields, each with its CRLF) and filler fields after it, `fields` fields in all and
    `total` bytes with the empty line that ends the section (not included)."""
    present = head.count(b"\r\n") - 1
    count = fields - present
    room = total - len(head) - 2
    per = room // count
    lines = []
    for i in range(count):
        size = per if i < count - 1 else room - per * (count - 1)
        prefix = b"X-%03d: " % i
        lines.append(prefix + b"v" * (size - len(prefix) - 2) + b"\r\n")
    return head + b"".join(lines)


def desync_shapes() -> list[tuple]:
    """Issue 29: the shapes a second round of attacks hid a request inside, and the wrong-but-safe answers, as
    (name, build, status, error, check); scripts/nginx_front.py sends the same builds through nginx."""
    good = wvlive.blob_bytes("canary")
    mine = lambda c, who: c.session(who)  # noqa: E731
    healthz_then = lambda hidden: [b"GET /healthz HTTP/1.1\r\nHost: x\r\n:\r\n" + hidden]  # noqa: E731
    hidden_versions = lambda c: (b"GET /wallet-backup.ashx?action=versions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "  # noqa: E731
                                 + c.canary.encode() + b"\r\n\r\n")
    save_head = lambda c, who, extra: (f"POST {SAVE} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"  # noqa: E731
                                       f"Authorization: Bearer {mine(c, who)}\r\n").encode() + extra + b"\r\n"
    blob = wvlive.blob_bytes("desync")
    one = answered_alone_and_closed
    cases = [
        # 1. An empty field name ended libmicrohttpd's header section: what followed was a second request.
        ("1: a ':' line, then a second request (was 200, 200)",
         lambda c: healthz_then(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n"), 400, "malformed_request", one),
        ("1: a ':' line, then a hidden versions request with its own Authorization",
         lambda c: healthz_then(hidden_versions(c)), 400, "malformed_request", one),
        ("1: ': v' before Content-Length (the length was unseen: 401, then 400)",
         lambda c: [f"POST {SAVE} HTTP/1.1\r\nHost: x\r\n: v\r\nContent-Length: 3\r\n\r\nabc".encode() + SMUGGLED], 400,
         "malformed_request", one),
        ("1: a ':' line in the trailers of a chunked body",
         lambda c: [save_head(c, "desync-1", b"Transfer-Encoding: chunked\r\n") + b"%x\r\n" % len(blob) + blob
                    + b"\r\n0\r\n:\r\n" + SMUGGLED + b"\r\n"], 400, None, one),
        # 2. obs-fold: libmicrohttpd joined a folded line, the CL+TE guard saw one field where a proxy may see two.
        ("2: Content-Length 1 folded onto ' 0', a 10-byte body (was 401, 405)",
         lambda c: [f"POST {SAVE} HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n 0\r\n\r\n0123456789".encode()], 400,
         "malformed_request", one),
        ("2: Transfer-Encoding folded onto ' chunked' beside Content-Length",
         lambda c: [f"POST {SAVE} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n chunked\r\nContent-Length: 5\r\n\r\n"
                    "0\r\n\r\n".encode() + SMUGGLED], 400, "malformed_request", one),
        ("2: an ordinary field folded with a tab",
         lambda c: [b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb\r\n\r\n" + SMUGGLED], 400, "malformed_request", one),
        # 3. Trailing whitespace after chunked: read as "until close" (no answer, no log); now chunked, as RFC 9110 §5.5.
        ("3: 'Transfer-Encoding: chunked ' is chunked: the save is stored, the next request answered",
         lambda c: [save_head(c, "desync-3", b"Transfer-Encoding: chunked \r\n") + chunk_of(blob)
                    + b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"], 200, None, answered_in_order(2)),
        ("3: 'Transfer-Encoding: chunked<HTAB>' is chunked",
         lambda c: [save_head(c, "desync-3", b"Transfer-Encoding: chunked\t\r\nConnection: close\r\n") + chunk_of(blob)],
         200, None, one),
        # 4. A chunk extension longer than libmicrohttpd's buffer got its 500.
        ("4: a 64 KiB chunk extension (was 500)",
         lambda c: [save_head(c, "desync-4", b"Transfer-Encoding: chunked\r\n") + b"%x;a=" % len(blob) + b"x" * 65536
                    + b"\r\n" + blob + b"\r\n0\r\n\r\n"], 400, None, one),
        ("4: a 12 KiB chunk extension is ignored (RFC 9112 §7.1.1), the save stored",
         lambda c: [save_head(c, "desync-4", b"Transfer-Encoding: chunked\r\nConnection: close\r\n") + b"%x;a=" % len(blob)
                    + b"x" * 12288 + b"\r\n" + blob + b"\r\n0\r\n\r\n"], 200, None, one),
        # 5. A 304 said Content-Length: 0.
        ("5: a 304 carries no Content-Length but the 200's",
         lambda c: [f"GET {LOAD} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {c.canary}\r\nIf-None-Match: *\r\n"
                    "Connection: close\r\n\r\n".encode()], 304, None, not_modified_without_zero_length),
        # 6. libmicrohttpd's own Content-Length answers wrote their head twice; '5 <HTAB>' is valid and served.
        ("6: an empty Content-Length (was answered with its head twice)",
         lambda c: [save_head(c, "desync-6", b"Content-Length: \r\n") + good + SMUGGLED], 400, "malformed_request", one),
        ("6: Content-Length '1_0'",
         lambda c: [save_head(c, "desync-6", b"Content-Length: 1_0\r\n") + good + SMUGGLED], 400, "malformed_request", one),
        ("6: Content-Length 'N <HTAB>' is N: the save is stored",
         lambda c: [save_head(c, "desync-6", b"Content-Length: %d \t\r\nConnection: close\r\n" % len(blob)) + blob], 200,
         None, one),
        # 7. RFC 9112 §6.3: chunked not final is 400, not 501.
        ("7: 'Transfer-Encoding: chunked, gzip' (was 501)",
         lambda c: [save_head(c, "desync-7", b"Transfer-Encoding: chunked, gzip\r\n") + chunk_of(blob) + SMUGGLED], 400,
         "malformed_request", one),
        # 8. RFC 9112 §3.2: an invalid Host is 400.
        ("8: 'Host: a b' (was 200)",
         lambda c: [b"GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n" + SMUGGLED], 400, "malformed_request", one),
        ("8: 'Host: a@b' (was 200)",
         lambda c: [b"GET /healthz HTTP/1.1\r\nHost: a@b\r\n\r\n" + SMUGGLED], 400, "malformed_request", one),
        ("8: 'Host: [::1]:8080' is a host",
         lambda c: [b"GET /healthz HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n"], 200, None, one),
        # 9. The header limit is 16 KiB as sent, as README and openapi.yaml say.
        ("9: 100 fields, 98 of them 120 bytes (12 KiB) are served (was 431)",
         lambda c: [b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-F%03d: %s\r\n" % (i, b"v" * 110) for i in range(98))
                    + b"Connection: close\r\n\r\n"], 200, None, one),
        ("9: a header section of exactly 16 KiB as sent is served",
         lambda c: [fields_of(16384 - 2, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n") + b"\r\n"], 200,
         None, one),
        ("9: 101 header fields are 431 (libmicrohttpd keeps 56 bytes per field)",
         lambda c: [b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(100))
                    + b"\r\n"], 431, None, one),
        ("9: 100 header fields are served",
         lambda c: [b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    + b"".join(b"X-%d: v\r\n" % i for i in range(98)) + b"\r\n"], 200, None, one),
        ("9: 100 fields making exactly 16 KiB, on a save, are served (the most libmicrohttpd's pool must hold)",
         lambda c: [fields_of_count(100, 16384, save_head(c, "desync-9", b"Content-Length: %d\r\nConnection: close\r\n"
                                                          % len(blob))[:-2]) + b"\r\n" + blob], 200, None, one),
        ("9: a header section of 16 KiB + 1 is 431",
         lambda c: [fields_of(16385 - 2, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n") + b"\r\n"], 431,
         None, one),
    ]
    return cases


def desync_cases() -> list[Case]:
    """The issue 29 shapes, each over plain HTTP and the server's own TLS (the header gate reads the decrypted bytes
    the same way)."""
    out = []
    for tls in (False, True):
        for name, build, status, error, check in desync_shapes():
            out.append(Case(f"desync {name} ({'TLS' if tls else 'plain'})", raw_run(build, tls=tls), status, error,
                            check=check))
    return out


def split(data: bytes, pieces: int) -> list[bytes]:
    size = -(-len(data) // pieces)
    return [data[i:i + size] for i in range(0, len(data), size)]


# ---------------------------------------------------------------------------------------------------------------
# Tokens


def mint_with(token: Callable[[Context], str]) -> Callable[[Context], Outcome]:
    return simple("POST", MINT, token=token)


def token_cases() -> list[Case]:
    now = lambda: int(time.time())  # noqa: E731
    rs = lambda c: c.issuer.signers["RS256"]  # noqa: E731
    claims = lambda c, **e: c.issuer.claims(sub="canary", **e)  # noqa: E731

    def hs_with_public_key(kind: str):
        def build(c: Context) -> str:
            signer = rs(c)
            secret = {"pem": signer.public_pem(),
                      "pkcs1": signer.public_pem(wvlive.serialization.PublicFormat.PKCS1),
                      "der": signer.public_der(),
                      "jwk": json.dumps(signer.jwk()).encode(),
                      "n": wvlive.b64u_decode(signer.jwk()["n"])}[kind]
            return wvlive.hs256(secret, {"alg": "HS256", "kid": signer.kid, "typ": "at+jwt"}, claims(c))
        return build

    def none_token(c: Context, alg="none", signature="") -> str:
        return wvlive.compact({"alg": alg, "kid": rs(c).kid, "typ": "at+jwt"}, claims(c)) + "." + signature

    def mangle_signature(c: Context, how: str) -> str:
        token = c.issuer.token(sub="canary")
        head_payload, _, signature = token.rpartition(".")
        raw = wvlive.b64u_decode(signature)
        if how == "truncated":
            return head_payload + "." + signature[:-10]
        if how == "one byte short":
            return head_payload + "." + b64u(raw[:-1])
        if how == "one byte long":
            return head_payload + "." + b64u(raw + b"\x00")
        if how == "bit flipped":
            return head_payload + "." + b64u(raw[:-1] + bytes([raw[-1] ^ 1]))
        if how == "empty":
            return head_payload + "."
        if how == "padded":
            return token + "=="
        raise ValueError(how)

    def payload_swapped(c: Context) -> str:
        good = c.issuer.token(sub="canary")
        other = c.issuer.token(sub="mallory")
        h, _, s = good.split(".")
        return h + "." + other.split(".")[1] + "." + s

    cases = [
        ("alg none, empty signature", lambda c: none_token(c)),
        ("alg none, with a signature", lambda c: none_token(c, signature=c.issuer.token().split(".")[2])),
        ("alg None (capitalised)", lambda c: none_token(c, alg="None")),
        ("alg NONE", lambda c: none_token(c, alg="NONE")),
        ("HS256 keyed with the RSA public key (SPKI PEM)", hs_with_public_key("pem")),
        ("HS256 keyed with the RSA public key (PKCS#1 PEM)", hs_with_public_key("pkcs1")),
        ("HS256 keyed with the RSA public key (DER)", hs_with_public_key("der")),
        ("HS256 keyed with the JWK text", hs_with_public_key("jwk")),
        ("HS256 keyed with the modulus bytes", hs_with_public_key("n")),
        ("HS384 keyed with the RSA public key", lambda c: wvlive.hs256(rs(c).public_pem(), {"alg": "HS384", "kid": rs(c).kid, "typ": "at+jwt"}, claims(c))),
        ("expired an hour ago", lambda c: c.issuer.token(sub="canary", iat=now() - 7200, exp=now() - 3600)),
        ("expired 2 minutes ago (past the 60 s leeway)", lambda c: c.issuer.token(sub="canary", exp=now() - 120)),
        ("not valid for another hour (nbf)", lambda c: c.issuer.token(sub="canary", nbf=now() + 3600)),
        ("nbf 2 minutes ahead (past the leeway)", lambda c: c.issuer.token(sub="canary", nbf=now() + 120)),
        # Issue 17 §5: RFC 9068 sets no rule for a future iat; one past the leeway is refused like an early nbf.
        ("iat a day in the future", lambda c: c.issuer.token(sub="canary", iat=now() + 86400, exp=now() + 86700)),
        ("iat 2 minutes ahead (past the leeway)", lambda c: c.issuer.token(sub="canary", iat=now() + 120)),
        ("exp missing", lambda c: c.issuer.token(sub="canary", exp=DROP)),
        ("exp a string", lambda c: c.issuer.token(sub="canary", exp=str(now() + 300))),
        ("exp a huge float", lambda c: c.issuer.token(sub="canary", exp=1e300)),
        ("wrong aud", lambda c: c.issuer.token(sub="canary", aud="someone-else")),
        ("aud array without ours", lambda c: c.issuer.token(sub="canary", aud=["a", "b"])),
        ("aud missing", lambda c: c.issuer.token(sub="canary", aud=DROP)),
        ("aud the session audience", lambda c: c.issuer.token(sub="canary", aud="wallet-backup")),
        ("wrong iss (untrusted issuer)", lambda c: c.issuer.token(sub="canary", iss="https://evil.test")),
        ("iss with a trailing slash", lambda c: c.issuer.token(sub="canary", iss="https://idp.test/")),
        ("iss of the other issuer, signed with this issuer's key", lambda c: c.issuer.token(sub="canary", iss=c.other.issuer)),
        ("iss missing", lambda c: c.issuer.token(sub="canary", iss=DROP)),
        ("typ JWT", lambda c: c.issuer.token(sub="canary", typ="JWT")),
        ("typ missing", lambda c: c.issuer.token(sub="canary", typ=None)),
        ("typ wallet-session+jwt", lambda c: c.issuer.token(sub="canary", typ="wallet-session+jwt")),
        ("typ application/jwt", lambda c: c.issuer.token(sub="canary", typ="application/jwt")),
        ("typ an ID token's (JWT) from the same issuer", lambda c: rs(c).sign(claims(c, nonce="n"), typ="JWT")),
        ("signature truncated by 10 characters", lambda c: mangle_signature(c, "truncated")),
        ("signature one byte short", lambda c: mangle_signature(c, "one byte short")),
        ("signature one byte long", lambda c: mangle_signature(c, "one byte long")),
        ("signature with one bit flipped", lambda c: mangle_signature(c, "bit flipped")),
        ("signature empty", lambda c: mangle_signature(c, "empty")),
        ("signature base64-padded", lambda c: mangle_signature(c, "padded")),
        ("payload swapped under a valid signature", payload_swapped),
        ("unknown kid", lambda c: rs(c).sign(claims(c), kid="no-such-key")),
        ("RS256 signature under the ES256 key's kid", lambda c: rs(c).sign(claims(c), kid="idp-es256")),
        ("alg RS256 with the PS256 key (kid and alg disagree)", lambda c: c.issuer.signers["PS256"].sign(claims(c), alg="RS256")),
        ("ES256 signature in DER form", lambda c: c.issuer.signers["ES256"].sign(claims(c), der_ecdsa=True)),
        ("crit header", lambda c: rs(c).sign(claims(c), header={"crit": ["exp"]})),
        ("an attacker's key embedded as jwk, signed with it", lambda c: c.attacker.sign(
            claims(c), header={"jwk": c.attacker.jwk()})),
        ("an attacker's key embedded as jwk, under the issuer's kid", lambda c: c.attacker.sign(
            claims(c), kid="idp-rs256", header={"jwk": c.attacker.jwk()})),
        ("jku header pointing at an attacker's JWKS", lambda c: c.attacker.sign(
            claims(c), kid="idp-rs256", header={"jku": "http://127.0.0.1:1/jwks"})),
        ("azp not an allowed OEM", lambda c: c.issuer.token(sub="canary", azp="oem-evil")),
        ("azp and client_id missing", lambda c: c.issuer.token(sub="canary", azp=DROP, client_id=DROP)),
        ("oem-b at the other issuer, which allows only oem-a", lambda c: c.other.token(sub="canary", azp="oem-b")),
        ("sub missing", lambda c: c.issuer.token(sub=DROP)),
        ("sub empty", lambda c: c.issuer.token(sub="")),
        ("claims an array", lambda c: rs(c).sign("[1,2]")),
        ("claims not JSON", lambda c: rs(c).sign("not json")),
        ("claims with a duplicate sub", lambda c: rs(c).sign(json.dumps(claims(c))[:-1] + ',"sub":"mallory"}')),
        ("header not JSON", lambda c: b64u(b"{alg") + "." + c.issuer.token().split(".", 1)[1]),
        ("two parts", lambda c: ".".join(c.issuer.token().split(".")[:2])),
        ("four parts", lambda c: c.issuer.token() + ".AAAA"),
        ("JWE-shaped (five parts)", lambda c: "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..AAAA.AAAA.AAAA"),
        ("12 KB of junk", lambda c: "a" * 12000),
        ("a session token on the mint endpoint", lambda c: c.canary),
        ("a session token minted here but typed at+jwt", lambda c: c.setup.session_token(sub="canary", typ="at+jwt")),
    ]
    out = [Case(f"token at mint: {name}", mint_with(build), 401, "invalid_token") for name, build in cases]
    out += [
        Case("token at mint: no Authorization header", simple("POST", MINT), 401, "invalid_token"),
        Case("token at mint: Basic scheme", simple("POST", MINT, [("Authorization", "Basic YWxpY2U6cHc=")]), 401, "invalid_token"),
        Case("token at mint: Bearer with nothing after it", simple("POST", MINT, [("Authorization", "Bearer ")]), 401,
             "invalid_token"),
        Case("form at mint: wrong grant_type", simple("POST", MINT, [("Content-Type", "application/x-www-form-urlencoded")],
                                                       b"grant_type=password&subject_token=x"), 400, "unsupported_grant_type"),
        Case("form at mint: wrong subject_token_type", simple(
            "POST", MINT, [("Content-Type", "application/x-www-form-urlencoded")],
            b"grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=x"
            b"&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aid_token"), 400, "invalid_request"),
        Case("form at mint: subject_token missing", simple(
            "POST", MINT, [("Content-Type", "application/x-www-form-urlencoded")],
            b"grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
            b"&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token"), 400, "invalid_request"),
        Case("form at mint: alg none token in the form", lambda c: simple(
            "POST", MINT, [("Content-Type", "application/x-www-form-urlencoded")],
            ("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
             "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token&subject_token="
             + none_token(c)).encode())(c), 401, "invalid_token"),
        Case("form at mint: 20 KB form (over the 16 KiB cap)", simple(
            "POST", MINT, [("Content-Type", "application/x-www-form-urlencoded")], b"grant_type=" + b"a" * 20000), 413,
             "request_too_large"),
        # Controls: the same machinery with nothing wrong must pass, or the 401s above prove nothing.
        Case("control: RS256 access token mints", mint_with(lambda c: c.issuer.token(sub="control")), 200),
        Case("control: PS256 access token mints", mint_with(lambda c: c.issuer.token(sub="control", alg="PS256")), 200),
        Case("control: ES256 access token mints", mint_with(lambda c: c.issuer.token(sub="control", alg="ES256")), 200),
        Case("control: expired 30 s ago (inside the leeway) mints",
             mint_with(lambda c: c.issuer.token(sub="control", exp=now() - 30)), 200),
        Case("control: a token without kid verifies against the one issuer key for its alg",
             mint_with(lambda c: rs(c).sign(claims(c), kid=None)), 200),
        Case("control: the other issuer's token for oem-a mints", mint_with(lambda c: c.other.token(sub="control")), 200),
        Case("control: iat 30 s ahead (inside the leeway) mints",
             mint_with(lambda c: c.issuer.token(sub="control", iat=now() + 30)), 200),
    ]
    # Session tokens at the backup endpoint.
    session_cases = [
        ("an OIDC access token on save", lambda c: c.issuer.token(sub="canary"), "save"),
        ("an OIDC access token on load", lambda c: c.issuer.token(sub="canary"), "load"),
        ("alg none session token", lambda c: wvlive.compact({"alg": "none", "kid": "s1", "typ": "wallet-session+jwt"},
                                                            json.loads(wvlive.b64u_decode(c.canary.split(".")[1]))) + ".", "load"),
        ("session token signed with another secret", lambda c: c.setup.session_token(sub="canary", secret=b"k" * 32), "save"),
        ("session token expired", lambda c: c.setup.session_token(sub="canary", exp=now() - 3600), "load"),
        ("session token not yet valid", lambda c: c.setup.session_token(sub="canary", nbf=now() + 3600), "load"),
        ("session token with the OIDC audience", lambda c: c.setup.session_token(sub="canary", aud="wallet-app"), "load"),
        ("session token with another iss", lambda c: c.setup.session_token(sub="canary", iss="https://idp.test"), "load"),
        ("session token without the scope", lambda c: c.setup.session_token(sub="canary", scope=DROP), "load"),
        ("session token typed at+jwt", lambda c: c.setup.session_token(sub="canary", typ="at+jwt"), "load"),
        ("session token without typ", lambda c: c.setup.session_token(sub="canary", typ=None), "load"),
        ("session token with an unknown kid", lambda c: c.setup.session_token(sub="canary", kid="s9"), "load"),
        ("session token signed RS256 by the issuer", lambda c: rs(c).sign(
            json.loads(wvlive.b64u_decode(c.canary.split(".")[1])), typ="wallet-session+jwt"), "load"),
        ("session token HS256 keyed with the issuer's public key", lambda c: wvlive.hs256(
            rs(c).public_pem(), {"alg": "HS256", "kid": "s1", "typ": "wallet-session+jwt"},
            json.loads(wvlive.b64u_decode(c.canary.split(".")[1]))), "load"),
        ("session token with its payload edited to another sub", lambda c: c.canary.split(".")[0] + "." + b64u(
            c.canary_payload_for("mallory")) + "." + c.canary.split(".")[2], "load"),
        ("session token truncated", lambda c: c.canary[:-5], "load"),
        ("session token without oidc_iss", lambda c: c.setup.session_token(sub="canary", oidc_iss=DROP), "load"),
        # Issue 17 §5: signed with the server's key, but for an issuer the server does not trust.
        ("session token naming an unconfigured oidc_iss (load)",
         lambda c: c.setup.session_token(sub="canary", oidc_iss="https://evil.test"), "load"),
        ("session token naming an unconfigured oidc_iss (save)",
         lambda c: c.setup.session_token(sub="canary", oidc_iss="https://idp.test/"), "save"),
    ]
    for name, build, action in session_cases:
        if action == "save":
            run = lambda c, b=build: simple("POST", SAVE, [("Content-Type", "application/json")],
                                            wvlive.blob_bytes("evil"), token=b(c))(c)
        else:
            run = lambda c, b=build: simple("GET", LOAD, token=b(c))(c)
        out.append(Case(f"token at backup: {name}", run, 401, "invalid_token"))
    # Another OEM (or issuer) for the same person never reaches the canary's blob.
    out += [
        Case("token at backup: oem-b's session for the canary's sub loads nothing",
             simple("GET", LOAD, token=lambda c: c.session("canary", azp="oem-b")), 404, "not_found"),
        Case("token at backup: the other issuer's session for the canary's sub loads nothing",
             simple("GET", LOAD, token=lambda c: c.session("canary", issuer=c.other)), 404, "not_found"),
        Case("token at backup: oem-b's session cannot overwrite the canary's version (If-Match its ETag)",
             lambda c: simple("POST", SAVE, [("Content-Type", "application/json"), ("If-Match", c.canary_etag)],
                              wvlive.blob_bytes("evil"), token=c.session("canary", azp="oem-b"))(c), 409, "conflict",
             check=lambda c, o: None),
        Case("token at backup: a session token for azp oem-evil (forged with the real key, azp outside allowed_azp) "
             "still only reaches its own key", simple("GET", LOAD, token=lambda c: c.setup.session_token(sub="canary", azp="oem-evil")),
             404, "not_found"),
    ]
    return out


# ---------------------------------------------------------------------------------------------------------------
# Routing and preconditions


def api_cases() -> list[Case]:
    return [
        Case("api: unknown action", simple("GET", "/wallet-backup.ashx?action=destroy", token=lambda c: c.canary), 400,
             "invalid_action"),
        Case("api: no action", simple("GET", "/wallet-backup.ashx", token=lambda c: c.canary), 400, "invalid_action"),
        Case("api: action given twice", simple("GET", "/wallet-backup.ashx?action=load&action=save",
                                                token=lambda c: c.canary), (200, 400)),
        Case("api: save with GET", simple("GET", SAVE, token=lambda c: c.canary), 405, "method_not_allowed"),
        Case("api: load with POST", simple("POST", LOAD, body=b"{}", token=lambda c: c.canary), 405, "method_not_allowed"),
        Case("api: save with PUT", simple("PUT", SAVE, body=wvlive.blob_bytes("canary"), token=lambda c: c.canary), 405,
             "method_not_allowed"),
        Case("api: mint with GET", simple("GET", MINT), 405, "method_not_allowed"),
        Case("api: mint with DELETE", simple("DELETE", MINT), 405, "method_not_allowed"),
        Case("api: unknown method FOO on save", simple("FOO", SAVE, token=lambda c: c.canary), 405),
        Case("api: unknown path", simple("GET", "/wallet-backup.aspx"), 404, "not_found"),
        Case("api: path traversal", simple("GET", "/../../etc/passwd"), 404, "not_found"),
        Case("api: If-None-Match other than * on save", canary_save(wvlive.blob_bytes("canary"), [("If-None-Match", '"x"')]),
             400, "invalid_precondition"),
        Case("api: If-None-Match * when a version exists", canary_save(wvlive.blob_bytes("evil"), [("If-None-Match", "*")]),
             409, "conflict"),
        Case("api: If-Match a stale version", canary_save(wvlive.blob_bytes("evil"), [("If-Match", '"2001-01-01T00:00:00.000Z"')]),
             409, "conflict"),
        Case("api: If-Match garbage", canary_save(wvlive.blob_bytes("evil"), [("If-Match", "\x7f\x7f")]), (400, 409)),
        Case("api: load with If-None-Match of the current version", lambda c: simple(
            "GET", LOAD, [("If-None-Match", c.canary_etag)], token=c.canary)(c), 304),
    ]


def all_cases() -> list[Case]:
    return (json_suite_cases() + nesting_cases() + duplicate_cases() + nul_name_cases() + shape_cases() + base64_cases()
            + body_cases() + framing_cases() + smuggling_cases() + desync_cases() + token_cases() + api_cases())


# ---------------------------------------------------------------------------------------------------------------


def judge(case: Case, outcome: Outcome, context: Context) -> str | None:
    expected = case.status
    # 501 is the documented answer to an unknown transfer coding; any other 5xx is a failure.
    if outcome.status is not None and outcome.status >= 500 and outcome.status != expected:
        return f"got {outcome.status} {outcome.error or ''} (a 5xx)"
    if any(status >= 500 for status in outcome.extra_statuses):
        return f"a later answer on the connection was {outcome.extra_statuses}"
    if expected == CLOSED:
        if outcome.status is not None:
            return f"expected the connection closed without an answer, got {outcome.status} {outcome.error or ''}"
        if not outcome.closed:
            return "expected the connection closed, it stayed open"
    else:
        allowed = expected if isinstance(expected, tuple) else (expected,)
        if outcome.status not in allowed:
            got = "no answer" if outcome.status is None else f"{outcome.status} {outcome.error or ''}"
            return f"expected {expected} {case.error or ''}, got {got} {outcome.note}".rstrip()
        if case.error and outcome.error != case.error:
            return f"expected error {case.error}, got {outcome.error}"
    if case.check:
        return case.check(context, outcome)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="print the cases and their expected answers")
    parser.add_argument("-k", default="", help="run only cases whose name contains this text")
    parser.add_argument("-v", action="store_true", help="print every case")
    arguments = parser.parse_args()

    cases = [case for case in all_cases() if arguments.k in case.name]
    if arguments.list:
        for case in cases:
            print(f"{case.status!s:>12} {case.error or '':<24} {case.name}")
        print(f"{len(cases)} cases")
        return 0

    directory = wvlive.temp_directory("wv-hostile-")
    server = wvlive.Server(wvlive.ServerSetup(directory, max_blob_bytes=LIMIT, connection_timeout=3))
    # The same issuer and session keys behind the server's own TLS, for the cases that run over both.
    tls_server = wvlive.Server(dataclasses.replace(server.setup, directory=os.path.join(directory, "tls"), tls=True))
    context = Context(server)
    context.tls_port = tls_server.port
    failures = 0
    passed = 0
    try:
        # The canary: stored before the corpus, compared byte for byte after it.
        context.canary_body = wvlive.blob_bytes("canary", hint="stored before the corpus")
        reply = wvlive.http(server.port, "POST", SAVE, [("Content-Type", "application/json")], context.canary_body,
                            token=context.canary)
        if reply is None or reply.status != 200:
            print(f"FAIL setup: canary save answered {reply and reply.status}")
            return 1
        context.canary_etag = reply.header("etag")
        # The same canary behind TLS, for the 304 case there.
        tls_connection = Connection(tls_server.port, 10.0, tls=True)
        tls_connection.send(request_bytes("POST", SAVE, [("Content-Type", "application/json"),
                                                         ("Authorization", "Bearer " + context.canary)], context.canary_body))
        tls_replies = wvlive.parse_replies(tls_connection.read_all()[0])
        tls_connection.close()
        if not tls_replies or tls_replies[0].status != 200:
            print(f"FAIL setup: canary save over TLS answered {tls_replies and tls_replies[0].status}")
            return 1
        payload = json.loads(wvlive.b64u_decode(context.canary.split(".")[1]))
        context.canary_payload_for = lambda sub: json.dumps(dict(payload, sub=sub), separators=(",", ":")).encode()

        started = time.monotonic()
        # Each case's (outcome, problem, server alive after it), filled in by whichever thread ran it; results are
        # judged where they were run but printed below in case order, as if the corpus had run one case at a time.
        results: list[tuple[Outcome, str | None, bool] | None] = [None] * len(cases)

        def run_case(index: int) -> bool:
            case = cases[index]
            try:
                outcome = case.run(context)
                problem = judge(case, outcome, context)
            except Exception as error:  # a harness error is a failure too, never a silent pass
                problem = f"runner error {type(error).__name__}: {error}"
                outcome = Outcome(None)
            alive = server.alive()
            results[index] = (outcome, problem, alive)
            return alive

        # 1. Timing-sensitive cases, with nothing else of the corpus in flight. 2. The waiting cases (stalls to the
        # idle timeout, trickles), each on its own thread: they only sleep between sends, and none of them stores a
        # blob for a user another case touches. 3. Everything else, one after another on this thread, as before.
        # A dead server stops what has not started yet.
        alone = [i for i, case in enumerate(cases) if case.alone]
        waiting = [i for i, case in enumerate(cases) if case.waits and not case.alone]
        rest = [i for i, case in enumerate(cases) if not case.waits and not case.alone]
        threads = []
        if all(run_case(i) for i in alone):
            for i in waiting:
                thread = threading.Thread(target=run_case, args=(i,), daemon=True)
                thread.start()
                threads.append(thread)
            all(run_case(i) for i in rest)
        for thread in threads:
            thread.join()

        for case, result in zip(cases, results):
            if result is None:  # not run: the server had exited (the case it exited after is reported below)
                continue
            outcome, problem, alive = result
            if not alive:
                problem = (problem + "; " if problem else "") + f"server exited with {server.process.returncode}"
            if problem:
                failures += 1
                print(f"FAIL {case.name}: {problem}")
                if not alive:
                    print(server.log_tail())
                    break
            else:
                passed += 1
                if arguments.v:
                    print(f"ok   {case.name}: {outcome.status}")

        # The server is still up and answering, and the canary is exactly as stored.
        health = wvlive.http(server.port, "GET", "/healthz")
        if health is None or health.status != 200:
            failures += 1
            print(f"FAIL after the corpus: /healthz answered {health and health.status}")
        else:
            passed += 1
        load = wvlive.http(server.port, "GET", LOAD, token=context.canary)
        if load is None or load.status != 200 or load.body != context.canary_body or load.header("etag") != context.canary_etag:
            failures += 1
            print(f"FAIL after the corpus: canary blob changed or unreadable ({load and load.status})")
        else:
            passed += 1
        if arguments.v:
            print(f"{len(cases)} cases in {time.monotonic() - started:.1f} s")
    finally:
        server.stop()
        tls_server.stop()
        if failures == 0:
            wvlive.remove_directory(directory)
        else:
            print(f"server directory kept: {directory}")
    print(f"{passed} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
