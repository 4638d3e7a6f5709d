"""Standard output as a command may find it: closed by its caller (``>&-``), or failing mid-run (a full
disk, a reader gone, as ``| head`` leaves it). Either is said in one line, never a traceback."""

from __future__ import annotations

import errno
import io
import os
import sys


class _Closed(io.RawIOBase):
    """Standard output the caller closed: a write fails as the system's would (EBADF), so the command
    that writes there says so, and one that writes only to ``-o`` runs as usual."""

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


def stand_in_if_closed() -> None:
    if sys.stdout is None:
        sys.stdout = io.TextIOWrapper(_Closed(), write_through=True)


def let_go() -> None:
    """After a failed write: what standard output still holds is dropped if it cannot be written, so the
    interpreter's last flush does not fail a second time (Python's note on SIGPIPE does the same)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            sys.stdout = None
