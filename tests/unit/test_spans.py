"""A file shared between workers as spans (issue 56): read span by span, its lines, their numbers and an
overlong line's refusal are those of one read from end to end, whatever the spans' size."""

from __future__ import annotations

import hashlib
import io
import itertools
import math
import os
import random
from pathlib import Path

import pytest

from service.bulk import spans
from service.bulk.lines import Overlong, capped


def _read(found: list[spans.Span]) -> tuple[list[bytes], list[spans.Span]]:
    """Each span's lines, one span after the other, each numbered after the lines before it."""
    read: list[bytes] = []
    for span in found:
        assert span.first == len(read) + 1, "each span's first line numbered after the lines before it"
        got = list(spans.span_lines(span))
        assert len(got) == span.lines
        read += got
    return read, found


def _read_by_spans(path: Path, lines: int, share: int = 1) -> tuple[list[bytes], list[spans.Span]]:
    return _read(list(spans.spans(str(path), lines, share=share)))


def _shape(lines: list[bytes]) -> list[tuple[str, bytes, int | None]]:
    return [(type(line).__name__, bytes(line), getattr(line, "length", None)) for line in lines]


@pytest.mark.parametrize("share", [1, 2, 3])
@pytest.mark.parametrize("ending", [b"\n", b"", b"\r\n"])
@pytest.mark.parametrize("lines", [1, 3, 50, 100_000])
def test_spans_read_as_the_whole_file_reads(tmp_path: Path, lines: int, ending: bytes, share: int) -> None:
    rng = random.Random(lines)
    body = [b"x" * rng.choice([0, 1, 5, 40, 300, 2_000]) + rng.choice([b"\n", b"\r\n"]) for _ in range(400)]
    text = b"".join(body).rstrip(b"\r\n") + (ending or b"tail")  # "tail": a last line without its end
    path = tmp_path / "lines.jsonl"
    path.write_bytes(text)
    whole = list(capped(io.BytesIO(text)))
    read, found = _read_by_spans(path, lines, share)
    assert _shape(read) == _shape(whole)
    assert sum(span.length for span in found) == len(text)
    if lines == 1:
        assert len(found) > 100, "spans of about one line: many of them"


def test_an_overlong_line_is_refused_alike_in_whatever_span_it_falls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAUBINH_MAX_LINE_BYTES", "1000")
    text = b"a\n" * 10 + b"b" * 5_000 + b"\n" + b"c\n" * 10 + b"d" * 3_000
    path = tmp_path / "lines.jsonl"
    path.write_bytes(text)
    read, _ = _read_by_spans(path, 2)
    assert _shape(read) == _shape(list(capped(io.BytesIO(text), 1_000)))
    assert [line.length for line in read if isinstance(line, Overlong)] == [5_000, 3_000]


def test_the_parent_sees_every_byte_once_in_order(tmp_path: Path) -> None:
    text = b"".join(b"%d\n" % k for k in range(300_000))
    path = tmp_path / "lines.jsonl"
    path.write_bytes(text)
    digest = hashlib.sha256()
    found = list(spans.spans(str(path), 1_000, seen=digest.update))
    assert digest.hexdigest() == hashlib.sha256(text).hexdigest()
    assert sum(span.lines for span in found) == 300_000
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert list(spans.spans(str(tmp_path / "empty.jsonl"), 10)) == []


def test_a_file_replaced_during_the_run_is_refused_not_read(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"a\nb\n")
    (span,) = spans.spans(str(path), 10)
    (tmp_path / "other.jsonl").write_bytes(b"z\nz\n")
    os.replace(tmp_path / "other.jsonl", path)
    with pytest.raises(spans.SpanMoved):
        list(spans.span_lines(span))


def test_a_file_rewritten_in_place_during_the_run_is_refused_not_read(tmp_path: Path) -> None:
    """The same inode and size, other bytes (``dd conv=notrunc``): the workers would check lines other than
    those the parent hashed for the report's inputs."""
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"a\nb\n")
    (span,) = spans.spans(str(path), 10)
    with open(path, "r+b") as file:
        file.write(b"z")
    os.utime(path, ns=(span.identity[3], span.identity[3]))  # even with its modification time put back
    with pytest.raises(spans.SpanMoved):
        list(spans.span_lines(span))


