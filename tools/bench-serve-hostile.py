#!/usr/bin/env python3
"""What hostile clients cost a normal one: attn-serve's latency under idle and slowloris connections.

Standard library only; Linux (epoll).  Against an attn-serve already running on 127.0.0.1:

  bench-serve-hostile.py --port 8080 [--idle 10000] [--slowloris 1000] [--requests 200]
                         [--drip-seconds 2] [--text "Hello."] [--host 127.0.0.1]

First a normal client sends --requests one-sentence POST /translate requests, one after the
other, each on a new connection, to the idle server: p50/p99/max latency.  Then it opens --idle
connections that send nothing and --slowloris connections that send an endless request head,
one byte each every --drip-seconds, and sends the same requests again while they stay open.
A connection the server closes (its header deadline) is counted and opened again, so the
attack keeps its size.  Prints a table of both runs, the connections the server closed, and the
server's own connection counters (/metrics).

Raises its own descriptor limit (RLIMIT_NOFILE's soft limit to the hard one) and refuses to
start when --idle + --slowloris do not fit under it.  Run it on a quiet machine: figures on a
shared machine are not measurements.
"""
import argparse
import errno
import http.client
import json
import resource
import select
import socket
import sys
import threading
import time

# An endless request head: a slowloris client sends it a byte at a time and never ends it.
SLOW_HEAD = b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
SLOW_FILLER = b"X-a: b\r\n"


def fail(message):
    print(f"bench-serve-hostile.py: {message}", file=sys.stderr)
    sys.exit(2)


def raise_descriptor_limit(needed):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard != resource.RLIM_INFINITY and hard < needed:
        fail(f"needs {needed} descriptors and the hard limit is {hard}: lower --idle/--slowloris or raise it "
             "(ulimit -Hn)")


class Attack:
    """Idle and slowloris connections, kept open (reopened when the server closes one) on a thread."""

    def __init__(self, host, port, idle, slow, drip_seconds):
        self.address = (host, port)
        self.drip_seconds = drip_seconds
        self.poll = select.epoll()
        self.sockets = {}  # fd -> (socket, kind, bytes of the head sent)
        self.closed = {"idle": 0, "slowloris": 0}
        self.refused = 0  # connections that could not be opened
        self.stopping = threading.Event()
        for kind, count in (("idle", idle), ("slowloris", slow)):
            for _ in range(count):
                self.open(kind)
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open(self, kind):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.connect(self.address)
        except OSError:
            s.close()
            self.refused += 1
            return
        s.setblocking(False)
        self.sockets[s.fileno()] = [s, kind, 0]
        self.poll.register(s.fileno(), select.EPOLLIN | select.EPOLLRDHUP)

    def drop(self, fd):
        s, kind, _ = self.sockets.pop(fd)
        self.poll.unregister(fd)
        s.close()
        self.closed[kind] += 1
        if not self.stopping.is_set():
            self.open(kind)

    def drip(self):
        for fd, entry in list(self.sockets.items()):
            s, kind, sent = entry
            if kind != "slowloris":
                continue
            byte = SLOW_HEAD[sent:sent + 1] if sent < len(SLOW_HEAD) else SLOW_FILLER[(sent - len(SLOW_HEAD)) % 8:][:1]
            try:
                s.send(byte)
                entry[2] = sent + 1
            except OSError as error:
                if error.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                    self.drop(fd)

    def run(self):
        next_drip = time.monotonic()
        while not self.stopping.is_set():
            for fd, _ in self.poll.poll(0.1):
                if fd in self.sockets:  # the server answered or closed: either way it is gone
                    self.drop(fd)
            if time.monotonic() >= next_drip:
                self.drip()
                next_drip += self.drip_seconds

    def start(self):
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self.thread.join()
        for s, _, _ in self.sockets.values():
            s.close()


def translate_once(host, port, body):
    start = time.monotonic()
    connection = http.client.HTTPConnection(host, port, timeout=60)
    try:
        connection.request("POST", "/translate", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        ok = response.status == 200
    except OSError:
        ok = False
    finally:
        connection.close()
    return time.monotonic() - start, ok


def latency_run(host, port, body, requests):
    seconds, failed = [], 0
    for _ in range(requests):
        elapsed, ok = translate_once(host, port, body)
        if ok:
            seconds.append(elapsed)
        else:
            failed += 1
    return seconds, failed


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def row(name, seconds, failed):
    ms = [1000 * s for s in seconds]
    return (f"| {name} | {len(ms)} | {percentile(ms, 50):.1f} | {percentile(ms, 99):.1f} | "
            f"{max(ms) if ms else float('nan'):.1f} | {failed} |")


def get_json(host, port, path):
    connection = http.client.HTTPConnection(host, port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True, help="the running attn-serve's port")
    parser.add_argument("--idle", type=int, default=10000, help="connections that send nothing")
    parser.add_argument("--slowloris", type=int, default=1000, help="connections that trickle an endless head")
    parser.add_argument("--drip-seconds", type=float, default=2.0, help="a slowloris connection's byte interval")
    parser.add_argument("--requests", type=int, default=200, help="the normal client's requests per run")
    parser.add_argument("--text", default="Hello.", help="the normal client's sentence")
    args = parser.parse_args()
    if min(args.idle, args.slowloris) < 0 or args.requests < 1 or args.drip_seconds <= 0:
        fail("--idle and --slowloris must be >= 0, --requests >= 1, --drip-seconds > 0")
    raise_descriptor_limit(args.idle + args.slowloris + 64)

    try:
        status, languages = get_json(args.host, args.port, "/languages")
    except OSError as error:
        fail(f"no attn-serve on {args.host}:{args.port} (--host, --port): {error}")
    if status != 200:
        fail(f"{args.host}:{args.port}/languages answered {status}: is the model loaded?")
    pair = json.loads(languages)
    body = json.dumps({"q": args.text, "source": pair[0]["code"], "target": pair[0]["targets"][0]})

    quiet, quiet_failed = latency_run(args.host, args.port, body, args.requests)
    opened = time.monotonic()
    attack = Attack(args.host, args.port, args.idle, args.slowloris, args.drip_seconds)
    print(f"opened {args.idle} idle and {args.slowloris} slowloris connections in {time.monotonic() - opened:.1f} s "
          f"({attack.refused} could not be opened)", file=sys.stderr)
    attack.start()
    try:
        hostile, hostile_failed = latency_run(args.host, args.port, body, args.requests)
    finally:
        attack.stop()
    _, metrics = get_json(args.host, args.port, "/metrics")

    print("| server state | requests | p50 ms | p99 ms | max ms | failed |")
    print("|---|---|---|---|---|---|")
    print(row("idle server", quiet, quiet_failed))
    print(row(f"{args.idle} idle + {args.slowloris} slowloris connections", hostile, hostile_failed))
    if quiet and hostile:
        print(f"p99 difference: {1000 * (percentile(hostile, 99) - percentile(quiet, 99)):.1f} ms")
    print(f"closed by the server during the attack (then reopened): idle {attack.closed['idle']}, "
          f"slowloris {attack.closed['slowloris']}; could not open: {attack.refused}")
    for line in metrics.splitlines():
        if line.startswith("attn_http_connections"):
            print(line)


if __name__ == "__main__":
    main()
