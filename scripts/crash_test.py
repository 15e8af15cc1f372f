#!/usr/bin/env python3
"""Crash safety: a save storm, SIGKILL at a random moment, restart, verify every acknowledged save (issue 7).

Each round: `--clients` threads save blobs of random size (one marker per attempt) for `--users` users, two or more
clients per user so saves of one user race; each client records every attempt and every 200 it got (sync_id, body).
After a random 0.5-3 s the server is killed with SIGKILL mid-storm. Before the server is restarted the database
is checked where it lies:

* SQLite: `PRAGMA integrity_check` on a copy of the file and its WAL as the kill left them;
  PostgreSQL: amcheck's `bt_index_parent_check(index, heapallindexed => true, rootdescend => true)` on every index
  of the vault tables and of their TOAST tables, and `verify_heapam(table, check_toast => true)` on every table;
* every stored version row is read in full (bodies detoasted): each body must be, byte for byte, one of the saves
  sent for the user its storage key belongs to, and parse as JSON; every row of the other tables is read.

Then the server is restarted and every user is judged through the API (load, versions, load by sync_id):

* the current version's sync_id is at least the newest acknowledged one (no acknowledged save lost);
* if it equals it, the bytes are that save's exactly; if it is newer, it is one of the user's unacknowledged
  attempts (a save committed as the kill landed, before its answer), byte for byte;
* every acknowledged save not yet pushed out of the kept history (the newest `history_versions`, 10) is listed
  by `versions` and loads by its sync_id with exactly its bytes; older ones are superseded by later saves;
* nothing else: no torn, mixed or unknown blob.

    scripts/crash_test.py [--rounds 20] [--clients 64] [--users 32] [--database sqlite]

`--database` is `sqlite` (a file in the run's directory) or any value the config's `database` key takes. For a
`postgres://` or `postgresql://` URL the checks above run through `psql` (from $WALLETVAULT_TEST_PGBIN, else
PATH; the role must be allowed to `CREATE EXTENSION amcheck`). `--integrity-command` adds a shell command that
must exit 0 (for any other database, or an extra check).
Prints per-round counts and a total; exits 1 on any violation.
"""

from __future__ import annotations

import argparse
import datetime
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
VERSIONS = "/wallet-backup.ashx?action=versions"
HISTORY_VERSIONS = 10  # the server's default `history_versions`; the config written here does not change it


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

    def all_acked(self) -> list[tuple[str, str]]:
        with self.lock:
            return list(self.acked)


