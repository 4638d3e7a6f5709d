"""HTTP as the log's processes serve it to whoever reaches them (the log, a witness): a thread a
connection, at most so many at once, and none kept by a client that sends nothing, or sends its request a
byte at a time. The standard library's threaded server, bounded: its work is small and synchronous (a
queue hand-off, a file read, a signature), and it hosts no Flask."""

from __future__ import annotations

import logging
import re
import socket
import threading
import time
from contextlib import suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

MOST_CONNECTIONS: Final = 256
"""Connections served at once (a thread each); one more is closed unanswered, so that idle clients
cannot make the process spawn threads without bound."""
IDLE_SECONDS: Final = 30.0
"""A connection that sends nothing for this long is closed, and so is one whose request line and headers
have not all come this long after the server began to wait for them (a byte at a time keeps no connection)."""
CONTENT_LENGTH: Final = re.compile(r"[0-9]{1,12}")
"""ASCII digits only (``str.isdigit`` also takes "²"), matched whole."""
logger = logging.getLogger("maubinh.log")


class BoundedServer(ThreadingHTTPServer):
    """At most ``most_connections`` connections at once, each closed once silent for ``idle_seconds`` or
    once its request head is that late."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BoundedHandler],
        most_connections: int = MOST_CONNECTIONS,
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        self.idle_seconds = idle_seconds
        self._connections = threading.BoundedSemaphore(most_connections)
        self._heads: dict[socket.socket, float] = {}
        """The connections whose request head is awaited, and when it is too late."""
        self._heads_lock = threading.Lock()
        self._closed = threading.Event()
        super().__init__(address, handler)
        threading.Thread(target=self._close_late_heads, name="maubinh-http-heads", daemon=True).start()

    def awaiting(self, connection: socket.socket) -> None:
        with self._heads_lock:
            self._heads[connection] = time.monotonic() + self.idle_seconds

    def heard(self, connection: socket.socket) -> None:
        with self._heads_lock:
            self._heads.pop(connection, None)

    def _close_late_heads(self) -> None:
        """Shut each connection whose request head is late: its thread's read returns, and it ends."""
        while not self._closed.wait(min(1.0, self.idle_seconds / 4)):
            now = time.monotonic()
            with self._heads_lock:
                late = [connection for connection, deadline in self._heads.items() if deadline < now]
                for connection in late:
                    del self._heads[connection]
            for connection in late:
                with suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)

    def server_close(self) -> None:
        self._closed.set()
        super().server_close()

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection while fewer than ``most_connections`` are served; else it is closed."""
        if not self._connections.acquire(blocking=False):
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connections.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client gone mid-request is no fault of the server's: said in one line, without a traceback."""
        logger.warning("a request from %s ended early", client_address[0])


class BoundedHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, silent (the process logs what matters itself), its request head awaited within the
    server's ``idle_seconds``."""

    protocol_version = "HTTP/1.1"
    server: BoundedServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.idle_seconds)  # a connection silent this long is closed

    def log_message(self, format: str, *args: Any) -> None:
        return

    def handle_one_request(self) -> None:
        self.server.awaiting(self.connection)
        try:
            super().handle_one_request()
        finally:
            self.server.heard(self.connection)

    def parse_request(self) -> bool:
        parsed = super().parse_request()  # the request line's rest, and the headers, now read
        self.server.heard(self.connection)
        return parsed
