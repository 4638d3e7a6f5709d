"""A call given so long, whole: what a socket's timeout cannot bound, since it restarts at every byte."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

Done = TypeVar("Done")


def within(seconds: float, call: Callable[[], Done]) -> Done:
    """``call()``'s result (or its exception), or :class:`TimeoutError` once ``seconds`` have passed: the
    call runs in a thread of its own, left behind if it overruns (its socket's timeout ends it later),
    since a read blocked in the standard library's HTTP client cannot be interrupted from outside."""
    outcome: list[tuple[bool, object]] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as error:
            outcome.append((False, error))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise TimeoutError(f"not all come within {seconds:.0f} s")
    done, value = outcome[0]
    if not done:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]
