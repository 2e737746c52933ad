"""Raw-socket helpers for the hostile wire tests: requests boto3 cannot express, read back by
hand. Every socket talks to 127.0.0.1 only and every wait has a deadline."""
import json
import os
import resource
import socket
import time

from jobkit import rss_kib  # noqa: F401  (re-exported for the wire tests)
from wire import CONTENT_TYPE, encode, signed_headers


def raise_fd_limit():
    """Lets this test process hold thousands of sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connect(port, timeout=10):
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def request_bytes(server, target, body, headers=None, sign=True, version="HTTP/1.1", **sign_args):
    """One POST / as bytes: signed like boto3 signs it (unless sign=False), Content-Length set."""
    data = encode(body)
    if headers is None:
        headers = signed_headers(server.endpoint, target, data, **sign_args) if sign else {
            "Content-Type": CONTENT_TYPE, **({"X-Amz-Target": target} if target else {})}
    lines = [f"POST / {version}", f"Host: 127.0.0.1:{server.port}"]
    for name, value in headers.items():
        if name.lower() in ("host", "content-length"):
            continue
        lines.append(f"{name}: {value}")
    lines.append(f"Content-Length: {len(data)}")
    head = "\r\n".join(lines).encode("latin-1") + b"\r\n\r\n"
    return head + data


class Reader:
    """Reads HTTP/1.1 responses one after another from a socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed")
        self.buffer += chunk

    def response(self):
        """Returns (status, headers dict with lowercase names, body bytes)."""
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            self._fill()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, body

    def closed(self, timeout):
        """True if the peer closes (or resets) the connection within `timeout` seconds."""
        self.sock.settimeout(timeout)
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False


def glue_error(body):
    document = json.loads(body)
    return document["__type"], document["message"]


def wait_until(predicate, timeout, interval=0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def pid_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))
