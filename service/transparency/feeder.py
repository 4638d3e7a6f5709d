"""The service's side of the log: statements handed over after an answer is signed, posted to the
log's ``POST /add`` in batches by a background thread. The answer never waits for the log.

The queue is bounded (:data:`CAPACITY` statements): when it is full, a statement is dropped and counted,
and its receipt will be found missing from the log after the merge delay, which is the log doing its
work. A batch the log does not take (down, or answering an error) is kept and posted again, waiting
0.1 s doubling to 5 s between tries, in order; statements still queued when the process dies are lost.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Final

from service.transparency.tiles import bundle

CAPACITY: Final = 100_000
BATCH: Final = 2_000
"""The most statements one POST carries."""
LINGER: Final = 0.05
"""Seconds the thread waits for more statements before posting what it holds."""
logger = logging.getLogger("maubinh")
Count = Callable[[str, int], None]
"""``count(outcome, statements)``: ``queued``, ``logged``, ``dropped`` or ``retried``."""


class Feeder:
    def __init__(self, url: str, count: Count, capacity: int = CAPACITY, add_key: str | None = None) -> None:
        """``add_key``: the log's (:mod:`.add_key`), sent with each post when the log asks for one."""
        self.url = url.rstrip("/") + "/add"
        self.count = count
        self._headers = {"Content-Type": "application/octet-stream"}
        if add_key is not None:
            self._headers["Authorization"] = f"Bearer {add_key}"
        self._queue: queue.Queue[bytes] = queue.Queue(capacity)
        self._pid = -1
        self._start_lock = threading.Lock()
        self._down_since: float | None = None

    def submit(self, statements: list[bytes]) -> None:
        """Queue ``statements``, never waiting: those that find the queue full are dropped and counted."""
        if self._pid != os.getpid():  # a worker forked after the app was made starts its own thread
            self._start()
        taken = 0
        for statement in statements:
            try:
                self._queue.put_nowait(statement)
                taken += 1
            except queue.Full:
                self.count("dropped", len(statements) - taken)
                logger.error("the transparency log's queue is full: %d statements dropped", len(statements) - taken)
                break
        if taken:
            self.count("queued", taken)

    def _start(self) -> None:
        with self._start_lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            threading.Thread(target=self._loop, name="maubinh-log-feeder", daemon=True).start()

    def _loop(self) -> None:
        while True:
            held = [self._queue.get()]
            deadline = time.monotonic() + LINGER
            while len(held) < BATCH:
                try:
                    held.append(self._queue.get(timeout=max(0.0, deadline - time.monotonic())))
                except queue.Empty:
                    break
            self._post(held)

    def _post(self, held: list[bytes]) -> None:
        """Post ``held`` until the log takes it."""
        wait = 0.1
        body = bundle(held)
        while True:
            request = urllib.request.Request(self.url, data=body, headers=self._headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    answer.read()
                self.count("logged", len(held))
                if self._down_since is not None:
                    logger.warning(
                        "the transparency log answers again after %.1f s", time.monotonic() - self._down_since
                    )
                    self._down_since = None
                return
            except (urllib.error.URLError, OSError) as error:
                if self._down_since is None:
                    self._down_since = time.monotonic()
                    logger.error("the transparency log at %s does not take statements (%s): kept, and tried again",
                                 self.url, error)  # fmt: skip
                self.count("retried", len(held))
                time.sleep(wait)
                wait = min(wait * 2, 5.0)
