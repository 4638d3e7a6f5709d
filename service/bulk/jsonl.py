"""JSON lines in, JSON lines out: one answer per request line, in input order, over worker processes.

Lines go to the workers in chunks (fewer, larger messages between processes), and each chunk comes
back as its answers' bytes, so the parent only writes. ``jobs=1`` answers line by line in this
process, writing each answer as soon as it is made.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, BinaryIO, Literal

from service.bulk.lines import Overlong, lines_of
from service.bulk.spans import Span, regular_path, span_lines, spans
from service.bulk.spreadsheet import ledger_rows
from service.bulk.tables import Rows, round_id_of
from service.bulk.workers import mapped
from service.documents import OPERATIONS, answer, prepare
from service.rulesets.catalogue import RULESETS_DIR_ENV, Catalogue
from service.rulesets.operator_folder import catalogue_for
from service.scoring.claims import settles
from service.serialize import dumps, problem_json
from service.texts import Language, Text

CHUNK = 256
"""Lines per message to a worker: large enough that pickling is a small share of the work."""
CHUNK_BY_OPERATION = {"arrange": 16}
"""An advice takes about twenty times a room's scoring: smaller chunks share a short batch between
the workers at the same share of pickling."""
ENGINE_ENV = "MAUBINH_BULK_ENGINE"
ENGINE_CHUNK = 8192
"""Verify's lines per chunk where the bulk engine checks the claims (no tables): each of its array
operations has a fixed cost, shared by more rooms in a larger chunk."""


def _chunk_size(name: str, tables: bool, jobs: int) -> int:
    if name == "verify" and not tables:
        return ENGINE_CHUNK
    if jobs <= 1 and not tables:
        return 1  # line by line, each answer written as soon as made
    return CHUNK_BY_OPERATION.get(name, CHUNK)


@dataclass(frozen=True)
class Summary:
    lines: int
    refused: int
    seconds: float
    agreed: int = 0
    """For verify: the rooms whose claim agrees, which are counted and not written."""


Format = Literal["json", "csv", "none"]
"""What a worker writes of each answer: its JSON line, its ledger's CSV rows, or nothing (its table
rows only)."""


@dataclass(frozen=True)
class Worker:
    """What each worker process holds: one operation, its catalogue, its output format and language,
    and the fields that requests leave out."""

    name: str
    catalogue: Catalogue
    format: Format
    language: Language
    defaults: dict[str, Any]
    tables: bool = False
    """Also each answer's table rows (:mod:`service.bulk.tables`), for Parquet and the audit report."""
    engine: bool = True
    """Verify's claims checked by the bulk engine first (MAUBINH_BULK_ENGINE=0: every line by the
    per-room path, as the bench compares them)."""
    spool: str | None = None
    """A folder where the worker leaves each chunk's text as a file, named by its first line, for the
    parent to copy in the kernel (:func:`_copy_spooled`), rather than send it through the pool's pipe."""


_worker: Worker | None = None


def _start_worker(
    name: str,
    format: Format = "json",
    language: Language = "en",
    defaults: dict[str, Any] | None = None,
    tables: bool = False,
    spool: str | None = None,
) -> None:
    global _worker  # noqa: PLW0603 - one per worker process
    catalogue = catalogue_for(os.environ.get(RULESETS_DIR_ENV) or None)
    engine = os.environ.get(ENGINE_ENV, "1") != "0"
    _worker = Worker(name, catalogue, format, language, defaults or {}, tables, engine, spool)


@dataclass(frozen=True)
class Chunk:
    """What a worker sends back for a chunk of lines: the bytes to write, the problems to write aside
    (with --format csv, where a problem is no row), and the counts for the summary."""

    text: bytes
    aside: bytes
    lines: int
    refused: int
    agreed: int
    tables: bytes = b""
    """With tables: the chunk's rows, an Arrow IPC stream per table (:meth:`service.bulk.tables.Rows.encode`)."""
    requests: tuple[tuple[int, bytes], ...] = ()
    """With the tables format, verify: each disagreeing line's request, for the report's links."""
    spooled: str = ""
    """The file holding ``text`` instead, when the worker spools (:attr:`Worker.spool`)."""


def traced(number: int, line: bytes, status: int, body: dict[str, Any]) -> dict[str, Any]:
    """A problem, or a verify answer, with the input line it answers and that line's round, so that
    an audit of a month of rounds can tell which one each is (a scored line keeps its bytes)."""
    round_id = body["result"]["round_id"] if status == 200 else round_id_of(line)
    return {"line": number, "round_id": round_id, **body}


def answer_line(
    operation: Any, line: bytes, catalogue: Catalogue, defaults: dict[str, Any], language: Language
) -> tuple[int, dict[str, Any]]:
    """One request line's answer, or a 500 problem for it: a defect on one line must not cost the
    rest of the run (here, or a Spark partition). The line's end is not the document's: a fault's
    position is on the line's one line. A line past the cap is refused, its bytes never read."""
    if isinstance(line, Overlong):
        return 413, line.problem()
    try:
        status, body = answer(operation, line.rstrip(b"\r\n"), catalogue, defaults, language)
    except Exception:
        traceback.print_exc(file=sys.stderr)
        return 500, problem_json(500, Text("problem.internal"), Text("problem.internal_line"))
    detail = body.get("detail") if status == 400 else None
    if isinstance(detail, Text) and detail.key == "bad_json.syntax":  # its "line 1" is this line, not the file's
        body["detail"] = Text("bad_json.syntax_in_line", error=detail.fields["error"], column=detail.fields["column"])
    return status, body


