"""Where the workers' metrics are kept (prometheus-client's multiprocess directory), and what happens when
it fails: full, unwritable or missing, the workers keep scoring and only the metrics degrade.

prometheus-client keeps each worker's series in files it maps into memory. A page first written on a
full file system kills the process (SIGBUS: 1,057 worker deaths in 20 s on a full emptyDir), and a
directory that cannot be written raises inside a request, or in gunicorn's master as a worker leaves.
So:

- At start the master *prepares* the directory: it creates it, removes the service's own files (and
  nothing else), and checks that it can write there with room to spare. If it cannot, it says so in
  one line and drops the setting: each worker then counts alone, and /metrics gives the numbers of
  the worker that answers it.
- A worker writes a series it has not written before (a new file or a new label set: the only writes
  that touch a new page) only while the file system keeps ``ROOM_BYTES`` free; otherwise it skips
  that series, says so once, and its /metrics says ``maubinh_metrics_degraded 1`` until there is room.
  A worker that cannot open or create its files there writes none, for its life.
- The master's bookkeeping (``mark_process_dead``) never raises: a fault is logged once.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

ENV = "PROMETHEUS_MULTIPROC_DIR"
ROOM_BYTES = 1024 * 1024
"""What the file system must keep free for a worker to write a new series: a series and a new file
take a page or two, so this leaves room for every worker's next ones."""
OWN_FILE = re.compile(r"(counter|histogram|summary|gauge_(live)?(all|min|max|sum|mostrecent))_\d+\.db")
"""prometheus-client's files: the only ones removed at start."""

log = logging.getLogger("maubinh.metrics")
_state: dict[str, Any] = {"degraded": None, "unusable": None, "written": set(), "said": set()}


def prepare() -> str | None:
    """The master, before the app is preloaded: the directory ready, or the fault that drops it."""
    directory = os.environ.get(ENV)
    if not directory:
        return None
    fault = _fault(Path(directory), fresh=True)
    if fault is not None:
        del os.environ[ENV]  # read by prometheus-client as the app is imported: each worker counts alone
        _state["degraded"] = fault
    return fault


def _fault(directory: Path, fresh: bool = False) -> str | None:
    """Why ``directory`` cannot hold the metrics, or None. ``fresh``: remove the service's old files."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if fresh:
            for entry in directory.iterdir():
                if OWN_FILE.fullmatch(entry.name) and entry.is_file():
                    entry.unlink()
        probe = directory / f".maubinh-probe-{os.getpid()}"
        with probe.open("wb") as file:
            os.posix_fallocate(file.fileno(), 0, ROOM_BYTES)
        probe.unlink()
    except OSError as error:
        return f"{ENV}={directory} cannot hold the metrics ({error.strerror or error})"
    return None


def shared() -> bool:
    """Whether the workers' metrics are summed through the directory."""
    return bool(os.environ.get(ENV))


def forked() -> None:
    """A new worker: it has written no series of its own yet."""
    _state["written"] = set()
    _state["unusable"] = None
    _state["degraded"] = _state["degraded"] if not shared() else None


def unusable(error: OSError) -> None:
    """This process could not open or create its files in the store: it writes none for its life."""
    fault = f"{ENV}={os.environ.get(ENV)} cannot be written ({error.strerror or error}): this worker writes no series"
    _state["unusable"] = _state["degraded"] = fault
    say_once("unusable", fault)


def may_write(series: tuple[object, ...]) -> bool:
    """Whether this worker may write ``series`` now: always one it has written before; a new one only
    while the file system has ``ROOM_BYTES`` free."""
    if not shared():
        return True
    if _state["unusable"] is not None:
        return False
    written: set[tuple[object, ...]] = _state["written"]
    if series in written:
        return True
    fault = _room_fault()
    if fault is not None:
        _state["degraded"] = fault
        say_once("room", fault)
        return False
    _state["degraded"] = None
    written.add(series)
    return True


def _room_fault() -> str | None:
    directory = os.environ[ENV]
    try:
        stat = os.statvfs(directory)
    except OSError as error:
        return f"{ENV}={directory} cannot be read ({error.strerror or error}): this worker writes no new series"
    free = stat.f_bavail * stat.f_frsize
    if free < ROOM_BYTES:
        return f"{ENV}={directory} has {free} bytes free: this worker writes no new series until it has room"
    return None


def degraded() -> str | None:
    """Why this process's metrics are degraded now (None: they are not)."""
    fault: str | None = _state["degraded"]
    return fault


def say_once(kind: str, fault: str) -> None:
    """Log a metrics fault of one kind once per process, however often it happens."""
    said: set[str] = _state["said"]
    if kind not in said:
        said.add(kind)
        log.warning("metrics degraded: %s", fault)


def mark_dead(pid: int) -> None:
    """A worker left (or the master's preload is done): its live gauges go, and a fault is only logged."""
    if not shared():
        return
    from prometheus_client import multiprocess

    try:
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
    except OSError as error:
        say_once("mark_dead", f"{ENV}: a leaving process's files could not be removed ({error.strerror or error})")
