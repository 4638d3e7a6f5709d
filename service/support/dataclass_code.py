"""Dataclasses' generated methods compiled once per install, not at every start.

Python 3.11's dataclasses write each class's ``__init__``, ``__repr__``, ``__eq__``… as source and
compile it as the class is made. While :func:`kept` is open, each such source is looked up among the
code objects kept in the package's ``__pycache__`` (beside its bytecode, with the same interpreter
tag and magic number) and compiled only when missing; what was missing is written there afterwards,
as Python writes its ``.pyc`` files (not under ``PYTHONDONTWRITEBYTECODE``, nor where it cannot).
A private override (``dataclasses``' module global ``exec``), kept for its gain on a one-room
``maubinh score`` (bench/cli.py: README).
"""

from __future__ import annotations

import dataclasses
import marshal
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

STORE = Path(__file__).parent / "__pycache__" / f"dataclasses.{sys.implementation.cache_tag}.marshal"
"""Where an installed package keeps them; not a folder inside a zip (Spark's --py-files)."""
MOST_KEPT = 2048
"""Beyond this many (old classes' code left behind by edits), the store starts again from this run's."""


def _read(store: Path) -> dict[str, CodeType]:
    try:
        held = store.read_bytes()
        codes = marshal.loads(held[len(MAGIC_NUMBER) :]) if held.startswith(MAGIC_NUMBER) else {}
    except (OSError, EOFError, ValueError, TypeError):  # absent, unreadable or damaged: compiled anew
        return {}
    return codes if isinstance(codes, dict) else {}


def _write(store: Path, codes: dict[str, CodeType]) -> None:
    """Whole or not at all: a new file renamed over the old, so a reader never sees half of one."""
    if sys.dont_write_bytecode:
        return
    partial = store.with_name(f"{store.name}.{os.getpid()}")
    try:
        store.parent.mkdir(exist_ok=True)
        partial.write_bytes(MAGIC_NUMBER + marshal.dumps(codes))
        os.replace(partial, store)
    except OSError:  # a read-only install compiles them at every start, as before
        partial.unlink(missing_ok=True)


@contextmanager
def kept(store: Path = STORE) -> Iterator[None]:
    """Dataclasses made inside the block take their generated methods' code from ``store``."""
    codes = _read(store)
    compiled: dict[str, CodeType] = {}

    def exec_kept(source: str, globals: dict[str, Any] | None = None, locals: Any = None) -> None:
        code = codes.get(source) or compiled.get(source)
        if code is None:
            # as exec(source) in dataclasses would: without this module's `from __future__ import annotations`
            code = compiled[source] = compile(source, "<string>", "exec", dont_inherit=True)
        exec(code, globals, locals)

    before = vars(dataclasses).get("exec")
    dataclasses.exec = exec_kept  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if before is None:
            del dataclasses.exec  # type: ignore[attr-defined]
        else:
            dataclasses.exec = before  # type: ignore[attr-defined]
    if compiled:
        _write(store, {**(codes if len(codes) + len(compiled) <= MOST_KEPT else {}), **compiled})
