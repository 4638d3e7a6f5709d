"""Every case of ../shared/golden/public.jsonl, compared as its README says."""

from collections import Counter
from typing import Any

import pytest
from helpers import golden_cases, step_totals

from service.documents import score_document
from service.scoring import RoomRejected

CASES = golden_cases()


def _line_key(line: dict[str, Any]) -> tuple[Any, ...]:
    return (line["step"], line["payer"], line["payee"], line["units"], line.get("position"))


def test_all_64_golden_cases_are_here() -> None:
    assert len(CASES) == 64


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_golden_case(case: dict[str, Any]) -> None:
    expect = case["expect"]
    if "error" in expect:
        with pytest.raises(RoomRejected) as rejected:
            score_document(case["request"])
        reported = {fault.pointer for fault in rejected.value.faults}
        assert {f["pointer"] for f in expect["faults"]} <= reported
        return
    result = score_document(case["request"])
    stake = case["request"].get("stake", 1)
    for want, got in zip(expect["players"], result["players"], strict=True):
        assert got["id"] == want["id"]
        assert (got["units"], got["fouled"], got["aces"]) == (want["units"], want["fouled"], want["aces"]), want["id"]
        assert got["amount"] == got["units"] * stake
        got_win = got["instant_win"] and (got["instant_win"]["pattern"], got["instant_win"]["units"])
        want_win = want["instant_win"] and (want["instant_win"]["pattern"], want["instant_win"]["units"])
        assert got_win == want_win, want["id"]
    for line in result["ledger"]:
        assert line["amount"] == line["units"] * stake
    totals = step_totals(result)
    for player_id, steps in expect["step_totals"].items():
        for step, net in steps.items():
            assert totals[player_id][step] == net, (player_id, step)
    assert Counter(map(_line_key, result["ledger"])) == Counter(map(_line_key, expect["ledger"]))
