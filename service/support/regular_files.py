"""A file given by name, read or removed only if it is a regular one."""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened to be read: anything but a regular file (a pipe, a device, a folder) is an OSError
    naming it, never opened and waited on for a writer that may never come."""
    opened = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(opened).st_mode):
        os.close(opened)
        raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
    return os.fdopen(opened, "rb")


def remove_half_written(path: str | os.PathLike[str]) -> None:
    """Remove what a failed run half wrote at ``path``, where that is a regular file: a device the output
    was sent to (``-o /dev/null``, which a run once removed), a pipe or a link is left as it is."""
    try:
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)
    except FileNotFoundError:
        pass
