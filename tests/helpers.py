"""Compact room builders for hand-worked tests: ``seat("P", "AS AD 7C 7D 2H | KS KH 9H 5D 3S | QH JD 4C")``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from service.documents import score_document

GOLDEN = Path(__file__).resolve().parents[2] / "shared" / "golden" / "public.jsonl"


def seat(player_id: str, hands: str | None = None, **extra: Any) -> dict[str, Any]:
    """A player entry; ``hands`` is 'back | middle | front', or 13 cards for ``cards``."""
    entry: dict[str, Any] = {"id": player_id, **extra}
    if hands is not None:
        parts = [p.split() for p in hands.split("|")]
        if len(parts) == 3:
            entry.update(back=parts[0], middle=parts[1], front=parts[2])
        else:
            entry["cards"] = parts[0]
    return entry


def room(ruleset: str, *players: dict[str, Any], stake: int = 1, **extra: Any) -> dict[str, Any]:
    return {"ruleset": ruleset, "stake": stake, "players": list(players), **extra}


def scored(request: dict[str, Any]) -> dict[str, Any]:
    return score_document(request)


def units(result: dict[str, Any]) -> dict[str, int]:
    return {p["id"]: p["units"] for p in result["players"]}


def lines(result: dict[str, Any], step: str | None = None) -> list[tuple[str, str, str, int, str | None]]:
    """(step, payer, payee, units, position) of each ledger line, optionally of one step."""
    return [
        (line["step"], line["payer"], line["payee"], line["units"], line["position"])
        for line in result["ledger"]
        if step is None or line["step"] == step
    ]


def step_totals(result: dict[str, Any]) -> dict[str, Counter[str]]:
    totals: dict[str, Counter[str]] = {p["id"]: Counter() for p in result["players"]}
    for line in result["ledger"]:
        totals[line["payee"]][line["step"]] += line["units"]
        totals[line["payer"]][line["step"]] -= line["units"]
    return totals


def golden_cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GOLDEN.read_text("utf-8").splitlines() if line.strip()]
