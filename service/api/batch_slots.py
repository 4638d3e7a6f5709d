"""How many batch answers a worker holds at once, from reading the body to sending the last byte.

A batch answer of 500 rooms is ~5 MB, and building it takes several more. A client that posts batches
and never reads the answers would otherwise make the worker hold one for each connection until the
send gives up (MAUBINH_SEND_SECONDS): 80 such connections took two workers past 800 MB. A batch waits
for a slot of its worker; one that finds none within ``WAIT_SECONDS`` is refused with 503 and
``Retry-After``, before its body is read. A slot is freed when the server closes the answer: sent,
given up on, or refused. In process (the tests' client, no server) nothing holds an answer for a
connection, and no slot is taken.

A slot is taken before the body is read (a body waiting stays in the kernel's buffers), so a caller that
opens batches and never sends their bodies holds slots until MAUBINH_BODY_SECONDS: a caller of the
callers file (or MAUBINH_API_KEYS's, beside one) may hold at most :func:`share` of a worker's slots, and one
caller cannot take them all.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

from flask import Flask, Response, after_this_request, current_app
from gevent.lock import BoundedSemaphore
from werkzeug.exceptions import ServiceUnavailable

from service.api.auth import source, the_caller
from service.api.connection import under_a_server
from service.texts import Text

WAIT_SECONDS = 5.0
"""How long a batch waits for a slot of its worker before its 503."""
RETRY_AFTER_SECONDS = 1


class Busy(ServiceUnavailable):
    """Every batch slot of this worker, or each of the caller's share, stayed taken for ``WAIT_SECONDS`` (503,
    ``Retry-After``)."""

    title = Text("problem.busy")

    def __init__(self, slots: int, key: str = "problem.busy_detail") -> None:
        super().__init__(Text(key, slots=slots, seconds=RETRY_AFTER_SECONDS))
        self.retry_after = RETRY_AFTER_SECONDS


def share(slots: int) -> int:
    """The most of a worker's ``slots`` one caller of the callers file holds at once: half, at least one.

    >>> share(4), share(5), share(1)
    (2, 2, 1)
    """
    return max(1, slots // 2)


class Slots(NamedTuple):
    """A worker's batch slots, and each keyed caller's share of them (made at its first batch)."""

    worker: BoundedSemaphore
    size: int
    callers: dict[str, BoundedSemaphore]


def register(app: Flask, slots: int) -> None:
    app.extensions["maubinh.batch_slots"] = Slots(BoundedSemaphore(slots), slots, {})


def take_batch_slot() -> None:
    """Wait for a slot of this worker, within the caller's share where there are others to leave slots to,
    freed when the server closes this request's answer. A sole caller (MAUBINH_API_KEYS alone, or a
    callers file of one), or requests without a key, have the worker's slots whole."""
    if not under_a_server():
        return
    slots: Slots = current_app.extensions["maubinh.batch_slots"]
    deadline = time.monotonic() + WAIT_SECONDS
    caller, own = the_caller(), None
    if caller is not None and len(source().callers.callers) > 1:
        own = slots.callers.get(caller.name)
        if own is None:
            own = slots.callers[caller.name] = BoundedSemaphore(share(slots.size))
        if not own.acquire(timeout=WAIT_SECONDS):
            raise Busy(share(slots.size), "problem.busy_share_detail")
    if not slots.worker.acquire(timeout=max(0.0, deadline - time.monotonic())):
        if own is not None:
            own.release()
        raise Busy(slots.size)
    release = _once(lambda: _free(slots.worker, own))

    @after_this_request
    def free_on_close(response: Response) -> Response:
        response.call_on_close(release)
        return response


def _free(worker: BoundedSemaphore, own: BoundedSemaphore | None) -> None:
    worker.release()
    if own is not None:
        own.release()


def _once(action: Callable[[], object]) -> Callable[[], None]:
    done = [False]

    def run() -> None:
        if not done[0]:
            done[0] = True
            action()

    return run
