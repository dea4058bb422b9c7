#!/usr/bin/env python3
"""serve_client.py: the HTTP client of tests/cli/serve.sh and scripts/bench_serve.sh (standard
library only; 127.0.0.1 only; every socket has a timeout). Subcommands:
  req PORT METHOD PATH [CONTENT_TYPE [BODY|@FILE]]  prints the status, a tab, the body
  many PORT FILE N BEAM [MODEL]                     each line of FILE as its own request, N at a
                                                    time (to MODEL by name); prints the 1-best texts
                                                    in order
  slow PORT SECONDS                                 sends a request one byte a second; prints
                                                    "closed after S s" or "open after S s"
  hold PORT N PATH                                  opens N connections that each send the head of
                                                    a POST and no body, then requests PATH on one
                                                    more; prints its status
  slowbody PORT SECONDS                             sends a request's head, then its body one byte
                                                    a second; prints as slow does
  load PORT FILE CLIENTS BEAM SLOW                  bench's clients while SLOW connections trickle
                                                    heads (a byte each 2 s) and /health is timed
                                                    every 0.1 s; prints bench's figures and errors,
                                                    the slowest /health in ms, failed, probes
  flood PORT N SECONDS                              N connections trickle a head a byte each 0.5 s
                                                    while GET /health is timed every 0.1 s; prints
                                                    the slowest answer in ms, the failed ones, the
                                                    trickles answered 408 and those closed otherwise
  bench PORT FILE CLIENTS BEAM                      CLIENTS clients send FILE's lines one request
                                                    each; prints sentences/s, p50 and p99 in ms
  mixed PORT FILE OPTS...                           each line of FILE with each OPTS (a JSON object
                                                    of request fields) as its own request, 12 at
                                                    a time; prints "K ||| I ||| TEXT ||| SCORE" per
                                                    hypothesis, K the OPTS's index, I the line's
  fair PORT FILE BEAM                               three requests of FILE's lines at BEAM, then one
                                                    of its first line at the default beam; prints
                                                    how many of the three ended after the one
  abandon PORT FILE BEAM                            one request of FILE's lines at BEAM; once a
                                                    decoder has taken it, the same lines again from
                                                    a client that hangs up as soon as they are
                                                    sent; prints the first's status
  raw PORT BYTES|@FILE [half]                       sends the bytes (Python escapes such as \\r\\n
                                                    read), with half then shuts its side; prints
                                                    what came back until the server closes
"""
import http.client
import json
import socket
import sys
import threading
import time

HOST = "127.0.0.1"
POST_HEAD = b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"


def request(port, method, path, ctype=None, body=None, timeout=60):
    c = http.client.HTTPConnection(HOST, port, timeout=timeout)
    headers = {"Content-Type": ctype} if ctype else {}
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def translate(conn, text, beam, model=None):
    body = json.dumps(dict({"text": text, "beam": beam}, **({"model": model} if model else {}))).encode()
    conn.request("POST", "/translate", body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"status {r.status}: {data[:200]!r}")
    return json.loads(data)["translations"][0]["text"]


def run_clients(port, lines, clients, beam, model=None):
    """Each client takes the next line, sends it, waits: results and latencies by line."""
    out, lat, lock, nxt, errors = [None] * len(lines), [0.0] * len(lines), threading.Lock(), [0], []

    def client():
        conn = http.client.HTTPConnection(HOST, port, timeout=120)
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= len(lines):
                break
            t0 = time.monotonic()
            try:
                out[i] = translate(conn, lines[i], beam, model)
            except Exception as e:  # reported below; the test fails on it
                errors.append(f"line {i + 1}: {e}")
                conn.close()
                conn = http.client.HTTPConnection(HOST, port, timeout=120)
            lat[i] = time.monotonic() - t0
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out, lat, time.monotonic() - t0, errors


def cmd_req(a):
    port, method, path = int(a[0]), a[1], a[2]
    ctype = a[3] if len(a) > 3 and a[3] else None
    body = None
    if len(a) > 4:
        body = open(a[4][1:], "rb").read() if a[4].startswith("@") else a[4].encode()
    status, data = request(port, method, path, ctype, body)
    sys.stdout.write(f"{status}\t{data.decode('utf-8', 'replace')}\n")


def cmd_many(a):
    port, lines = int(a[0]), open(a[1], encoding="utf-8").read().splitlines()
    out, _, _, errors = run_clients(port, lines, int(a[2]), int(a[3]), a[4] if len(a) > 4 else None)
    for e in errors:
        print("error:", e, file=sys.stderr)
    for t in out:
        print(t if t is not None else "<no answer>")
    return 1 if errors else 0


def slow_client(a, head, data):
    """Sends head at once, then data a byte a second; prints whether the server closed it."""
    port, limit = int(a[0]), float(a[1])
    s = socket.create_connection((HOST, port), timeout=limit)
    s.sendall(head)
    t0 = time.monotonic()
    got = trickle(s, data, limit, 1.0)
    print(f"{'open' if got is None else 'closed'} after {time.monotonic() - t0:.0f} s")
    return 0


