"""HTTP as the log's processes serve it to whoever reaches them (the log, a witness): a thread a
connection, at most so many at once, none kept by a client that sends nothing, or sends its request a
byte at a time, and no request read but one whose framing is plain (one Content-Length, no
Transfer-Encoding, no body on a GET), so that no bytes of one are read as another. The standard
library's threaded server, bounded: its work is small and synchronous (a queue hand-off, a file read, a
signature), and it hosts no Flask."""

from __future__ import annotations

import json
import logging
import re
import socket
import sys
import threading
import time
from collections import Counter
from contextlib import suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

MOST_CONNECTIONS: Final = 256
"""Connections served at once (a thread each); one more is closed unanswered, so that idle clients
cannot make the process spawn threads without bound."""
IDLE_SECONDS: Final = 30.0
"""A connection that sends nothing for this long is closed, and so is one whose request (its line, its
headers and its body) has not all come this long after the server began to wait for it: a byte at a time
keeps no connection."""
CONNECTION_SECONDS: Final = 300.0
"""A connection this old is closed after the answer it is writing: a client reading its pipelined answers
slowly holds a thread that long at most."""
SAID_EVERY: Final = 10.0
"""Clients gone mid-request are said at most once in this many seconds, with their count."""
CONTENT_LENGTH: Final = re.compile(r"[0-9]{1,12}")
"""ASCII digits only (``str.isdigit`` also takes "²"), matched whole."""
logger = logging.getLogger("maubinh.log")


class BoundedServer(ThreadingHTTPServer):
    """At most ``most_connections`` connections at once (and ``most_per_client`` from one address, where
    clients reach it directly: through a proxy, every one comes from the proxy's), each closed once silent
    for ``idle_seconds``, once its request is that late, or once :data:`CONNECTION_SECONDS` old."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BoundedHandler],
        most_connections: int = MOST_CONNECTIONS,
        idle_seconds: float = IDLE_SECONDS,
        most_per_client: int | None = None,
    ) -> None:
        self.idle_seconds = idle_seconds
        self.most_per_client = most_per_client
        self._per_client: Counter[str] = Counter()
        self._connections = threading.BoundedSemaphore(most_connections)
        self._awaited: dict[socket.socket, float] = {}
        """The connections whose request is awaited, and when it is too late."""
        self._lock = threading.Lock()
        """Over the awaited requests, the connections by address and the count of clients gone early."""
        self._closed = threading.Event()
        self._ended_early, self._said_at, self._last_early = 0, -SAID_EVERY, ""
        super().__init__(address, handler)
        threading.Thread(target=self._close_late_requests, name="maubinh-http-late", daemon=True).start()

    def awaiting(self, connection: socket.socket) -> None:
        with self._lock:
            self._awaited[connection] = time.monotonic() + self.idle_seconds

    def heard(self, connection: socket.socket) -> None:
        with self._lock:
            self._awaited.pop(connection, None)

    def _close_late_requests(self) -> None:
        """Shut each connection whose request is late: its thread's read returns, and it ends."""
        while not self._closed.wait(min(1.0, self.idle_seconds / 4)):
            now = time.monotonic()
            with self._lock:
                late = [connection for connection, deadline in self._awaited.items() if deadline < now]
                for connection in late:
                    del self._awaited[connection]
            for connection in late:
                with suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
            self._say_ended_early()  # a flood's count, said once it has gone on for SAID_EVERY

    def server_close(self) -> None:
        self._closed.set()
        super().server_close()

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection while fewer than ``most_connections`` are served, and fewer than
        ``most_per_client`` from its address; else it is closed."""
        client = str(client_address[0])
        with self._lock:
            crowded = self.most_per_client is not None and self._per_client[client] >= self.most_per_client
            taken = not crowded and self._connections.acquire(blocking=False)
            if taken:
                self._per_client[client] += 1
        if not taken:
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connections.release()
            with self._lock:
                client = str(client_address[0])
                self._per_client[client] -= 1
                if not self._per_client[client]:
                    del self._per_client[client]

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client gone mid-request (its connection reset, timed out, or its body cut short) is no fault of
        the server's: counted, and said in one line at most every :data:`SAID_EVERY` seconds, however many
        do so; anything else is a fault, said whole."""
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError | TimeoutError):
            logger.exception("a request from %s failed", client_address[0])
            return
        with self._lock:
            self._ended_early += 1
            self._last_early = str(client_address[0])
        self._say_ended_early()

    def _say_ended_early(self) -> None:
        now = time.monotonic()
        with self._lock:
            if not self._ended_early or now < self._said_at + SAID_EVERY:
                return
            count, last, self._ended_early, self._said_at = self._ended_early, self._last_early, 0, now
        logger.warning("%d request(s) ended early, the last from %s", count, last)


