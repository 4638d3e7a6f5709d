"""Work over worker processes, in input order: one place for the bulk side's pools."""

from __future__ import annotations

import gc
import signal
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Final, TypeVar

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
        if not frozen:  # a process that did not freeze its collector (a test, a Spark task) gets it back whole
            gc.unfreeze()
        stops.given_back()  # a stop that came as the run ended is acted on here


_STOPS: Final = {signal.SIGTERM, signal.SIGINT}


class _Stops:
    """SIGTERM and SIGINT held back while a pool lives, and let through where the run waits for a share.
    The pool's threads, and the workers they fork to replace dead ones, are born holding them too: a
    worker lets them through once it has set its own dispositions, so one that ``terminate`` signalled
    while still being born ends then. Before, a worker born with its parent's handler that took SIGTERM
    in that moment lived on, and the run waited on it for ever; and the parent's handler, run within the
    pool's locks, left a lock released twice."""

    def __init__(self) -> None:
        import threading

        self.held = threading.current_thread() is threading.main_thread()  # else the signals reach it
        if self.held:
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)

    def deliver(self) -> None:
        """The parent's handler for a stop that came, run here and now (it raises, for the command line)."""
        if self.held and signal.sigpending() & _STOPS:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)  # the handler runs as this returns
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)

    def given_back(self) -> None:
        if self.held:
            self.held = False
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)


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
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)  # a SIGTERM held since its birth ends it now
    with set_up.get_lock():
        set_up.value += 1
    start(*arguments)