def cmd_slow(a):
    return slow_client(a, b"", POST_HEAD * 10)


def cmd_hold(a):
    port, n, path = int(a[0]), int(a[1]), a[2]
    held = [socket.create_connection((HOST, port), timeout=10) for _ in range(n)]
    for s in held:  # whole heads: the server holds these connections, waiting for their bodies
        s.sendall(POST_HEAD)
    time.sleep(0.3)  # let the server count them
    try:
        status, data = request(port, "GET", path, timeout=10)
        print(f"{status}\t{data.decode('utf-8', 'replace')}")
    except (OSError, http.client.HTTPException) as e:
        print(f"failed\t{e}")
    for s in held:
        s.close()


def trickle(s, data, limit, gap):
    """Sends data a byte each gap seconds until the server closes (what it answered, or b"" when
    it closed without a word) or limit passes (None)."""
    t0 = time.monotonic()
    try:
        for b in data:
            if time.monotonic() - t0 > limit:
                return None
            s.sendall(bytes([b]))
            s.settimeout(gap)
            try:
                got = s.recv(1024)
                return got
            except socket.timeout:
                pass
    except OSError:  # reset by the server
        return b""
    return None


def cmd_slowbody(a):
    return slow_client(a, POST_HEAD, b"x" * 100)


def probe_health(port, stop, out):
    """GET /health every 0.1 s until stop is set: out gets the slowest answer (s), the failures
    (no answer within 2 s, or a status other than 200) and the probes."""
    while not stop.is_set():
        t1 = time.monotonic()
        try:
            status, _ = request(port, "GET", "/health", timeout=2)
            out["fails"] += status != 200
        except (OSError, http.client.HTTPException):
            out["fails"] += 1
        out["worst"] = max(out["worst"], time.monotonic() - t1)
        out["probes"] += 1
        stop.wait(0.1)


def cmd_flood(a):
    port, n, secs = int(a[0]), int(a[1]), float(a[2])
    socks = [socket.create_connection((HOST, port), timeout=10) for _ in range(n)]
    ends = {"408": 0, "other": 0}
    lock = threading.Lock()

    def slow(s):
        got = trickle(s, POST_HEAD, secs, 0.5)
        if got is not None:
            with lock:
                ends["408" if got.startswith(b"HTTP/1.1 408 ") else "other"] += 1
        s.close()

    threads = [threading.Thread(target=slow, args=(s,)) for s in socks]
    for t in threads:
        t.start()
    stop, health = threading.Event(), {"worst": 0.0, "fails": 0, "probes": 0}
    prober = threading.Thread(target=probe_health, args=(port, stop, health))
    prober.start()
    for t in threads:
        t.join()
    stop.set()
    prober.join()
    print(f"{health['worst'] * 1000:.0f} {health['fails']} {ends['408']} {ends['other']}")
    return 0


def cmd_load(a):
    """bench's clients while SLOW connections trickle heads a byte each 2 s (each reconnecting
    when the server cuts it) and /health is probed: sentences/s, p50, p99, errors, then the
    slowest /health in ms, its failures and probes."""
    port, lines, clients, beam, n_slow = int(a[0]), open(a[1], encoding="utf-8").read().splitlines(), int(a[2]), int(a[3]), int(a[4])
    stop, health = threading.Event(), {"worst": 0.0, "fails": 0, "probes": 0}

    def slow():
        while not stop.is_set():
            try:
                s = socket.create_connection((HOST, port), timeout=10)
                for b in POST_HEAD:
                    s.sendall(bytes([b]))
                    if stop.wait(2.0):
                        break
                s.close()
            except OSError:  # cut by the server: again
                stop.wait(0.1)

    slows = [threading.Thread(target=slow) for _ in range(n_slow)]
    for t in slows:
        t.start()
    time.sleep(2)  # all of them connected and trickling
    prober = threading.Thread(target=probe_health, args=(port, stop, health))
    prober.start()
    _, lat, wall, errors = run_clients(port, lines, clients, beam)
    stop.set()
    prober.join()
    for t in slows:
        t.join()
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000
    print(f"{len(lines) / wall:.1f} {p(0.5):.0f} {p(0.99):.0f} {len(errors)} {health['worst'] * 1000:.0f} {health['fails']} {health['probes']}")
    return 1 if errors else 0


def cmd_bench(a):
    port, lines = int(a[0]), open(a[1], encoding="utf-8").read().splitlines()
    out, lat, wall, errors = run_clients(port, lines, int(a[2]), int(a[3]))
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000
    print(f"{len(lines) / wall:.1f} {p(0.5):.0f} {p(0.99):.0f} {len(errors)}")
    return 1 if errors else 0


