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
    {"base": "maubinh-2020", "patch": {"scoop": {"sweep_multiplier": 2}}},  # sập làng on the total
    {"base": "maubinh-chi-at", "patch": {"aces": {"no_ace_pays": 3}}},  # a share that does not divide
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
        opening = (f"{line['payer']} binh lủng nên", "bị tính binh lủng nên bị", "binh lủng nên bị tính sập")
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


def test_an_ace_share_names_no_one_paid_nothing_and_who_takes_the_remainder() -> None:
    """Review 6, items 11, 12: no "P3 0 chi", no ledger jargon ("dòng này"), and "người đứng trước"
    said as what it is, the first in the round (the request's order)."""
    uneven = 0
    for players, line in _lines("ace"):
        said = line["explanation"]
        assert "dòng này" not in said and re.search(r"\b0 chi", said) is None, said
        if "không chia đều" in said:
            uneven += 1
            assert "người đứng trước trong danh sách người chơi" in said, said  # review 7, item 26
            order = list(players)
            named = re.search(r"trở lên \(([^)]*)\)", said)
            assert named is not None, said
            collectors = named[1].split(", ")
            assert collectors == sorted(collectors, key=order.index), said  # in the round's order
        elif "chia đều cho" in said:
            assert re.search(r"chia đều cho \S+ và \S+ \(mỗi người có từ \d lá Át trở lên\)", said), said
    assert uneven


def test_a_scoop_s_sum_is_a_sentence_of_its_own_and_names_the_bonus_in_it() -> None:
    """Review 6, items 3, 4: "thắng cả 3 chi" (the hands) and "6 chi đã thua" (the unit) no longer meet in
    one clause: the sum is its own sentence, and a lost amount above the 3 chi says the bonus is in it."""
    for _, line in _lines("scoop"):
        said = line["explanation"]
        if line["rule"].startswith("scoop.sweep_pays"):
            continue
        _, _, second = said.partition(". ")
        assert second and "bị sập ăn" not in said, said
        lost = re.search(r"goài (\d+) chi đã thua", second)
        if lost:
            assert ("(kể cả chi thưởng)" in second) == (int(lost[1]) > 3), said


def test_a_sweep_says_its_factor_as_the_product_players_reckon() -> None:
    """Review 6, items 1, 2: "nhân đôi" beside "gấp 6" left the reader to work out 3 × 2 alone."""
    swept = [line["explanation"] for _, line in _lines("scoop") if "bắt sập làng nên hệ số sập" in line["explanation"]]
    assert len(swept) > 5
    for said in swept:
        factor = re.search(r"hệ số sập nhân (đôi|\d+): (\d+) × (\d+) = (\d+)", said)
        assert factor is not None and "gấp" not in said, said
        assert int(factor[2]) * int(factor[3]) == int(factor[4]) and factor[3] == {"đôi": "2"}.get(factor[1], factor[1])


def test_a_sweep_paying_totals_says_what_it_multiplies() -> None:
    """Seventh read: "mỗi nhà trả gấp đôi: ngoài 4 chi đã trả P" read as the whole paid twice, while the
    loser had paid the scoop too and ends at three times: the line multiplies what was lost before scoops."""
    totals = [line for _, line in _lines("scoop") if line["rule"].startswith("scoop.sweep_pays")]
    assert totals
    for line in totals:
        said = re.fullmatch(
            r"(\S+) bắt sập làng nên (\d+) chi (\S+) đã thua trước khi tính sập \(chưa kể tiền sập\) được tính "
            r"(gấp đôi|gấp (\d+)): \3 trả thêm (?:\2 × (\d+) = )?(\d+) chi",
            line["explanation"],
        )
        assert said is not None and said[1] == line["payee"] and said[3] == line["payer"], line["explanation"]
        times = 2 if said[4] == "gấp đôi" else int(said[5])
        assert int(said[2]) * (times - 1) == int(said[7]) == line["units"], line["explanation"]


