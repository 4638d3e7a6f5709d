"""service.bulk.workers: results in input order over forked workers, and the collector left as found."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.bulk.workers import mapped

_offset = 0


def _start(offset: int) -> None:
    global _offset  # noqa: PLW0603 - what each worker was set up with
    _offset = offset


def _work(item: int) -> tuple[int, int]:
    return item + _offset, os.getpid()


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_come_in_input_order_each_worker_set_up_first(jobs: int) -> None:
    with mapped(_work, range(200), jobs, _start, (1000,)) as results:
        answered = list(results)
    assert [value for value, _ in answered] == list(range(1000, 1200))
    workers = {pid for _, pid in answered}
    assert (workers == {os.getpid()}) if jobs == 1 else (os.getpid() not in workers)


def test_a_process_that_did_not_freeze_its_collector_gets_it_back_whole(unfrozen: None) -> None:
    with mapped(_work, range(4), 2, _start, (0,)) as results:
        assert gc.get_freeze_count() > 0  # while the workers live, what they inherit is frozen
        list(results)
    assert gc.get_freeze_count() == 0


def test_a_frozen_process_stays_frozen(unfrozen: None) -> None:
    gc.freeze()  # as the command line's entry point does
    with mapped(_work, range(4), 2, _start, (0,)) as results:
        list(results)
    assert gc.get_freeze_count() > 0


_trail = ""


def _start_trail(path: str) -> None:
    global _trail  # noqa: PLW0603 - where each worker notes what it worked on
    _trail = path


def _fail_first(item: int) -> int:
    if item == 0:
        raise ValueError("the first share is bad")
    with open(_trail, "a") as trail:
        trail.write(f"{item}\n")
    import time

    time.sleep(0.002)
    return item


def test_a_share_that_fails_ends_the_run_without_working_through_the_queued_ones(tmp_path: Path) -> None:
    """Before, the pool was closed and joined: with the first of 3,000 row groups bad, the second worker
    went on through every one before the error was said (16 s against 0.9 with one process)."""
    trail = os.path.join(tmp_path, "trail")
    open(trail, "w").close()
    with (
        pytest.raises(ValueError, match="the first share is bad"),
        mapped(_fail_first, range(3000), 2, _start_trail, (trail,)) as results,
    ):
        list(results)
    with open(trail) as worked:
        assert len(worked.read().splitlines()) < 1500


def test_a_failing_run_stops_its_workers_whatever_sigterm_did_in_the_parent(tmp_path: Path) -> None:
    """A parent that handles SIGTERM (the log server does) handed its handler to the workers, which then
    outlived the pool's terminate: the run that failed waited on them for ever."""
    import signal

    trail = os.path.join(tmp_path, "trail")
    open(trail, "w").close()
    before = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    try:
        with (
            pytest.raises(ValueError, match="the first share is bad"),
            mapped(_fail_first, range(3000), 2, _start_trail, (trail,)) as results,
        ):
            list(results)
    finally:
        signal.signal(signal.SIGTERM, before)
