"""One request to the server, read within its limits and answered in JSON.

:class:`JSONRequestHandler` reads a request's line and headers through a
:class:`~faithprobe.serving.connections.RequestReader` (each wait for bytes, and all of the
request's bytes, bounded in time) and its body by its ``Content-Length`` (refused, with the
status that says why, without one, with a wrong one or above the size limit), and sends
JSON responses, server-sent events and errors, every error in the OpenAI API's shape (the
standard library's own refusals too: 400 for a request line it cannot parse, 414, 431 for
headers too large, 501 for a method it does not know). Which endpoint a request is for and
what it answers are its subclass's (:mod:`~faithprobe.serving.openai_server`).
"""

from __future__ import annotations

import io
import json
import time
from http.server import BaseHTTPRequestHandler

from faithprobe.serving.budget import Budget
from faithprobe.serving.connections import RequestReader
from faithprobe.serving.limits import Limits
from faithprobe.serving.refusals import Refused, shown


class JSONRequestHandler(BaseHTTPRequestHandler):
    """Reads the requests of one connection within ``limits`` and answers them in JSON
    (module docstring); a subclass's ``do_GET`` and ``do_POST`` say what they answer."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the client's connection pool expects
    # a request line that cannot be parsed is answered with a status line and headers too,
    # not as HTTP/0.9 (a bare body), which no client of this server speaks
    default_request_version = "HTTP/1.1"

    def __init__(self, request, client_address, server, *, limits: Limits) -> None:
        self.limits = limits
        self.timeout = limits.read_seconds  # the socket's: no wait for a client's bytes is longer
        super().__init__(request, client_address, server)  # serves the connection

    def log_message(self, format, *args) -> None:  # noqa: A002 - quiet
        pass

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # read through a RequestReader instead
        self.reader = RequestReader(
            self.connection, self.limits.read_seconds, self.limits.request_read_seconds
        )
        self.rfile = io.BufferedReader(self.reader)

    def handle_one_request(self) -> None:
        self.reader.next_request()
        super().handle_one_request()

    def _budget(self) -> Budget:
        """This request's time budget, from its first byte; reading its body ends with it
        too."""
        budget = Budget(self.limits.seconds, self.reader.started or time.monotonic())
        self.reader.limit(budget.deadline)
        return budget

    # -- the body ------------------------------------------------------------------------

    def _declared_length(self) -> int:
        """The body's length as Content-Length declares it, if the server takes it."""
        if self.headers.get("Transfer-Encoding"):
            raise Refused(411, "send the body with a Content-Length, not Transfer-Encoding")
        values = self.headers.get_all("Content-Length") or []
        if not values:
            raise Refused(411, "a POST needs a Content-Length header")
        value = values[0].strip()
        if len(set(values)) > 1 or not (value.isascii() and value.isdigit()):
            raise Refused(400, f"Content-Length must be one number of bytes, not {shown(values)}")
        cap = self.limits.body_bytes
        if len(value) > len(str(cap)) or int(value) > cap:  # int() of 5000 digits fails
            raise Refused(413, f"the body is larger than this server's limit of {cap} bytes")
        return int(value)

    def _body(self) -> bytes:
        length = self._declared_length()
        try:
            body = self.rfile.read(length)
        except TimeoutError:
            limits = self.limits
            raise Refused(
                408,
                f"the body did not arrive in time (each wait ends after "
                f"{limits.read_seconds:g} s, the whole request after "
                f"{min(limits.request_read_seconds, limits.seconds):g} s)",
            ) from None
        except OSError as err:
            raise Refused(400, f"the body could not be read: {err}") from None
        if len(body) < length:
            raise Refused(400, f"the body ended after {len(body)} of {length} bytes")
        return body

    def _refuse_unread(
        self, status: int, message: str, code: str | None = None, headers: dict | None = None
    ) -> None:
        """Answer ``status`` before reading the body, then skip the body so that the
        connection can carry the next request (or close it when the body's length is
        unknown or too large to skip). A request with neither ``Content-Length`` nor
        ``Transfer-Encoding`` has no body (a GET, say)."""
        framed = self.headers.get("Content-Length") or self.headers.get("Transfer-Encoding")
        try:
            length = self._declared_length() if framed else 0
        except Refused:
            length = 0
            self.close_connection = True
        self._error(status, message, code, headers)
        try:
            skipped = len(self.rfile.read(length)) if length else 0
        except OSError:
            skipped = -1
        if skipped != length:
            self.close_connection = True

    # -- the response --------------------------------------------------------------------

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (a request line or headers it cannot parse,
        431 for headers too large, 414, 501 for a method no ``do_*`` serves), in JSON like
        every other error; the connection is closed, as the library closes it."""
        self.close_connection = True
        reason = message or self.responses.get(code, ("error",))[0]
        self._error(code, f"{reason}: {explain}" if explain else reason)

    def _error(
        self, status: int, message: str, code: str | None = None, headers: dict | None = None
    ) -> None:
        """An error in the OpenAI API's shape: ``{"error": {message, type, param, code}}``."""
        kind = "invalid_request_error" if status < 500 else "server_error"
        error = {"message": message, "type": kind, "param": None, "code": code}
        retry = {"Retry-After": "1"} if status == 503 else {}
        self._send(status, {"error": error}, {**retry, **(headers or {})})

    def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_events(self, status: int, stream: bytes) -> None:
        """Server-sent events (:mod:`~faithprobe.serving.event_stream`), sent whole."""
        headers = {"Cache-Control": "no-cache"}
        self._send_bytes(status, stream, "text/event-stream; charset=utf-8", headers)

    def _send_bytes(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None
    ) -> None:
        try:
            self.connection.settimeout(self.limits.read_seconds)  # reading may have lowered it
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":  # a response to HEAD has its headers only
                self.wfile.write(data)
        except OSError:  # the client gave up (a slow fault outlived its timeout)
            self.close_connection = True
