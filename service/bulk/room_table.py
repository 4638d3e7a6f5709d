"""The table of rooms: claims of amounts as one Parquet row a room, its cards as bytes, so that the bulk
engine reads whole columns at once and no Python object a room (docs/audits.md, "The table of rooms").

``maubinh rooms IN -o rooms.parquet`` writes it from verify's JSON lines (claims) or from the tables
of ``maubinh score --format parquet`` (:mod:`service.bulk.room_conversion`); :mod:`service.bulk.table_engine`
reads it, and :mod:`service.bulk.table_runs` answers ``verify --rooms`` and ``score --rooms``. A row
the engine does not settle is rebuilt as the request it stands for (:func:`request_of`) and answered by
the per-room path, which explains it, as ``verify --jsonl`` would.
"""

from __future__ import annotations

import errno
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.contract import STATUSES, Fault
from service.game.cards import CARD_TEXT
from service.support.regular_files import open_regular
from service.texts import Text

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

MOST_PLAYERS = 4
NOT_A_CARD = 0xFF
ROW_GROUP_ROOMS = 64 * 1024
"""Rooms a row group holds, and the engine reads at a time: its fixed costs shared by many rooms, its
memory (about 100 bytes a room in Arrow, a few times that in the engine's arrays) bounded."""


def schema() -> pa.Schema:
    """The table's columns (docs/audits.md, "The table of rooms", says what each holds): a row of fewer
    than four players pads its cards and status with 0xFF, its declare and claimed with 0."""
    import pyarrow as pa

    return pa.schema(
        [
            ("line", pa.int64()),
            ("round_id", pa.string()),
            ("ruleset", pa.string()),
            ("stake", pa.int64()),
            ("players", pa.int8()),
            ("ids", pa.list_(pa.string())),
            ("cards", pa.binary(13 * MOST_PLAYERS)),
            ("status", pa.binary(MOST_PLAYERS)),
            ("declare", pa.binary(MOST_PLAYERS)),
            ("claimed", pa.list_(pa.int64(), MOST_PLAYERS)),
        ]
    )


@dataclass
class _Rows:
    """Rows gathered a column at a time until a row group is written."""

    line: list[int] = field(default_factory=list)
    round_id: list[str | None] = field(default_factory=list)
    ruleset: list[str] = field(default_factory=list)
    stake: list[int] = field(default_factory=list)
    players: list[int] = field(default_factory=list)
    ids: list[list[str]] = field(default_factory=list)
    cards: list[bytes] = field(default_factory=list)
    status: list[bytes] = field(default_factory=list)
    declare: list[bytes] = field(default_factory=list)
    claimed: list[int] = field(default_factory=list)

    def batch(self) -> pa.RecordBatch:
        import pyarrow as pa

        made = schema()
        claimed = pa.FixedSizeListArray.from_arrays(pa.array(self.claimed, pa.int64()), MOST_PLAYERS)
        columns = [pa.array(getattr(self, f.name), f.type) for f in made if f.name != "claimed"]
        return pa.RecordBatch.from_arrays([*columns, claimed], schema=made)


def parquet_writer(path: str | Path, columns: pa.Schema) -> pq.ParquetWriter:
    """A Parquet file opened to be written; an OSError naming it where it cannot be (pyarrow's names none)."""
    import pyarrow.parquet as pq

    try:
        return pq.ParquetWriter(str(path), columns, compression="zstd")
    except OSError as error:
        raise OSError(error.errno or errno.EIO, error.strerror or str(error), str(path)) from None


class RoomTableWriter:
    """The table in a Parquet file, a row group at a time."""

    def __init__(self, path: str | Path) -> None:
        self._writer = parquet_writer(path, schema())
        self._rows = _Rows()

    def add(self, line: int, round_id: str | None, reference: str, stake: int, room: Any, amounts: list[int]) -> None:
        rows, size = self._rows, len(amounts)
        padding = MOST_PLAYERS - size
        rows.line.append(line)
        rows.round_id.append(round_id)
        rows.ruleset.append(reference)
        rows.stake.append(stake)
        rows.players.append(size)
        rows.ids.append(list(room.ids))
        rows.cards.append(room.cards + bytes([NOT_A_CARD]) * 13 * padding)
        rows.status.append(bytes(room.status) + bytes([NOT_A_CARD]) * padding)
        rows.declare.append(bytes(room.declare) + bytes(padding))
        rows.claimed += amounts + [0] * padding
        if len(rows.line) >= ROW_GROUP_ROOMS:
            self.flush()

    def flush(self) -> None:
        if self._rows.line:
            self._writer.write_batch(self._rows.batch(), row_group_size=ROW_GROUP_ROOMS)
        self._rows = _Rows()

    def close(self) -> None:
        self.flush()
        self._writer.close()


