"""gunicorn settings for ``maubinh serve`` and the container (deploy/gunicorn.conf.py loads this).

Every value can be set from the environment; defaults suit a CPU-bound service: one worker per
core available to the process. Workers are gevent's: a connection costs a greenlet, not a thread,
so clients that send slowly cannot take the threads a health probe needs, and one that has not
sent its headers within ``keepalive`` seconds is dropped (docs/operations.md, "Bounds: what one request may cost").
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
from typing import Any

import gevent

from service.support.cores import available_cores


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw else default


bind = f"{os.environ.get('MAUBINH_HOST', '127.0.0.1')}:{_int('MAUBINH_PORT', 8000)}"
workers = _int("MAUBINH_WORKERS", available_cores())
worker_class = "gevent"
worker_connections = _int("MAUBINH_WORKER_CONNECTIONS", 1000)
timeout = _int("MAUBINH_TIMEOUT", 30)
graceful_timeout = _int("MAUBINH_GRACEFUL_TIMEOUT", 20)
keepalive = _int("MAUBINH_KEEPALIVE", 5)
max_requests = _int("MAUBINH_MAX_REQUESTS", 1_000_000)
"""A safety net, not a cure: a worker's memory stays flat under load, and each recycle costs a worker
for a second or two (post_fork), so a saturated worker is not recycled every few seconds
(docs/benchmarks.md, "The score path against healthz")."""
max_requests_jitter = _int("MAUBINH_MAX_REQUESTS_JITTER", 50_000)
keepalive_requests = _int("MAUBINH_KEEPALIVE_REQUESTS", 1000)
"""A connection closes after this many requests (0: never), as nginx's keepalive_requests: its
client's next connection goes to a worker that accepts it, so that connections spread again over
the workers after one is replaced (otherwise the survivor kept them all)."""
send_seconds = _int("MAUBINH_SEND_SECONDS", 30)
"""An answer must be taken within this many seconds (0: no limit), or its connection is closed: a
client that never reads held its answer's memory (up to ~5 MB a batch) as long as it stayed."""
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
preload_app = True
accesslog = None  # the app logs one JSON line per request itself
errorlog = "-"
loglevel = os.environ.get("MAUBINH_LOG_LEVEL", "info").lower()
wsgi_app = "service.api.wsgi:app"
limit_request_line = 8190
limit_request_fields = 100
# gunicorn's control socket (~/.gunicorn/gunicorn.ctl) is not used: it cannot be made on a read-only
# root file system, and two servers on one host would share it, one removing the other's at exit.
control_socket_disable = True


def _metrics_store() -> None:
    """The metrics directory ready before the app is preloaded (prometheus-client reads the setting as it
    is imported), or dropped in one line: the workers then count alone (service/support/metrics_store.py)."""
    from service.support import metrics_store

    if (fault := metrics_store.prepare()) is not None:
        print(f"maubinh: metrics degraded, each worker counts alone: {fault}", file=sys.stderr)


_metrics_store()  # gunicorn reads this file before it preloads the app


def _usable_settings() -> None:
    """A setting that is present but unusable (MAUBINH_API_KEYS that holds no key, a callers file that
    does not load) stops the start with one line, before the app is preloaded (``maubinh serve`` checks
    the same before starting gunicorn)."""
    from service.api.config import SettingError, Settings, check_usable

    try:
        check_usable(Settings.from_env())
    except SettingError as error:
        raise SystemExit(f"maubinh: not starting, {error}") from None


_usable_settings()


def pre_fork(server: Any, worker: Any) -> None:
    """The preloaded app's objects (rulesets, hand tables, the advisor's fields) move to the garbage
    collector's permanent generation before each fork. A worker's collections then walk only what it
    made: a new worker's first full collection otherwise touched the whole inherited heap, copying
    its pages, and held its connections for ~90 ms (healthz p99 after each max_requests recycle).
    The master counts the worker it is about to start."""
    from service.api import metrics

    metrics.worker_forked()
    gc.collect()
    gc.freeze()


def _leave_when_told(worker: Any) -> None:
    """Until a new worker installs its own signal handlers (gunicorn's ``init_process``), it still has
    the master's, copied by the fork: a SIGTERM that came then was queued for a master that is not
    there and lost, and the worker served on until the master killed it after the graceful timeout (a
    rollout right after a start waited 10 s for it). Until then, a stop signal stops it."""

    def stop(signum: int, frame: Any) -> None:
        worker.alive = False

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
        signal.signal(signum, stop)


def post_fork(server: Any, worker: Any) -> None:
    """A stop signal before the worker's own handlers stops it. A new worker opens its files in the
    metrics store, or finds it unusable (service/support/metrics_store.py). The first workers recycle at evenly
    spaced fractions of max_requests (the k-th of n at k/n, jitter included), their successors at the
    whole: sharing the load evenly, they would reach it within a second of each other, and a recycled
    worker is replaced only a second or two later (gevent's worker notices once a second, drains in
    one-second steps, and the master forks after it exits), so with every worker leaving at once each
    connection waited (the tails' second cause)."""
    _leave_when_told(worker)
    from service.api import metrics
    from service.support import metrics_store

    metrics_store.forked()
    metrics.adopt_store()
    if server.cfg.max_requests > 0 and worker.age <= server.num_workers:
        worker.max_requests = worker.max_requests * worker.age // server.num_workers


