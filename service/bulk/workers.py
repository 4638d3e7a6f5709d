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
    stops = _Stops()
    pool = context.Pool(jobs, initializer=_started, initargs=(start, arguments, set_up))
    try:
        yield _watched(pool.imap(function, items), set_up, jobs, stops.deliver)
    except BaseException:  # the run ends here: the shares still queued are not worked through first
        pool.terminate()
        raise
    finally:
        pool.close()
        pool.join()
        stops.given_back()
        if not frozen:  # a process that did not freeze its collector (a test, a Spark task) gets it back whole
            gc.unfreeze()
        stops.deliver()  # a stop that came as the run ended


class _Stops:
    """SIGTERM and SIGINT while a pool lives. A worker the pool forks to replace a dead one takes the
    parent's handlers with it, and one that took ``terminate``'s SIGTERM with a handler that does not end
    it (a log server's, a test's), before setting its own, lived on and the run waited on it for ever: a
    worker now ends. The parent's own handler runs where the run waits for a share, never within the
    pool's locks (raised within them, the command line's left a lock released twice)."""

    def __init__(self) -> None:
        import os
        import threading

        self.parent = os.getpid()
        self.pending: list[tuple[int, Any]] = []
        self.before: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():  # a handler is set from there only
            for signum in (signal.SIGTERM, signal.SIGINT):
                self.before[signum] = signal.signal(signum, self._caught)

    def _caught(self, signum: int, frame: Any) -> None:
        import os

        if os.getpid() != self.parent:
            os._exit(128 + signum)  # a worker not yet set up: a stop means it ends
        self.pending.append((signum, frame))

    def deliver(self) -> None:
        """The parent's handlers for the signals that came, run here and now."""
        import os

        while self.pending:
            signum, frame = self.pending.pop(0)
            before = self.before[signum]
            if callable(before):
                before(signum, frame)
            elif before != signal.SIG_IGN:
                signal.signal(signum, signal.SIG_DFL)
                os.kill(self.parent, signum)

    def given_back(self) -> None:
        for signum, before in self.before.items():
            signal.signal(signum, before if before is not None else signal.SIG_DFL)


def _watched(results: Any, set_up: Any, jobs: int, stopped: Callable[[], None]) -> Iterator[Result]:
    """``results`` as they come, or :class:`WorkerLost`: the pool replaces a worker that dies but loses
    its share, whose result then never comes; a worker set up past the first ``jobs`` says one died.
    ``stopped`` runs the handler of a stop signal that came meanwhile."""
    import multiprocessing

    while True:
        try:
            result = results.next(_WATCH_SECONDS)
        except StopIteration:
            return
        except multiprocessing.TimeoutError:
            stopped()
            if set_up.value > jobs:
                raise WorkerLost from None
            continue
        stopped()
        yield result


def _started(start: Callable[..., None], arguments: tuple[Any, ...], set_up: Any) -> None:
    """A worker set up: SIGTERM ends it, whatever handler its parent had (a log server's, a test's), so
    that a run that fails can stop its workers (``terminate`` sends it) and never waits on one; SIGINT
    is its parent's to act on (each worker wrote a traceback of its own)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent stops the run
    with set_up.get_lock():
        set_up.value += 1
    start(*arguments)
