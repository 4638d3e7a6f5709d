"""Answers as table rows: the ledger as tables that DuckDB, pandas, Spark and BI tools read as they are.

One scored, verified or refused room gives rows of five tables (docs/audits.md, "The tables", documents
each column): ``rooms`` (one row a room), ``players``, ``ledger``, ``problems`` and, for verify,
``differences``. The command line writes them as Parquet (``--format parquet``) and the Spark job
(:mod:`service.bulk.spark`) writes the same rows, so the two agree table for table. Amounts are 64-bit
integers, never floats. Pure Python: pyarrow is imported only by :func:`arrow_schema`.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from service.game.hands import POSITIONS
from service.texts import Language, localize

if TYPE_CHECKING:
    import pyarrow as pa

COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "rooms": (
        ("line", "int64"),
        ("round_id", "string"),
        ("ruleset_id", "string"),
        ("ruleset_version", "string"),
        ("ruleset_digest", "string"),
        ("stake", "int64"),
        ("players", "int32"),
        ("refused", "string"),
        ("agrees", "bool"),
    ),
    "players": (
        ("line", "int64"),
        ("round_id", "string"),
        ("player", "string"),
        ("units", "int64"),
        ("amount", "int64"),
        ("fouled", "bool"),
        ("instant_win", "string"),
        ("aces", "int32"),
        ("status", "string"),
        ("declared", "bool"),
        ("back", "string"),
        ("middle", "string"),
        ("front", "string"),
    ),
    "ledger": (
        ("line", "int64"),
        ("round_id", "string"),
        ("seq", "int32"),
        ("step", "string"),
        ("payer", "string"),
        ("payee", "string"),
        ("units", "int64"),
        ("amount", "int64"),
        ("rule", "string"),
        ("position", "string"),
        ("explanation", "string"),
    ),
    "problems": (
        ("line", "int64"),
        ("round_id", "string"),
        ("pointer", "string"),
        ("code", "string"),
        ("message", "string"),
    ),
    "differences": (
        ("line", "int64"),
        ("round_id", "string"),
        ("kind", "string"),
        ("player", "string"),
        ("payer", "string"),
        ("payee", "string"),
        ("step", "string"),
        ("claimed", "int64"),
        ("computed", "int64"),
        ("difference", "int64"),
    ),
    "replayed": (
        ("line", "int64"),
        ("round_id", "string"),
        ("recorded", "string"),
        ("recorded_digest", "string"),
        ("candidate", "string"),
        ("candidate_digest", "string"),
        ("stake", "int64"),
        ("players", "int32"),
        ("outcome", "string"),
        ("code", "string"),
        ("moved", "int64"),
    ),
    "replayed_players": (
        ("line", "int64"),
        ("round_id", "string"),
        ("player", "string"),
        ("recorded", "int64"),
        ("candidate", "int64"),
        ("difference", "int64"),
    ),
    "replayed_steps": (
        ("line", "int64"),
        ("round_id", "string"),
        ("player", "string"),
        ("step", "string"),
        ("recorded", "int64"),
        ("candidate", "int64"),
        ("difference", "int64"),
    ),
}
"""Each table's columns and their Arrow types, in order."""

SCORE_TABLES = ("rooms", "players", "ledger", "problems")
VERIFY_TABLES = (*SCORE_TABLES, "differences")
REPLAY_TABLES = ("replayed", "replayed_players", "replayed_steps")
"""``maubinh replay``'s (:mod:`service.bulk.replay`)."""


def tables_for(operation: str) -> tuple[str, ...]:
    return {"verify": VERIFY_TABLES, "replay": REPLAY_TABLES}.get(operation, SCORE_TABLES)


def problem_code(body: dict[str, Any]) -> str:
    """A refusal's code: its problem type's last segment (``unprocessable-room``, ``bad-json`` …)."""
    return str(body.get("type", "")).rsplit("/", 1)[-1] or "refused"


LEDGER_FIELDS = ("seq", "step", "payer", "payee", "units", "amount", "rule", "position", "explanation")
"""The ledger table's columns that are the answer's ledger line's fields of the same name."""


