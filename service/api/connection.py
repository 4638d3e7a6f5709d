"""The connection under a request: closing it after the answer, and what is left of a body nobody read.

gunicorn's ``pre_request`` hook (service/server/gunicorn_config.py) hands over its request, whose
``must_close`` makes the answer say ``Connection: close`` and the worker close it. A context variable
holds it: each greenlet has its own, so concurrent requests never see each other's.

A body the application did not read to its end is never drained before the next request on the
connection: gunicorn's async workers drain with no bound in bytes or time and without yielding, so
one client streaming a body declared 1 GB held a whole worker. Such an answer closes its connection
instead, and the worker then lingers, bounded: it half-closes, so the client reads its answer, and
drops at most ``LINGER_BYTES`` over at most ``LINGER_SECONDS``, paced, so that a client still sending is
not reset before it reads its answer.
"""

from __future__ import annotations

import socket
import time
from contextvars import ContextVar
from typing import Any

import gevent
from flask import Response, request

_serving: ContextVar[Any] = ContextVar("maubinh_server_request", default=None)

BODY_TAKEN = "maubinh.body_taken"
"""Set in the WSGI environ once the application has read the request's body to its end."""
BODY_LEFT = "maubinh.body_left"
"""Set in the WSGI environ when the answer closes its connection on a body not read to its end."""
LINGER_BYTES = 1024 * 1024
"""The most of a body left unread that is dropped after its answer, before the connection closes."""
LINGER_SECONDS = 1.0
"""The longest a worker lingers on a closing connection, whatever the client sends."""
LINGER_CHUNK = 64 * 1024
TURN_SECONDS = 1e-6
"""How long a turn waits: any timer resumes the greenlet after the loop has polled and run what is
ready, where ``sleep(0)`` resumes it first (service/server/gunicorn_config.py, ``pre_request``)."""


def serving(request: Any) -> None:
    """The server's request now being answered in this context (gunicorn's ``pre_request``)."""
    _serving.set(request)


def under_a_server() -> bool:
    """Whether a server holds this request's connection (false in process: the tests' client)."""
    return _serving.get() is not None


def close_after_answer() -> None:
    """Ask the server to close the connection once this answer is sent (a no-op elsewhere)."""
    server_request = _serving.get()
    if server_request is not None:
        server_request.must_close = True


def take_turn() -> None:
    """Let this worker's other connections run before going on."""
    gevent.sleep(TURN_SECONDS)


def body_taken() -> None:
    """The application read this request's body to its end: the connection may serve the next."""
    request.environ[BODY_TAKEN] = True


def close_on_a_body_left(response: Response) -> Response:
    """An answer to a request whose body was not read to its end closes the connection (an
    ``after_request`` hook: 401, 404, 405, 413, a view that never reads)."""
    environ = request.environ
    if environ.get(BODY_TAKEN):
        return response
    if request.content_length or "HTTP_TRANSFER_ENCODING" in environ:
        environ[BODY_LEFT] = True
        close_after_answer()
    return response


def linger(environ: dict[str, Any], server_request: Any) -> None:
    """After an answer that closes on a body left unread (gunicorn's ``post_request``): half-close, so
    that the client reads its answer, then drop what it still sends, at most ``LINGER_BYTES`` and no
    faster than ``LINGER_BYTES`` over ``LINGER_SECONDS``. Paced, a client streaming at full speed costs
    the worker a few reads a second; read as fast as it came, it took half the worker's time."""
    if not environ.get(BODY_LEFT):
        return
    sock = getattr(getattr(server_request, "unreader", None), "sock", None)
    if sock is None:
        return
    started = time.monotonic()
    dropped = 0
    try:
        sock.shutdown(socket.SHUT_WR)
        while dropped < LINGER_BYTES and (left := started + LINGER_SECONDS - time.monotonic()) > 0:
            sock.settimeout(left)
            chunk = sock.recv(LINGER_CHUNK)
            if not chunk:
                return
            dropped += len(chunk)
            gevent.sleep(max(TURN_SECONDS, started + LINGER_SECONDS * dropped / LINGER_BYTES - time.monotonic()))
    except OSError:  # reset, or no byte in time: the connection closes all the same
        return