def _answer_chunk(numbered: tuple[int, list[bytes]] | Span) -> Chunk:
    """One chunk, in a worker: its first line's number and its lines, or a span of the input to read
    them from. An agreeing verify answer is counted, not written."""
    assert _worker is not None
    csv, language = _worker.format == "csv", _worker.language
    operation = OPERATIONS[_worker.name]
    traces_answers = _worker.name == "verify"  # what verify writes are disagreements
    first, lines = (numbered.first, list(span_lines(numbered))) if isinstance(numbered, Span) else numbered
    out, aside = [], []
    rows = Rows(_worker.name) if _worker.tables else None
    requests = []
    refused = agreed = 0
    engine_agrees: set[int] = set()
    if (
        traces_answers and rows is None and _worker.engine
    ):  # the engine says which claims agree; the rest go room by room
        from service.bulk.engine import agreeing_lines  # numpy's import, 40 ms, only for verify (score --jsonl 10%)

        engine_agrees = agreeing_lines(lines, first, _worker.catalogue, _worker.defaults)
    for number, line in enumerate(lines, start=first):
        if number in engine_agrees:
            agreed += 1
            continue
        status, body = answer_line(operation, line, _worker.catalogue, _worker.defaults, language)
        refused += status != 200
        if rows is not None:
            rows.add(number, None if status == 200 else round_id_of(line), status, body, language)
            if traces_answers and status == 200 and not body["agrees"]:
                requests.append((number, line))
        if _worker.format == "none":
            agreed += settles(status, body)
            continue
        if status != 200 or (traces_answers and not settles(status, body)):
            body = traced(number, line, status, body)
        if settles(status, body):
            agreed += 1
        elif csv and status == 200:
            out.append(ledger_rows(body))
        elif csv:
            aside.append(dumps(body, language) + b"\n")
        else:
            out.append(dumps(body, language) + b"\n")
    tables = rows.encode() if rows is not None else b""
    text, spooled = b"".join(out), ""
    if _worker.spool is not None and text:
        spooled = os.path.join(_worker.spool, str(first))
        with open(spooled, "wb") as spool:
            spool.write(text)
        text = b""
    return Chunk(text, b"".join(aside), len(lines), refused, agreed, tables, tuple(requests), spooled)


def _copy_spooled(path: str, out: BinaryIO) -> None:
    """A spooled chunk's text onto ``out``, copied by the kernel (the parent's share of a run with
    explained answers, some 10 KB a room, was mostly moving them: issue 56), and its file removed."""
    out.flush()
    with open(path, "rb") as spooled:
        size, sent = os.fstat(spooled.fileno()).st_size, 0
        try:
            while sent < size:
                sent += os.sendfile(out.fileno(), spooled.fileno(), sent, size - sent)
        except OSError:  # an output the kernel cannot splice to (EINVAL): the rest through Python
            spooled.seek(sent)
            shutil.copyfileobj(spooled, out)
    os.unlink(path)


def _spools(out: BinaryIO | None, jobs: int) -> bool:
    """Whether workers may spool their text for ``out``: several of them, and a file descriptor to copy to."""
    if out is None or jobs <= 1:
        return False
    try:
        out.fileno()
    except (AttributeError, OSError):  # io.UnsupportedOperation is an OSError
        return False
    return True


def numbered_chunks(lines: Iterable[bytes], size: int) -> Iterator[tuple[int, list[bytes]]]:
    """Lines ``size`` at a time, each chunk with its first line's number (from 1)."""
    remaining = iter(lines)
    first = 1
    while chunk := list(islice(remaining, size)):
        yield first, chunk
        first += len(chunk)


def run(
    name: str,
    source: Iterable[bytes],
    out: BinaryIO | None,
    jobs: int,
    progress: object = None,
    csv_aside: BinaryIO | None = None,
    language: Language = "en",
    defaults: dict[str, Any] | None = None,
    tables: Callable[[Chunk], None] | None = None,
) -> Summary:
    """Answer every line of ``source`` on ``out``; ``progress`` is a tqdm bar (or None) to advance.
    With ``csv_aside``, answers are ledger rows (the caller writes the header) and problems go there.
    With ``tables``, each chunk (its table rows included) goes to it too; ``out`` None writes nothing."""
    csv = csv_aside is not None
    format: Format = "none" if out is None else "csv" if csv else "json"
    prepare(name)
    started = time.perf_counter()
    lines = refused = agreed = 0
    size = _chunk_size(name, tables is not None, jobs)
    path = regular_path(source) if jobs > 1 else None  # workers read their own spans of a file
    chunks: Iterator[tuple[int, list[bytes]] | Span] = (
        spans(path, size, share=jobs) if path else numbered_chunks(lines_of(source), size)
    )
    if jobs > 1 and name == "verify" and tables is None:  # the engine's numpy (40 ms): once, inherited by the workers
        import service.bulk.engine  # noqa: F401
    spool = tempfile.mkdtemp(prefix="maubinh-spool-") if _spools(out, jobs) else None
    arguments = (name, format, language, defaults, tables is not None, spool)
    try:
        with mapped(_answer_chunk, chunks, jobs, _start_worker, arguments) as results:
            for chunk in results:
                if tables is not None:
                    tables(chunk)
                if out is not None and chunk.spooled:
                    _copy_spooled(chunk.spooled, out)
                elif out is not None:
                    out.write(chunk.text)
                    out.flush()
                if chunk.aside and csv_aside is not None:
                    csv_aside.write(chunk.aside)
                    csv_aside.flush()
                lines += chunk.lines
                refused += chunk.refused
                agreed += chunk.agreed
                if progress is not None:
                    progress.update(chunk.lines)  # type: ignore[attr-defined]
    finally:
        if spool is not None:
            shutil.rmtree(spool, ignore_errors=True)
    return Summary(lines, refused, time.perf_counter() - started, agreed)
