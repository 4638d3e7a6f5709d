"""A published key set (a JWK Set) read from a file or a fetched body, bounded: the command line's and
the Spark job's, so that both refuse the same files the same way."""

from __future__ import annotations

import os
from typing import Any, Final

from service.support.regular_files import open_regular
from service.support.strict_json import BadDocument, loads
from service.texts import Text

KEY_SET_BYTES: Final = 1024 * 1024
"""The most a key set is read: one past it is refused as too large, never read cut short."""


def key_set(read: bytes) -> Any:
    """The JSON document ``read`` holds (at most ``KEY_SET_BYTES + 1`` of a source's bytes); BadDocument
    for one past the bound or not JSON."""
    if len(read) > KEY_SET_BYTES:
        raise BadDocument(Text("receipts.keys_too_large", most=KEY_SET_BYTES))
    return loads(read)


def read_key_set(path: str | os.PathLike[str]) -> Any:
    """A key set file's document; OSError for what is no regular file (a pipe is never waited on)."""
    with open_regular(path) as file:
        return key_set(file.read(KEY_SET_BYTES + 1))