def sync_id_text(milliseconds: int) -> str:
    """The server's sync_id for a stored sync_ms: RFC 3339 UTC with three fraction digits."""
    moment = datetime.datetime.fromtimestamp(milliseconds // 1000, tz=datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{milliseconds % 1000:03d}Z"


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


def judge_rows(rows, owners: dict, ledgers: dict) -> tuple[list[str], str]:
    """Every stored version row (storage key, sync_ms, body) must be a save sent for one user, and parse."""
    problems = []
    users_by_key: dict[str, str] = {}
    count = 0
    for storage_key, sync_ms, body in rows:
        count += 1
        digest = hashlib.sha256(body).hexdigest()
        user = owners.get(digest)
        if user is None:
            problems.append(f"row {storage_key[:12]}/{sync_ms}: {len(body)} bytes that are none of the saves sent (torn?)")
            continue
        try:
            json.loads(body)
        except ValueError:
            problems.append(f"row {storage_key[:12]}/{sync_ms}: does not parse as JSON")
        if users_by_key.setdefault(storage_key, user) != user:
            problems.append(f"storage key {storage_key[:12]} holds saves of {users_by_key[storage_key]} and of {user}")
        stamp = sync_id_text(sync_ms)
        for acked_id, acked_digest in ledgers[user].all_acked():
            if acked_id == stamp and acked_digest != digest:
                problems.append(f"{user}: row {stamp} has other bytes than the save acknowledged with that sync_id")
    return problems, f"{count} version rows read, {len(users_by_key)} users"


def sqlite_check(path: str, scratch: str, owners: dict, ledgers: dict) -> tuple[list[str], str]:
    """PRAGMA integrity_check and a full read, on a copy of the database and its WAL as the kill left them."""
    copy = os.path.join(scratch, "check.sqlite")
    for suffix in ("", "-wal", "-shm"):
        target = copy + suffix
        if os.path.exists(target):
            os.remove(target)
        if suffix != "-shm" and os.path.exists(path + suffix):
            shutil.copyfile(path + suffix, target)
    connection = sqlite3.connect(copy)
    try:
        result = ", ".join(str(row[0]) for row in connection.execute("PRAGMA integrity_check").fetchall())
        problems = [] if result == "ok" else [f"PRAGMA integrity_check: {result}"]
        # A body stored as TEXT rather than BLOB would be a fault too; it is compared by its bytes all the same.
        # A row naming a body file (issue 31) has its bytes there, read where the kill left it: a file a committed
        # row names must be complete; one missing is a lost save.
        columns = [row[1] for row in connection.execute("PRAGMA table_info(vault_versions)")]
        file_column = "body_file" if "body_file" in columns else "NULL"
        missing: list[str] = []

        def body_of(key: bytes, sync_ms: int, body, name) -> bytes:
            if name is None:
                return body.encode() if isinstance(body, str) else bytes(body)
            # In the subdirectory its name's first two characters name (BodyFileDirectory); a store the kill left
            # before its first start moved them may still hold one in the directory itself.
            for place in (os.path.join(path + ".bodies", name[:2], name), os.path.join(path + ".bodies", name)):
                try:
                    with open(place, "rb") as file:
                        return file.read()
                except FileNotFoundError:
                    continue
            missing.append(f"row {key.hex()[:12]}/{sync_ms}: its body file {name} is missing")
            return b""

        rows = [(key.hex(), sync_ms, body_of(key, sync_ms, body, name)) for key, sync_ms, body, name in
                connection.execute(f"SELECT storage_key, sync_ms, body, {file_column} FROM vault_versions")]
        row_problems, summary = judge_rows(rows, owners, ledgers)
        row_problems = missing + row_problems
        others = sum(connection.execute(f"SELECT count(*), sum(length(storage_key)) FROM {table}").fetchone()[0]
                     for table in ("vault_users", "save_events"))
        return problems + row_problems, f"integrity_check {result}; {summary}; {others} other rows read"
    finally:
        connection.close()


def psql_command() -> str:
    pgbin = os.environ.get("WALLETVAULT_TEST_PGBIN", "")
    return os.path.join(pgbin, "psql") if pgbin else "psql"


def psql(url: str, sql: str) -> str:
    done = subprocess.run([psql_command(), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
                          capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"psql failed ({done.returncode}): {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode()


# The vault tables and their TOAST tables; every index on them.
PG_TABLES = """SELECT c.oid FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
               UNION SELECT c.reltoastrelid FROM pg_class c
               WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.reltoastrelid <> 0"""


def postgres_check(url: str, owners: dict, ledgers: dict) -> tuple[list[str], str]:
    """amcheck on every index and heap of the vault tables (TOAST included), then a full read of every row."""
    problems = []
    psql(url, "CREATE EXTENSION IF NOT EXISTS amcheck")
    indexes = psql(url, f"""SELECT i.indexrelid::regclass, bt_index_parent_check(i.indexrelid, true, true)
                             FROM pg_index i WHERE i.indrelid IN ({PG_TABLES})""").split()
    heap = psql(url, f"""SELECT t.oid::regclass || ' ' || v.blkno || '/' || coalesce(v.offnum, 0) || ': ' || v.msg
                          FROM ({PG_TABLES}) t(oid), verify_heapam(t.oid, check_toast => true) v""").strip()
    tables = int(psql(url, f"SELECT count(*) FROM ({PG_TABLES}) t").strip())
    if heap:
        problems += [f"verify_heapam: {line}" for line in heap.splitlines()]
    dump = psql(url, """COPY (SELECT encode(storage_key, 'hex'), sync_ms, encode(body, 'hex') FROM vault_versions)
                        TO STDOUT""")
    rows = []
    for line in dump.splitlines():
        storage_key, sync_ms, body = line.split("\t")
        rows.append((storage_key, int(sync_ms), bytes.fromhex(body)))
    row_problems, summary = judge_rows(rows, owners, ledgers)
    others = psql(url, """SELECT (SELECT count(*) FROM vault_users WHERE length(storage_key) > 0)
                               + (SELECT count(*) FROM save_events WHERE length(storage_key) > 0)""").strip()
    return (problems + row_problems,
            f"amcheck: {len(indexes)} indexes bt_index_parent_check ok, verify_heapam on {tables} tables "
            f"{'ok' if not heap else 'FAILED'}; {summary}; {others} other rows read")


def verify(port: int, tokens: dict, ledgers: dict) -> tuple[list[str], dict]:
    problems = []
    counts = {"users": 0, "exact": 0, "newer_unacked": 0, "empty": 0, "history_checked": 0}
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
        problems += verify_history(port, tokens[user], user, ledger, counts)
    return problems, counts


def verify_history(port: int, token: str, user: str, ledger: Ledger, counts: dict) -> list[str]:
    """Every acknowledged save still inside the kept history is listed and loads by sync_id, byte for byte."""
    reply = wvlive.http(port, "GET", VERSIONS, token=token, timeout=10)
    if reply is None or reply.status != 200:
        return [f"{user}: versions answered {reply and reply.status}"]
    listed = [version["sync_id"] for version in reply.json()["versions"]]
    if len(listed) > HISTORY_VERSIONS or listed != sorted(listed, reverse=True) or len(set(listed)) != len(listed):
        return [f"{user}: versions listing is not {HISTORY_VERSIONS} or fewer distinct sync_ids, newest first: {listed}"]
    oldest_kept = listed[-1] if len(listed) == HISTORY_VERSIONS else ""
    problems = []
    for sync_id, digest in ledger.all_acked():
        if sync_id < oldest_kept:
            continue  # pushed out of the history by later saves
        if sync_id not in listed:
            problems.append(f"{user}: acknowledged save {sync_id} is missing from versions {listed}")
            continue
        loaded = wvlive.http(port, "GET", f"{LOAD}&sync_id={sync_id}", token=token, timeout=10)
        if loaded is None or loaded.status != 200:
            problems.append(f"{user}: acknowledged save {sync_id} answered {loaded and loaded.status} by sync_id")
        elif hashlib.sha256(loaded.body).hexdigest() != digest:
            problems.append(f"{user}: acknowledged save {sync_id} loads with other bytes")
        else:
            counts["history_checked"] += 1
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--database", default="sqlite")
    parser.add_argument("--integrity-command", default="", help="shell command checking a non-SQLite database")
    parser.add_argument("--postgres-crash-every", type=int, default=0,
                        help="every Nth round also stop PostgreSQL with `$WALLETVAULT_TEST_PGCTL stop -m immediate` "
                             "right after the SIGKILL (no checkpoint: it recovers from its WAL on restart)")
    parser.add_argument("--min-seconds", type=float, default=0.5)
    parser.add_argument("--max-seconds", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    arguments = parser.parse_args()

    rng = random.Random(arguments.seed)
    directory = wvlive.temp_directory("wv-crash-")
    sqlite_path = os.path.join(directory, "vault.sqlite") if arguments.database == "sqlite" else None
    database = "sqlite:vault.sqlite" if sqlite_path else arguments.database
    postgres_url = database if database.startswith(("postgres://", "postgresql://")) else None
    setup = wvlive.ServerSetup(directory, max_blob_bytes=65536, saves_per_hour=1_000_000, connection_timeout=10,
                               database=database, threads=4)
    server = wvlive.Server(setup)
    users = [f"crash-{i}" for i in range(arguments.users)]
    tokens = {}
    ledgers = {user: Ledger() for user in users}
    totals = {"attempts": 0, "acked": 0, "unanswered": 0, "other": 0, "history_checked": 0, "newer_unacked": 0}
    failures = 0
    postgres_crashes = 0
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
            postgres_crashed = bool(postgres_url and arguments.postgres_crash_every
                                    and round_number % arguments.postgres_crash_every == 0)
            if postgres_crashed:
                pgctl = os.environ["WALLETVAULT_TEST_PGCTL"]
                subprocess.run([pgctl, "stop", "-m", "immediate", "-w"], check=True, capture_output=True)
                postgres_crashes += 1
            for thread in threads:
                thread.join(10)
            if postgres_crashed:
                subprocess.run([pgctl, "start", "-w", "-t", "60"], check=True, capture_output=True)
            owners = {digest: user for user, ledger in ledgers.items() for digest in ledger.attempts}
            problems = []
            if sqlite_path:
                found, integrity = sqlite_check(sqlite_path, directory, owners, ledgers)
                problems += found
            elif postgres_url:
                try:
                    found, integrity = postgres_check(postgres_url, owners, ledgers)
                    problems += found
                except RuntimeError as error:
                    integrity = "failed"
                    problems.append(f"database check: {error}")
            else:
                integrity = "no database check"
            if arguments.integrity_command:
                done = subprocess.run(arguments.integrity_command, shell=True, capture_output=True, text=True)
                integrity += "; integrity command " + ("ok" if done.returncode == 0 else "FAILED")
                if done.returncode != 0:
                    problems.append(f"integrity command: {done.stdout.strip()} {done.stderr.strip()}")
            server.start()
            found, counts = verify(server.port, tokens, ledgers)
            problems += found
            if counters["other"]:
                problems.append(f"unexpected statuses during the storm: {counters.get('statuses')}")
            counters["history_checked"] = counts["history_checked"]
            counters["newer_unacked"] = counts["newer_unacked"]
            for key in totals:
                totals[key] += counters[key]
            print(f"round {round_number:2}: killed after {delay:.2f} s"
                  f"{' (and PostgreSQL stopped -m immediate)' if postgres_crashed else ''}; {counters['attempts']} saves sent, "
                  f"{counters['acked']} acknowledged, {counters['unanswered']} unanswered; {integrity}; "
                  f"{counts['exact']} users at their newest acknowledged save, {counts['newer_unacked']} at a newer "
                  f"unacknowledged one, {counts['empty']} empty; {counts['history_checked']} acknowledged saves "
                  f"loaded by sync_id; {len(problems)} problems")
            for problem in problems:
                print(f"FAIL round {round_number}: {problem}")
            failures += len(problems)
        all_acked = sum(len(ledger.acked) for ledger in ledgers.values())
        print(f"total ({'sqlite' if sqlite_path else 'postgresql' if postgres_url else arguments.database}): "
              f"{arguments.rounds} SIGKILLs"
              f"{f' ({postgres_crashes} with PostgreSQL stopped -m immediate too)' if postgres_url else ''}, "
              f"{totals['attempts']} saves sent, {all_acked} acknowledged, "
              f"{totals['unanswered']} unanswered at the kills, {totals['newer_unacked']} times a user's current "
              f"version was a save committed as the kill landed; {totals['history_checked']} acknowledged saves "
              f"loaded back by sync_id; {failures} violations")
    finally:
        server.stop()
        if failures == 0:
            wvlive.remove_directory(directory)
        else:
            print(f"run directory kept: {directory}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
