"""The bulk engine reads a claim's amounts by the room's seats, not by the players' ids in any other order
(issue 52, second round): every generated room, and every round of the sample month, had its ids in
sorted order, so an engine reading ``sorted(room.ids)`` passed every test while it found a wrong
settlement agreeing. Here the ids are never sorted, and a claim gives the players the amounts of
other seats: the amounts in the order of the ids (for two players, the two swapped)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from rooms_at_random import random_room

from service.bulk import jsonl
from service.bulk.engine import agreeing_lines
from service.documents import score_document
from service.rulesets.operator_folder import catalogue_for

ROOT = Path(__file__).resolve().parents[2]
AUDIT = ROOT / "examples" / "audit"


def by_id_order(amounts: dict[str, int]) -> dict[str, int] | None:
    """The seats' amounts given to the players in the order of their ids (the seats' order being the
    claim's): a wrong settlement, unless it is the same."""
    ids = list(amounts)
    moved = dict(zip(sorted(ids), amounts.values(), strict=True))
    return moved if moved != amounts else None


def swapped(amounts: dict[str, int], rng: random.Random) -> dict[str, int] | None:
    """Two players' amounts swapped, where they differ."""
    ids = list(amounts)
    a, b = rng.sample(ids, 2)
    if amounts[a] == amounts[b]:
        return None
    return {**amounts, a: amounts[b], b: amounts[a]}


def claims(count: int) -> tuple[list[bytes], set[int]]:
    """Random rooms under the built-ins, claims of amounts: the rules' own, or wrong ones (their lines)."""
    rng = random.Random(52)
    catalogue = catalogue_for(None)
    lines, wrong = [], set()
    while len(lines) < count:
        reference = rng.choice(("maubinh-2020", "maubinh-chi-at", "maubinh-bao"))
        request = random_room(rng, catalogue.resolve(reference), reference).request()
        try:
            answer = score_document(request, catalogue)
        except Exception:  # a false declaration: refused, not a claim to check
            continue
        amounts = {p["id"]: p["amount"] for p in answer["players"]}
        assert list(amounts) != sorted(amounts)  # the ids are never in sorted order
        claimed = (by_id_order if rng.random() < 0.5 else lambda a: swapped(a, rng))(amounts)
        if claimed is not None:
            wrong.add(len(lines) + 1)
        lines.append(json.dumps({**request, "claimed": {"amounts": claimed or amounts}}).encode() + b"\n")
    return lines, wrong


def test_a_claim_giving_players_the_amounts_of_other_seats_is_not_found_agreeing() -> None:
    lines, wrong = claims(400)
    assert len(wrong) > 100
    agreeing = agreeing_lines(lines, 1, catalogue_for(None))
    assert not agreeing & wrong, f"{len(agreeing & wrong)} wrong settlements found agreeing"
    assert agreeing == set(range(1, len(lines) + 1)) - wrong


def test_verify_jsonl_calls_such_a_claim_in_the_sample_month_disagreeing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped month's ids are not in sorted order either: each tenth round claimed with the amounts
    in the order of its ids is written by `verify --jsonl` (the engine reading the month) as disagreeing,
    with the planted faults and nothing else."""
    monkeypatch.setenv("MAUBINH_RULESETS_DIR", str(AUDIT / "rulesets"))
    plants = {plant["line"] for plant in json.loads((AUDIT / "plants.json").read_text())["plants"]}
    refused = {1500, 2500}  # the month's two lines a backend wrote wrongly (plants.json)
    lines, made = [], set()
    for number, text in enumerate((AUDIT / "claims.jsonl").read_bytes().splitlines(keepends=True), start=1):
        request: Any = json.loads(text)
        claim = request.get("claimed")
        moved = None
        if number % 10 == 0 and number not in plants | refused and set(claim) == {"amounts"}:
            moved = by_id_order(claim["amounts"])
        if moved is not None:
            made.add(number)
        changed = {**request, "claimed": {"amounts": moved}}
        lines.append(text if moved is None else json.dumps(changed, separators=(",", ":")).encode() + b"\n")
    assert len(made) > 200
    out = tmp_path / "out.jsonl"
    with out.open("wb") as sink:
        done = jsonl.run("verify", iter(lines), sink, 1)
    disagreeing = {json.loads(answer)["line"] for answer in out.read_bytes().splitlines()} - refused
    assert disagreeing == plants | made
    assert done.agreed == len(lines) - len(plants | made) - 2