def cmd_mixed(a):
    port, lines, opts = int(a[0]), open(a[1], encoding="utf-8").read().splitlines(), [json.loads(o) for o in a[2:]]
    jobs = [(k, i) for i in range(len(lines)) for k in range(len(opts))]  # interleaved: options mix in batches
    out, errors = {}, []

    def one(k, i):
        try:
            status, data = request(port, "POST", "/translate", "application/json",
                                   json.dumps(dict(opts[k], text=lines[i])).encode(), timeout=120)
            if status != 200:
                raise RuntimeError(f"status {status}: {data[:200]!r}")
            out[k, i] = json.loads(data)["translations"][0]["hyps"]
        except Exception as e:  # reported below; the test fails on it
            errors.append(f"options {k}, line {i + 1}: {e}")

    lock, nxt = threading.Lock(), [0]

    def worker():  # 12 at a time: under the server's connection limit (20 in serve.sh)
        while True:
            with lock:
                j = nxt[0]
                nxt[0] += 1
            if j >= len(jobs):
                return
            one(*jobs[j])

    threads = [threading.Thread(target=worker) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        print("error:", e, file=sys.stderr)
    for k in range(len(opts)):
        for i in range(len(lines)):
            for h in out.get((k, i), []):
                print("%d ||| %d ||| %s ||| %.8f" % (k, i, h["text"], h["score"]))
    return 1 if errors else 0


def post_texts(port, texts, **opts):
    body = json.dumps(dict(opts, texts=texts)).encode()
    status, data = request(port, "POST", "/translate", "application/json", body, timeout=120)
    if status != 200:
        raise RuntimeError(f"status {status}: {data[:200]!r}")


def cmd_fair(a):
    port, lines, beam = int(a[0]), open(a[1], encoding="utf-8").read().splitlines(), int(a[2])
    ends, errors = {}, []

    def one(name, texts, **opts):
        try:
            post_texts(port, texts, **opts)
        except Exception as e:  # reported below; the test fails on it
            errors.append(f"{name}: {e}")
        ends[name] = time.monotonic()

    threads = [threading.Thread(target=one, args=(f"big{k}", lines), kwargs={"beam": beam}) for k in range(3)]
    for t in threads:
        t.start()
    # the small one comes once the three are in (a fixed wait let a fast machine finish the first
    # big one before the small one was sent, and the test failed about one run in four)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not in_flight(port, 3):
        time.sleep(0.005)
    one("small", lines[:1])
    for t in threads:
        t.join()
    for e in errors:
        print("error:", e, file=sys.stderr)
    print(sum(ends[f"big{k}"] > ends["small"] for k in range(3)))
    return 1 if errors else 0


def in_flight(port, n):
    """whether n requests are in flight (received whole, not yet answered)"""
    _, body = request(port, "GET", "/metrics")
    return f"nmt_requests_in_flight {n}" in body.decode().splitlines()


def taken(port):
    """whether a decoder holds the one request in flight (none of its sentences queued)"""
    _, body = request(port, "GET", "/metrics")
    lines = body.decode().splitlines()
    return "nmt_queue_sentences 0" in lines and "nmt_requests_in_flight 1" in lines


def cmd_abandon(a):
    port, lines, beam = int(a[0]), open(a[1], encoding="utf-8").read().splitlines(), int(a[2])
    first = {}

    def send_first():
        first["status"], _ = request(port, "POST", "/translate", "application/json",
                                     json.dumps({"texts": lines, "beam": beam}))
    t = threading.Thread(target=send_first)
    t.start()
    # in this process, not from the shell: a program's start-up can outlast the first batch.
    # Twice in a row, as the count of requests rises just before the queue's.
    seen, end = 0, time.time() + 20
    while seen < 2 and time.time() < end:
        seen = seen + 1 if taken(port) else 0
        time.sleep(0.002)
    body = json.dumps({"texts": lines}).encode()
    s = socket.create_connection((HOST, port), timeout=10)
    s.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body)
    time.sleep(0.01)  # the server has read it (an end of stream first could end it unread)
    s.close()
    t.join()
    print(first.get("status"))
    return 0


def cmd_raw(a):
    port = int(a[0])
    data = open(a[1][1:], "rb").read() if a[1].startswith("@") else a[1].encode().decode("unicode_escape").encode("latin-1")
    s = socket.create_connection((HOST, port), timeout=10)
    s.sendall(data)  # no half-close unless asked: the server would take it for a client gone
    if a[2:] == ["half"]:
        s.shutdown(socket.SHUT_WR)
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except OSError:  # reset or timed out: what came before is the answer
        pass
    s.close()
    sys.stdout.write(out.decode("latin-1"))
    return 0


if __name__ == "__main__":
    cmds = {"req": cmd_req, "many": cmd_many, "slow": cmd_slow, "hold": cmd_hold, "bench": cmd_bench, "mixed": cmd_mixed,
            "slowbody": cmd_slowbody, "flood": cmd_flood, "load": cmd_load, "fair": cmd_fair, "abandon": cmd_abandon, "raw": cmd_raw}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    sys.exit(cmds[sys.argv[1]](sys.argv[2:]) or 0)
