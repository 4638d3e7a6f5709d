"""A score answer's ledger as CSV rows (RFC 4180: CRLF line ends, quotes where needed, UTF-8), for
the command line's ``--format csv``: one row per ledger line, the columns an auditor sorts by."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

COLUMNS = ("round_id", "seq", "step", "payer", "payee", "position", "units", "amount", "rule")


def _csv(rows: Iterable[Iterable[object]]) -> bytes:
    text = io.StringIO()
    csv.writer(text, lineterminator="\r\n").writerows(rows)
    return text.getvalue().encode("utf-8")


def header() -> bytes:
    return _csv([COLUMNS])


def ledger_rows(answer: dict[str, Any]) -> bytes:
    """The rows of one ``POST /v1/score`` answer; a room without a round id has an empty first column."""
    round_id = answer.get("round_id") or ""
    return _csv(
        (round_id, line["seq"], line["step"], line["payer"], line["payee"], line["position"] or "", line["units"],
         line["amount"], line["rule"])
        for line in answer["ledger"]
    )  # fmt: skip
