"""A regular file's lines shared between workers as spans, which each worker reads itself.

With ``--jobs`` the parent used to read every line and send it down the pool's pipe, pickled, to be
read again by a worker: per line, the Python of the parent's one core, while the workers waited on it
(issue 56). A span is where a run of whole lines lies in the file and what number its first line has:
the parent finds spans in blocks, counting their newlines in C, and each worker reads its span's lines
through the same capped reader (:func:`service.bulk.lines.capped`), so the lines, their numbers and
an overlong line's refusal are those of a read from end to end.
"""

from __future__ import annotations

import errno
import math
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from service.bulk.lines import capped
from service.support.regular_files import open_regular

BLOCK = 1 << 20
"""The parent's reads: a span ends at the last newline of the block that brings it to its size."""
SAMPLE = 1 << 16
"""The first bytes, whose mean line length turns a span's lines into its bytes."""
TAPER = 4
"""The last spans shrink to a ``TAPER``-th of the others, so that workers end together (issue 56)."""


class SpanMoved(OSError):
    """The file a span names is no longer the one the parent read (replaced during the run)."""


@dataclass(frozen=True)
class Span:
    """Lines ``first`` to ``first + lines - 1`` of ``path``: ``length`` bytes from ``offset``."""

    path: str
    identity: tuple[int, ...]
    """The file as the parent read it: its device, inode, size and times of change, so that a worker finds
    it rewritten in place (the same inode: what the parent hashed for the report is then not what the
    worker reads) as well as replaced."""
    first: int
    offset: int
    length: int
    lines: int
    shared: bool = False
    """Whether ``identity`` is :func:`shared_identity`'s (a file read by other hosts: Spark's executors)."""


def regular_path(stream: Any) -> str | None:
    """A path a worker can open to read what ``stream`` reads, where that is a regular file read from
    its start; None for a pipe, a terminal, a stream already read or one without a descriptor."""
    try:
        descriptor = stream.fileno()
        if not stat.S_ISREG(os.fstat(descriptor).st_mode) or stream.tell() != 0:
            return None
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None
    return f"/dev/fd/{descriptor}"  # the workers are forked after it was opened: they hold the descriptor


def file_identity(status: os.stat_result) -> tuple[int, ...]:
    """A file as one host sees it: its device, inode, size and times of change."""
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns


def unchanged(path: str, identity: tuple[int, ...], descriptor: int, shared: bool = False) -> None:
    """:class:`SpanMoved` if the file open at ``descriptor`` is not as ``identity`` says ``path`` was
    first read (:func:`shared_identity`'s where ``shared``, else :func:`file_identity`'s)."""
    if (shared_identity if shared else file_identity)(os.fstat(descriptor)) != identity:
        raise SpanMoved(errno.ESTALE, "the file was changed or replaced while it was being read", path)


def shared_identity(status: os.stat_result) -> tuple[int, ...]:
    """A file as every host reading it from a shared mount sees it: its size and time of change (its
    device and inode numbers are one host's)."""
    return status.st_size, status.st_mtime_ns


def block_lines(path: str, start: int, end: int) -> tuple[int, int | None, bool]:
    """Bytes ``start`` to ``end`` of ``path``: how many newlines they hold, where the line after the first
    of them begins (the file's first line in its first block; None where none begins among them: a long
    line runs through), and whether they end a line. With every block's, the spans of a file that no one
    reader scans whole (:func:`block_spans`: Spark's executors each scan a block)."""
    with open_regular(path) as source:
        descriptor = source.fileno()
        first = 0 if start == 0 else None  # else the line after the block's first newline
        count, at, ended = 0, start, True
        while at < end and (block := os.pread(descriptor, min(BLOCK, end - at), at)):
            if first is None and (newline := block.find(b"\n")) >= 0:
                first = at + newline + 1
            count += block.count(b"\n")
            at, ended = at + len(block), block.endswith(b"\n")
    return count, first if first is not None and first < end else None, ended


