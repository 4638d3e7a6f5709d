"""How many batch answers a worker holds at once, from reading the body to sending the last byte.

A batch answer of 500 rooms is ~5 MB, and building it takes several more. A client that posts batches
and never reads the answers would otherwise make the worker hold one for each connection until the
send gives up (MAUBINH_SEND_SECONDS): 80 such connections took two workers past 800 MB. A batch waits
for a slot of its worker; one that finds none within ``WAIT_SECONDS`` is refused with 503 and
``Retry-After``, before its body is read. A slot is freed when the server closes the answer: sent,
given up on, or refused. In process (the tests' client, no server) nothing holds an answer for a
connection, and no slot is taken.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask, Response, after_this_request, current_app
from gevent.lock import BoundedSemaphore
from werkzeug.exceptions import ServiceUnavailable

from service.api.connection import under_a_server
from service.texts import Text

WAIT_SECONDS = 5.0
"""How long a batch waits for a slot of its worker before its 503."""
RETRY_AFTER_SECONDS = 1


class Busy(ServiceUnavailable):
    """Every batch slot of this worker stayed taken for ``WAIT_SECONDS`` (503, ``Retry-After``)."""

    title = Text("problem.busy")

    def __init__(self, slots: int) -> None:
        super().__init__(Text("problem.busy_detail", slots=slots, seconds=RETRY_AFTER_SECONDS))
        self.retry_after = RETRY_AFTER_SECONDS


def register(app: Flask, slots: int) -> None:
    app.extensions["maubinh.batch_slots"] = (BoundedSemaphore(slots), slots)


def take_batch_slot() -> None:
    """Wait for a slot of this worker, freed when the server closes this request's answer."""
    if not under_a_server():
        return
    semaphore, slots = current_app.extensions["maubinh.batch_slots"]
    if not semaphore.acquire(timeout=WAIT_SECONDS):
        raise Busy(slots)
    release = _once(semaphore.release)

    @after_this_request
    def free_on_close(response: Response) -> Response:
        response.call_on_close(release)
        return response


def _once(action: Callable[[], object]) -> Callable[[], None]:
    done = [False]

    def run() -> None:
        if not done[0]:
            done[0] = True
            action()

    return run
