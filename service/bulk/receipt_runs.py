"""Receipts by the million: files, JSON lines and folders of receipts checked over worker processes.

What checks one receipt is the trust side's (``service.trust.receipt_lines``, given here as a factory
the workers call, so the bulk side knows no receipt); this module reads the inputs, each line capped
(:mod:`service.bulk.lines`), shares them between the workers (:mod:`service.bulk.workers`), and finds
the rounds ruled on two rooms (:mod:`service.support.rerolls`). A receipt's verdict can depend on one read
later (a re-roll), so each record goes to a spool file on disk as it comes, and is written out, in
input order, once every receipt is read: memory holds a chunk of lines and 16 bytes a round, never the
receipts.
"""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import orjson

from service.bulk.lines import MAX_LINE_ENV, Overlong, capped
from service.bulk.spans import Span, file_identity, span_lines, spans, unchanged
from service.bulk.workers import mapped
from service.support.rerolls import Others, RoundIndex, is_suspect, rerolled
from service.texts import Language, Text

LINES_SUFFIXES = (".jsonl", ".ndjson")
"""A file named so (or stdin, ``-``) holds a receipt a line; any other file holds one receipt."""
FOLDER_SUFFIXES = (".json", *LINES_SUFFIXES)
"""The files a folder is searched for (every depth, in name order); any other file in it is not read."""
WHOLE_FILE_BYTES = 64 * 1024 * 1024
"""A receipt file's most bytes (a batch of 500 rooms is some 5 MB), as a single receipt has always been read."""
CHUNK = 1024
CHUNK_BYTES = 16 * 1024 * 1024
"""A worker's share at a time: up to CHUNK receipts (their rulings checked together, the more the cheaper
a room) or CHUNK_BYTES of them (memory bounded whatever the receipts' size)."""
ROUND_SCORED_TWICE = "round_scored_twice"
FAILURES_KEPT = 1000
"""How many failing receipts a run keeps for its report (every one is in the JSON lines)."""
ROUNDS_KEPT = 20
"""A failing batch's round ids its report keeps: the first 20 (the JSON lines hold them all), so that
the failures kept hold no more than so many bytes whatever the batches."""

Record = dict[str, Any]
Rooms = tuple[tuple[str, str], ...]


class Checker(Protocol):
    """What checks one receipt: its text → (its record, its rooms that name a round)."""

    def __call__(self, text: bytes) -> tuple[Record, Rooms]: ...

    def too_long(self, length: int, limit: int, setting: str | None) -> tuple[Record, Rooms]: ...

    def many(self, texts: list[bytes]) -> list[tuple[Record, Rooms]]: ...


class NoReceipts(ValueError):
    """A folder holding no receipt file: ``args[0]`` is its path (a usage error, not a clean month)."""


def inputs(paths: list[str]) -> list[str]:
    """The files ``paths`` name, a folder's in name order; OSError (its filename set) for one missing,
    :class:`NoReceipts` for a folder without any."""
    found: list[str] = []
    for path in paths:
        if path != "-" and Path(path).is_dir():
            held = sorted(
                str(p)
                for p in Path(path).rglob("*")
                if p.suffix in FOLDER_SUFFIXES and p.is_file() and not p.is_symlink()
            )
            if not held:
                raise NoReceipts(path)
            found += held
        elif path == "-" or Path(path).is_file():
            found.append(path)
        elif os.path.exists(path):  # a FIFO, a device: never read as a month of receipts
            raise OSError(errno.ENODEV, "not a regular file or folder", path)
        else:
            raise FileNotFoundError(2, os.strerror(2), path)
    return found


def not_read(paths: list[str]) -> list[tuple[str, bool]]:
    """What the folders among ``paths`` hold that :func:`inputs` does not read though a receipt file might
    be there: a link to a folder or to a ``*.json``-named file (the search follows none: a link may lead
    out of the folder, to a file that never ends), and a ``*.json``-named entry that is no regular file
    (a pipe, a link to nothing); each with whether it is a link. Said, so that an auditor knows the run
    saw less than the folder."""
    unread: list[tuple[str, bool]] = []
    for path in paths:
        if path != "-" and Path(path).is_dir():
            for entry in sorted(Path(path).rglob("*")):
                if entry.is_symlink() and (entry.is_dir() or (entry.suffix in FOLDER_SUFFIXES and entry.is_file())):
                    unread.append((str(entry), True))
                elif entry.suffix in FOLDER_SUFFIXES and not entry.is_file():
                    unread.append((str(entry), False))
    return unread


