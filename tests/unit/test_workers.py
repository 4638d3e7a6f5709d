"""service.bulk.workers: results in input order over forked workers, and the collector left as found."""

from __future__ import annotations

import gc
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from service.bulk import workers
from service.bulk.workers import WorkerLost, mapped

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


class _Hung(Exception):
    pass


@contextmanager
def _at_most(seconds: int) -> Iterator[None]:
    """The code before waited for ever: the test fails in ``seconds`` rather than hang the suite."""

    def hung(signum: int, frame: object) -> None:
        raise _Hung

    before = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


def _killed_on_first(item: int) -> int:
    if item == 0:
        os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer ends a worker
    time.sleep(0.002)
    return item


def test_a_worker_killed_mid_share_ends_the_run_with_worker_lost() -> None:
    """The pool replaces a worker that dies and loses its share: --jobs 2 waited for that share for ever."""
    started = time.monotonic()
    with (
        _at_most(30),
        pytest.raises(WorkerLost),
        mapped(_killed_on_first, range(400), 2, _start, (0,)) as results,
    ):
        list(results)
    assert time.monotonic() - started < 10


def _cannot_start(offset: int) -> None:
    raise OSError("the table is gone")


def test_a_worker_that_cannot_be_set_up_ends_the_run_with_worker_lost() -> None:
    """A set-up that fails kills its worker, and the pool started another, and another, for ever."""
    with _at_most(30), pytest.raises(WorkerLost), mapped(_work, range(10), 2, _cannot_start, (0,)) as results:
        list(results)


def _killed(chunk: object) -> object:
    os.kill(os.getpid(), signal.SIGKILL)
    return chunk


def test_the_command_line_says_a_lost_worker_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any bulk command: the run stops, says why and that its output is not whole (it hung, saying nothing)."""
    from audit_lines import MONTH, RULES

    from service.bulk import jsonl
    from service.cli import main

    monkeypatch.setenv("MAUBINH_RULESETS_DIR", str(RULES))
    monkeypatch.setattr(jsonl, "_answer_chunk", _killed)  # the workers inherit it: forked after this
    with _at_most(60):
        status = main(["score", "--jsonl", str(MONTH), "--jobs", "2", "-o", str(tmp_path / "out.jsonl")])
    assert status == 2
    said = capsys.readouterr().err
    assert "a worker process ended before its share of the work was done" in said
    assert "not the whole answer" in said


_set_up = workers._started


def _killed_on_second(item: int) -> int:
    if item == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.002)
    return item


def _slow_to_set_up(start: Any, arguments: tuple[Any, ...], set_up: Any) -> None:
    time.sleep(1.0)  # a worker just forked, its parent's SIGTERM handler still its own
    _set_up(start, arguments, set_up)


def test_a_worker_forked_after_one_died_is_stopped_whatever_the_parent_s_sigterm_handler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker forked to replace a dead one took its parent's SIGTERM handler, and terminate's SIGTERM
    came before it set its own: it lived on, blocked, and the run waited on it for ever (the suite hung:
    a test had left gunicorn's worker handler in this process)."""
    monkeypatch.setattr(workers, "_started", _slow_to_set_up)
    before = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    try:
        with (
            _at_most(30),
            pytest.raises(ValueError, match="the caller stops"),
            mapped(_killed_on_second, range(400), 2, _start, (0,)) as results,
        ):
            next(results)
            time.sleep(0.3)  # the dead worker's successor is setting up
            raise ValueError("the caller stops")
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # the parent's handler given back
    finally:
        signal.signal(signal.SIGTERM, before)


def _killed_by_sigterm(chunk: object) -> object:
    os.kill(os.getppid(), signal.SIGTERM)
    time.sleep(5)
    return chunk


def _killed_by_sigint(chunk: object) -> object:
    os.kill(os.getppid(), signal.SIGINT)
    time.sleep(5)
    return chunk


@pytest.mark.parametrize(
    ("told", "status", "said"),
    [(_killed_by_sigterm, 143, "stopped by SIGTERM"), (_killed_by_sigint, 130, "stopped by Ctrl-C (SIGINT)")],
)
def test_a_run_told_to_stop_stops_its_workers_and_says_so(
    told: Any,
    status: int,
    said: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before, SIGTERM ended the parent at once and its workers wrote tracebacks after it; Ctrl-C wrote a
    traceback from the parent and one from each worker (found by an attack)."""
    from audit_lines import MONTH, RULES

    from service.bulk import jsonl
    from service.cli import main

    monkeypatch.setenv("MAUBINH_RULESETS_DIR", str(RULES))
    monkeypatch.setattr(jsonl, "_answer_chunk", told)
    with _at_most(30):
        assert main(["score", "--jsonl", str(MONTH), "--jobs", "2", "-o", str(tmp_path / "out.jsonl")]) == status
    assert capsys.readouterr().err.strip().endswith(f"{said}; what it wrote is not the whole answer")
    import multiprocessing

    assert multiprocessing.active_children() == []


def test_a_table_half_written_when_sigterm_came_is_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """score --rooms left a Parquet file without its footer."""
    from audit_lines import MONTH, RULES

    from service.bulk import table_runs
    from service.cli import main

    monkeypatch.setenv("MAUBINH_RULESETS_DIR", str(RULES))
    table, out = tmp_path / "rooms.parquet", tmp_path / "amounts.parquet"
    assert main(["rooms", str(MONTH), "-o", str(table)]) == 0
    real = table_runs._score_group

    def stopped(share: Any) -> bytes:
        written = real(share)
        os.kill(os.getpid(), signal.SIGTERM)  # in this process: --jobs 1
        return written

    monkeypatch.setattr(table_runs, "_score_group", stopped)
    assert main(["score", "--rooms", str(table), "-o", str(out), "--jobs", "1"]) == 143
    assert not out.exists()