def row_refusal(row: dict[str, Any]) -> dict[str, Any] | None:
    """The refusal of a row that counts its players otherwise than its ids do (a table written by
    someone else: ``players`` null, or 127 beside 4 ids), else None. Its request holds a player an id,
    so the per-room path would answer its ids and never see the column; the row says two things, and
    which is meant is not ours to choose."""
    ids = row["ids"] or []
    if row["players"] == len(ids):
        return None
    from service.serialize import rejected_json

    said = Text("table.players_differ", players="null" if row["players"] is None else row["players"], ids=len(ids))
    return rejected_json([Fault("/players", said, "player_count")])


ROW_IDS_MOST = 64
ROW_TEXT_MOST = 4096
"""A row's most ids, and most characters in its round id, ruleset or any id, that are read into Python:
a room seats four, a round id holds 128 characters and an id 64, so past these a row is no room's."""


TEXT_COLUMNS = ("round_id", "ruleset", "ids")
"""The columns of text a row too large to read has emptied (:func:`emptied`)."""


def oversized(batch: pa.RecordBatch) -> dict[int, dict[str, Any]]:
    """The refusal of each row of ``batch`` (by its index) past :data:`ROW_IDS_MOST` ids or
    :data:`ROW_TEXT_MOST` characters in a text: refused unread, as a line past the cap is
    (payload-too-large). Read into Python, 3,000,000 ids in a row 3 KB on disk took 1.7 GB, and a round
    id of 300,000,000 characters 3 GB."""
    import numpy as np
    import pyarrow.compute as pc

    from service.serialize import problem_json

    ids = batch.column("ids")
    longest = np.zeros(batch.num_rows, dtype=np.int64)
    lengths = np.asarray(pc.utf8_length(pc.list_flatten(ids)).fill_null(0))
    np.maximum.at(longest, np.asarray(pc.list_parent_indices(ids)), lengths)
    sizes = {
        "ids": (np.asarray(pc.list_value_length(ids).fill_null(0)), ROW_IDS_MOST),
        "round_id": (np.asarray(pc.utf8_length(batch.column("round_id")).fill_null(0)), ROW_TEXT_MOST),
        "ruleset": (np.asarray(pc.utf8_length(batch.column("ruleset")).fill_null(0)), ROW_TEXT_MOST),
        "an id": (longest, ROW_TEXT_MOST),
    }
    refused: dict[int, dict[str, Any]] = {}
    for column, (size, most) in sizes.items():
        for k in np.flatnonzero(size > most).tolist():
            detail = Text("table.row_too_large", column=column, size=int(size[k]), most=most)
            refused.setdefault(k, problem_json(413, Text("problem.too_large"), detail))
    return refused


def emptied(batch: pa.RecordBatch, rows: Iterable[int]) -> pa.RecordBatch:
    """``batch`` with the texts of ``rows`` (:func:`oversized`'s) null: never read into Python, nor copied
    into an answer's table."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    mask = np.zeros(batch.num_rows, dtype=bool)
    mask[list(rows)] = True
    if not mask.any():
        return batch
    nulled = pa.array(mask)
    columns = [
        pc.if_else(nulled, pa.nulls(batch.num_rows, column.type), column) if name in TEXT_COLUMNS else column
        for name, column in zip(batch.schema.names, batch.columns, strict=True)
    ]
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def request_of(row: dict[str, Any]) -> dict[str, Any]:
    """A row as the verify request it stands for, for the per-room path to answer in words."""
    size = row["players"] or 0
    seats, statuses, declared = (row[name] or b"" for name in ("cards", "status", "declare"))
    players = []
    for k, who in enumerate(row["ids"] or []):
        cards = [CARD_TEXT[c] if c < 52 else f"#{c}" for c in seats[13 * k : 13 * k + 13]]
        player: dict[str, Any] = {"id": who, "back": cards[:5], "middle": cards[5:10], "front": cards[10:]}
        status = statuses[k] if k < len(statuses) else 0
        if status != 0:
            player["status"] = STATUSES[status] if status < len(STATUSES) else f"#{status}"
        if k < len(declared) and declared[k]:
            player["declare"] = True if declared[k] == 1 else declared[k]
        players.append(player)
    request: dict[str, Any] = {"ruleset": row["ruleset"], "stake": row["stake"]}
    if row["round_id"] is not None:
        request["round_id"] = row["round_id"]
    amounts = dict(zip(row["ids"] or [], (row["claimed"] or [])[:size], strict=False))
    return {**request, "players": players, "claimed": {"amounts": amounts}}


def batches(path: str | Path) -> Iterator[pa.RecordBatch]:
    """The table's rows a row group at a time, in its columns' types."""
    table = opened(path)
    for group in range(table.metadata.num_row_groups):
        yield from row_groups(table, [group])


def opened(path: str | Path) -> pq.ParquetFile:
    """The table opened once, its footer read once: each row group read from it (opening the file again
    for each, a footer that lists 10,000 groups was read 10,000 times: 4,000 rows of one a group took
    4 minutes)."""
    import pyarrow.parquet as pq

    return pq.ParquetFile(str(path))


def row_groups(table: pq.ParquetFile, groups: Sequence[int]) -> Iterator[pa.RecordBatch]:
    """The rows of consecutive row groups, at most :data:`ROW_GROUP_ROOMS` at a time however they were
    written (small groups read together, by one reader), in the table's types (:func:`in_types`)."""
    wanted = schema()
    batches = table.iter_batches(ROW_GROUP_ROOMS, row_groups=list(groups), columns=wanted.names)
    named = str(groups[0]) if len(groups) == 1 else f"{groups[0]}–{groups[-1]}"
    yield from in_types(batches, wanted, named)


