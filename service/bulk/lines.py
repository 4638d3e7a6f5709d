"""Input lines, read with a cap on a line's length: the bulk commands' only way in.

A stream is read in blocks of :data:`BLOCK` bytes, never a whole line at once, so memory stays bounded
by the cap whatever the input: a line longer than the cap (a file with no newline at all, say) is read
past and not kept, and stands in the run as an :class:`Overlong`, which each command refuses by its
line number, as it refuses a line it cannot read. ``MAUBINH_MAX_LINE_BYTES`` sets the cap.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from service.texts import Text

MAX_LINE_ENV: Final = "MAUBINH_MAX_LINE_BYTES"
MAX_LINE_BYTES: Final = 1 << 20
"""A line's most bytes, its end aside, by default: 1 MiB, some 500 times a four-player claim with its
ledger (≈ 2 KB), and far below what one would cost (a 298 MB line took 4 GB to refuse)."""
BLOCK: Final = 1 << 16


class LineCapError(ValueError):
    """``MAUBINH_MAX_LINE_BYTES`` set to what is no cap: ``args[0]`` (a :class:`Text`) says so."""


class Overlong(bytes):
    """A line past the cap, in place of its bytes (it is empty): its ``length`` and the ``limit``."""

    length: int
    limit: int

    def __new__(cls, length: int, limit: int) -> Overlong:
        made = super().__new__(cls, b"")
        made.length, made.limit = length, limit
        return made

    def __reduce__(self) -> tuple[Any, ...]:  # to worker processes and back, whole
        return (Overlong, (self.length, self.limit))

    def problem(self, said: str = "problem.line_too_large_detail") -> dict[str, Any]:
        """The refusal it answers with: the payload-too-large problem, saying the cap and the setting;
        ``said`` is its detail's key (a line's, or a whole document's)."""
        from service.serialize import problem_json

        detail = Text(said, limit=self.limit, length=self.length, setting=MAX_LINE_ENV)
        return problem_json(413, Text("problem.too_large"), detail)


def max_line_bytes(env: Any = None) -> int:
    """The cap ``MAUBINH_MAX_LINE_BYTES`` sets (a whole number of bytes, at least 1), else the default;
    :class:`LineCapError` for a value that is neither."""
    raw = (os.environ if env is None else env).get(MAX_LINE_ENV, "").strip()
    if not raw:
        return MAX_LINE_BYTES
    if not raw.isdigit() or int(raw) < 1:
        raise LineCapError(Text("cli.bad_max_line", setting=MAX_LINE_ENV, given=raw[:40]))
    return int(raw)


def capped(stream: Any, limit: int | None = None, seen: Callable[[bytes], object] | None = None) -> Iterator[bytes]:
    """The lines of a binary ``stream``, each with its end as read, a line past ``limit`` bytes (its end
    aside) as an :class:`Overlong`; ``seen`` is given every block read (a hash of the whole input).
    Holds at most ``limit`` bytes of a line and a block, whatever the input."""
    limit = max_line_bytes() if limit is None else limit
    read = getattr(stream, "read1", None) or stream.read  # read1: what has arrived, so a pipe streams
    pending = bytearray()
    over = 0  # the length so far of a line past the cap, read past
    while block := read(BLOCK):
        if seen is not None:
            seen(block)
        start = 0
        while (end := block.find(b"\n", start)) >= 0:
            length = (over or len(pending)) + end - start
            if over or length > limit:
                yield Overlong(length, limit)
            elif pending:
                yield bytes(pending + block[start : end + 1])
            else:
                yield block[start : end + 1]
            over = 0
            pending.clear()
            start = end + 1
        rest = len(block) - start
        if over:
            over += rest
        elif len(pending) + rest > limit:
            over = len(pending) + rest
            pending.clear()
        else:
            pending += block[start:]
    if over:
        yield Overlong(over, limit)
    elif pending:
        yield bytes(pending)


def lines_of(source: Iterable[bytes]) -> Iterable[bytes]:
    """``source``'s lines, capped where it is a stream; an iterable of lines is taken as it is (its
    lines were cut already: a test's list, or :class:`service.bulk.audit_report.HashedLines`)."""
    return capped(source) if hasattr(source, "read") else source
