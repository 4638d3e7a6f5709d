"""A score answer's ledger as CSV rows (RFC 4180: CRLF line ends, UTF-8), for the command line's
``--format csv``: one row per ledger line, the columns an auditor sorts by, and the line's explanation
in the language asked for.

Every text cell is escaped as OWASP's "CSV Injection" page recommends: quoted, its quotes doubled, and
prefixed with ``'`` when it starts as a formula would. A caller's words reach several columns (a
round id, player ids, a house rule's labels inside the explanation), in either language.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

COLUMNS = (
    *("round_id", "seq", "step", "payer", "payee", "position", "units", "amount", "rule", "explanation"),
    "rule_text",
)
"""rule_text, the rule in the language asked, came last: columns read by position keep their place."""


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
"""A cell a spreadsheet would run as a formula starts so (OWASP's CSV injection), or with blanks before
one of the first four: a spreadsheet skips spaces and line feeds before a formula."""


def _text(value: str) -> str:
    """A text cell that stays text: a formula start, after any blanks (every Unicode space, a line feed),
    is escaped with a leading quote."""
    return "'" + value if value.startswith(FORMULA_STARTS) or value.lstrip().startswith(FORMULA_STARTS[:4]) else value


def _csv(rows: Iterable[Iterable[object]]) -> bytes:
    """Text cells quoted (the writer doubles their quotes), numbers not: a cell split at a ``;`` by a
    spreadsheet that reads ``;`` as the separator cannot start a formula either."""
    text = io.StringIO()
    csv.writer(text, lineterminator="\r\n", quoting=csv.QUOTE_NONNUMERIC).writerows(rows)
    return text.getvalue().encode("utf-8")


def header() -> bytes:
    return _csv([COLUMNS])


def ledger_rows(answer: dict[str, Any]) -> bytes:
    """The rows of one ``POST /v1/score`` answer; a room without a round id has an empty first column."""
    round_id = _text(answer.get("round_id") or "")
    return _csv(
        (round_id, line["seq"], _text(line["step"]), _text(line["payer"]), _text(line["payee"]),
         _text(line["position"] or ""), line["units"], line["amount"], _text(line["rule"]), _text(line["explanation"]),
         _text(line["rule_text"]))
        for line in answer["ledger"]
    )  # fmt: skip
