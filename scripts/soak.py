#!/usr/bin/env python3
"""Load and soak (issue 7): steady mixed traffic from 64 keep-alive connections, then 500 slow connections.

For `--duration` seconds (default 600) each of `--connections` workers sends one request every
connections/rate seconds on its own keep-alive connection, a mix of:

  mint 10%  save 25%  load 35%  conditional load (304) 5%  conflicting save (409) 10%  rate-limited save (429) 15%

Every user belongs to one worker, so every answer is known in advance (200/404 loads, 409 for a stale If-Match or
If-None-Match: *, 200 then 429 once a hot user's saves pass saves_per_hour); anything else is an unexpected status.
The server's resident memory (VmRSS) and open file descriptors are sampled every 5 s (body files, open only while a
request sends or writes one, are not counted).

The warm-up brings the server's bounded memory to its steady state before the baseline is taken, so that growth
after it means a leak rather than a cache filling up:

* each worker first saves each of its users `--prefill-saves` times (default 10, the server's history_versions):
  every user then has a blob in the in-memory blob cache and a full version history, the database file stops
  growing (older versions are trimmed as new ones arrive) and SQLite's page caches have filled;
* then `--warmup-slow-rounds` (default 2) rounds of `--slow` slow connections are held while the traffic goes on:
  on the build this was measured on (38e18e6) the allocator's high-water mark for that many open connections was
  reached within two such rounds (a third and a fourth raised RSS no further); with saves on 64 storage threads
  (8482892) it was not, see docs/RELIABILITY.md;
* the warm-up ends at min(120 s, 20% of the run) or 10 s after the last of those rounds, whichever is later; the
  baseline is the median RSS of the 30 s after it.

From 50% of the run, for min(120 s, 20%), `--slow` extra connections are held open, each trickling one header byte
every few seconds (under the idle timeout), while the workers keep going; their latency p99 in that window is
compared with the p99 before it. The server cuts each of them once its header section has taken
`--header-timeout` seconds (`limits.header_timeout_seconds`, 20 s by default), and the slow client opens a new one
for each cut, as a slowloris would. Session tokens are refreshed every 300 s, so the verified-token cache gains one
generation of entries inside the measured part of a 600 s run (bounded growth that counts against the limit).

Pass: zero unexpected statuses and no failed requests; RSS growth from the baseline to the end (median of the last
30 s) under 5%; no file descriptor growth (the count at the end is not above the count after warm-up); no slow connection answered;
every slow connection cut within its header deadline (plus 8 s: the trickle's cycle, the sweep), and all of
them cut when the window outlasts that, else all still open; p99 in the slow window at most 1.5x the p99 before it.

    scripts/soak.py [--duration 600] [--rate 128] [--connections 64] [--slow 500] [--prefill-saves 10]
                    [--header-timeout 20]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wvlive  # noqa: E402
from wvlive import Connection, request_bytes  # noqa: E402

SAVE = "/wallet-backup.ashx?action=save"
LOAD = "/wallet-backup.ashx?action=load"
MINT = "/wallet-session-token.ashx"


class Worker(threading.Thread):
    def __init__(self, index: int, run: "Run"):
        super().__init__(daemon=True)
        self.index = index
        self.run_state = run
        self.rng = random.Random(index)
        self.users = [f"soak-{index}-{n}" for n in range(run.users_per_worker)]
        self.hot = f"hot-{index}"
        self.tokens: dict[str, tuple[str, float]] = {}
        self.stored: dict[str, str] = {}  # user -> ETag of the version this worker last saved
        self.hot_saves = 0
        self.connection: Connection | None = None

    def request(self, method, target, headers=(), body=None, token=None):
        headers = list(headers)
        if token:
            headers.append(("Authorization", "Bearer " + token))
        data = request_bytes(method, target, headers, body if body is not None else (b"" if method == "POST" else None),
                             close=False)
        for attempt in range(2):
            if self.connection is None:
                self.connection = Connection(self.run_state.port, timeout=15)
                self.run_state.count("connects")
            started = time.monotonic()
            if self.connection.send(data):
                reply = self.connection.read_reply()
                if reply is not None:
                    if (reply.header("connection") or "").lower() == "close":
                        self.connection.close()
                        self.connection = None
                    return reply, time.monotonic() - started
            self.connection.close()
            self.connection = None
            if attempt == 0:
                self.run_state.count("reconnects")
        return None, 0.0

    def token(self, user: str) -> str:
        token, minted = self.tokens.get(user, ("", 0.0))
        if not token or time.monotonic() - minted > self.run_state.token_refresh:
            reply, latency = self.request("POST", MINT, token=self.run_state.issuer.token(sub=user))
            self.run_state.record("mint", reply, (200,), latency)
            if reply is not None and reply.status == 200:
                token = reply.json()["access_token"]
                self.tokens[user] = (token, time.monotonic())
        return token

    def body(self, user: str) -> bytes:
        return wvlive.blob_bytes(f"{user}-{self.rng.randrange(1 << 30)}", cipher_bytes=self.rng.choice([64, 1024, 8192]))

    def step(self):
        run = self.run_state
        choice = self.rng.random()
        user = self.rng.choice(self.users)
        if choice < 0.10:  # mint: D1 with a fresh access token (the session token in use is refreshed every 300 s)
            reply, latency = self.request("POST", MINT, token=run.issuer.token(sub=user))
            run.record("mint", reply, (200,), latency)
        elif choice < 0.35:  # save
            reply, latency = self.request("POST", SAVE, [("Content-Type", "application/json")], self.body(user),
                                          token=self.token(user))
            run.record("save", reply, (200,), latency)
            if reply is not None and reply.status == 200:
                self.stored[user] = reply.header("etag")
        elif choice < 0.70:  # load
            reply, latency = self.request("GET", LOAD, token=self.token(user))
            run.record("load", reply, (200,) if user in self.stored else (404,), latency)
            if reply is not None and reply.status == 200 and reply.header("etag") != self.stored.get(user):
                run.count("unexpected")
                run.note(f"load of {user}: ETag {reply.header('etag')} is not the last saved {self.stored.get(user)}")
        elif choice < 0.75:  # conditional load
            if user not in self.stored:
                return self.step()
            reply, latency = self.request("GET", LOAD, [("If-None-Match", self.stored[user])], token=self.token(user))
            run.record("load-304", reply, (304,), latency)
        elif choice < 0.85:  # conflicts
            if user not in self.stored:
                return self.step()
            if self.rng.random() < 0.5:
                headers = [("If-Match", '"2020-01-01T00:00:00.000Z"')]
            else:
                headers = [("If-None-Match", "*")]
            reply, latency = self.request("POST", SAVE, [("Content-Type", "application/json")] + headers,
                                          self.body(user), token=self.token(user))
            run.record("conflict", reply, (409,), latency)
        else:  # a rate-limited user
            expected = (200,) if self.hot_saves < self.run_state.saves_per_hour else (429,)
            reply, latency = self.request("POST", SAVE, [("Content-Type", "application/json")], self.body(self.hot),
                                          token=self.token(self.hot))
            run.record("rate-limited", reply, expected, latency)
            if reply is not None and reply.status == 200:
                self.hot_saves += 1

    def prefill(self):
        """Warm-up: saves each user `prefill_saves` times, back to back (see the module's docstring)."""
        run = self.run_state
        for _ in range(run.prefill_saves):
            for user in self.users:
                if run.stop.is_set():
                    return
                reply, latency = self.request("POST", SAVE, [("Content-Type", "application/json")], self.body(user),
                                              token=self.token(user))
                run.record("warm-up save", reply, (200,), latency)
                if reply is not None and reply.status == 200:
                    self.stored[user] = reply.header("etag")

    def run(self):
        try:
            self.prefill()
        except Exception as error:
            self.run_state.count("errors")
            self.run_state.note(f"worker {self.index} prefill: {type(error).__name__}: {error}")
        self.run_state.prefilled()
        interval = self.run_state.connections / self.run_state.rate
        next_at = time.monotonic() + self.rng.uniform(0, interval)
        while not self.run_state.stop.is_set():
            delay = next_at - time.monotonic()
            if delay > 0:
                self.run_state.stop.wait(delay)
            next_at += interval
            try:
                self.step()
            except Exception as error:  # a harness error is counted, never hidden
                self.run_state.count("errors")
                self.run_state.note(f"worker {self.index}: {type(error).__name__}: {error}")
        if self.connection:
            self.connection.close()


class Run:
    def __init__(self, port, issuer, connections, rate, users_per_worker, saves_per_hour, prefill_saves, token_refresh):
        self.port, self.issuer, self.connections, self.rate = port, issuer, connections, rate
        self.token_refresh = token_refresh
        self.prefill_saves = prefill_saves
        self.prefill_pending = connections
        self.prefill_done = threading.Event()
        self.saves_per_hour = saves_per_hour
        self.users_per_worker = users_per_worker
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.latencies: list[tuple[float, float]] = []  # (time since start, seconds)
        self.by_kind: dict[str, dict[int, int]] = {}
        self.notes: list[str] = []
        self.started = time.monotonic()

    def prefilled(self):
        with self.lock:
            self.prefill_pending -= 1
            if self.prefill_pending == 0:
                self.prefill_done.set()

    def count(self, key, amount=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + amount

    def note(self, text):
        with self.lock:
            if len(self.notes) < 50:
                self.notes.append(text)

    def record(self, kind, reply, expected, latency):
        with self.lock:
            self.counts["requests"] = self.counts.get("requests", 0) + 1
            if reply is None:
                self.counts["failed"] = self.counts.get("failed", 0) + 1
                if len(self.notes) < 50:
                    self.notes.append(f"{kind}: no answer")
                return
            statuses = self.by_kind.setdefault(kind, {})
            statuses[reply.status] = statuses.get(reply.status, 0) + 1
            self.latencies.append((time.monotonic() - self.started, latency))
            if reply.status not in expected:
                self.counts["unexpected"] = self.counts.get("unexpected", 0) + 1
                if len(self.notes) < 50:
                    self.notes.append(f"{kind}: {reply.status} {reply.error}, expected {expected}")


def proc_sample(pid: int) -> tuple[int, int]:
    """VmRSS (KiB) and the open descriptors that persist: a body file (`<database>.bodies/…`, issue 31) is open only
    while a load sends it or a save writes it, so it is bounded by the requests in flight and left out of the count
    (a sample catching one in flight read as growth)."""
    rss = 0
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    persistent = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if ".bodies/" in os.readlink(f"/proc/{pid}/fd/{fd}"):
                continue
        except OSError:
            continue  # closed between the listing and the readlink
        persistent += 1
    return rss, persistent


def fd_kinds(pid: int) -> dict[str, int]:
    """The server's open descriptors by what they are: a file's path, `socket`, `pipe`, `anon_inode:[...]`."""
    kinds: dict[str, int] = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed between the listing and the readlink
        kind = target.split(":[")[0] if target.startswith(("socket:", "pipe:")) else target
        if ".bodies/" in target:
            kind = "body file (in flight)"
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def hold_slow(port: int, count: int, seconds: float, stop: threading.Event, result: dict):
    """A slowloris: `count` connections that each send a partial request and then one header byte every few seconds.

    The server cuts a request whose header section takes longer than `limits.header_timeout_seconds`; the attacker
    here opens a new connection for every one cut, so `count` are held throughout. Recorded: how many were opened,
    how many the server cut and the longest any lived before its cut, whether any got an answer (none may: a header
    section never ends), and how many were still open at the end.
    """
    def open_one():
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        return [sock, time.monotonic()]

    def closed(sock) -> tuple[bool, bool]:
        """(closed by the server, an answer arrived first)."""
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False, False
        try:
            data = sock.recv(4096)
        except OSError:
            return True, False
        return (data == b"", data != b"")

    held = [open_one() for _ in range(count)]
    opened, cut, answered, longest, sent = count, 0, 0, 0.0, 0
    result["opened_at_start"] = count
    deadline = time.monotonic() + seconds
    spacing = 5.0 / max(1, count)  # each socket gets a byte every ~5 s (idle timeout is 30 s)
    index = 0
    while time.monotonic() < deadline and not stop.is_set():
        sock, since = held[index]
        gone, got_answer = closed(sock)
        if not gone and not got_answer:
            try:
                sock.send(b"a")
                sent += 1
            except OSError:
                gone = True
        if gone or got_answer:
            cut += gone
            answered += got_answer
            longest = max(longest, time.monotonic() - since)
            sock.close()
            try:
                held[index] = open_one()
                opened += 1
            except OSError:
                pass
        index = (index + 1) % len(held)
        time.sleep(spacing)
    open_count = 0
    for sock, _ in held:
        gone, got_answer = closed(sock)
        answered += got_answer
        open_count += not gone and not got_answer
        sock.close()
    result.update(opened=opened, cut=cut, answered=answered, longest_cut=longest, still_open=open_count,
                  bytes_trickled=sent)


def slow_failures(result: dict, count: int, seconds: float, header_timeout: float) -> list[str]:
    """What a slow-connection round did wrong: an answer, a cut later than the deadline, a connection the server
    kept past it, or one it cut before."""
    # A cut is seen when the client next visits that socket, up to one trickle cycle (5 s) after it; the sweep runs
    # at most a second late; 2 s more for a loaded machine.
    slack = 8.0
    failures = []
    if result.get("answered", 0):
        failures.append(f"{result['answered']} slow connections got an answer")
    if result.get("cut", 0) and result.get("longest_cut", 0) > header_timeout + slack:
        failures.append(f"a slow connection was cut only after {result['longest_cut']:.1f} s "
                        f"(deadline {header_timeout:g} s + {slack:g} s)")
    if seconds > header_timeout + slack and result.get("cut", 0) < count:
        failures.append(f"{result.get('cut', 0)} of {count} slow connections were cut in {seconds:.0f} s "
                        f"(deadline {header_timeout:g} s)")
    if seconds < header_timeout and result.get("still_open", 0) != count:
        failures.append(f"only {result.get('still_open', 0)} of {count} slow connections stayed open "
                        f"within the deadline")
    return failures


def p99(values):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=600)
    parser.add_argument("--rate", type=float, default=128, help="requests per second, all connections together")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--slow", type=int, default=500)
    parser.add_argument("--token-refresh", type=float, default=300,
                        help="seconds after which a worker mints a new session token for a user")
    parser.add_argument("--users-per-connection", type=int, default=16)
    parser.add_argument("--window", type=float, default=30, help="seconds per window in the p99 timeline")
    parser.add_argument("--prefill-saves", type=int, default=10, help="warm-up saves per user before paced traffic")
    parser.add_argument("--header-timeout", type=float, default=20,
                        help="the server's limits.header_timeout_seconds (20 s is its default)")
    parser.add_argument("--warmup-slow-rounds", type=int, default=2,
                        help="rounds of --slow slow connections held during the warm-up")
    arguments = parser.parse_args()

    duration = arguments.duration
    warmup = min(120.0, duration / 5)  # at least; extended until 10 s after the last warm-up slow round
    warm_hold = min(24.0, duration / 25)  # seconds each warm-up slow round is held
    slow_start = duration * 0.5
    slow_seconds = min(120.0, duration / 5)
    directory = wvlive.temp_directory("wv-soak-")
    # Each worker's hot user sends 15% of its requests as saves and should pass the limit 60% of the way through; a
    # normal user (one of 16 per worker, 25% saves) stays well under it.
    per_worker = arguments.rate / arguments.connections
    saves_per_hour = max(10, int(0.15 * per_worker * duration * 0.6))
    # The prefill saves count against a normal user's hour too: keep them well under it.
    if arguments.prefill_saves + 0.25 * per_worker / arguments.users_per_connection * duration > 0.8 * saves_per_hour:
        sys.exit("--prefill-saves too high for this duration and rate: normal users would reach saves_per_hour")
    setup = wvlive.ServerSetup(directory, max_blob_bytes=1_048_576, saves_per_hour=saves_per_hour, connection_timeout=30,
                               max_connections=1024, max_connections_per_ip=0, threads=4,
                               header_timeout=arguments.header_timeout)
    server = wvlive.Server(setup)
    pid = server.process.pid
    run = Run(server.port, setup.issuer, arguments.connections, arguments.rate, arguments.users_per_connection,
              saves_per_hour, arguments.prefill_saves, arguments.token_refresh)
    workers = [Worker(index, run) for index in range(arguments.connections)]
    samples: list[tuple[float, int, int]] = []
    after_stop = (0, 0)
    slow_result: dict = {}
    slow_thread = None
    warm_rounds: list[tuple[float, threading.Thread, dict]] = []  # (start, thread, result)
    prefill_seconds = None
    kinds_base: tuple[int, dict] = (0, {})
    kinds_final: tuple[int, dict] = (0, {})
    failures: list[str] = []
    print(f"soak: {duration:.0f} s at {arguments.rate:.0f} req/s over {arguments.connections} connections; "
          f"saves_per_hour {saves_per_hour}; warm-up: {arguments.prefill_saves} saves per user, then "
          f"{arguments.warmup_slow_rounds} rounds of {arguments.slow} slow connections held {warm_hold:.0f} s each, "
          f"at least {warmup:.0f} s in all; {arguments.slow} slow connections from {slow_start:.0f} s "
          f"for {slow_seconds:.0f} s; server {wvlive.server_binary()}", flush=True)
    try:
        for worker in workers:
            worker.start()
        next_sample = 0.0
        while True:
            elapsed = time.monotonic() - run.started
            if elapsed >= duration:
                break
            if not server.alive():
                failures.append(f"server exited with {server.process.returncode}")
                break
            if prefill_seconds is None and run.prefill_done.is_set():
                prefill_seconds = elapsed
                warmup = max(warmup, elapsed + 10)
            # Warm-up slow rounds, once the prefill is done, one after the other with 6 s between them, so the
            # memory high-water mark of holding that many connections under traffic is reached before the baseline.
            if (prefill_seconds is not None and arguments.slow and len(warm_rounds) < arguments.warmup_slow_rounds
                    and elapsed >= (warm_rounds[-1][0] + warm_hold + 6 if warm_rounds else prefill_seconds)):
                result: dict = {}
                thread = threading.Thread(target=hold_slow, args=(server.port, arguments.slow, warm_hold, run.stop,
                                                                  result), daemon=True)
                thread.start()
                warm_rounds.append((elapsed, thread, result))
                if len(warm_rounds) == arguments.warmup_slow_rounds:
                    warmup = max(warmup, elapsed + warm_hold + 10)
                    if warmup + 10 > slow_start:
                        failures.append(f"the warm-up ran until {warmup:.0f} s, too late for a baseline before the "
                                        f"slow connections at {slow_start:.0f} s (run longer or lower --prefill-saves)")
            if slow_thread is None and arguments.slow and elapsed >= slow_start:
                slow_thread = threading.Thread(target=hold_slow, args=(server.port, arguments.slow, slow_seconds,
                                                                        run.stop, slow_result), daemon=True)
                slow_thread.start()
            if elapsed >= next_sample:
                rss, fds = proc_sample(pid)
                samples.append((elapsed, rss, fds))
                # What the descriptors are, kept for the largest count in the baseline and in the final window,
                # so that growth can be named.
                if warmup <= elapsed < slow_start and fds >= kinds_base[0]:
                    kinds_base = (fds, fd_kinds(pid))
                if elapsed >= duration - 30 and fds >= kinds_final[0]:
                    kinds_final = (fds, fd_kinds(pid))
                next_sample += 5
            time.sleep(0.2)
        run.stop.set()
        for worker in workers:
            worker.join(20)
        if slow_thread:
            slow_thread.join(30)
        after_stop = proc_sample(pid)
    finally:
        server.stop()

    if prefill_seconds is None:
        failures.append("the warm-up prefill did not finish")
    baseline = [s for s in samples if warmup <= s[0] < min(warmup + 30, slow_start)]
    final = [s for s in samples if s[0] >= max(duration - 30, slow_start + slow_seconds + 5)]
    rss_base = statistics.median(s[1] for s in baseline) if baseline else 0
    rss_final = statistics.median(s[1] for s in final) if final else 0
    rss_peak = max(s[1] for s in samples)
    warm_peak = max((s[1] for s in samples if s[0] < warmup), default=0)
    fd_base = max(s[2] for s in baseline) if baseline else 0
    fd_final = max(s[2] for s in final) if final else 0
    fd_peak = max(s[2] for s in samples)
    growth = (rss_final - rss_base) / rss_base * 100 if rss_base else float("nan")
    before = [lat for t, lat in run.latencies if warmup <= t < slow_start]
    during = [lat for t, lat in run.latencies if slow_start + 2 <= t < slow_start + slow_seconds]
    p99_before, p99_during = p99(before), p99(during)
    counts = run.counts
    print(f"requests: {counts.get('requests', 0)} ({counts.get('requests', 0) / duration:.1f}/s), "
          f"unexpected statuses: {counts.get('unexpected', 0)}, failed: {counts.get('failed', 0)}, "
          f"harness errors: {counts.get('errors', 0)}, reconnects: {counts.get('reconnects', 0)}")
    print(f"warm-up: {arguments.prefill_saves} saves per user done at {prefill_seconds or float('nan'):.0f} s; "
          + "".join(f"slow round at {start:.0f} s ({r.get('opened', 0)} opened, {r.get('still_open', 0)} open at "
                    f"its end); " for start, _, r in warm_rounds)
          + f"baseline from {warmup:.0f} s")
    for kind, statuses in sorted(run.by_kind.items()):
        print(f"  {kind:13} " + ", ".join(f"{status}: {n}" for status, n in sorted(statuses.items())))
    print(f"RSS: {rss_base / 1024:.1f} MiB after warm-up, {rss_final / 1024:.1f} MiB at the end "
          f"({growth:+.2f}%), peak {rss_peak / 1024:.1f} MiB")
    # Not a pass criterion: the end against the high-water mark the warm-up itself reached. glibc may give memory
    # back after the warm-up's slow connections close, so the baseline can sit in a trough below that mark.
    if warm_peak:
        print(f"RSS peak during the warm-up {warm_peak / 1024:.1f} MiB; the end is "
              f"{(rss_final - warm_peak) / warm_peak * 100:+.2f}% against it (information, not a criterion)")
    print("RSS timeline every 30 s, MiB (s: MiB): " + " ".join(
        f"{int(t)}:{rss / 1024:.1f}" for t, rss, _ in samples if int(t) % 30 < 5))
    print(f"file descriptors: {fd_base} after warm-up, {fd_final} in the last 30 s, peak {fd_peak} (with the slow "
          f"connections), {after_stop[1]} once the clients had closed")
    print(f"latency p99: {p99_before * 1000:.1f} ms before the slow connections ({len(before)} requests), "
          f"{p99_during * 1000:.1f} ms while {slow_result.get('opened', 0)} were held "
          f"({len(during)} requests); median {statistics.median(before) * 1000 if before else float('nan'):.1f} / "
          f"{statistics.median(during) * 1000 if during else float('nan'):.1f} ms")
    if arguments.slow:
        print(f"slow connections: {slow_result.get('opened', 0)} opened, {slow_result.get('cut', 0)} cut by the header "
              f"deadline ({arguments.header_timeout:g} s; the longest lived {slow_result.get('longest_cut', 0):.1f} s), "
              f"{slow_result.get('answered', 0)} answered, {slow_result.get('still_open', 0)} open at the end of their "
              f"window, {slow_result.get('bytes_trickled', 0)} bytes trickled")
    step = arguments.window
    print(f"p99 per {step:.0f} s window, ms (window start s: p99): " + " ".join(
        f"{start:g}:{p99([lat for t, lat in run.latencies if start <= t < start + step]) * 1000:.0f}"
        for start in [i * step for i in range(int(duration // step))]))
    for note in run.notes[:20]:
        print(f"  note: {note}")
    if counts.get("unexpected", 0) or counts.get("failed", 0) or counts.get("errors", 0):
        failures.append("unexpected statuses, failed requests or harness errors")
    if not growth < 5:
        failures.append(f"RSS grew {growth:.2f}% (limit 5%)")
    if fd_final > fd_base:
        failures.append(f"file descriptors grew from {fd_base} to {fd_final}")
        grown = {kind: kinds_final[1].get(kind, 0) - kinds_base[1].get(kind, 0)
                 for kind in set(kinds_base[1]) | set(kinds_final[1])}
        print("file descriptors, largest count before the slow connections against the largest in the last 30 s: "
              + ", ".join(f"{kind} {change:+d}" for kind, change in sorted(grown.items()) if change))
    if arguments.slow:
        failures += slow_failures(slow_result, arguments.slow, slow_seconds, arguments.header_timeout)
        for start, _, result in warm_rounds:
            failures += [f"warm-up round at {start:.0f} s: {failure}"
                         for failure in slow_failures(result, arguments.slow, warm_hold, arguments.header_timeout)]
    if arguments.slow and during and not p99_during <= 1.5 * p99_before:
        failures.append(f"p99 with slow connections {p99_during * 1000:.1f} ms > 1.5 x {p99_before * 1000:.1f} ms")
    for failure in failures:
        print(f"FAIL {failure}")
    print("soak passed" if not failures else "soak failed")
    if not failures:
        wvlive.remove_directory(directory)
    else:
        print(f"server directory kept: {directory}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
