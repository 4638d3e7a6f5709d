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
    """Review 6, item 7: the BÁO sentence has a verb for each side, and 6 chi is not "6,00"."""
    body = _said("arrange", {"ruleset": "maubinh-bao", "cards": SIX_PAIRS})
    declare = body["declare"]
    assert declare["recommended"] is False and declare["play_expected_units"] > 0
    played = f"{declare['play_expected_units']:.2f}".replace(".", ",")
    assert body["explanation"][0].startswith("Gợi ý: chi cuối (5 lá) thùng phá sảnh, ")
    assert f". Xếp như vậy, trung bình ăn {played} chi mỗi nhà, cao nhất trong " in body["explanation"][0]
    assert body["explanation"][1] == (
        "Không nên BÁO lục phé bôn: BÁO thì trung bình chỉ ăn 6 chi mỗi nhà, "
        f"còn xếp như gợi ý rồi so chi thì trung bình ăn {played} chi mỗi nhà."
    )
    assert body["model"]["field"].startswith("Bài của các nhà khác: do chính bộ gợi ý xếp theo maubinh-bao@")
    assert "tay bài" not in body["model"]["field"] and " ván, lấy trung bình" in body["model"]["field"]


DRAGON = ["2S", "7H", "3S", "9C", "4D", "JH", "5S", "QH", "6S", "KH", "8C", "TH", "AD"]


def test_an_automatic_instant_win_is_said_first_and_the_split_s_value_only_as_if_compared() -> None:
    """Review 6, items 5, 6: a dragon wins without comparing chi, so the split's value comes after it,
    as what comparing would give; and a negative value is a loss ("thua"), the least lost of the splits."""
    body = _said("arrange", {"ruleset": "maubinh-2020", "cards": DRAGON})
    value = body["suggestion"]["expected_units"] if "suggestion" in body else None
    first, second = body["explanation"]
    assert first == "Bài có sảnh rồng: thắng trắng, ăn 12 chi mỗi nhà, không so chi."
    assert second.startswith("(Nếu so chi, cách xếp tốt nhất là chi 1 ") and second.endswith(".)")
    assert "thua " in second and "ít thua nhất trong " in second and "ăn −" not in second, (value, second)
    english = _said("arrange", {"ruleset": "maubinh-2020", "cards": DRAGON}, "en")["explanation"]
    assert english[0].startswith("These cards hold dragon: an instant win") and english[1].startswith("(Were the chi")


def test_a_room_where_nobody_pays_says_why() -> None:
    fouled = next(c for c in golden_cases() if c["name"] == "maubinh-2020/n2/fouled")["request"]
    players = [{**player, "back": player["front"] + player["back"][:2], "front": player["back"][2:]}
               for player in fouled["players"]]  # fmt: skip  # both foul: the 3-card hand in the back
    body = _said("score", {**fouled, "players": players})
    assert body["ledger"] == [] and all(p["fouled"] for p in body["players"])
    assert body["explanation"] == (
        "Không ai trả ai: cả 2 người đều binh lủng, và theo maubinh-2020, những người cùng binh lủng không trả nhau."
    )
    # review 7, item 25: a house variant's raw id stood where players say "the table's own rules"
    house = {"base": "maubinh-2020", "patch": {"scoop": {"multiplier": 4}}}
    said = _said("score", {**fouled, "ruleset": house, "players": players})["explanation"]
    assert said == (
        "Không ai trả ai: cả 2 người đều binh lủng, và theo luật riêng của bàn (maubinh-2020~custom), "
        "những người cùng binh lủng không trả nhau."
    )
    assert "explanation" not in _said("score", E1)  # a room with lines: they say it
