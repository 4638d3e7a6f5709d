"""No CSV text cell starts a formula however it is indented (issue 52, second round): a spreadsheet
skips the spaces and line feeds before ``=``, ``+``, ``-`` or ``@`` and runs what follows."""

from __future__ import annotations

import csv
import io
import json

import pytest
from helpers import golden_cases

from service import documents
from service.bulk import spreadsheet

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
STARTS = ["\n=1+1", "  =1+1", " +1", "\u00a0@SUM(A1)", "\r\n-1", "\t =x", " \n=HYPERLINK(x)", "\u3000=1", "\n"]
"""Cell starts a spreadsheet may take for a formula once it skips the blanks before it."""


def dangerous(cell: str) -> bool:
    """What a spreadsheet would run, or read as a control: a formula start after any blanks, or a
    control character first."""
    return cell.lstrip().startswith(("=", "+", "-", "@")) or cell.startswith(("\t", "\r", "\n"))


def rows_of(start: str, language: str) -> list[list[str]]:
    labels = {"back": start + "b", "middle": start + "m", "front": start + "f"}
    room = {**E1, "round_id": start + "r", "ruleset": {"base": "maubinh-2020", "patch": {"labels": labels}}}
    status, answer = documents.answer(documents.score_document, json.dumps(room).encode(), language=language)
    assert status == 200, answer
    return list(csv.reader(io.StringIO(spreadsheet.ledger_rows(answer).decode(), newline="")))


@pytest.mark.parametrize("language", ["en", "vi"])
def test_no_cell_starts_a_formula_after_blanks_or_a_line_feed(language: str) -> None:
    """Before: 28 cells in 28 rows of these rooms in English (the round id of every row), 49 in 28 rows in
    Vietnamese (and the house's label opening each chi's explanation) reached a spreadsheet unescaped."""
    bad, rows, ids = 0, set(), []
    for start in STARTS:
        for k, row in enumerate(rows_of(start, language)):
            text = [cell for column, cell in enumerate(row) if column not in (1, 6, 7)]  # seq, units, amount
            found = [cell for cell in text if dangerous(cell)]
            bad += len(found)
            rows |= {(start, k)} if found else set()
            ids.append((row[0], "'" + start + "r"))
    assert bad == 0, f"{bad} cells in {len(rows)} rows start a formula"
    assert all(cell == kept for cell, kept in ids)  # the round id kept whole behind its quote


def test_a_plain_cell_is_left_as_it_is() -> None:
    assert spreadsheet._text("table 7 = round 3") == "table 7 = round 3"
    assert spreadsheet._text(" 7") == " 7"
