"""The log's HTTP API, its own process (``maubinh log serve``): ``POST /add`` takes a bundle of entries
(from who carries the add key, when the log has one: :mod:`.add_key`) and answers their indexes once
they are durable; ``GET /checkpoint`` and ``GET /tile/…`` serve the tree
as c2sp.org/tlog-tiles says; an integrator makes a new checkpoint at least once a second.

A plain threaded server of the standard library rather than gunicorn: one process must own the
sequence (one writer, entries numbered in one order), a request's work is a queue hand-off and a file
read, and there is no Flask to host. Entries arriving together are sequenced together: one fsync (or
one COMMIT) for every request waiting, so that durability costs per group, not per request.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Final

from service.transparency.add_key import ADD_KEY_FILE_ENV, carries
from service.transparency.bounded_http import (
    CONTENT_LENGTH,
    IDLE_SECONDS,
    MOST_CONNECTIONS,
    BoundedHandler,
    BoundedServer,
)
from service.transparency.integrate import Integrator, integrating
from service.transparency.note import Signer
from service.transparency.stores import Store
from service.transparency.tiles import TreeFault, unbundle

MAX_ADD_BYTES: Final = 8 * 1024 * 1024
MAX_GROUP: Final = 50_000
"""The most entries sequenced in one group (one fsync or COMMIT)."""
MAX_ADD_ENTRIES: Final = MAX_GROUP
"""The most entries one POST /add may bring (the service's feeder sends 2,000 at most): 8 MiB of empty
entries would be four million, some 700 MB to hold."""
TILE: Final = re.compile(
    r"/tile/(?:entries|[0-9]|[1-5][0-9]|6[0-3])/(?:x[0-9]{3}/)*[0-9]{3}(?:\.p/(?:[1-9][0-9]?|1[0-9]{2}|2[0-4][0-9]|25[0-5]))?"
)
IMMUTABLE: Final = "public, max-age=31536000, immutable"
logger = logging.getLogger("maubinh.log")


@dataclass
class _Waiting:
    entries: list[bytes]
    done: threading.Event = field(default_factory=threading.Event)
    first: int = -1
    error: Exception | None = None


class Sequencer:
    """Entries given from many threads, sequenced in groups by one: :meth:`add` returns once they are durable."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._queue: queue.Queue[_Waiting | None] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="maubinh-log-sequencer", daemon=True)
        self._thread.start()

    def add(self, entries: list[bytes]) -> int:
        waiting = _Waiting(entries)
        self._queue.put(waiting)
        waiting.done.wait()
        if waiting.error is not None:
            raise waiting.error
        return waiting.first

    def _loop(self) -> None:
        while (head := self._queue.get()) is not None:
            group, count = [head], len(head.entries)
            while count < MAX_GROUP:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._queue.put(None)
                    break
                group.append(more)
                count += len(more.entries)
            try:
                first = self.store.sequence([entry for waiting in group for entry in waiting.entries])
            except Exception as error:
                logger.error("the store did not take %d entries: %s", count, error)
                for waiting in group:
                    waiting.error = error
            else:
                for waiting in group:
                    waiting.first = first
                    first += len(waiting.entries)
            for waiting in group:
                waiting.done.set()

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join(5)


class _Handler(BoundedHandler):
    server: _Listener

    def _send(
        self, status: int, body: bytes, content_type: str, cache: str = "no-store", more: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        for name, value in (more or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, document: dict[str, Any]) -> None:
        self._send(status, json.dumps(document).encode(), "application/json")

    def _refuse(self, status: int, error: str, more: dict[str, str] | None = None) -> None:
        """A request refused and its connection closed: a POST's body unread is never read as a request of
        its own, and on the add port nothing but a keyed POST /add keeps a connection."""
        self.close_connection = True
        body = json.dumps({"error": error}).encode()
        self._send(status, body, "application/json", more={**(more or {}), "Connection": "close"})

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        store = self.server.log.store
        if not self.server.reads:  # nothing but a keyed POST /add keeps a connection to the add port
            return self._refuse(404, "this port takes POST /add only: the log is read on its other port")
        if path == "/healthz":
            integrated = self.server.log.integrator.published
            return self._json(200, {"size": integrated, "sequenced": store.sequenced()})
        if path == "/checkpoint":
            found = store.read("checkpoint")
            if found is not None:
                return self._send(200, found, "text/plain; charset=utf-8", "max-age=1")
        elif TILE.fullmatch(path):
            found = store.read(path[1:])
            if found is not None:
                return self._send(200, found, "application/octet-stream", IMMUTABLE)
        self._json(404, {"error": f"no such resource: {path[:100]}"})

    do_HEAD = do_GET  # noqa: N815

    def _refusal(self) -> tuple[int, str, dict[str, str]] | None:
        """Why a POST is refused before its body is read (its route, its key, its length), if it is."""
        if not self.server.adds:
            return 404, "entries are added on the log's add port, not this one", {}
        if self.path != "/add":
            return 404, "entries are added with POST /add", {}
        add_key = self.server.log.add_key
        if add_key is not None and not carries(self.headers.get("Authorization"), add_key):
            return (
                401,
                f"POST /add needs the log's add key: Authorization: Bearer <key> ({ADD_KEY_FILE_ENV})",
                {"WWW-Authenticate": 'Bearer realm="maubinh-log"'},
            )
        length = self.headers.get("Content-Length")
        if length is None or not CONTENT_LENGTH.fullmatch(length):
            return 411, "POST /add needs a Content-Length", {}
        if int(length) > MAX_ADD_BYTES:
            return 413, f"a bundle of at most {MAX_ADD_BYTES} bytes", {}
        return None

    def refused_before_body(self) -> bool:
        refused = self._refusal()
        if refused is not None:
            self._refuse(*refused)
        return refused is not None

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if self.refused_before_body():
            return None
        length = int(self.headers["Content-Length"])
        try:
            entries = unbundle(self.read_body(length), most=MAX_ADD_ENTRIES)
        except TreeFault as fault:
            return self._json(400, {"error": f"the body is not an entry bundle: {fault.args[0]}"})
        if not entries:
            return self._json(400, {"error": "the bundle holds no entry"})
        try:
            first = self.server.log.sequencer.add(entries)
        except Exception:
            return self._json(503, {"error": "the log's store did not take the entries; try again"})
        self._json(200, {"first": first, "count": len(entries)})


class _Listener(BoundedServer):
    """One of the log's ports (:class:`BoundedServer`); ``reads`` and ``adds`` say which of the log's
    requests it takes: ``/checkpoint``, ``/tile/…`` and ``/healthz``; ``POST /add``."""

    def __init__(
        self,
        address: tuple[str, int],
        log: LogServer,
        reads: bool,
        adds: bool,
        most_connections: int,
        idle_seconds: float,
        most_per_client: int | None = None,
    ) -> None:
        self.log, self.reads, self.adds = log, reads, adds
        super().__init__(address, _Handler, most_connections, idle_seconds, most_per_client)


class LogServer(_Listener):
    """The log: its store, sequencer and integrator, served on ``address``. With ``add_address``,
    ``POST /add`` is taken there only, on connections of its own: readers, however many or slow, then
    never hold the connections the service adds its rulings with."""

    def __init__(
        self,
        address: tuple[str, int],
        store: Store,
        signer: Signer,
        origin: str,
        interval: float,
        add_key: str | None = None,
        most_connections: int = MOST_CONNECTIONS,
        idle_seconds: float = IDLE_SECONDS,
        add_address: tuple[str, int] | None = None,
        most_per_client: int | None = None,
    ) -> None:
        """With ``add_key``, ``POST /add`` takes entries only from who carries it (:mod:`.add_key`);
        ``most_per_client`` bounds the connections from one address to ``address`` (readers), not to
        ``add_address`` (the service's pods, which the operator lets reach it alone)."""
        self.store = store
        self.add_key = add_key
        self.integrator = Integrator(store, signer, origin)
        self.sequencer = Sequencer(store)
        self.stopping = threading.Event()
        self.integrator_thread = integrating(
            self.integrator, interval, self.stopping, lambda error: logger.error("integration failed: %s", error)
        )
        super().__init__(address, self, True, add_address is None, most_connections, idle_seconds, most_per_client)
        self.adding = (
            _Listener(add_address, self, False, True, most_connections, idle_seconds)
            if add_address is not None
            else None
        )
        self._adding_thread: threading.Thread | None = None

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve both ports till :meth:`shutdown`: the add port, if any, on a thread of its own."""
        if self.adding is not None and self._adding_thread is None:
            self._adding_thread = threading.Thread(
                target=self.adding.serve_forever, args=(poll_interval,), name="maubinh-log-adds", daemon=True
            )
            self._adding_thread.start()
        super().serve_forever(poll_interval)

    def stop(self) -> None:
        """Stop taking requests, sequence what was taken, integrate it once more, close the store."""
        self.shutdown()
        self.server_close()
        if self.adding is not None:
            if self._adding_thread is not None:
                self.adding.shutdown()
            self.adding.server_close()
        self.sequencer.stop()
        self.stopping.set()
        self.integrator_thread.join(10)
        self.store.close()