def shown_path(path: str) -> str:
    """A path as a verdict, the summary and the report name it: a file name's bytes that are not UTF-8
    (which the system hands Python as lone surrogates, and no UTF-8 text can hold) written as ``\\xff``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def holds_lines(path: str) -> bool:
    return path == "-" or path.endswith(LINES_SUFFIXES)


Numbered = tuple[int, int, bytes]
"""A receipt's file (its index in the run), its line, and its text."""


class Shared(NamedTuple):
    """A file's index and a span of its lines, which a worker reads itself."""

    file: int
    span: Span


@dataclass
class Inputs:
    """The receipts of every file, numbered ``(file, line)``; with ``hashed``, each file's SHA-256 taken
    as it is read (the report names its inputs so; a hash costs a month's run 3%, so only a run with a
    report takes it). With ``jobs`` > 1, a JSON-lines file goes to the workers as spans
    (:mod:`service.bulk.spans`)."""

    files: list[str]
    sha256: list[str] = field(default_factory=list)
    jobs: int = 1
    hashed: bool = True

    def chunks(self) -> Iterator[list[Numbered] | Shared]:
        """The receipts a worker's share at a time: up to :data:`CHUNK` of them or :data:`CHUNK_BYTES`."""
        chunk: list[Numbered] = []
        held = 0
        for item in self.receipts():
            if isinstance(item, Shared):
                if chunk:  # the receipts before the span go first: the verdicts come in input order
                    yield chunk
                    chunk, held = [], 0
                yield item
                continue
            chunk.append(item)
            held += len(item[2])
            if len(chunk) == CHUNK or held >= CHUNK_BYTES:
                yield chunk
                chunk, held = [], 0
        if chunk:
            yield chunk

    def receipts(self) -> Iterator[Numbered | Shared]:
        import sys

        for index, path in enumerate(self.files):
            digest = hashlib.sha256()
            seen = digest.update if self.hashed else None
            if self.jobs > 1 and path != "-" and holds_lines(path):
                for span in spans(path, CHUNK, seen, CHUNK_BYTES, self.jobs):
                    yield Shared(index, span)
                self.sha256.append(digest.hexdigest())
                continue
            with open(path, "rb") if path != "-" else os.fdopen(os.dup(sys.stdin.fileno()), "rb") as source:
                read_as = file_identity(os.fstat(source.fileno())) if path != "-" else None
                if holds_lines(path):
                    for number, line in enumerate(capped(source, seen=seen), start=1):
                        if _kept(line):
                            yield index, number, line
                else:
                    yield index, 1, whole_receipt(source, digest.update if self.hashed else None)
                if read_as is not None:  # grown or rewritten while read: refused, as the workers' spans are
                    unchanged(path, read_as, source.fileno())
            self.sha256.append(digest.hexdigest() if self.hashed else "")


def whole_receipt(source: Any, seen: Callable[[bytes], object] | None = None) -> bytes:
    """A receipt file's text, or an :class:`Overlong` past :data:`WHOLE_FILE_BYTES` (never read past it,
    but given to ``seen``, a hash of the input, whole)."""
    whole = source.read(WHOLE_FILE_BYTES + 1)
    length = max(len(whole), os.fstat(source.fileno()).st_size)  # a file's, read past or not
    if seen is not None:
        seen(whole)
        while more := source.read(1 << 20):  # past the cap: hashed, never kept
            seen(more)
    return whole if length <= WHOLE_FILE_BYTES else Overlong(length, WHOLE_FILE_BYTES)


_checker: Checker | None = None


def _start(make: Callable[[], Checker]) -> None:
    global _checker  # noqa: PLW0603 - one per worker process
    _checker = make()


def checked(checker: Checker, chunk: list[Numbered]) -> Iterator[tuple[int, int, Record, Rooms]]:
    """Each receipt of ``chunk`` as ``(file, line, record, rooms)``, their rulings checked together."""
    read = iter(checker.many([text.rstrip(b"\r\n") for _, _, text in chunk if not isinstance(text, Overlong)]))
    for index, number, text in chunk:
        if isinstance(text, Overlong):
            setting = None if text.limit == WHOLE_FILE_BYTES else MAX_LINE_ENV  # a whole file's cap is fixed
            record, rooms = checker.too_long(text.length, text.limit, setting)
        else:
            record, rooms = next(read)
        yield index, number, record, rooms


