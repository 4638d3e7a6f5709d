"""A log read from where it is published: a folder (the folder store's, or a copy of it) or its URL
prefix, through the same paths (``checkpoint``, ``tile/…``); and what a verifier asks of it: a checkpoint
whose note verifies, a tree checked whole, proofs made from its tiles."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from http.client import HTTPException
from pathlib import Path
from typing import Final

from service.support.deadline import within
from service.support.regular_files import open_regular
from service.transparency.merkle import (
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    verify_consistency,
    verify_inclusion,
)
from service.transparency.note import Checkpoint, NoteError, Verifier, open_checkpoint
from service.transparency.proof import TlogProof
from service.transparency.tiles import WIDTH, Read, TiledTree


class LogUnreadable(OSError):
    """A log that cannot be read at all: ``args[0]`` says where and why."""


FILE_MOST: Final = 64 * 1024 * 1024
"""A log file's most bytes: an entry bundle, the largest, is at most 256 entries of 64 KiB."""
FETCH_SECONDS: Final = 60.0
"""The longest a log file may take to come, whole: a log that sends a byte now and then is given up on."""


def reader(where: str) -> Read:
    """The files of the log at ``where``, a URL prefix (``http://…``) or a folder: each a regular file of
    at most :data:`FILE_MOST` bytes, come within :data:`FETCH_SECONDS`, else :class:`LogUnreadable`."""
    if where.startswith(("http://", "https://")):
        prefix = where.rstrip("/") + "/"
        return lambda path: _fetched(prefix + path)
    folder = Path(where)
    if not folder.is_dir():
        raise LogUnreadable(f"{where}: no such folder, and not an http(s) URL")

    def read(path: str) -> bytes | None:
        try:  # a pipe put in the folder is refused, not waited on
            file = open_regular(folder / path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as error:
            raise LogUnreadable(f"{folder / path}: {error.strerror}") from None
        with file:
            size = os.fstat(file.fileno()).st_size
            data = file.read(FILE_MOST + 1) if size <= FILE_MOST else b""
        if size > FILE_MOST or len(data) > FILE_MOST:  # said by its size, never read: a sparse file
            raise LogUnreadable(f"{folder / path}: more than {FILE_MOST} bytes")
        return data

    return read


def _fetched(url: str) -> bytes | None:
    try:
        return within(FETCH_SECONDS, lambda: _fetch(url))
    except TimeoutError as error:
        raise LogUnreadable(f"{url}: {error}") from None


def _fetch(url: str) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            data: bytes = answer.read(FILE_MOST + 1)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise LogUnreadable(f"{url}: HTTP {error.code}") from None
    except (urllib.error.URLError, OSError, HTTPException, ValueError) as error:  # HTTPException: no HTTP
        raise LogUnreadable(f"{url}: {type(error).__name__}: {error}"[:300]) from None
    if len(data) > FILE_MOST:
        raise LogUnreadable(f"{url}: more than {FILE_MOST} bytes")
    return data


def latest(read: Read, verifier: Verifier, origin: str | None = None) -> Checkpoint:
    """The log's checkpoint, its note verified: :class:`NoteError` if it does not."""
    found = read("checkpoint")
    if found is None:
        raise NoteError("the log has no checkpoint")
    return open_checkpoint(found, verifier, origin)


def prove_inclusion(read: Read, checkpoint: Checkpoint, index: int) -> TlogProof:
    """A tlog-proof of entry ``index`` in ``checkpoint``'s tree, made from the tiles."""
    tree = TiledTree(read, checkpoint.size)
    return TlogProof(index, tuple(inclusion_proof(index, checkpoint.size, tree.subtree)), checkpoint.note)


def proven_bundle(tree: TiledTree, checkpoint: Checkpoint, n: int) -> list[bytes]:
    """Bundle ``n``'s entries read again, proven in ``checkpoint``'s tree (:class:`ProofError` if not): a log
    read a second time may serve other tiles and bundles than it did when the tree was checked whole. The
    bundle is checked against its level-0 tile, and one inclusion proof of its first entry, made from the
    same tiles (``tree`` keeps what it reads), binds every hash of that tile to the root: the proof's path
    covers every other leaf of the tree."""
    entries = tree.entries(n)
    first = n * WIDTH
    path = inclusion_proof(first, checkpoint.size, tree.subtree)
    verify_inclusion(leaf_hash(entries[0]), first, checkpoint.size, path, checkpoint.root)
    return entries


def check_consistent(read: Read, old: Checkpoint, new: Checkpoint) -> None:
    """:class:`service.transparency.merkle.ProofError` unless ``new``'s tree extends ``old``'s: the proof
    is made from ``new``'s tiles, which the log serves, and checked against both roots."""
    tree = TiledTree(read, new.size)
    path = consistency_proof(old.size, new.size, tree.subtree) if old.size <= new.size else []
    verify_consistency(old.size, new.size, old.root, new.root, path)
