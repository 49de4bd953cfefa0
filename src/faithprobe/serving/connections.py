"""How the server takes connections and reads requests, so that no client can hold it.

- :class:`CappedHTTPServer` keeps a connection *waiting* until it has sent a request's line
  and headers and, where the server has a key, the key: at most ``max_waiting`` wait at
  once, a thread each, and a new connection beyond them closes the one that has waited
  longest (an idle or trickling client is the oldest; one with its key sends its headers at
  once). A connection past its headers is *admitted* to one of ``max_connections`` slots,
  which it holds until it closes; one more is answered 503 (``Retry-After``, by the
  handler) and closed. So
  a flood of clients that never authenticate cannot take the slots from one that does.
- :class:`RequestReader` reads a connection's bytes with two limits: each wait for them
  ends after ``wait`` seconds (so an idle connection is closed after that long), and all
  the bytes of one request -- its line, headers and body -- must arrive within ``total``
  seconds of its first byte (so a client sending a byte now and then is cut off too).
"""

from __future__ import annotations

import contextlib
import io
import socket
import threading
import time
from http.server import ThreadingHTTPServer

from faithprobe.errors import UsageError, excerpt


class CappedHTTPServer(ThreadingHTTPServer):
    """A threaded HTTP server holding at most ``max_waiting`` connections that have not
    been admitted yet and ``max_connections`` admitted ones (module docstring). The
    handler calls :meth:`admit` once a request's headers (and key) are in."""

    daemon_threads = True
    request_queue_size = 128  # a burst of connections is accepted quickly

    def __init__(
        self, address, handler, max_connections: int, max_waiting: int | None = None
    ) -> None:
        self._slots = threading.BoundedSemaphore(max_connections)
        self.max_connections = max_connections
        self.max_waiting = max_waiting or waiting_room(max_connections)
        self._waiting: dict[socket.socket, None] = {}  # oldest first
        self._admitted: set[socket.socket] = set()
        self._lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request, client_address) -> None:
        with self._lock:
            while len(self._waiting) >= self.max_waiting:  # the longest waiting makes room
                oldest = next(iter(self._waiting))
                del self._waiting[oldest]
                _hang_up(oldest)
            self._waiting[request] = None
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: nothing else will take it off the list
            self._leave(request)
            raise

    def admit(self, request: socket.socket) -> bool:
        """Give the connection one of the slots, once; False where none is free (or it was
        closed to make room meanwhile)."""
        with self._lock:
            if request in self._admitted:
                return True
            if request not in self._waiting or not self._slots.acquire(blocking=False):
                return False
            del self._waiting[request]
            self._admitted.add(request)
            return True

    def _leave(self, request: socket.socket) -> None:
        with self._lock:
            self._waiting.pop(request, None)
            if request in self._admitted:
                self._admitted.discard(request)
                self._slots.release()

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._leave(request)


def waiting_room(max_connections: int) -> int:
    """How many connections may wait to be admitted: four per slot, at least 64."""
    return max(64, 4 * max_connections)


def _hang_up(request: socket.socket) -> None:
    """End a waiting connection from another thread: its reads return at once."""
    with contextlib.suppress(OSError):  # it closed meanwhile
        request.shutdown(socket.SHUT_RDWR)


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
    binds it (IPv4, a port in TIME_WAIT reusable). An empty host, which would listen on
    every interface, must be said as such (0.0.0.0)."""
    if not host.strip():
        raise UsageError(
            f"--host {excerpt(host)}: give an address (0.0.0.0 listens on every interface)"
        )
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except (OSError, ValueError, TypeError) as err:  # TypeError: a NUL in the host name
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise UsageError(
            f"--host {excerpt(host)} --port {port}: cannot listen there: {reason}"
        ) from None