def block_spans(
    path: str, identity: tuple[int, ...], blocks: list[tuple[int, tuple[int, int | None, bool]]]
) -> list[Span]:
    """``path``'s spans (``identity``: :func:`shared_identity`'s) from each block's start and
    :func:`block_lines`, in order: a span runs from where its block's line begins to where the next
    block's does, its first line numbered by the newlines before it."""
    starts: list[tuple[int, int]] = []  # where a span begins, and the newlines before it
    before = 0
    for start, (newlines, first, _) in blocks:
        if first is not None:
            starts.append((first, before + (first > start)))
        before += newlines
    if not starts:  # an empty file: no block, no line
        return []
    unended = bool(blocks) and not blocks[-1][1][2]  # a last line without its newline is a line too
    ends = [*starts[1:], (identity[0], before + unended)]
    return [
        Span(path, identity, counted + 1, offset, end - offset, lines - counted, shared=True)
        for (offset, counted), (end, lines) in zip(starts, ends, strict=True)
    ]


def spans(
    path: str, lines: int, seen: Callable[[bytes], object] | None = None, most: int = 1 << 24, share: int = 1
) -> Iterator[Span]:
    """``path`` in spans of about ``lines`` lines at most (by the mean length of its first lines) and
    ``most`` bytes, sized for ``share`` workers: equal spans while much is left, then ever smaller ones
    (each a ``2 * share``-th of what is left, down to a :data:`TAPER`-th), so that a worker that fell
    behind takes fewer of the last and none waits long on another's; ``seen`` is given every byte
    once, in order (a hash of the input)."""
    with open(path, "rb") as source:
        status = os.fstat(source.fileno())
        identity = file_identity(status)
        sample = os.pread(source.fileno(), SAMPLE, 0)
        size = max(1, min(most, lines * len(sample) // max(1, sample.count(b"\n"))))
        count = math.ceil(math.ceil(status.st_size / size) / share) * share
        size = max(1, math.ceil(status.st_size / max(1, count)))
        first, start, counted = 1, 0, 0  # the span being found: from start, its newlines so far
        end, boundary = 0, size  # where the block read ends; the span ends at the first line end past boundary
        ended = True  # whether the bytes read so far end a line
        while block := source.read(BLOCK):
            if seen is not None:
                seen(block)
            offset, end, at = end, end + len(block), 0  # at: where the block's newlines are yet to count
            while boundary < end and (newline := block.find(b"\n", max(at, boundary - offset))) >= 0:
                counted += block.count(b"\n", at, newline + 1)
                at = newline + 1
                yield Span(path, identity, first, start, offset + at - start, counted)
                first, start, counted = first + counted, offset + at, 0
                step = max(size // TAPER, min(size, (status.st_size - start) // (2 * share)))
                boundary = start + max(1, step)
            counted += block.count(b"\n", at)
            ended = block.endswith(b"\n")
        if end > start:  # the last span; its last line may lack a newline
            yield Span(path, identity, first, start, end - start, counted + (not ended))


class _Reader:
    """A span's bytes as a stream, read in blocks from an open descriptor."""

    def __init__(self, descriptor: int, offset: int, length: int) -> None:
        self.descriptor, self.position, self.end = descriptor, offset, offset + length

    def read(self, size: int) -> bytes:
        block = os.pread(self.descriptor, min(size, self.end - self.position), self.position)
        self.position += len(block)
        return block


def span_lines(span: Span) -> Iterator[bytes]:
    """A span's lines as :func:`service.bulk.lines.capped` reads them, one at a time (a span of blank lines
    is millions of them); :class:`SpanMoved` if its file was replaced since the parent read it."""
    descriptor = os.open(span.path, os.O_RDONLY)
    try:
        unchanged(span.path, span.identity, descriptor, span.shared)
        yield from capped(_Reader(descriptor, span.offset, span.length))
    finally:
        os.close(descriptor)