def when_ready(server: Any) -> None:
    """The start log says whether /v1 needs a key, whether rounds are scored once, and whether quotas are
    enforced (a warning when callers have one and no Redis counts it). The master's own per-process gauges
    (made as the app was preloaded) are no worker's: gone. The last good callers get their shared folder
    before the first fork."""
    from service.api.config import Settings, key_requirement, rounds_state, signing_state, start_language
    from service.api.quotas import quota_state
    from service.api.wsgi import app
    from service.support import metrics_store

    settings, language = Settings.from_env(), start_language()
    server.log.info(key_requirement(settings).render(language))
    server.log.info(signing_state(settings).render(language))
    server.log.info(rounds_state(settings).render(language))
    said, enforced = quota_state(app.extensions["maubinh.callers"].callers, settings.quota_redis_url)
    (server.log.info if enforced else server.log.warning)(said.render(language))
    metrics_store.mark_dead(os.getpid())
    app.extensions["maubinh.callers"].share()  # the last good callers, where every new worker reads them


def on_exit(server: Any) -> None:
    """The master leaves: the folder of the last good callers with it."""
    from service.api.wsgi import app

    app.extensions["maubinh.callers"].unshare()


def post_worker_init(worker: Any) -> None:
    """A worker notes its CPU and memory, says an untaken answer in one line, and starts from the last good
    callers any worker read (the preloaded app's are the master's, maybe older), then the file if it
    changed: SIGHUP (gunicorn starts new workers) is how an operator asks for a re-read at once. The file
    is parsed in a thread of gevent's pool, off the request path."""
    from service.api import metrics
    from service.api.wsgi import app

    metrics.worker_started()
    worker.log.error_log.addFilter(_untaken_answer)
    callers = app.extensions["maubinh.callers"]
    callers.started(offload=gevent.get_hub().threadpool.apply)
    metrics.callers_file_failed(callers.fault is not None)  # each worker's series exists from its start
    if callers.path:
        gevent.spawn(_watch_callers, callers)


def _watch_callers(callers: Any) -> None:
    """Each worker looks for a changed callers file every second, whether or not it is asked anything:
    a rotated key works, a revoked one stops, and the alert's metric follows, within seconds."""
    while True:
        gevent.sleep(callers.CHECK_SECONDS)
        callers.reload_if_changed()  # never raises


def _untaken_answer(record: logging.LogRecord) -> bool:
    """gunicorn logs a send that ran past ``send_seconds`` as a socket error with gevent's traceback,
    40 lines for a client that stopped reading: a one-line warning says what happened."""
    if record.exc_info and isinstance(record.exc_info[1], TimeoutError):
        record.msg, record.args = "an answer was not taken within %s s (MAUBINH_SEND_SECONDS): closed", (send_seconds,)
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
    return True


def worker_abort(worker: Any) -> None:
    """The master aborts a worker (SIGABRT) only when it was silent past ``timeout``: noted, so that its
    exit counts as ``timed_out``, not as a worker that stopped by itself."""
    worker.maubinh_stop_reason = "timed_out"


def stop_reason(worker: Any) -> str:
    """Why a worker leaves: ``recycled`` (max_requests), ``stopped`` (told to: a shutdown),
    ``timed_out`` (aborted by the master) or ``crashed`` (it left untold)."""
    if (reason := getattr(worker, "maubinh_stop_reason", None)) is not None:
        return str(reason)
    if worker.alive:
        return "crashed"
    return "recycled" if worker.nr >= worker.max_requests else "stopped"


def worker_exit(server: Any, worker: Any) -> None:
    """Back to ordinary collection as a worker leaves, so its objects are finalized while the modules
    they call on are still there (frozen, logging's handlers outlived gevent and printed tracebacks).
    A worker that can still run says why it leaves; one killed (out of memory) cannot, and the metrics
    count it as a start without a stop."""
    from service.api import metrics, tracing

    metrics.worker_stopped(stop_reason(worker))
    tracing.shutdown()
    gc.unfreeze()


def pre_request(worker: Any, request: Any) -> None:
    """Each request waits for its turn behind the connections that are already ready.

    A greenlet yields only when a read would block. A keep-alive client that sends its next request
    before the answer's last byte is read (any pooled client under load) never makes it block, so
    one connection kept its worker for hundreds of requests while the others waited: p99 was 0.3–1 s
    at 4 connections. A timer of a microsecond resumes this greenlet after the loop has polled and
    run what is ready. ``sleep(0)`` resumes it before the loop polls (p99 still 30–40 ms);
    ``gevent.idle()`` waits until nothing is left to run, which a batch taking turns room by room
    never allows, so a health probe waited out the whole batch.
    """
    from service.api.connection import serving, take_turn

    serving(request)  # so that an answer can close its connection (a 408, a body left unread)
    if keepalive_requests and request.req_number >= keepalive_requests:
        request.must_close = True
    if send_seconds and request.req_number == 1:  # the connection's socket: its sends, the answers
        request.unreader.sock.settimeout(send_seconds)
    take_turn()


def post_request(worker: Any, request: Any, environ: dict[str, Any], response: Any) -> None:
    """An answer that closes on a body left unread lingers, bounded, before the close: gunicorn's own
    drain before the next request had no bound and never yielded (service/api/connection.py)."""
    from service.api.connection import linger

    linger(environ, request)


def child_exit(server: Any, worker: Any) -> None:
    """A worker left: its live gauges go with it (prometheus-client multiprocess mode); a fault there is
    logged, never raised into gunicorn's main loop."""
    from service.support import metrics_store

    metrics_store.mark_dead(worker.pid)
