"""A file given by name, opened to be read only if it is a regular one."""

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
