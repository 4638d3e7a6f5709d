"""``maubinh verify --rooms`` and ``maubinh score --rooms``: the table of rooms a row group at a time over
worker processes, the engine (:mod:`service.bulk.table_engine`) first, the per-room path for every
row it does not settle or find agreeing, the answers in the table's order."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from service.bulk.room_table import (
    MOST_PLAYERS,
    ROW_GROUP_ROOMS,
    checked,
    emptied,
    opened,
    oversized,
    parquet_writer,
    request_of,
    row_groups,
    row_refusal,
)
from service.bulk.room_table import schema as room_table_schema
from service.bulk.table_engine import agreeing, resolved, settled
from service.bulk.workers import mapped
from service.rulesets import Ruleset
from service.rulesets.catalogue import Catalogue
from service.support.regular_files import remove_half_written
from service.texts import Language

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from service.bulk.jsonl import Summary


@dataclass
class _Checking:
    table: pq.ParquetFile
    catalogue: Catalogue
    language: Language
    rulesets: dict[str, Ruleset | None] = field(default_factory=dict)


_checking: _Checking | None = None


def _start_checking(path: str, catalogue: Catalogue, language: Language) -> None:
    global _checking  # noqa: PLW0603 - one per worker process
    _checking = _Checking(opened(path), catalogue, language)


Share = tuple[int, ...]
"""Consecutive row groups a worker reads together: one, or small ones up to :data:`ROW_GROUP_ROOMS` rows."""


def shares(path: str | Path) -> list[Share]:
    """The table's row groups as the workers' shares: a group of 1 row is as much work for the engine as
    one of 65,536 (its arrays' fixed cost), so small groups go together (1,000 groups of a row took 4.8 s
    one at a time)."""
    metadata = opened(path).metadata
    found: list[Share] = []
    share: list[int] = []
    rows = 0
    for group in range(metadata.num_row_groups):
        size = metadata.row_group(group).num_rows
        if share and rows + size > ROW_GROUP_ROOMS:
            found.append(tuple(share))
            share, rows = [], 0
        share.append(group)
        rows += size
    return [*found, tuple(share)] if share else found


def _batches(share: Share) -> Iterator[tuple[pa.RecordBatch, dict[int, dict[str, Any]]]]:
    """The share's rows a batch at a time, their rulesets resolved, with the refusal of each row past
    a row's bounds: such rows are refused unread, their texts null, and the engine takes none of them."""
    assert _checking is not None
    for read in row_groups(_checking.table, share):
        too_large = oversized(read)
        batch = emptied(read, too_large)
        resolved(batch, _checking.catalogue, _checking.rulesets)
        yield batch, too_large


def _check_group(group: Share) -> tuple[bytes, int, int, int]:
    """One share of row groups checked, in a worker: what to write (each answer the per-room path gives for a row
    the engine does not find agreeing, unless that agrees), and its rows, agreed and refused."""
    import numpy as np
    import pyarrow as pa

    from service.bulk.jsonl import answer_line, traced
    from service.documents import OPERATIONS
    from service.scoring.claims import settles
    from service.serialize import dumps

    assert _checking is not None
    out: list[bytes] = []
    lines = refused = agreed = 0
    for batch, too_large in _batches(group):
        agrees = agreeing(batch, _checking.rulesets)
        lines += batch.num_rows
        agreed += int(agrees.sum())
        readable = ~agrees
        readable[list(too_large)] = False
        rows = iter(batch.filter(pa.array(readable)).to_pylist())
        for k in np.flatnonzero(~agrees).tolist():
            if k in too_large:
                refused += 1
                line = batch.column("line")[k].as_py()
                out.append(dumps(traced(line, b"{}", 413, too_large[k]), _checking.language) + b"\n")
                continue
            row = next(rows)
            text = json.dumps(request_of(row), ensure_ascii=False).encode()  # a refusal names its round from it
            refusal = row_refusal(row)
            status, body = (
                (422, refusal)
                if refusal is not None
                else answer_line(OPERATIONS["verify"], text, _checking.catalogue, {}, _checking.language)
            )
            refused += status != 200
            if settles(status, body):
                agreed += 1
                continue
            out.append(dumps(traced(row["line"], text, status, body), _checking.language) + b"\n")
    return b"".join(out), lines, agreed, refused


def verify(path: str | Path, catalogue: Catalogue, out: BinaryIO, language: Language = "en", jobs: int = 1) -> Summary:
    """``maubinh verify --rooms``: the table checked by the engine a row group at a time (``jobs``
    worker processes sharing the row groups); each row it does not find agreeing answered by the
    per-room path and, unless that agrees, written as ``verify --jsonl`` writes a line's answer (with
    its ``line`` and ``round_id``), in the table's order."""

    from service.bulk.jsonl import Summary

    started = time.perf_counter()
    checked(path)
    groups = shares(path)
    lines = refused = agreed = 0
    workers = min(jobs, len(groups))
    with mapped(_check_group, groups, workers, _start_checking, (str(path), catalogue, language)) as results:
        for text, rows, agreeing_rows, refused_rows in results:
            out.write(text)
            out.flush()
            lines += rows
            agreed += agreeing_rows
            refused += refused_rows
    return Summary(lines, refused, time.perf_counter() - started, agreed)


