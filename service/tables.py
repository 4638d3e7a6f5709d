"""Answers as table rows: the ledger as tables that DuckDB, pandas, Spark and BI tools read as they are.

One scored, verified or refused room gives rows of five tables (README, "Audits at scale", documents
each column): ``rooms`` (one row a room), ``players``, ``ledger``, ``problems`` and, for verify,
``differences``. The command line writes them as Parquet (``--format parquet``) and the Spark job
(:mod:`service.spark`) writes the same rows, so the two agree table for table. Amounts are 64-bit
integers, never floats. Pure Python: pyarrow is imported only by :func:`arrow_schema`.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

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
}
"""Each table's columns and their Arrow types, in order."""

SCORE_TABLES = ("rooms", "players", "ledger", "problems")
VERIFY_TABLES = (*SCORE_TABLES, "differences")

Rows = dict[str, list[dict[str, Any]]]


def tables_for(operation: str) -> tuple[str, ...]:
    return VERIFY_TABLES if operation == "verify" else SCORE_TABLES


def _problem_code(body: dict[str, Any]) -> str:
    """A refusal's code: its problem type's last segment (``unprocessable-room``, ``bad-json`` …)."""
    return str(body.get("type", "")).rsplit("/", 1)[-1] or "refused"


def _scored(line: int, result: dict[str, Any], rows: Rows, agrees: bool | None) -> None:
    round_id, ruleset = result["round_id"], result["ruleset"]
    rows["rooms"].append(
        {"line": line, "round_id": round_id, "ruleset_id": ruleset["id"], "ruleset_version": ruleset["version"],
         "ruleset_digest": ruleset["digest"], "stake": result["stake"], "players": len(result["players"]),
         "refused": None, "agrees": agrees}
    )  # fmt: skip
    for player in result["players"]:
        win = player["instant_win"]
        rows["players"].append(
            {"line": line, "round_id": round_id, "player": player["id"], "units": player["units"],
             "amount": player["amount"], "fouled": player["fouled"], "instant_win": win and win["pattern"],
             "aces": player["aces"]}
        )  # fmt: skip
    for each in result["ledger"]:
        rows["ledger"].append(
            {"line": line, "round_id": round_id, "seq": each["seq"], "step": each["step"], "payer": each["payer"],
             "payee": each["payee"], "units": each["units"], "amount": each["amount"], "rule": each["rule"],
             "position": each["position"], "explanation": each["explanation"]}
        )  # fmt: skip


def _differences(line: int, round_id: str | None, body: dict[str, Any], rows: Rows) -> None:
    base = {"line": line, "round_id": round_id, "player": None, "payer": None, "payee": None, "step": None}
    for player in body["players"]:
        if player["difference"]:
            rows["differences"].append(
                {**base, "kind": "player", "player": player["id"], "claimed": player["claimed"],
                 "computed": player["computed"], "difference": player["difference"]}
            )  # fmt: skip
    for kind, lines in (body.get("ledger") or {}).items():
        for each in lines:
            claimed, computed = each.get("claimed", 0), each.get("computed", 0)
            rows["differences"].append(
                {**base, "kind": kind, "payer": each["payer"], "payee": each["payee"], "step": each["step"],
                 "claimed": claimed, "computed": computed, "difference": claimed - computed}
            )  # fmt: skip


def _refused(line: int, round_id: str | None, body: dict[str, Any], rows: Rows) -> None:
    code = _problem_code(body)
    rows["rooms"].append(
        {"line": line, "round_id": round_id, "ruleset_id": None, "ruleset_version": None, "ruleset_digest": None,
         "stake": None, "players": None, "refused": code, "agrees": None}
    )  # fmt: skip
    faults = body.get("errors") or [{"pointer": "", "code": code, "message": body.get("detail", "")}]
    for fault in faults:
        rows["problems"].append(
            {"line": line, "round_id": round_id, "pointer": fault["pointer"], "code": fault["code"],
             "message": fault["message"]}
        )  # fmt: skip


def round_id_of(line: bytes) -> str | None:
    """A request line's ``round_id``, if it has one that reads as text: a refusal names it."""
    try:
        found = json.loads(line).get("round_id")
    except (ValueError, AttributeError, RecursionError):
        return None
    return found if isinstance(found, str) else None


def room_rows(
    operation: str, line: int, round_id: str | None, status: int, body: dict[str, Any], language: Language = "en"
) -> Rows:
    """The rows one answer gives (``round_id``: the request's, for a refusal that cannot name it)."""
    body = localize(body, language)
    rows: Rows = {name: [] for name in tables_for(operation)}
    if status != 200:
        _refused(line, round_id, body, rows)
    elif operation == "verify":
        _scored(line, body["result"], rows, body["agrees"])
        _differences(line, body["result"]["round_id"], body, rows)
    else:
        _scored(line, body, rows, None)
    return rows


def add_rows(into: Rows, rows: Rows) -> None:
    for name, more in rows.items():
        into.setdefault(name, []).extend(more)


@cache
def arrow_schema(table: str) -> pa.Schema:
    import pyarrow as pa

    types = {"int64": pa.int64(), "int32": pa.int32(), "string": pa.string(), "bool": pa.bool_()}
    return pa.schema([(name, types[kind]) for name, kind in COLUMNS[table]])


def encode_rows(operation: str, rows: Rows) -> bytes:
    """Rows as one Arrow IPC stream per table, concatenated with their lengths: a worker's chunk, sent
    to the writing process in a few kilobytes, with no Python object per row on the way."""
    import pyarrow as pa

    out = []
    for table in tables_for(operation):
        batch = pa.RecordBatch.from_pylist(rows.get(table, []), schema=arrow_schema(table))
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        data = sink.getvalue().to_pybytes()
        out.append(len(data).to_bytes(8, "little") + data)
    return b"".join(out)


def decode_rows(operation: str, encoded: bytes) -> dict[str, pa.RecordBatch]:
    import pyarrow as pa

    batches, at = {}, 0
    for table in tables_for(operation):
        size = int.from_bytes(encoded[at : at + 8], "little")
        batches[table] = pa.ipc.open_stream(encoded[at + 8 : at + 8 + size]).read_next_batch()
        at += 8 + size
    return batches