class Rows:
    """Rows gathered column by column (one list a column), the answers of many rooms in input order;
    ``ends`` holds each table's row count after each room, so that a room's rows can be told apart
    (the Spark job's one list per room)."""

    def __init__(self, operation: str) -> None:
        self.operation = operation
        self.columns: dict[str, dict[str, list[Any]]] = {
            table: {name: [] for name, _ in COLUMNS[table]} for table in tables_for(operation)
        }
        self.ends: dict[str, list[int]] = {table: [] for table in self.columns}
        self._counts = dict.fromkeys(self.columns, 0)

    def add(
        self, line: int, round_id: str | None, status: int, body: dict[str, Any], language: Language = "en"
    ) -> None:
        """One answer's rows (``round_id``: the request's, for a refusal that cannot name it)."""
        body = localize(body, language)
        if status != 200:
            self._refused(line, round_id, body)
        elif self.operation == "verify":
            self._scored(line, body["result"], body["agrees"])
            self._differences(line, body["result"]["round_id"], body)
        else:
            self._scored(line, body, None)
        self.ended()

    def ended(self) -> None:
        """One room's rows are all added: each table's count so far marks where the next room's start."""
        for table, ends in self.ends.items():
            ends.append(self._counts[table])

    def extend(self, table: str, count: int, **values: list[Any]) -> None:
        """``count`` rows: each column's list of ``count`` values."""
        columns = self.columns[table]
        for name, column in values.items():
            columns[name].extend(column)
        self._counts[table] += count

    def _scored(self, line: int, result: dict[str, Any], agrees: bool | None) -> None:
        round_id, ruleset, players, ledger = result["round_id"], result["ruleset"], result["players"], result["ledger"]
        self.extend(
            "rooms", 1, line=[line], round_id=[round_id], ruleset_id=[ruleset["id"]],
            ruleset_version=[ruleset["version"]], ruleset_digest=[ruleset["digest"]], stake=[result["stake"]],
            players=[len(players)], refused=[None], agrees=[agrees],
        )  # fmt: skip
        n = len(players)
        self.extend(
            "players", n, line=[line] * n, round_id=[round_id] * n, player=[p["id"] for p in players],
            units=[p["units"] for p in players], amount=[p["amount"] for p in players],
            fouled=[p["fouled"] for p in players], aces=[p["aces"] for p in players],
            instant_win=[p["instant_win"] and p["instant_win"]["pattern"] for p in players],
            status=[p["status"] for p in players], declared=[p["declared"] for p in players],
            **{position: [_cards_of(p, position) for p in players] for position in POSITIONS},
        )  # fmt: skip
        n = len(ledger)
        fields = {name: [each[name] for each in ledger] for name in LEDGER_FIELDS}
        self.extend("ledger", n, line=[line] * n, round_id=[round_id] * n, **fields)

    def _differences(self, line: int, round_id: str | None, body: dict[str, Any]) -> None:
        rows = [
            ("player", p["id"], None, None, None, p["claimed"], p["computed"], p["difference"])
            for p in body["players"]
            if p["difference"]
        ]
        for kind, lines in (body.get("ledger") or {}).items():
            for each in lines:
                claimed, computed = each.get("claimed", 0), each.get("computed", 0)
                rows.append(
                    (kind, None, each["payer"], each["payee"], each["step"], claimed, computed, claimed - computed)
                )
        names = ("kind", "player", "payer", "payee", "step", "claimed", "computed", "difference")
        n = len(rows)
        columns = {name: [row[k] for row in rows] for k, name in enumerate(names)}
        self.extend("differences", n, line=[line] * n, round_id=[round_id] * n, **columns)

    def _refused(self, line: int, round_id: str | None, body: dict[str, Any]) -> None:
        code = problem_code(body)
        self.extend(
            "rooms", 1, line=[line], round_id=[round_id], ruleset_id=[None], ruleset_version=[None],
            ruleset_digest=[None], stake=[None], players=[None], refused=[code], agrees=[None],
        )  # fmt: skip
        faults = body.get("errors") or [{"pointer": "", "code": code, "message": body.get("detail", "")}]
        n = len(faults)
        self.extend(
            "problems", n, line=[line] * n, round_id=[round_id] * n, pointer=[f["pointer"] for f in faults],
            code=[f["code"] for f in faults], message=[f["message"] for f in faults],
        )  # fmt: skip

    def batch(self, table: str) -> pa.RecordBatch:
        import pyarrow as pa

        schema = arrow_schema(table)
        columns = self.columns[table]
        return pa.RecordBatch.from_arrays([pa.array(columns[f.name], f.type) for f in schema], schema=schema)

    def encode(self) -> bytes:
        """The rows as one Arrow IPC stream per table, each after its length: a worker's chunk, sent to
        the writing process in a few kilobytes, with no Python object per row on the way."""
        import pyarrow as pa

        out = []
        for table in self.columns:
            batch = self.batch(table)
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, batch.schema) as writer:
                writer.write_batch(batch)
            data = sink.getvalue().to_pybytes()
            out.append(len(data).to_bytes(8, "little") + data)
        return b"".join(out)

    def nested(self) -> pa.RecordBatch:
        """One row per room, one list column per table (its rows of that room): the Spark job's batch."""
        import pyarrow as pa

        arrays = []
        for table in self.columns:
            offsets = pa.array([0, *self.ends[table]], pa.int32())
            arrays.append(
                pa.ListArray.from_arrays(
                    offsets, pa.StructArray.from_arrays(self.batch(table).columns, fields=list(arrow_schema(table)))
                )
            )
        return pa.RecordBatch.from_arrays(arrays, names=list(self.columns))


def _cards_of(player: dict[str, Any], position: str) -> str | None:
    """A chi's cards as one text ("9S 9C 9H QS QH"), or None for a player scored without hands."""
    hands = player.get("hands")
    return " ".join(hands[position]["cards"]) if hands else None


ECHOED: Final = 128
"""The most characters of a refused line's round id echoed: a round id's most (the request schema's)."""
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def round_id_of(line: bytes) -> str | None:
    """A request line's ``round_id``, if it has one that reads as text: a refusal names it. It is the
    line of a refused request, so it is echoed as text can be written: at most :data:`ECHOED`
    characters (… after), and a lone surrogate (a ``\\ud800`` escape alone, no character, which no
    table, page or UTF-8 output can hold) as U+FFFD."""
    try:
        found = json.loads(line).get("round_id")
    except (ValueError, AttributeError, RecursionError):
        return None
    if not isinstance(found, str):
        return None
    cut = found[:ECHOED] + ("…" if len(found) > ECHOED else "")
    return _LONE_SURROGATE.sub("\ufffd", cut)


@cache
def arrow_schema(table: str) -> pa.Schema:
    import pyarrow as pa

    types = {"int64": pa.int64(), "int32": pa.int32(), "string": pa.string(), "bool": pa.bool_()}
    return pa.schema([(name, types[kind]) for name, kind in COLUMNS[table]])


def decode_rows(operation: str, encoded: bytes) -> dict[str, pa.RecordBatch]:
    import pyarrow as pa

    batches, at = {}, 0
    for table in tables_for(operation):
        size = int.from_bytes(encoded[at : at + 8], "little")
        batches[table] = pa.ipc.open_stream(encoded[at + 8 : at + 8 + size]).read_next_batch()
        at += 8 + size
    return batches