def in_types(batches: Iterator[pa.RecordBatch], wanted: pa.Schema, group: int | str) -> Iterator[pa.RecordBatch]:
    """``batches`` (of row group ``group``) in ``wanted``'s types; :class:`NotATable` for a page that does
    not read, an integer its column's type cannot hold (a uint64 claim past 2^63 was wrapped to a negative
    one, and agreed), or text not UTF-8 (which Parquet's reader does not check)."""
    import pyarrow as pa

    try:
        for batch in batches:
            columns = []
            for field_ in wanted:
                try:
                    columns.append(batch.column(field_.name).cast(field_.type, safe=True))
                except pa.ArrowInvalid:
                    raise NotATable(Text("table.out_of_range", column=field_.name, type=str(field_.type))) from None
            read = pa.RecordBatch.from_arrays(columns, schema=wanted)
            for field_ in wanted:
                try:
                    read.column(field_.name).validate(full=True)
                except pa.ArrowInvalid:
                    raise NotATable(Text("table.not_utf8", column=field_.name, group=group)) from None
            yield read
    except (pa.ArrowException, OSError):  # a page that does not read: pyarrow's English stays out
        raise NotATable(Text("table.bad_group", group=group)) from None


def reads_as(given: pa.DataType, wanted: pa.DataType) -> bool:
    """Whether a column of type ``given`` reads as ``wanted``: any integers as integers (a value out of
    the table's range is refused as its row group is read, :func:`row_group`), any text as text, the bytes and
    fixed lists as they are."""
    import pyarrow as pa

    types = pa.types
    if types.is_integer(wanted):
        return bool(types.is_integer(given))
    if types.is_string(wanted):
        return bool(types.is_string(given) or types.is_large_string(given))
    if types.is_list(wanted):
        return bool((types.is_list(given) or types.is_large_list(given)) and reads_as(given.value_type, pa.string()))
    if types.is_fixed_size_list(wanted):
        return bool(
            types.is_fixed_size_list(given)
            and given.list_size == wanted.list_size
            and types.is_integer(given.value_type)
        )
    return bool(given == wanted)


class NotATable(ValueError):
    """A file that is not a table of rooms (or score's tables not in line order): its one argument, a
    Text, says what is wrong."""


PARQUET_MAGIC = b"PAR1"
PARQUET_LEAST = 12
"""A Parquet file opens and ends with "PAR1", its footer's length between: 12 bytes at the least."""


def checked(path: str | Path) -> int:
    """The number of row groups of a table of rooms, or :class:`NotATable`: not Parquet, a column
    missing, or one of a type that does not read as the table's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with open_regular(path) as file:  # a pipe is never waited on
        head, size = file.read(4), file.seek(0, 2)
        file.seek(max(size - 4, 0))
        tail = file.read(4)
    if size < PARQUET_LEAST:
        raise NotATable(Text("table.not_parquet", why=Text("table.too_short", size=size, least=PARQUET_LEAST)))
    if head != PARQUET_MAGIC or tail != PARQUET_MAGIC:
        raise NotATable(Text("table.not_parquet", why=Text("table.no_magic")))
    try:
        found = pq.ParquetFile(str(path))
    except (pa.ArrowException, OSError, ValueError):  # pyarrow's English (a thrift fault is an OSError) stays out
        raise NotATable(Text("table.not_parquet", why=Text("table.bad_footer"))) from None
    columns = found.schema_arrow
    for wanted in schema():
        if len(columns.get_all_field_indices(wanted.name)) > 1:
            raise NotATable(Text("table.column_twice", column=wanted.name))
        if wanted.name not in columns.names:
            raise NotATable(Text("table.no_column", column=wanted.name, type=str(wanted.type)))
        given = columns.field(wanted.name).type
        if not reads_as(given, wanted.type):
            raise NotATable(Text("table.column_type", column=wanted.name, found=str(given), type=str(wanted.type)))
    groups: int = found.metadata.num_row_groups
    return groups
