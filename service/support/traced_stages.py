"""The named stages of an operation (validate, settle, a batch's room), for whoever watches them.

The domain marks its stages and knows nothing of who watches: the HTTP layer's tracing, when it is
on (service/api/tracing.py), makes each a span; otherwise a stage is a shared no-op.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

Watcher = Callable[[str, dict[str, str | int]], AbstractContextManager[object]]

_UNWATCHED: AbstractContextManager[object] = nullcontext()
_watcher: Watcher | None = None


def stage(name: str, **attributes: str | int) -> AbstractContextManager[object]:
    """A context to run one stage in: a span when tracing is on, else nothing."""
    if _watcher is None:
        return _UNWATCHED
    return _watcher(name, attributes)


def watch(watcher: Watcher | None) -> None:
    """Who watches the stages from now on (None: nobody)."""
    global _watcher  # noqa: PLW0603 - one process-wide switch, set once at start
    _watcher = watcher