class BodyCut(ConnectionError):
    """A request's body that ended before its Content-Length: never read as a whole one."""


class BoundedHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, silent (the process logs what matters itself), its request awaited within the server's
    ``idle_seconds``, its refusals JSON; a handler reads a body with :meth:`read_body` only."""

    protocol_version = "HTTP/1.1"
    server: BoundedServer
    answered = False
    """Whether the request being handled has had its answer begun."""

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.idle_seconds)  # a connection silent this long is closed
        self.opened = time.monotonic()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def handle_one_request(self) -> None:
        """One request; a fault of the server's own (a disk full, a bug) answered 500 if nothing was yet,
        said whole in the log, and the connection closed."""
        self.server.awaiting(self.connection)
        self.answered = False
        try:
            super().handle_one_request()
        except (ConnectionError, TimeoutError):
            raise
        except Exception:
            logger.exception("a request from %s failed", self.client_address[0])
            self.close_connection = True
            if not self.answered:
                with suppress(OSError):
                    self.send_error(500, "the server failed on this request; its log says why")
        finally:
            self.server.heard(self.connection)
            if time.monotonic() - self.opened > CONNECTION_SECONDS:
                self.close_connection = True

    def parse_request(self) -> bool:
        """The request line and headers, read; refused (400, the connection closed) where its framing is
        not plain (:meth:`_framing_fault`)."""
        if not super().parse_request():
            return False
        why = self._framing_fault()
        if why is not None:
            self.send_error(400, why)
            return False
        return True

    def handle_expect_100(self) -> bool:
        """A client that waits for ``100 Continue`` before its body (RFC 9110 §10.1.1) is answered the
        refusal instead, if its request is refused, so that it never sends a body that would not be read.
        http.server asks while still reading the head: a head framed two ways is refused here too."""
        why = self._framing_fault()
        if why is not None:
            self.send_error(400, why)
            return False
        if self.command == "POST" and self.refused_before_body():
            return False
        return super().handle_expect_100()

    def refused_before_body(self) -> bool:
        """Whether this POST is refused before its body is read (its route, its key, its length), the
        refusal answered and the connection closed: each server says what it refuses."""
        return False

    def _framing_fault(self) -> str | None:
        """Why another reader (a proxy in front) could frame this request otherwise, if it could: its
        headers not all read, a Transfer-Encoding, two Content-Lengths, a body on a GET."""
        headers = self.headers
        lengths = headers.get_all("Content-Length") or []
        if headers.defects or headers.get_payload():
            return "a header that cannot be read"
        if "Transfer-Encoding" in headers:
            return "Transfer-Encoding is not taken: send a Content-Length"
        if len(lengths) > 1:
            return "one Content-Length at most"
        if self.command in ("GET", "HEAD") and lengths not in ([], ["0"]):
            return "no body on a GET or HEAD"
        return None

    def read_body(self, length: int) -> bytes:
        """The request's body, which must come within the same time as its head: then the request is heard.
        :class:`BodyCut` (no answer, the connection closed) when it ends short: its part is not the request."""
        body = self.rfile.read(length)
        if len(body) < length:
            raise BodyCut(f"a body of {len(body)} bytes of the {length} its Content-Length said")
        self.server.heard(self.connection)
        return body

    def send_response(self, code: int, message: str | None = None) -> None:
        self.server.heard(self.connection)  # answered (a body still unread is never read: the handler closes)
        self.answered = True
        super().send_response(code, message)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals too (a request line it cannot read, a method it has no handler for):
        JSON, as every answer, and the connection closed, so that nothing after the refusal is read."""
        self.close_connection = True
        body = json.dumps({"error": message or self.responses.get(code, ("",))[0]}).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
