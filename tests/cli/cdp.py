"""cdp.py: a small Chrome DevTools Protocol client for the browser tests (standard library only).

It starts headless Chromium on a throwaway profile with --remote-debugging-port=0, reads the port
the browser chose from DevToolsActivePort in that profile, finds a page target in
http://127.0.0.1:PORT/json and talks to it over a WebSocket (RFC 6455): an HTTP/1.1 upgrade
whose Sec-WebSocket-Accept is checked, masked text frames from us, unmasked frames of any length
(fragmented or not) from the browser, pings answered. Every wait has a deadline, so a browser
that hangs makes a call raise CdpError instead of blocking; Browser.kill() ends the browser's whole
process group (it runs in a session of its own).

    with Browser("/usr/bin/chromium", profile_dir) as b:
        page = b.page()
        page.call("Page.navigate", url="http://127.0.0.1:8080/")
"""
import base64
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import time
import urllib.parse
import urllib.request

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 §1.3: fixed by the protocol


class CdpError(Exception):
    pass


class WebSocket:
    """A client WebSocket over one TCP connection; text messages only."""

    def __init__(self, url, timeout):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "ws":
            raise CdpError(f"not a ws:// address: {url}")
        self.sock = socket.create_connection((u.hostname, u.port or 80), timeout=timeout)
        self.buf = b""
        key = base64.b64encode(os.urandom(16)).decode()
        path = u.path + ("?" + u.query if u.query else "")
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {u.netloc}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        while b"\r\n\r\n" not in self.buf:
            self._fill(time.monotonic() + timeout)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        if len(lines[0].split()) < 2 or lines[0].split()[1] != "101":
            raise CdpError(f"WebSocket upgrade refused: {lines[0]}")
        fields = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
        want = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        if fields.get("sec-websocket-accept") != want:
            raise CdpError("WebSocket upgrade: wrong Sec-WebSocket-Accept")

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise CdpError("timed out waiting for the browser")
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise CdpError("timed out waiting for the browser") from None
        if not data:
            raise CdpError("the browser closed the connection")
        self.buf += data

    def _take(self, n, deadline):
        while len(self.buf) < n:
            self._fill(deadline)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _send_frame(self, opcode, payload):
        # a client masks every frame (RFC 6455 §5.3); the length takes 7, 7+16 or 7+64 bits
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + body)

    def send(self, text):
        self._send_frame(0x1, text.encode("utf-8"))

    def recv(self, deadline):
        """The next whole text message, continuation frames joined."""
        parts = []
        while True:
            b0, b1 = self._take(2, deadline)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._take(2, deadline))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._take(8, deadline))[0]
            mask = self._take(4, deadline) if b1 & 0x80 else None
            payload = self._take(n, deadline)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise CdpError("the browser closed the WebSocket")
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            parts.append(payload)
            if b0 & 0x80:
                return b"".join(parts).decode("utf-8")

    def close(self):
        try:
            self._send_frame(0x8, b"")
        except OSError:
            pass
        self.sock.close()


class Page:
    """One target's session: commands by id, events kept until asked for."""

    def __init__(self, ws_url, timeout):
        self.ws = WebSocket(ws_url, timeout)
        self.timeout, self.next_id, self.events = timeout, 0, []

    def call(self, method, timeout=None, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            msg = self._next(method, deadline)
            if msg.get("id") == my:
                if "error" in msg:
                    raise CdpError(f"{method}: {msg['error'].get('message')}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, timeout):
        """The first event METHOD not yet taken, waiting up to TIMEOUT seconds for it."""
        deadline = time.monotonic() + timeout
        while True:
            for k, e in enumerate(self.events):
                if e["method"] == method:
                    return self.events.pop(k)
            msg = self._next(method, deadline)
            if "method" in msg:
                self.events.append(msg)

    def _next(self, what, deadline):
        try:
            return json.loads(self.ws.recv(deadline))
        except CdpError as e:
            raise CdpError(f"{what}: {e}") from None

    def evaluate(self, expr, timeout=None):
        """The value of a JavaScript expression (JSON-serialisable; promises awaited)."""
        r = self.call("Runtime.evaluate", timeout=timeout, expression=expr, returnByValue=True,
                      awaitPromise=True)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise CdpError(f"page script failed: {d.get('exception', {}).get('description') or d.get('text')}")
        return r["result"].get("value")

    def close(self):
        self.ws.close()


class Browser:
    """Headless Chromium on PROFILE (a fresh directory); ARGS are added to its command line, its
    output goes to LOG, its process id (which is also its process group's) to PID_FILE."""

    def __init__(self, exe, profile, args=(), timeout=20, log=None, pid_file=None):
        self.timeout, self.pages = timeout, []
        os.makedirs(profile, exist_ok=True)
        port_file = os.path.join(profile, "DevToolsActivePort")
        if os.path.exists(port_file):
            os.remove(port_file)
        # --no-sandbox: tests may run as root, where the sandbox refuses to start
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--no-default-browser-check", "--disable-background-networking",
               "--disable-component-update", "--disable-extensions", "--mute-audio",
               f"--user-data-dir={profile}", "--remote-debugging-port=0", *args, "about:blank"]
        out = open(log, "ab") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                     start_new_session=True)
        if log:
            out.close()
        self.pid = self.proc.pid
        if pid_file:  # for a caller that must be able to kill the browser if we are killed
            with open(pid_file, "w") as f:
                f.write(f"{self.pid}\n")
        try:
            self.port = self._wait_port(port_file, timeout)
        except BaseException:
            self.kill()
            raise

    def _wait_port(self, port_file, timeout):
        # the first line of DevToolsActivePort is the port, the second the browser's path
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise CdpError(f"chromium exited with status {self.proc.returncode}")
            if time.monotonic() > deadline:
                raise CdpError(f"no {port_file} after {timeout} s")
            try:
                with open(port_file) as f:
                    first = f.readline()
                if first.endswith("\n") and first.strip().isdigit():
                    return int(first)
            except FileNotFoundError:
                pass
            time.sleep(0.1)

    def targets(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json", timeout=self.timeout) as r:
            return json.loads(r.read())

    def page(self):
        """A session on the browser's first page target."""
        deadline = time.monotonic() + self.timeout
        while True:
            pages = [t for t in self.targets() if t.get("type") == "page" and t.get("webSocketDebuggerUrl")]
            if pages:
                p = Page(pages[0]["webSocketDebuggerUrl"], self.timeout)
                self.pages.append(p)
                return p
            if time.monotonic() > deadline:
                raise CdpError(f"no page target after {self.timeout} s")
            time.sleep(0.1)

    def kill(self):
        for p in self.pages:
            try:
                p.close()
            except OSError:
                pass
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()
