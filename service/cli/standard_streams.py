"""Standard input, output and error as a command may find them: closed by its caller (``>&-``, ``2>&-``), or
failing mid-run (a full disk, a reader gone, as ``| head`` leaves it). A failed output is said in one
line, never a traceback; a failed standard error loses what it would have said, never the run."""

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


class _Unfailing(io.RawIOBase):
    """Standard error whose failed write is dropped: a message that cannot be written is lost, but the
    run goes on and exits as it would have (with 2>/dev/full a finished run exited 1, a refused room's
    status, and a message's failure was said as the output's)."""

    def __init__(self, descriptor: int) -> None:
        super().__init__()
        self.descriptor = descriptor

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.descriptor

    def isatty(self) -> bool:
        return os.isatty(self.descriptor)

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        written = memoryview(data)
        try:
            while written:
                written = written[os.write(self.descriptor, written) :]
        except OSError:
            pass
        return len(data)


def _occupied(descriptor: int, flags: int) -> None:
    """``descriptor`` (1 or 2, closed by the caller) held by /dev/null, so that no file the command opens
    takes it, and then what is written to standard output or error (by C code too) lands in that file."""
    opened = os.open(os.devnull, flags)
    if opened != descriptor:
        os.dup2(opened, descriptor)
        os.close(opened)


def stand_in() -> None:
    """Standard output and error made safe to write to, as a command starts (only the process's own
    streams: a test's captured ones are left as they are)."""
    if sys.stdin is None:
        _occupied(0, os.O_RDONLY)  # read as empty
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - standard input, open for the process's life
    if sys.stdout is None:
        _occupied(1, os.O_RDONLY)  # a write to it fails (EBADF), as to a closed one
        sys.stdout = io.TextIOWrapper(_Closed(), write_through=True)
    if sys.stderr is None:
        _occupied(2, os.O_WRONLY)  # what is said is lost, as the caller chose
    if sys.stderr is None or sys.stderr is sys.__stderr__:
        encoding = sys.__stderr__.encoding if sys.__stderr__ is not None else "utf-8"
        raw = _Unfailing(2)
        sys.stderr = io.TextIOWrapper(raw, encoding=encoding, errors="backslashreplace", line_buffering=True)


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
