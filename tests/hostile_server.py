"""A server that answers one connection as no honest HTTP server would, for the readers' bounds tests."""

from __future__ import annotations

import socket
import threading
import time


def answering_once(answer: bytes, pause: float = 0.0, head: bytes = b"") -> str:
    """The URL of a loopback server that reads one request and sends ``head`` whole, then ``answer``: whole,
    or a byte every ``pause`` seconds (a server that drips)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        with server:
            connection, _ = server.accept()
            with connection:
                connection.recv(4096)
                connection.sendall(head)
                for k in range(len(answer)) if pause else (None,):
                    connection.sendall(answer if k is None else answer[k : k + 1])
                    time.sleep(pause)

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}"
