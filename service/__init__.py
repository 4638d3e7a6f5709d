"""maubinh: a scoring service for Mậu Binh, the Vietnamese 13-card game."""

from functools import cache


@cache
def version() -> str:
    """The installed package's version (a bare checkout, never installed: ``0+unknown``). importlib.metadata
    is imported here, not at the package's import: it costs a one-room command a good part of its start."""
    from importlib import metadata

    try:
        return metadata.version("maubinh")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"
