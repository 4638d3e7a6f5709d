"""A sentence wherever a person reads an answer (fifth review of the texts): evaluate says why an
arrangement fouls, arrange says why this split and why (not) BÁO, and a room where nobody pays says why."""

from __future__ import annotations

import json
from typing import Any

from helpers import golden_cases

from service.documents import OPERATIONS, answer
from service.serialize import dumps

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
SIX_PAIRS = ["2S", "2H", "3S", "3H", "4S", "4H", "5S", "5H", "6S", "6H", "7S", "7H", "9D"]


def _said(operation: str, request: dict[str, Any], language: str = "vi") -> Any:
    status, body = answer(OPERATIONS[operation], json.dumps(request).encode(), language=language)  # type: ignore[arg-type]
    assert status == 200
    return json.loads(dumps(body, language))  # type: ignore[arg-type]


def test_evaluate_says_why_an_arrangement_fouls_by_the_ruleset_s_own_labels() -> None:
    p = E1["players"][0]
    swapped = {"ruleset": "maubinh-2020", "back": p["middle"], "middle": p["back"], "front": p["front"]}
    body = _said("evaluate", swapped)
    assert body["fouled"] is True
    assert body["explanation"] == [
        "Binh lủng (chi 2 mạnh hơn chi 1): chi 1 phải mạnh hơn hoặc bằng chi 2, và chi 2 phải mạnh hơn hoặc bằng chi 3."
    ]
    legal = _said("evaluate", {**swapped, "ruleset": "maubinh-bao", "back": p["back"], "middle": p["middle"]})
    assert legal["explanation"][0].startswith("Không binh lủng: chi cuối (5 lá) mạnh hơn hoặc bằng chi giữa (5 lá)")


def test_arrange_says_why_not_bao_with_both_expected_values() -> None:
    body = _said("arrange", {"ruleset": "maubinh-bao", "cards": SIX_PAIRS})
    declare = body["declare"]
    assert declare["recommended"] is False
    played = f"{declare['play_expected_units']:.2f}".replace(".", ",")
    assert body["explanation"][0].startswith("Gợi ý: chi cuối (5 lá) thùng phá sảnh, ")
    assert f"kỳ vọng ăn {played} chi mỗi nhà, cao nhất trong " in body["explanation"][0]
    assert body["explanation"][1] == (
        "Không nên BÁO lục phé bôn: BÁO kỳ vọng chỉ ăn 6,00 chi mỗi nhà, "
        f"ít hơn {played} chi kỳ vọng nếu xếp bài như gợi ý rồi so chi."
    )
    assert "field" in body["model"] and "fictitious" not in body["model"]["field"]  # model.field in Vietnamese too


def test_a_room_where_nobody_pays_says_why() -> None:
    fouled = next(c for c in golden_cases() if c["name"] == "maubinh-2020/n2/fouled")["request"]
    players = [{**player, "back": player["front"] + player["back"][:2], "front": player["back"][2:]}
               for player in fouled["players"]]  # fmt: skip  # both foul: the 3-card hand in the back
    body = _said("score", {**fouled, "players": players})
    assert body["ledger"] == [] and all(p["fouled"] for p in body["players"])
    assert body["explanation"] == (
        "Không ai trả ai: cả 2 người đều binh lủng, và theo maubinh-2020 người cùng binh lủng không trả nhau."
    )
    assert "explanation" not in _said("score", E1)  # a room with lines: they say it