def test_a_room_where_nobody_pays_says_why_in_both_languages() -> None:
    """Review 6: an empty ledger tells the reader nothing; two equal instant wins compared no chi, so
    "every chi tied" would be false there."""
    spades, diamonds = (
        ("KS KH 8S 6S 3H", "AS QS JS 9H 7S", "TS 5H 2S"),
        ("KD KC 8D 6D 3C", "AD QD JD 9C 7D", "TD 5C 2D"),
    )
    tied = room("maubinh-2020", seat("P", " | ".join(spades)), seat("Q", " | ".join(diamonds)))
    pairs = room("maubinh-2020", seat("P", "6S 6H 7S 7H 9D | 4S 4H 5S 5H 2S | 2H 3S 3H"),
                 seat("Q", "6D 6C 7D 7C 9C | 4D 4C 5D 5C 2D | 2C 3D 3C"))  # fmt: skip
    dragons = room("maubinh-2020", seat("P", "2S 3H 4S 5H 7S | AS KH QS JH 9S | TS 8H 6S"),
                   seat("Q", "2D 3C 4D 5C 7D | AD KC QD JC 9D | TD 8C 6D"))  # fmt: skip
    said = {}
    for name, request in (("tied", tied), ("pairs", pairs), ("dragons", dragons)):
        for language in ("en", "vi"):
            body = json.loads(dumps(score_document(request, None, language), language))  # type: ignore[arg-type]
            assert body["ledger"] == []
            said[name, language] = body["explanation"]
    assert said["tied", "vi"] == "Không ai trả ai: mọi cặp đều hòa ở cả 3 chi."
    assert said["dragons", "vi"] == (
        "Không ai trả ai: P và Q cùng thắng trắng, ngang nhau, nên không ai ăn ai và không so chi."
    )  # seventh read: both fouled, but the instant wins settled the pair, not the fouls
    assert (
        said["pairs", "vi"]
        == "Không ai trả ai: P và Q cùng thắng trắng, ngang nhau, nên không ai ăn ai và không so chi."
    )
    assert (
        said["pairs", "en"]
        == "Nobody pays: P and Q hold instant wins of equal rank, so neither pays and no chi is compared."
    )


def test_two_winners_paid_by_a_third_say_why_they_paid_each_other_nothing() -> None:
    """Review 5: P and Q each took every chi and the scoop from R, and their own pair showed 0 with no
    word of why (worked by hand: P's and Q's hands are the same ranks in other suits, so each chi ties;
    R's pair of jacks, queen high and nine high lose every chi to both)."""
    request = room(
        "maubinh-2020",
        seat("P", "KS KH 8S 6S 3H | AS QS JS 9H 7S | TS 5H 2S"),
        seat("Q", "KD KC 8D 6D 3C | AD QD JD 9C 7D | TD 5C 2D"),
        seat("R", "JH JC 9S 8H 4D | QH TC 7C 6H 4S | 9D 5S 3S"),
    )
    for language, tied in (("en", "P and Q tied every chi"), ("vi", "P và Q hòa cả 3 chi")):
        body = json.loads(dumps(score_document(request, None, language), language))  # type: ignore[arg-type]
        assert {(line["payer"], line["payee"]) for line in body["ledger"]} == {("R", "P"), ("R", "Q")}
        said = {tuple(pair["players"]): pair.get("explanation") for pair in body["showdown"]}
        assert said == {("P", "Q"): tied, ("P", "R"): None, ("Q", "R"): None}
        assert "explanation" not in body  # the room's own sentence is for an empty ledger


def test_a_pair_an_instant_win_left_uncompared_says_the_round_ended() -> None:
    """With ``ends_round``, P's dragon (12 chi from each, maubinh-2020's table) ends the round: Q and R
    compare no chi, and their pair says so rather than "compared no chi" alone."""
    request = room(
        {"base": "maubinh-2020", "patch": {"instant_wins": {"ends_round": True}}},
        seat("P", "2S 3H 4S 5H 7S | AS KH QS JH 9S | TS 8H 6S"),
        seat("Q", "KS KD 8D 6D 3C | AD QD JD 9C 7D | TD 5C 2D"),
        seat("R", "JS JC 9D 8C 4D | QH TH 7H 6C 4C | 9H 5S 3S"),
    )
    body = json.loads(dumps(score_document(request, None, "vi"), "vi"))  # type: ignore[arg-type]
    assert [(line["payer"], line["payee"], line["units"]) for line in body["ledger"]] == [
        ("Q", "P", 12),
        ("R", "P", 12),
    ]
    said = {tuple(pair["players"]): pair.get("explanation") for pair in body["showdown"]}
    assert said == {
        ("P", "Q"): None,
        ("P", "R"): None,
        ("Q", "R"): "Q và R không so chi: ván đã kết thúc vì có người thắng trắng, nên không ai ăn ai",
    }


def test_three_equal_instant_wins_are_one_clause() -> None:
    """Review 7, item 22: "P và Q cùng thắng trắng, ngang nhau, …; P và R …; Q và R …", the same clause
    three times for one fact; and a fourth player's tie beside them is still said as its own."""
    suits = {"P": "S", "Q": "H", "R": "D", "T": "C"}
    dragon = "2{s} 3{s} 4{s} 5{s} 7{s} | A{s} K{s} Q{s} J{s} 9{s} | T{s} 8{s} 6{s}"  # one suit: the dragon flush
    players = [seat(who, dragon.format(s=suit)) for who, suit in suits.items()]
    said = json.loads(dumps(score_document(room("maubinh-2020", *players[:3]), None, "vi"), "vi"))["explanation"]
    assert (
        said == "Không ai trả ai: cả 3 người (P, Q, R) cùng thắng trắng ngang nhau, nên không ai ăn ai và không so chi."
    )
    english = json.loads(dumps(score_document(room("maubinh-2020", *players[:3]), None, "en"), "en"))["explanation"]
    assert english == (
        "Nobody pays: all 3 players (P, Q, R) hold instant wins of equal rank, so none pays and no chi is compared."
    )
    four = json.loads(dumps(score_document(room("maubinh-2020", *players), None, "vi"), "vi"))["explanation"]
    assert (
        four.startswith("Không ai trả ai: cả 4 người (P, Q, R, T) cùng thắng trắng ngang nhau") and four.count(";") == 0
    )


