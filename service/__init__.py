"""maubinh: a scoring service for Mậu Binh, the Vietnamese 13-card game."""

from importlib import metadata


def version() -> str:
    """The installed package's version (a bare checkout, never installed: ``0+unknown``)."""
    try:
        return metadata.version("maubinh")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"
