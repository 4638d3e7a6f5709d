"""Files shipped inside the package: the built-in rulesets, the texts, the hand tables.

Installed, the package is a folder and they are read as files. Taken from a zip (Spark's
``--py-files`` wheel), they are read through :mod:`importlib.resources`, imported only then: its
import brings tempfile, shutil, zipfile and lzma with it, which a one-room command would pay for at
every start (bench/cli.py).
"""

from __future__ import annotations

import sys
from pathlib import Path


def _folder(package: str) -> Path | None:
    """The package's folder, or None when it is not one on disk (inside a zip)."""
    if package not in sys.modules:
        __import__(package)
    file = sys.modules[package].__file__
    folder = Path(file).parent if file else None
    return folder if folder is not None and folder.is_dir() else None


def read_bytes(package: str, *parts: str) -> bytes:
    """The file ``parts`` (names, one a level) under ``package``."""
    folder = _folder(package)
    if folder is not None:
        return folder.joinpath(*parts).read_bytes()
    from importlib import resources

    return resources.files(package).joinpath(*parts).read_bytes()


def names(package: str, *parts: str) -> list[str]:
    """The names in the folder ``parts`` under ``package``, sorted."""
    folder = _folder(package)
    if folder is not None:
        return sorted(entry.name for entry in folder.joinpath(*parts).iterdir())
    from importlib import resources

    return sorted(entry.name for entry in resources.files(package).joinpath(*parts).iterdir())
