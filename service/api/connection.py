"""Closing a connection after its answer, where the server lets the application ask: gunicorn's
``pre_request`` hook (service/gunicorn_config.py) hands over its request, whose ``must_close`` makes
the answer say ``Connection: close`` and the worker close it. A context variable holds it: each
greenlet has its own, so concurrent requests never see each other's."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

_serving: ContextVar[Any] = ContextVar("maubinh_server_request", default=None)


def serving(request: Any) -> None:
    """The server's request now being answered in this context (gunicorn's ``pre_request``)."""
    _serving.set(request)


def close_after_answer() -> None:
    """Ask the server to close the connection once this answer is sent (a no-op elsewhere)."""
    request = _serving.get()
    if request is not None:
        request.must_close = True
