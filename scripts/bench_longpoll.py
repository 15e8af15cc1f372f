"""Clients for scripts/bench_longpoll.sh (issue 30): wake-up latency of a long-poll, and many long-polls held at once.

  bench_longpoll.py latency SAVE_BASE WAIT_BASE TOKEN BLOB ROUNDS
      One device long-polls WAIT_BASE (wait=30, If-None-Match its version) on a kept-alive connection; once the server
      counts it as waiting (/metrics), another saves to SAVE_BASE (If-Match). Prints "p50 p99 save_p50" in ms: from
      just before the save is sent to the waiter's 200 arriving, and the save's own round trip.
  bench_longpoll.py hold BASE USERS_FILE COUNT
      Opens COUNT connections and sends on each a long-poll (wait=60) of a user from USERS_FILE (lines "token etag"),
      round robin; prints "held COUNT early ANSWERED" once all are sent, then keeps them open until stdin closes and
      prints how many were answered meanwhile (nothing changes, so none should be before their 60 s).
"""
import http.client
import os
import selectors
import socket
import sys
import threading
import time
import urllib.parse


def waiting(base):
    """The server's walletvault_long_polls_waiting."""
    url = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    connection.close()
    for line in text.splitlines():
        if line.startswith("walletvault_long_polls_waiting "):
            return int(line.split()[1])
    raise SystemExit("no walletvault_long_polls_waiting in /metrics")


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def latency(save_base, wait_base, token, blob_path, rounds):
    blob = open(blob_path, "rb").read()
    auth = {"Authorization": "Bearer " + token}
    save_url, wait_url = urllib.parse.urlsplit(save_base), urllib.parse.urlsplit(wait_base)
    saver = http.client.HTTPConnection(save_url.hostname, save_url.port, timeout=30)
    waiter = http.client.HTTPConnection(wait_url.hostname, wait_url.port, timeout=60)
    saver.request("POST", "/wallet-backup.ashx?action=save", blob, {**auth, "Content-Type": "application/json"})
    answer = saver.getresponse()
    answer.read()
    etag = answer.getheader("ETag")
    wakes, saves = [], []
    for _ in range(rounds):
        woken = {}

        def wait_once():
            waiter.request("GET", "/wallet-backup.ashx?action=load&wait=30", headers={**auth, "If-None-Match": etag})
            reply = waiter.getresponse()
            reply.read()
            woken["at"], woken["status"] = time.perf_counter(), reply.status

        thread = threading.Thread(target=wait_once)
        thread.start()
        deadline = time.monotonic() + 10
        while waiting(wait_base) < 1:
            if time.monotonic() > deadline:
                raise SystemExit("the long-poll never waited")
            time.sleep(0.001)
        sent = time.perf_counter()
        saver.request("POST", "/wallet-backup.ashx?action=save", blob, {**auth, "Content-Type": "application/json", "If-Match": etag})
        answer = saver.getresponse()
        answer.read()
        saves.append(time.perf_counter() - sent)
        if answer.status != 200:
            raise SystemExit(f"save answered {answer.status}")
        etag = answer.getheader("ETag")
        thread.join(60)
        if woken.get("status") != 200:
            raise SystemExit(f"the waiter was answered {woken.get('status')}, not 200")
        wakes.append(woken["at"] - sent)
    print(f"{percentile(wakes, 0.5) * 1000:.2f} {percentile(wakes, 0.99) * 1000:.2f} {percentile(saves, 0.5) * 1000:.2f}")


def hold(base, users_file, count):
    url = urllib.parse.urlsplit(base)
    users = [line.split() for line in open(users_file) if line.strip()]
    selector = selectors.DefaultSelector()
    sockets = []
    for index in range(count):
        token, etag = users[index % len(users)]
        connection = socket.create_connection((url.hostname, url.port))
        request = (
            f"GET /wallet-backup.ashx?action=load&wait=60 HTTP/1.1\r\nHost: {url.hostname}\r\n"
            f"Authorization: Bearer {token}\r\nIf-None-Match: {etag}\r\n\r\n"
        )
        connection.sendall(request.encode())
        connection.setblocking(False)
        selector.register(connection, selectors.EVENT_READ)
        sockets.append(connection)
    answered = set()

    def drain(timeout):
        for key, _ in selector.select(timeout):
            try:
                data = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            answered.add(key.fileobj.fileno())
            if not data:
                selector.unregister(key.fileobj)

    drain(0.5)
    print(f"held {len(sockets)} early {len(answered)}", flush=True)
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    while not stop.is_set():
        drain(0.2)
    print(f"answered {len(answered)}", flush=True)
    for connection in sockets:
        connection.close()


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "latency":
        latency(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))
    elif command == "hold":
        hold(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit(__doc__)