def test_only_a_regular_file_read_from_its_start_is_shared_as_spans(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"a\nb\n")
    with open(path, "rb") as source:
        assert spans.regular_path(source) == f"/dev/fd/{source.fileno()}"
        source.read(1)
        assert spans.regular_path(source) is None, "already read: the rest is not the file"
    reading, writing = os.pipe()
    with os.fdopen(reading, "rb") as pipe, os.fdopen(writing, "wb"):
        assert spans.regular_path(pipe) is None
    assert spans.regular_path([b"a\n"]) is None
    assert spans.regular_path(io.BytesIO(b"a\n")) is None


@pytest.mark.parametrize("share", [2, 3])
def test_spans_shrink_toward_the_end_so_that_workers_end_together(tmp_path: Path, share: int) -> None:
    """13 chunks of 8,192 lines gave one of two workers 7 and the other 6, its last a small one; and with
    equal spans a worker that fell behind at the start (the parent reads beside it) stayed behind to
    the end, the other idle a fifth of a span (issue 56)."""
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"".join(b'{"room": %06d}\n' % k for k in range(100_000)))
    found = [span.lines for span in spans.spans(str(path), 8_192, share=share)]
    assert sum(found) == 100_000 and max(found) <= 8_192
    assert all(later <= earlier + 1 for earlier, later in itertools.pairwise(found)), "never growing"
    first = found[0]
    assert first >= 100_000 / (math.ceil(100_000 / 8_192 / share) * share) - 1, "as few full spans as fit"
    assert found.count(first) + found.count(first - 1) + found.count(first + 1) >= 100_000 / first / 2
    assert all(lines <= first // spans.TAPER + 1 for lines in found[-share:]), "the last a quarter of the rest"


def _read_by_blocks(path: Path, block: int) -> tuple[list[bytes], list[spans.Span]]:
    """The file as the Spark job reads it: blocks scanned for their newlines on their own, then spans."""
    size = path.stat().st_size
    counted = [
        (start, spans.block_lines(str(path), start, min(size, start + block))) for start in range(0, size, block)
    ]
    return _read(spans.block_spans(str(path), spans.shared_identity(path.stat()), counted))


@pytest.mark.parametrize("block", [1, 2, 7, 100, 4_096, 1 << 20])
@pytest.mark.parametrize("ending", [b"\n", b"", b"\n\n"])
def test_blocks_scanned_apart_read_as_the_whole_file_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int, ending: bytes
) -> None:
    """Spark's executors each count a block's newlines, and the driver makes spans of them (the job's
    folder is not read on the driver): a span begins after a block's first newline, a block inside a
    long line holds none, and every line is numbered as one read from end to end numbers it."""
    monkeypatch.setenv("MAUBINH_MAX_LINE_BYTES", "3000")
    rng = random.Random(block)
    body = [
        b"x" * rng.choice([0, 1, 5, 40, 300, 2_000, 9_000]) + rng.choice([b"\n", b"\r\n", b"\n\n"]) for _ in range(300)
    ]
    text = b"".join(body).rstrip(b"\r\n") + (ending or b"tail")
    path = tmp_path / "lines.jsonl"
    path.write_bytes(text)
    read, found = _read_by_blocks(path, block)
    assert _shape(read) == _shape(list(capped(io.BytesIO(text), 3000)))
    assert sum(span.length for span in found) == len(text) and found[0].offset == 0
    assert all(a.offset + a.length == b.offset for a, b in itertools.pairwise(found)), "spans end to end"


def test_an_empty_file_has_no_block_and_no_span(tmp_path: Path) -> None:
    """Before, an empty file (an hour without traffic) ended the Spark job on its driver."""
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert _read_by_blocks(tmp_path / "empty.jsonl", 100) == ([], [])


def test_a_file_changed_after_its_blocks_were_scanned_is_not_read_as_the_same(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"a\nb\n")
    (span,) = _read_by_blocks(path, 1 << 20)[1]
    path.write_bytes(b"a\nbc\n")
    with pytest.raises(spans.SpanMoved):
        list(spans.span_lines(span))
