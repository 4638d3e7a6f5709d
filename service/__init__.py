"""maubinh: a scoring service for Mậu Binh, the Vietnamese 13-card game."""

import os
from functools import cache

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
"""numpy's OpenBLAS starts a thread a core when it loads, which spins for some 0.1 s of CPU: maubinh
calls no BLAS routine and shares work over processes, so each worker's spinning thread only took a core
from the other worker (bench/cli.py, verify --jobs 2). Set before any of the package's imports of numpy."""


@cache
def version() -> str:
    """The installed package's version (a bare checkout, never installed: ``0+unknown``). importlib.metadata
    is imported here, not at the package's import: it costs a one-room command a good part of its start."""
    from importlib import metadata

    try:
        return metadata.version("maubinh")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"
