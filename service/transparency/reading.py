"""A log read from where it is published: a folder (the folder store's, or a copy of it) or its URL
prefix, through the same paths (``checkpoint``, ``tile/…``); and what a verifier asks of it: a checkpoint
whose note verifies, a tree checked whole, proofs made from its tiles."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

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


def reader(where: str) -> Read:
    """The files of the log at ``where``, a URL prefix (``http://…``) or a folder."""
    if where.startswith(("http://", "https://")):
        prefix = where.rstrip("/") + "/"

        def fetch(path: str) -> bytes | None:
            try:
                with urllib.request.urlopen(prefix + path, timeout=30) as answer:
                    data: bytes = answer.read(64 * 1024 * 1024)
                    return data
            except urllib.error.HTTPError as error:
                if error.code == 404:
                    return None
                raise LogUnreadable(f"{prefix}{path}: HTTP {error.code}") from None
            except (urllib.error.URLError, OSError) as error:
                raise LogUnreadable(f"{prefix}{path}: {error}") from None

        return fetch
    folder = Path(where)
    if not folder.is_dir():
        raise LogUnreadable(f"{where}: no such folder, and not an http(s) URL")

    def read(path: str) -> bytes | None:
        try:
            return (folder / path).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    return read


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


def proven_entry(tree: TiledTree, checkpoint: Checkpoint, index: int) -> bytes:
    """Entry ``index`` read again, proven in ``checkpoint``'s tree (:class:`ProofError` if not): a log
    read a second time may serve other tiles and bundles than it did when the tree was checked whole."""
    entry = tree.entries(index // WIDTH)[index % WIDTH]
    path = inclusion_proof(index, checkpoint.size, tree.subtree)
    verify_inclusion(leaf_hash(entry), index, checkpoint.size, path, checkpoint.root)
    return entry


def check_consistent(read: Read, old: Checkpoint, new: Checkpoint) -> None:
    """:class:`service.transparency.merkle.ProofError` unless ``new``'s tree extends ``old``'s: the proof
    is made from ``new``'s tiles, which the log serves, and checked against both roots."""
    tree = TiledTree(read, new.size)
    path = consistency_proof(old.size, new.size, tree.subtree) if old.size <= new.size else []
    verify_consistency(old.size, new.size, old.root, new.root, path)
