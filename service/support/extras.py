"""What each optional feature needs installed: a missing extra is named in one line, before any work.

The wheel's runtime serves and scores; the Parquet tables and the audit report need the ``audit``
extra, the Spark job the ``spark`` extra, traces the ``otel`` extra (pyproject.toml). A feature asks
:func:`missing` up front, so that a plain install says which extra to add instead of failing in a
worker with a traceback.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import NamedTuple

from service.texts import Language, Text


class Extra(NamedTuple):
    name: str
    modules: tuple[str, ...]


AUDIT = Extra("audit", ("pyarrow", "matplotlib"))
SPARK = Extra("spark", ("pyspark", "pyarrow", "pandas"))
OTEL = Extra("otel", ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"))


def missing(needs: str, extra: Extra, language: Language = "en") -> str | None:
    """The one line that names the extra, or None when all its modules import; ``needs`` is the
    feature with its verb ("Parquet tables need"), in ``language``."""
    absent = [module for module in extra.modules if not _importable(module)]
    if not absent:
        return None
    return Text("cli.extra_missing", needs=needs, extra=extra.name, missing=", ".join(absent)).render(language)


def _importable(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        return False