def _check_chunk(given: list[Numbered] | Shared) -> tuple[bytes, list[tuple[str, str]], int]:
    """A chunk's records as spool lines ``[file, line, record, rooms]``, and its rooms for the index."""
    assert _checker is not None
    chunk = given if isinstance(given, list) else read_span(given)
    out: list[bytes] = []
    named: list[tuple[str, str]] = []
    for index, number, record, rooms in checked(_checker, chunk):
        out.append(orjson.dumps([index, number, record, rooms]) + b"\n")
        named += rooms
    return b"".join(out), named, len(chunk)  # a share of blank lines alone: nothing, not an empty line


def _kept(line: bytes) -> bool:
    """A line past its cap (refused by its number), or one holding more than white space: ``isspace``
    says so without the copy of the line ``strip`` makes (receipt lines are some 10 KB)."""
    return isinstance(line, Overlong) or (len(line) > 0 and not line.isspace())


def read_span(shared: Shared) -> list[Numbered]:
    """A span's receipts, numbered, its blank lines left out."""
    numbered = enumerate(span_lines(shared.span), start=shared.span.first)
    return [(shared.file, n, line) for n, line in numbered if _kept(line)]


@dataclass
class Run:
    """What a run found: counts by code, the re-rolled rounds, the failing receipts kept (the first
    :data:`FAILURES_KEPT`) with their money, and the time it took."""

    files: list[str]
    sha256: list[str]
    receipts: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)
    failed_money: int = 0
    rerolled: dict[str, list[tuple[str, tuple[int, int]]]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def verified(self) -> int:
        return self.receipts - sum(self.codes.values())


def others_named(others: Others, digest: str, place: Callable[[Any], str], language: Language) -> str:
    """Where a re-rolled round's other rooms were ruled, as a verdict names them: the first few places
    (``place`` writes each), then how many more."""
    places, more = others.of_room(digest)
    named = ", ".join(map(place, places))
    return Text("receipts.others_more", named=named, more=more).render(language) if more else named


def _twice(record: Record, rooms: Rooms, rounds: dict[str, Others], files: list[str], language: Language) -> Record:
    """The record of a receipt whose round was ruled on another room too, naming where."""
    for round_id, digest in rooms:
        if round_id in rounds:
            others = others_named(rounds[round_id], digest, lambda w: f"{files[w[0]]}:{w[1]}", language)
            said = Text("receipts.round_scored_twice", round_id=round_id, others=others)
            return {**record, "verified": False, "code": ROUND_SCORED_TWICE, "message": said.render(language)}
    return record


def run(
    files: list[str],
    make: Callable[[], Checker],
    jobs: int,
    write: Callable[[str, Record], None],
    language: Language = "en",
    progress: Any = None,
    hashed: bool = True,
) -> Run:
    """Check every receipt of ``files`` (:func:`inputs`) with what ``make`` makes (once a worker), then
    give each record to ``write(file, record)`` in input order (its ``line`` set); a summary comes back,
    with each file's SHA-256 where ``hashed`` (else "")."""
    started = time.perf_counter()
    source = Inputs(files, jobs=jobs, hashed=hashed)
    index = RoundIndex()
    with tempfile.TemporaryFile(prefix="maubinh-receipts-") as spool:
        with mapped(_check_chunk, source.chunks(), jobs, _start, (make,)) as results:
            for text, named, count in results:
                spool.write(text)
                index.add(named)
                if progress is not None:
                    progress.update(count)
        suspects = index.suspects()
        spool.seek(0)
        found = (
            rerolled(
                (round_id, digest, (f, n))
                for f, n, _, rooms in map(orjson.loads, spool)
                for round_id, digest in rooms
                if is_suspect(round_id, suspects)
            )
            if suspects  # most months: no round named twice, and no need to read the spool twice
            else {}
        )
        names = [shown_path(path) for path in source.files]
        done = Run(names, source.sha256, rerolled=found)
        others = {round_id: Others.of(held) for round_id, held in found.items()}
        spool.seek(0)
        for f, n, read, rooms in map(orjson.loads, spool):
            record = _twice(read, rooms, others, names, language) if found else read
            done.receipts += 1
            if record["code"] is not None:
                done.codes[record["code"]] += 1
                done.failed_money += record.get("money") or 0
                if len(done.failures) < FAILURES_KEPT:
                    kept = (
                        record["round_id"][:ROUNDS_KEPT] if isinstance(record["round_id"], list) else record["round_id"]
                    )
                    done.failures.append({"file": names[f], "line": n, **record, "round_id": kept})
            write(names[f], {"line": n, **record})
    done.seconds = time.perf_counter() - started
    return done
