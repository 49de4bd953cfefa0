"""How the server takes connections and reads requests, so that no client can hold it.

- :class:`CappedHTTPServer` serves at most ``max_connections`` connections at a time, one
  thread each; a connection beyond them is answered 503 (``Retry-After``) and closed at
  once by the accepting thread, which starts no thread for it.
- :class:`RequestReader` reads a connection's bytes with two limits: each wait for them
  ends after ``wait`` seconds (so an idle connection is closed after that long), and all
  the bytes of one request -- its line, headers and body -- must arrive within ``total``
  seconds of its first byte (so a client sending a byte now and then is cut off too).
"""

from __future__ import annotations

import io
import json
import socket
import threading
import time
from http.server import ThreadingHTTPServer

from faithprobe.errors import UsageError, excerpt


class CappedHTTPServer(ThreadingHTTPServer):
    """A threaded HTTP server with at most ``max_connections`` connections open at once."""

    daemon_threads = True
    request_queue_size = 128  # a burst of connections is accepted (and turned away) quickly

    def __init__(self, address, handler, max_connections: int) -> None:
        self._slots = threading.BoundedSemaphore(max_connections)
        self.max_connections = max_connections
        super().__init__(address, handler)

    def process_request(self, request, client_address) -> None:
        if not self._slots.acquire(blocking=False):
            _turn_away(request, self.max_connections)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: it will not give the slot back
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def _turn_away(request: socket.socket, cap: int) -> None:
    """Answer 503 on a connection the server has no room for, without ever blocking the
    accepting thread: the reply fits in a new connection's empty send buffer (should it
    not, the client sees the connection closed, which says as much)."""
    error = {
        "message": f"this server is serving its limit of {cap} connections; retry later",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    body = json.dumps({"error": error}).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    )
    try:
        request.setblocking(False)
        request.send(head.encode() + body)
        request.recv(1 << 16)  # what the client has sent: closing with it unread resets
    except OSError:
        pass


class RequestReader(io.RawIOBase):
    """The bytes arriving on ``sock``: each wait for them ends after ``wait`` seconds, and
    those of one request after ``total`` seconds from its first byte (:class:`TimeoutError`
    either way). :meth:`next_request` starts the clock of the next request; :meth:`limit`
    brings the current request's deadline forward."""

    def __init__(self, sock: socket.socket, wait: float, total: float) -> None:
        super().__init__()
        self._sock, self._wait, self._total = sock, wait, total
        self.started: float | None = None  # when this request's first byte arrived
        self.deadline: float | None = None

    def readable(self) -> bool:
        return True

    def next_request(self) -> None:
        self.started = self.deadline = None

    def limit(self, deadline: float) -> None:
        if self.deadline is None or deadline < self.deadline:
            self.deadline = deadline

    def readinto(self, buffer) -> int:
        timeout = self._wait
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request's time to arrive ran out")
            timeout = min(timeout, left)
        self._sock.settimeout(timeout)
        n = self._sock.recv_into(buffer)
        if n and self.started is None:
            self.started = time.monotonic()
            self.limit(self.started + self._total)
        return n


def check_address(host: str, port: int) -> None:
    """Refuse (:class:`~faithprobe.errors.UsageError`) an address the server could not
    listen on, before a model is loaded for it: bound and released at once, as the server
    binds it (IPv4, a port in TIME_WAIT reusable)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except (OSError, ValueError, TypeError) as err:  # TypeError: a NUL in the host name
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise UsageError(
            f"--host {excerpt(host)} --port {port}: cannot listen there: {reason}"
        ) from None
