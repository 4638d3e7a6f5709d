"""Work over worker processes, in input order: one place for the bulk side's pools."""

from __future__ import annotations

import gc
import signal
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

_WATCH_SECONDS = 0.5  # how soon a worker's death is noticed while its share is awaited


class WorkerLost(RuntimeError):
    """A worker process died before its share was done (killed, say by the out-of-memory killer): the
    run cannot be whole, and waiting would be for ever."""


@contextmanager
def mapped(
    function: Callable[[Item], Result],
    items: Iterable[Item],
    jobs: int,
    start: Callable[..., None],
    arguments: tuple[Any, ...] = (),
) -> Iterator[Iterator[Result]]:
    """``function`` over ``items``, results in input order: in this process when ``jobs`` ≤ 1, else
    over ``jobs`` worker processes forked from this one (they inherit what it has built: tables,
    rulesets), each set up by ``start(*arguments)`` first, as this process is for ``jobs`` ≤ 1."""
    if jobs <= 1:
        start(*arguments)
        yield map(function, items)
        return
    import multiprocessing  # only here: a single room's start-up does without it

    context = multiprocessing.get_context("fork")
    set_up = context.Value("i", 0)
    frozen = gc.get_freeze_count() > 0  # as a command's entry point leaves it
    gc.freeze()  # kept out of the workers' collections, what they inherit stays shared, not copied on write
    handler = _default_sigterm()
    pool = context.Pool(jobs, initializer=_started, initargs=(start, arguments, set_up))
    try:
        yield _watched(pool.imap(function, items), set_up, jobs)
    except BaseException:  # the run ends here: the shares still queued are not worked through first
        pool.terminate()
        raise
    finally:
        pool.close()
        pool.join()
        if handler is not None:
            signal.signal(signal.SIGTERM, handler)
        if not frozen:  # a process that did not freeze its collector (a test, a Spark task) gets it back whole
            gc.unfreeze()


def _default_sigterm() -> Any:
    """SIGTERM's default while the pool lives, and the handler it replaced (None if none): a worker the
    pool forks to replace a dead one takes the parent's handler with it, and one that took ``terminate``'s
    SIGTERM with that handler, before setting its own, lived on and the run waited on it for ever."""
    import threading

    handler = signal.getsignal(signal.SIGTERM)
    if handler in (signal.SIG_DFL, None) or threading.current_thread() is not threading.main_thread():
        return None  # off the main thread a handler cannot be set: the workers set their own first thing
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return handler


def _watched(results: Any, set_up: Any, jobs: int) -> Iterator[Result]:
    """``results`` as they come, or :class:`WorkerLost`: the pool replaces a worker that dies but loses
    its share, whose result then never comes; a worker set up past the first ``jobs`` says one died."""
    import multiprocessing

    while True:
        try:
            yield results.next(_WATCH_SECONDS)
        except StopIteration:
            return
        except multiprocessing.TimeoutError:
            if set_up.value > jobs:
                raise WorkerLost from None


def _started(start: Callable[..., None], arguments: tuple[Any, ...], set_up: Any) -> None:
    """A worker set up: SIGTERM ends it, whatever handler its parent had (a log server's, a test's), so
    that a run that fails can stop its workers (``terminate`` sends it) and never waits on one."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with set_up.get_lock():
        set_up.value += 1
    start(*arguments)
