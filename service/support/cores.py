"""How many cores this process may run on: a container's CPU set, not the host's count."""

from __future__ import annotations

import os


def available_cores() -> int:
    """The default for gunicorn's workers and ``--jobs``."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1
