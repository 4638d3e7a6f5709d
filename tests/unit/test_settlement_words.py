"""The settlement lines in Vietnamese, as players say them (fifth review of the texts): each names who
pays whom and why, says no "× 1", and tells a fouled player's scoop as the foul it is.

Every golden room, and random deals under variants that reach each kind of line, are scored in
Vietnamese; each check reads a line's words against its own machine fields (step, payer, payee).
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from helpers import DECK_TEXT, golden_cases, room, seat

from service.documents import score_document
from service.serialize import dumps

VARIANTS: list[Any] = [
    "maubinh-2020",
    "maubinh-chi-at",
    "maubinh-bao",
    {"base": "maubinh-2020", "patch": {"fouls": {"foul_multiplier": 2}}},
    {"base": "maubinh-2020", "patch": {"scoop": {"basis": "chi", "sweep_multiplier": 2}}},
    {"base": "maubinh-2020", "patch": {"scoop": {"sweep_multiplier": 3, "sweep_pays": "total"}}},
    {"base": "maubinh-2020", "patch": {"aces": {"mode": "balance", "units_per_ace": 1, "room_size": 4}}},
]


def _ledgers() -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(players by id, ledger) of every golden room and of random deals in dealt order under VARIANTS."""
    rooms = [case["request"] for name in ("public.jsonl", "house-public.jsonl", "house2-public.jsonl")
             for case in golden_cases(name)]  # fmt: skip
    rng = random.Random(55)
    for ruleset in VARIANTS:
        for _ in range(40):
            deck = rng.sample(DECK_TEXT, 52)
            players = [seat(f"p{k}", " ".join(deck[13 * k : 13 * k + 5]) + " | "
                            + " ".join(deck[13 * k + 5 : 13 * k + 10]) + " | " + " ".join(deck[13 * k + 10 : 13 * k + 13]))
                       for k in range(4)]  # fmt: skip
            rooms.append(room(ruleset, *players))  # type: ignore[arg-type]
    out = []
    for request in rooms:
        try:
            body = json.loads(dumps(score_document(request, None, "vi"), "vi"))
        except Exception:  # a refused golden request
            continue
        out.append(({p["id"]: p for p in body["players"]}, body["ledger"]))
    return out


LEDGERS = _ledgers()


def _lines(step: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    found = [(players, line) for players, ledger in LEDGERS for line in ledger if line["step"] == step]
    assert len(found) > 20, step  # the rooms reach this step
    return found


def test_a_scoop_line_names_who_pays_and_no_factor_of_one() -> None:
    """Review 5, items 1, 7, 8, 14: the payer named before what it pays; "× 1" and "tổng … chi ×" gone."""
    for _, line in _lines("scoop"):
        said = line["explanation"]
        assert f"{line['payer']} trả thêm " in said, said
        assert "× 1 " not in said and "tổng" not in said, said
        assert said.endswith(f"= {line['units']} chi") or said.endswith(f"trả thêm {line['units']} chi"), said


def test_a_fouled_player_s_scoop_is_said_as_the_foul() -> None:
    """Review 5, item 2: a player scooped because it fouled did not lose to stronger hands."""
    fouled = [
        (players, line)
        for players, line in _lines("scoop")
        if players[line["payer"]]["fouled"] and not line["rule"].startswith("scoop.sweep_pays")  # a sweep, not a scoop
    ]
    assert fouled
    for _, line in fouled:
        said = line["explanation"]
        assert "thắng cả 3 chi" not in said, said
        opening = (f"{line['payer']} binh lủng nên", "bị tính binh lủng nên thua", "binh lủng nên bị tính sập")
        assert any(words in said for words in opening), said


def test_a_foul_line_names_the_payee_and_a_chi_lost_to_a_foul_says_so() -> None:
    """Review 5, items 12, 13, 17."""
    for _, line in _lines("foul"):
        said = line["explanation"]
        assert line["payee"] in said and "× 1" not in said and "tổng" not in said, said
    for players, line in _lines("chi"):
        if players[line["payer"]]["fouled"] and line["hands"]["payer"] is None:
            assert line["explanation"].endswith("nên thua chi này"), line["explanation"]


def test_an_ace_line_says_the_whole_before_its_part() -> None:
    """Review 5, items 9, 18, 19: who pays whom, each in "lá Át", and the whole before this line's share."""
    for _, line in _lines("ace"):
        said = line["explanation"]
        assert f"{line['payer']} trả {line['payee']} {line['units']} chi" in said or (
            f"trả {line['payee']} {line['units']} chi" in said
        ), said
        assert re.search(r"từ \d+ Át", said) is None, said  # "từ 2 lá Át"
    balance = [line["explanation"] for _, line in _lines("ace") if "chuẩn" in line["explanation"]]
    assert balance and all("thiếu 1 lá so với chuẩn" in said and "dư" in said for said in balance)


def test_two_instant_wins_name_both() -> None:
    """Review 5, items 10, 11: the loser's own instant win is named, and the difference has a subject."""
    case = next(c for c in golden_cases() if c["name"] == "maubinh-2020/n3/instant-double")["request"]
    said = [line["explanation"] for line in json.loads(dumps(score_document(case, None, "vi"), "vi"))["ledger"]]
    assert "P thắng trắng với sảnh rồng, lớn hơn lục phé bôn của R: ăn 12 chi, không so chi" in said
    difference = {**case, "ruleset": {"base": "maubinh-2020", "patch": {"instant_wins": {"collision": "difference"}}}}
    said = [line["explanation"] for line in json.loads(dumps(score_document(difference, None, "vi"), "vi"))["ledger"]]
    assert (
        "Cả hai cùng thắng trắng: P có sảnh rồng (12 chi), R có lục phé bôn (3 chi); "
        "theo luật riêng của bàn, P ăn phần chênh lệch 9 chi, không so chi"
    ) in said


def test_maubinh_bao_says_each_chi_s_size_and_one_name_for_its_trips() -> None:
    """Review 5, items 5, 6: "chi cuối" is the 3-card hand to most players; bao's is the 5-card one."""
    cases = {c["name"]: c["request"] for c in golden_cases()}
    fouled = json.loads(dumps(score_document(cases["maubinh-bao/n2/fouled"], None, "vi"), "vi"))["ledger"]
    assert [line["explanation"].split(":")[0] for line in fouled[:3]] == [
        "Chi cuối (5 lá)", "Chi giữa (5 lá)", "Chi đầu (3 lá)"
    ]  # fmt: skip
    trips = json.loads(dumps(score_document(cases["maubinh-bao/n2/declared-trips_front"], None, "vi"), "vi"))
    assert trips["ledger"][0]["explanation"] == "Q thắng trắng với sám chi đầu (chi 3 lá): ăn 3 chi, không so chi"
    assert trips["players"][1]["instant_win"]["name"] == "Sám chi đầu (chi 3 lá)"  # the same name in the answer