def amounts_schema() -> pa.Schema:
    """``maubinh score --rooms``' table: each room's units and amounts by player (0 past its players),
    the digest of the ruleset that settled it, or the code it was refused with."""
    import pyarrow as pa

    rooms = room_table_schema()  # the columns that name a room, as the table of rooms has them
    return pa.schema(
        [
            *(rooms.field(name) for name in ("line", "round_id", "ruleset")),
            ("ruleset_digest", pa.string()),
            *(rooms.field(name) for name in ("stake", "players", "ids")),
            ("units", pa.list_(pa.int64(), MOST_PLAYERS)),
            ("amounts", pa.list_(pa.int64(), MOST_PLAYERS)),
            ("refused", pa.string()),
        ]
    )


def _score_group(group: Share) -> bytes:
    """One share of row groups scored without explanations, in a worker: the engine's units where it settles a
    row, the per-room path's (or its refusal's code) where it does not; the rows as an Arrow IPC stream."""
    import numpy as np
    import pyarrow as pa

    from service.bulk.replay import answered, refusal_code

    assert _checking is not None
    out = pa.BufferOutputStream()
    with pa.ipc.new_stream(out, amounts_schema()) as writer:
        for batch, too_large in _batches(group):
            units, done = settled(batch, _checking.rulesets)
            stake = batch.column("stake").fill_null(0).to_numpy()
            refs = batch.column("ruleset").to_pylist()
            digests = [r.digest if (r := _checking.rulesets.get(ref or "")) else None for ref in refs]
            refused: list[str | None] = [None] * batch.num_rows
            amounts = units * stake[:, None]
            for k in np.flatnonzero(~done).tolist():
                if k in too_large:
                    refused[k], digests[k] = refusal_code(too_large[k]), None
                    units[k] = amounts[k] = 0
                    continue
                row = batch.slice(k, 1).to_pylist()[0]
                request = {key: value for key, value in request_of(row).items() if key != "claimed"}
                refusal = row_refusal(row)
                status, body = (
                    (422, refusal)
                    if refusal is not None
                    else answered("score", request, _checking.catalogue, _checking.language)
                )
                if status != 200:
                    refused[k], digests[k] = refusal_code(body), None
                    units[k] = amounts[k] = 0
                    continue
                seated = [(p["units"], p["amount"]) for p in body["players"]]
                units[k] = [u for u, _ in seated] + [0] * (MOST_PLAYERS - len(seated))
                amounts[k] = [a for _, a in seated] + [0] * (MOST_PLAYERS - len(seated))
                digests[k] = body["ruleset"]["digest"]
            columns = [batch.column(name) for name in ("line", "round_id", "ruleset")]
            made = amounts_schema()
            writer.write_batch(
                pa.RecordBatch.from_arrays(
                    [
                        *columns,
                        pa.array(digests, pa.string()),
                        *(batch.column(name) for name in ("stake", "players", "ids")),
                        pa.FixedSizeListArray.from_arrays(pa.array(units.ravel(), pa.int64()), MOST_PLAYERS),
                        pa.FixedSizeListArray.from_arrays(pa.array(amounts.ravel(), pa.int64()), MOST_PLAYERS),
                        pa.array(refused, pa.string()),
                    ],
                    schema=made,
                )
            )
    encoded: bytes = out.getvalue().to_pybytes()
    return encoded


def score(
    path: str | Path, catalogue: Catalogue, target: str | Path, language: Language = "en", jobs: int = 1
) -> tuple[int, int]:
    """``maubinh score --rooms``: every room of the table settled without explanations (amounts only)
    into the Parquet file ``target``, a row group at a time over ``jobs`` workers. Returns the rooms
    and how many were refused."""
    import pyarrow as pa

    checked(path)
    groups = shares(path)
    rooms = refused = 0
    workers = min(jobs, len(groups))
    with mapped(_score_group, groups, workers, _start_checking, (str(path), catalogue, language)) as results:
        writer = parquet_writer(target, amounts_schema())
        try:
            with writer:
                for encoded in results:
                    table = pa.ipc.open_stream(encoded).read_all()
                    writer.write_table(table, row_group_size=ROW_GROUP_ROOMS)
                    rooms += table.num_rows
                    refused += table.num_rows - table.column("refused").null_count
        except BaseException:  # a row group found bad after others were written: half a table is not one
            remove_half_written(target)
            raise
    return rooms, refused
