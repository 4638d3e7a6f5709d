"""The log's store in PostgreSQL (psycopg 3): the sequence as a table of entries, committed before an
entry is acknowledged, and the tiles, bundles and checkpoint as rows of a table of files, served from it.

One log process writes (it holds an advisory lock for its life, so that a second one started by
mistake fails at once rather than numbering entries twice); readers borrow one of a few connections.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS tlog_entries (idx bigint PRIMARY KEY, entry bytea NOT NULL);
CREATE TABLE IF NOT EXISTS tlog_files (path text PRIMARY KEY, data bytea NOT NULL);
"""
WRITER_LOCK: Final = 0x6D61_7562  # pg_advisory_lock's key: "maub"
READERS: Final = 8
"""The most connections reading tiles and entries at once (a request waits for one)."""


class PostgresStore:
    def __init__(self, url: str) -> None:
        import psycopg

        self._psycopg = psycopg
        self.url = url
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._opened = 0
        self._all: list[Any] = []
        self._lock = threading.Lock()
        writer = psycopg.connect(url, autocommit=True)
        writer.execute(SCHEMA)
        locked = writer.execute("SELECT pg_try_advisory_lock(%s)", (WRITER_LOCK,)).fetchone()
        if not locked or not locked[0]:
            writer.close()
            raise RuntimeError("another log process holds this database (its advisory lock)")
        self._writer = writer
        row = writer.execute("SELECT coalesce(max(idx) + 1, 0) FROM tlog_entries").fetchone()
        self._count = int(row[0]) if row else 0

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        with self._lock:
            opening = self._idle.empty() and self._opened < READERS
            self._opened += opening
        if opening:
            connection = self._psycopg.connect(self.url, autocommit=True)
            with self._lock:
                self._all.append(connection)
        else:
            connection = self._idle.get()
        try:
            yield connection
        finally:
            if connection.closed:
                with self._lock:
                    self._opened -= 1
            else:
                self._idle.put(connection)

    def sequence(self, entries: list[bytes]) -> int:
        with self._lock:
            first = self._count
            with (
                self._writer.transaction(),
                self._writer.cursor() as cursor,
                cursor.copy("COPY tlog_entries (idx, entry) FROM STDIN") as copy,
            ):
                for k, entry in enumerate(entries):
                    copy.write_row((first + k, entry))
            self._count += len(entries)
            return first

    def sequenced(self) -> int:
        with self._lock:
            return self._count

    def entries(self, start: int, end: int) -> list[bytes]:
        with self._connection() as connection:
            rows = connection.execute(
                "SELECT entry FROM tlog_entries WHERE idx >= %s AND idx < %s ORDER BY idx", (start, end)
            )
            return [bytes(row[0]) for row in rows]

    def integrated(self, size: int) -> None:
        return None  # the entries stay: the table is the sequence of record

    def read(self, path: str) -> bytes | None:
        with self._connection() as connection:
            row = connection.execute("SELECT data FROM tlog_files WHERE path = %s", (path,)).fetchone()
            return bytes(row[0]) if row else None

    def publish(self, files: dict[str, bytes], checkpoint: bytes) -> None:
        with self._connection() as connection, connection.transaction(), connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO tlog_files (path, data) VALUES (%s, %s) ON CONFLICT (path) DO NOTHING",
                list(files.items()),
            )
            cursor.execute(
                "INSERT INTO tlog_files (path, data) VALUES ('checkpoint', %s) "
                "ON CONFLICT (path) DO UPDATE SET data = excluded.data",
                (checkpoint,),
            )

    def close(self) -> None:
        with self._lock:
            for connection in self._all:
                connection.close()
            self._writer.close()
