"""Workers recycle one at a time: the first ones' max_requests are spread over the whole."""

from __future__ import annotations

import contextvars
import importlib
import logging
import signal
import sys
from collections.abc import Iterator
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest


def _as_gunicorn(hook: Any, *args: Any) -> None:
    """A hook run as gunicorn runs it, in the request's own context: what it marks (the request being
    served, service/api/connection.py) stays there, and no later test in this process sees a server."""
    contextvars.copy_context().run(hook, *args)


@pytest.fixture
def config(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)  # importing it empties that folder
    sys.modules.pop("service.server.gunicorn_config", None)
    stops = (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT)
    handlers = {signum: signal.getsignal(signum) for signum in stops}
    yield importlib.import_module("service.server.gunicorn_config")
    for signum, handler in handlers.items():  # post_fork sets a worker's: this process is no worker after
        signal.signal(signum, handler)


def limit(config: ModuleType, age: int, workers: int = 2, max_requests: int = 20000, drawn: int = 21000) -> int:
    """The max_requests a worker keeps after post_fork; ``drawn`` is what gunicorn gave it (jitter in)."""
    server = SimpleNamespace(cfg=SimpleNamespace(max_requests=max_requests), num_workers=workers)
    worker = SimpleNamespace(age=age, max_requests=drawn)
    config.post_fork(server, worker)
    return int(worker.max_requests)


def test_the_first_workers_recycle_at_evenly_spaced_points(config: ModuleType) -> None:
    assert [limit(config, age) for age in (1, 2)] == [10500, 21000]
    assert [limit(config, age, workers=4, drawn=20000) for age in (1, 2, 3, 4)] == [5000, 10000, 15000, 20000]


def test_their_successors_recycle_at_the_whole(config: ModuleType) -> None:
    """A successor starts when the others are part way: the spacing carries on by itself."""
    assert [limit(config, age) for age in (3, 4, 9)] == [21000, 21000, 21000]


def test_no_recycling_stays_none(config: ModuleType) -> None:
    assert limit(config, 1, max_requests=0, drawn=sys.maxsize) == sys.maxsize


def test_a_connection_closes_after_its_thousandth_request(config: ModuleType) -> None:
    """Connections spread again over the workers: each is closed after keepalive_requests answers."""
    sock = SimpleNamespace(settimeout=lambda seconds: None)
    requests = [
        SimpleNamespace(req_number=n, must_close=False, unreader=SimpleNamespace(sock=sock))
        for n in (1, 999, 1000, 1001)
    ]
    for request in requests:
        _as_gunicorn(config.pre_request, SimpleNamespace(), request)
    assert [r.must_close for r in requests] == [False, False, True, True]


def test_a_connection_s_answers_must_be_taken_within_send_seconds(config: ModuleType) -> None:
    """Its socket's timeout is set once, at its first request: gevent's sendall gives up past it."""
    timeouts: list[float] = []
    sock = SimpleNamespace(settimeout=timeouts.append)
    for n in (1, 2):
        _as_gunicorn(
            config.pre_request,
            SimpleNamespace(),
            SimpleNamespace(req_number=n, must_close=False, unreader=SimpleNamespace(sock=sock)),
        )
    assert timeouts == [30]


def test_an_untaken_answer_is_one_warning_not_a_traceback(config: ModuleType) -> None:
    try:
        raise TimeoutError("timed out")
    except TimeoutError:
        timed_out = logging.LogRecord("gunicorn.error", logging.ERROR, "", 0, "Socket error.", (), sys.exc_info())
    other = logging.LogRecord("gunicorn.error", logging.ERROR, "", 0, "Socket error.", (), (OSError, OSError(), None))
    assert config._untaken_answer(timed_out) and config._untaken_answer(other)
    assert (timed_out.levelname, timed_out.exc_info, timed_out.getMessage()) == (
        "WARNING",
        None,
        "an answer was not taken within 30 s (MAUBINH_SEND_SECONDS): closed",
    )
    assert (other.levelname, other.getMessage()) == ("ERROR", "Socket error.")
