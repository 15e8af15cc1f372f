#!/usr/bin/env python3
"""Crash safety: a save storm, SIGKILL at a random moment, restart, verify every acknowledged save (issue 7).

Each round: `--clients` threads save blobs of random size (one marker per attempt) for `--users` users, two or more
clients per user so saves of one user race; each client records every attempt and every 200 it got (sync_id, body).
After a random 0.5-3 s the server is killed with SIGKILL mid-storm. The database is integrity-checked (SQLite:
`PRAGMA integrity_check` on a copy of the file and its WAL, taken before the server reopens it), the server is
restarted and every user's blob is loaded and judged:

* the stored version's sync_id is at least the newest acknowledged one (no acknowledged save lost);
* if it equals it, the bytes are that save's exactly; if it is newer, it is one of the user's unacknowledged
  attempts (a save committed as the kill landed, before its answer), byte for byte;
* nothing else: no torn, mixed or unknown blob.

    scripts/crash_test.py [--rounds 20] [--clients 64] [--users 32] [--database sqlite]

`--database` is `sqlite` (a file in the run's directory) or any value the config's `database` key takes (for
PostgreSQL, its URL: the script then skips the SQLite check and runs `--integrity-command` if given).
Prints per-round counts and a total; exits 1 on any violation.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wvlive  # noqa: E402

SAVE = "/wallet-backup.ashx?action=save"
LOAD = "/wallet-backup.ashx?action=load"


class Ledger:
    """What one user was sent and what was acknowledged, across all rounds."""

    def __init__(self):
        self.lock = threading.Lock()
        self.attempts: dict[str, bytes] = {}          # sha256 -> body, every save ever sent
        self.acked: list[tuple[str, str]] = []        # (sync_id, sha256) of every 200

    def attempt(self, body: bytes) -> str:
        digest = hashlib.sha256(body).hexdigest()
        with self.lock:
            self.attempts[digest] = body
        return digest

    def ack(self, sync_id: str, digest: str):
        with self.lock:
            self.acked.append((sync_id, digest))

    def newest_ack(self):
        with self.lock:
            return max(self.acked) if self.acked else None


def make_body(user: str, client: int, sequence: int, rng: random.Random) -> bytes:
    size = rng.choice([64, 512, 4096, 16384, 40000])
    marker = f"{user}/c{client}/n{sequence}/"
    cipher = (marker.encode() * (size // len(marker) + 1))[:size]
    value = wvlive.blob(f"{user}-{client}-{sequence}", hint=f"{user} c{client} n{sequence}")
    value["cipher"] = wvlive.b64u(cipher)
    return json.dumps(value, separators=(",", ":")).encode()


def storm(port: int, tokens: dict, ledgers: dict, users: list, clients: int, stop: threading.Event,
          counters: dict, lock: threading.Lock, seed: int, sequence_base: int):
    threads = []

    def client(index: int):
        rng = random.Random(seed * 1000 + index)
        user = users[index % len(users)]
        ledger = ledgers[user]
        sequence = sequence_base
        while not stop.is_set():
            sequence += 1
            body = make_body(user, index, sequence, rng)
            digest = ledger.attempt(body)
            try:
                reply = wvlive.http(port, "POST", SAVE, [("Content-Type", "application/json")], body,
                                    token=tokens[user], timeout=5)
            except OSError:
                reply = None
            with lock:
                counters["attempts"] += 1
            if reply is None:
                with lock:
                    counters["unanswered"] += 1
                time.sleep(0.05)
                continue
            if reply.status == 200:
                ledger.ack(reply.json()["sync_id"], digest)
                with lock:
                    counters["acked"] += 1
            else:
                with lock:
                    counters["other"] += 1
                    counters.setdefault("statuses", {}).setdefault(reply.status, 0)
                    counters["statuses"][reply.status] += 1

    for index in range(clients):
        thread = threading.Thread(target=client, args=(index,), daemon=True)
        thread.start()
        threads.append(thread)
    return threads


def sqlite_integrity(path: str, scratch: str) -> str:
    """PRAGMA integrity_check on a copy of the database and its WAL, as the kill left them."""
    copy = os.path.join(scratch, "check.sqlite")
    for suffix in ("", "-wal"):
        target = copy + suffix
        if os.path.exists(target):
            os.remove(target)
        if os.path.exists(path + suffix):
            shutil.copyfile(path + suffix, target)
    connection = sqlite3.connect(copy)
    try:
        rows = connection.execute("PRAGMA integrity_check").fetchall()
        return ", ".join(str(row[0]) for row in rows)
    finally:
        connection.close()


def verify(port: int, tokens: dict, ledgers: dict) -> tuple[list[str], dict]:
    problems = []
    counts = {"users": 0, "exact": 0, "newer_unacked": 0, "empty": 0}
    for user, ledger in ledgers.items():
        counts["users"] += 1
        reply = wvlive.http(port, "GET", LOAD, token=tokens[user], timeout=10)
        newest = ledger.newest_ack()
        if reply is None:
            problems.append(f"{user}: load got no answer")
            continue
        if reply.status == 404:
            if newest:
                problems.append(f"{user}: acknowledged save {newest[0]} lost (404)")
            else:
                counts["empty"] += 1
            continue
        if reply.status != 200:
            problems.append(f"{user}: load answered {reply.status}")
            continue
        stored_id = (reply.header("etag") or "").strip('"')
        digest = hashlib.sha256(reply.body).hexdigest()
        if digest not in ledger.attempts:
            problems.append(f"{user}: stored blob ({len(reply.body)} bytes) is none of the saves sent (torn?)")
            continue
        if newest is None or stored_id > newest[0]:
            counts["newer_unacked"] += 1  # committed as the kill landed; its answer was lost
        elif stored_id == newest[0]:
            if digest != newest[1]:
                problems.append(f"{user}: version {stored_id} has other bytes than the acknowledged save")
            else:
                counts["exact"] += 1
        else:
            problems.append(f"{user}: stored {stored_id} is older than acknowledged {newest[0]}")
    return problems, counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--database", default="sqlite")
    parser.add_argument("--integrity-command", default="", help="shell command checking a non-SQLite database")
    parser.add_argument("--min-seconds", type=float, default=0.5)
    parser.add_argument("--max-seconds", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    arguments = parser.parse_args()

    rng = random.Random(arguments.seed)
    directory = wvlive.temp_directory("wv-crash-")
    sqlite_path = os.path.join(directory, "vault.sqlite") if arguments.database == "sqlite" else None
    database = "sqlite:vault.sqlite" if sqlite_path else arguments.database
    setup = wvlive.ServerSetup(directory, max_blob_bytes=65536, saves_per_hour=1_000_000, connection_timeout=10,
                               database=database, threads=4)
    server = wvlive.Server(setup)
    users = [f"crash-{i}" for i in range(arguments.users)]
    tokens = {}
    ledgers = {user: Ledger() for user in users}
    totals = {"attempts": 0, "acked": 0, "unanswered": 0, "other": 0}
    failures = 0
    print(f"crash test: {arguments.rounds} rounds, {arguments.clients} clients, {arguments.users} users, "
          f"database {arguments.database}, seed {arguments.seed}")
    try:
        for user in users:
            tokens[user] = server.mint(setup.issuer.token(sub=user))
        for round_number in range(1, arguments.rounds + 1):
            counters = {"attempts": 0, "acked": 0, "unanswered": 0, "other": 0}
            lock = threading.Lock()
            stop = threading.Event()
            threads = storm(server.port, tokens, ledgers, users, arguments.clients, stop, counters, lock,
                            seed=arguments.seed + round_number, sequence_base=round_number * 1_000_000)
            delay = rng.uniform(arguments.min_seconds, arguments.max_seconds)
            time.sleep(delay)
            server.kill()
            stop.set()
            for thread in threads:
                thread.join(10)
            integrity = "skipped"
            if sqlite_path:
                integrity = sqlite_integrity(sqlite_path, directory)
            elif arguments.integrity_command:
                done = subprocess.run(arguments.integrity_command, shell=True, capture_output=True, text=True)
                integrity = "ok" if done.returncode == 0 else f"failed: {done.stdout.strip()} {done.stderr.strip()}"
            server.start()
            problems, counts = verify(server.port, tokens, ledgers)
            if integrity not in ("ok", "skipped"):
                problems.append(f"integrity check: {integrity}")
            if counters["other"]:
                problems.append(f"unexpected statuses during the storm: {counters.get('statuses')}")
            for key in totals:
                totals[key] += counters[key]
            print(f"round {round_number:2}: killed after {delay:.2f} s; {counters['attempts']} saves sent, "
                  f"{counters['acked']} acknowledged, {counters['unanswered']} unanswered; integrity {integrity}; "
                  f"{counts['exact']} users at their newest acknowledged save, {counts['newer_unacked']} at a newer "
                  f"unacknowledged one, {counts['empty']} empty; {len(problems)} problems")
            for problem in problems:
                print(f"FAIL round {round_number}: {problem}")
            failures += len(problems)
        all_acked = sum(len(ledger.acked) for ledger in ledgers.values())
        print(f"total: {arguments.rounds} SIGKILLs, {totals['attempts']} saves sent, {all_acked} acknowledged, "
              f"{totals['unanswered']} unanswered at the kills; every acknowledged save checked after each restart; "
              f"{failures} violations")
    finally:
        server.stop()
        if failures == 0:
            wvlive.remove_directory(directory)
        else:
            print(f"run directory kept: {directory}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