def test_two_instant_wins_name_both() -> None:
    """Review 5, items 10, 11: the loser's own instant win is named, and the difference has a subject."""
    case = next(c for c in golden_cases() if c["name"] == "maubinh-2020/n3/instant-double")["request"]
    said = [line["explanation"] for line in json.loads(dumps(score_document(case, None, "vi"), "vi"))["ledger"]]
    assert "P thắng trắng với sảnh rồng, lớn hơn lục phé bôn của R: ăn 12 chi, không so chi" in said
    difference = {**case, "ruleset": {"base": "maubinh-2020", "patch": {"instant_wins": {"collision": "difference"}}}}
    ledger = json.loads(dumps(score_document(difference, None, "vi"), "vi"))["ledger"]
    said = [line["explanation"] for line in ledger]
    assert (
        "Cả hai cùng thắng trắng: P có sảnh rồng (12 chi), R có lục phé bôn (3 chi); "
        "theo luật riêng của bàn, P ăn phần chênh lệch 9 chi, không so chi"
    ) in said
    # review 7, item 29: "bảng thắng trắng: sảnh rồng (…) − bảng thắng trắng: lục phé bôn (…), …" put a minus
    # between two labels; the rule is one difference
    assert (
        "chênh lệch giữa sảnh rồng và lục phé bôn trong bảng thắng trắng (instant_wins.table[dragon].units − "
        "instant_wins.table[six_pairs].units; instant_wins.collision)"
    ) in [line["rule_text"] for line in ledger]


def test_maubinh_bao_says_each_chi_s_size_and_one_name_for_its_trips() -> None:
    """Review 5, items 5, 6: "chi cuối" is the 3-card hand to most players; bao's is the 5-card one. Review
    6, item 29: every ruleset's lines say the size alike."""
    cases = {c["name"]: c["request"] for c in golden_cases()}
    fouled = json.loads(dumps(score_document(cases["maubinh-bao/n2/fouled"], None, "vi"), "vi"))["ledger"]
    assert [line["explanation"].split(":")[0] for line in fouled[:3]] == [
        "Chi cuối (5 lá)", "Chi giữa (5 lá)", "Chi đầu (3 lá)"
    ]  # fmt: skip
    plain = json.loads(dumps(score_document(cases["maubinh-2020/n2/fouled"], None, "vi"), "vi"))["ledger"]
    assert [line["explanation"].split(":")[0] for line in plain[:3]] == ["Chi 1 (5 lá)", "Chi 2 (5 lá)", "Chi 3 (3 lá)"]
    trips = json.loads(dumps(score_document(cases["maubinh-bao/n2/declared-trips_front"], None, "vi"), "vi"))
    # review 7, item 23: in a ruleset where the win must be declared, the line says Q pressed BÁO
    assert trips["ledger"][0]["explanation"] == "Q BÁO sám chi đầu (chi 3 lá), thắng trắng: ăn 3 chi, không so chi"
    assert trips["players"][1]["instant_win"]["name"] == "Sám chi đầu (chi 3 lá)"  # the same name in the answer


def test_every_rule_a_vietnamese_line_cites_names_its_fields_in_words() -> None:
    """Review 6, item 21: ``rule_text`` was a bare field path for every step but chi; each path now
    follows its words in brackets, and the fallback for a field with no words is never needed."""
    seen, aces = set(), set()
    for _, ledger in LEDGERS:
        for line in ledger:
            said, rule = line["rule_text"], line["rule"]
            paths = re.findall(r"[a-z_]+(?:\.[a-z_]+|\[[^\]]*\])+", rule.replace("docs/rules.md", ""))
            for path in paths:  # its words, then the path in their brackets (a difference's two in one)
                assert re.search(rf"\w \((?:[^()]*[;−] )?{re.escape(path)}[;−)]", said), said
            bare = re.sub(r"\([^()]*(?:\[[^\]]*\][^()]*)*\)", "", said)
            assert not re.search(r"\b[a-z_]+\.[a-z_]+", bare.replace("docs/rules.md", "")), said
            assert "trường của bộ luật" not in said, said
            seen.add(line["step"])
            if line["step"] == "ace":  # review 7, items 6-8: "mỗi lá Át thiếu hay dư tính" said no what
                aces.update(re.findall(r"chi Át: [^(]*\(aces\.\w+\)", said))
    assert seen == {"instant_win", "chi", "bonus", "scoop", "foul", "ace"}
    assert aces == {
        "chi Át: số chi người không có Át phải đền (aces.no_ace_pays)",
        "chi Át: số chi người có đủ 4 lá Át được nhận từ mỗi nhà (aces.four_aces_receives)",
        "chi Át: số chi cho mỗi lá Át thiếu hay dư (aces.units_per_ace)",
    }
