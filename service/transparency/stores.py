"""Where a log keeps what it was given: the sequence (every entry, in order, durable before it is
acknowledged) and its files (tiles, entry bundles, the checkpoint).

:class:`FolderStore` is the default: a journal of entries, appended and fsync'd once for every group of
entries sequenced together, and the tiles as files laid out as their URLs are (``DIR/checkpoint``,
``DIR/tile/…``), so that the folder can be served as static files. ``postgres.PostgresStore`` keeps both
in one PostgreSQL database.
"""

from __future__ import annotations

import os
import struct
import threading
import zlib
from pathlib import Path
from typing import Final, Protocol

JOURNAL: Final = "sequence/journal"
"""The folder store's journal, beside the served files (``checkpoint`` and ``tile/`` alone are served)."""
_RECORD: Final = struct.Struct(">II")
"""A journal record: its entry's length and CRC-32, then the entry; a torn last record is cut at start."""


class Store(Protocol):
    def sequence(self, entries: list[bytes]) -> int:
        """Append ``entries`` durably (on disk, or committed), in order; the index of the first."""

    def sequenced(self) -> int:
        """How many entries were ever sequenced."""

    def entries(self, start: int, end: int) -> list[bytes]:
        """Sequenced entries ``[start, end)`` not yet integrated (the integrator asks for no others)."""

    def integrated(self, size: int) -> None:
        """Entries below ``size`` are in the tree: a store may forget its copy of them."""

    def read(self, path: str) -> bytes | None:
        """A file of the log by its path (``checkpoint``, ``tile/0/000.p/7``): its bytes, or None."""

    def publish(self, files: dict[str, bytes], checkpoint: bytes) -> None:
        """Write the tiles and bundles, then the checkpoint that needs them: never a checkpoint first."""

    def close(self) -> None: ...


def _write_file(path: Path, data: bytes, durable: bool = True) -> None:
    """``data`` at ``path`` at once or not at all (written aside, fsync'd when ``durable``, renamed over)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_name(path.name + ".tmp")
    with open(aside, "wb") as file:
        file.write(data)
        if durable:
            file.flush()
            os.fsync(file.fileno())
    os.replace(aside, path)


class FolderStore:
    """The journal and the served files in one folder."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        (self.folder / JOURNAL).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._pending: list[bytes] = []
        self._pending_start = 0
        self._count = 0
        checkpoint = self.read("checkpoint")
        integrated = int(checkpoint.split(b"\n")[1]) if checkpoint else 0
        self._recover(integrated)
        self._journal = open(self.folder / JOURNAL, "ab")  # noqa: SIM115 - held open for the store's life

    def _recover(self, integrated: int) -> None:
        """Count the journal's records, keep those not yet integrated, cut a torn last record."""
        path = self.folder / JOURNAL
        if not path.exists():
            path.touch()
        good = 0
        with open(path, "rb") as journal:
            data = journal.read()
        at = 0
        while at + _RECORD.size <= len(data):
            length, crc = _RECORD.unpack_from(data, at)
            entry = data[at + _RECORD.size : at + _RECORD.size + length]
            if len(entry) != length or zlib.crc32(entry) != crc:
                break
            if self._count >= integrated:
                self._pending.append(entry)
            self._count += 1
            at += _RECORD.size + length
            good = at
        if good != len(data):
            with open(path, "r+b") as journal:
                journal.truncate(good)
                os.fsync(journal.fileno())
        if self._count < integrated:
            raise ValueError(f"{path} holds {self._count} entries, and the checkpoint {integrated}")
        self._pending_start = integrated

    def sequence(self, entries: list[bytes]) -> int:
        records = b"".join(_RECORD.pack(len(e), zlib.crc32(e)) + e for e in entries)
        with self._lock:
            self._journal.write(records)
            self._journal.flush()
            os.fdatasync(self._journal.fileno())
            first = self._count
            self._count += len(entries)
            self._pending += entries
        return first

    def sequenced(self) -> int:
        with self._lock:
            return self._count

    def entries(self, start: int, end: int) -> list[bytes]:
        with self._lock:
            return self._pending[start - self._pending_start : end - self._pending_start]

    def integrated(self, size: int) -> None:
        with self._lock:
            del self._pending[: size - self._pending_start]
            self._pending_start = size

    def read(self, path: str) -> bytes | None:
        try:
            return (self.folder / path).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def publish(self, files: dict[str, bytes], checkpoint: bytes) -> None:
        """The files, then one sync of the file system (an fsync a file cost 6 s for the 2,300 files of
        300,000 entries), then the checkpoint, fsync'd."""
        for path, data in files.items():
            _write_file(self.folder / path, data, durable=False)
        if files:
            os.sync()
        _write_file(self.folder / "checkpoint", checkpoint)

    def close(self) -> None:
        self._journal.close()
