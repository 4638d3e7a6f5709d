"""JSON lines in, JSON lines out: one answer per request line, in input order, over worker processes.

Lines go to the workers in chunks (fewer, larger messages between processes), and each chunk comes
back as its answers' bytes, so the parent only writes. ``jobs=1`` answers line by line in this
process, writing each answer as soon as it is made.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from service.documents import OPERATIONS, answer, settles
from service.rulesets.catalogue import RULESETS_DIR_ENV, Catalogue, catalogue_for
from service.serialize import dumps

CHUNK = 256
"""Lines per message to a worker: large enough that pickling is a small share of the work."""


@dataclass(frozen=True)
class Summary:
    lines: int
    refused: int
    seconds: float
    agreed: int = 0
    """For verify: the rooms whose claim agrees, which are counted and not written."""


_worker: tuple[str, Catalogue] | None = None


def _start_worker(name: str) -> None:
    global _worker  # noqa: PLW0603 - each worker process holds one operation and its catalogue
    _worker = (name, catalogue_for(os.environ.get(RULESETS_DIR_ENV) or None))


def _answer_chunk(lines: list[bytes]) -> tuple[bytes, int, int, int]:
    """(the answers' bytes, how many were refused, how many lines, how many settled claims agreed)
    for one chunk, in a worker. An agreeing verify answer is counted, not written."""
    assert _worker is not None
    name, catalogue = _worker
    out = []
    refused = agreed = 0
    for line in lines:
        status, body = answer(OPERATIONS[name], line, catalogue)
        refused += status != 200
        if settles(status, body):
            agreed += 1
            continue
        out.append(dumps(body) + b"\n")
    return b"".join(out), refused, len(lines), agreed


def _chunks(lines: Iterable[bytes], size: int) -> Iterator[list[bytes]]:
    chunk: list[bytes] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def cores() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def run(name: str, source: Iterable[bytes], out: BinaryIO, jobs: int, progress: object = None) -> Summary:
    """Answer every line of ``source`` on ``out``; ``progress`` is a tqdm bar (or None) to advance."""
    started = time.perf_counter()
    lines = refused = agreed = 0
    if jobs <= 1:
        _start_worker(name)
        results: Iterable[tuple[bytes, int, int, int]] = map(_answer_chunk, _chunks(source, 1))
        pool = None
    else:
        context = multiprocessing.get_context("fork")  # workers inherit the tables already built
        pool = context.Pool(jobs, initializer=_start_worker, initargs=(name,))
        results = pool.imap(_answer_chunk, _chunks(source, CHUNK))
    try:
        for text, chunk_refused, count, chunk_agreed in results:
            out.write(text)
            out.flush()
            lines += count
            refused += chunk_refused
            agreed += chunk_agreed
            if progress is not None:
                progress.update(count)  # type: ignore[attr-defined]
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return Summary(lines, refused, time.perf_counter() - started, agreed)
