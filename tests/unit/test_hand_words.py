"""Chi explanations name both hands as players say them, with their ranks and the card that decided.

Each expected text below is worked from docs/rules.md §2.2 (the comparison order), not read off the
code: the ranks that make the hand come first, and where two hands tie on those the first rank that
differs is named as the kicker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from service.contract import RoomRejected
from service.documents import score_document
from service.game.hand_strengths import HAND_NAMES, Wheel
from service.game.hand_words import decided_said, deciding_rank, spoken
from service.game.hands import hand_table, parse_hand
from service.game.patterns import PATTERN_NAMES
from service.serialize import dumps

GOLDEN = Path(__file__).parents[1] / "golden"


def said(winner: str, loser: str, wheel: Wheel = "second") -> tuple[str, str]:
    """The chi line's two hands, in English and in Vietnamese: "<winner> beats <loser>"."""
    table = hand_table(wheel)
    a, b = table.evaluate(parse_hand(winner)), table.evaluate(parse_hand(loser))
    assert a > b, "the first hand must win"
    won, lost = spoken(a, b, wheel), spoken(b, a, wheel)
    return f"{won.en} beats {lost.en}", f"{won.vi} thắng {lost.vi}{decided_said(a, deciding_rank(a, b)).vi}"


@pytest.mark.parametrize(
    ("winner", "loser", "english", "vietnamese"),
    [
        # different categories: the names decide, no kicker
        ("QS QH QD 7C 2H", "KS KH 9D 9C 4S", "three queens (Q-Q-Q-7-2) beats two pair, kings and nines (K-K-9-9-4)",
         "sám Đầm (Q-Q-Q-7-2) thắng thú Già-9 (K-K-9-9-4)"),
        # same category, the top card decides (named in the hand's name)
        ("AS 3H 2D", "QS JH 4D", "ace high (A-3-2) beats queen high (Q-J-4)",
         "mậu thầu Át (A-3-2) thắng mậu thầu Đầm (Q-J-4)"),
        # same pair: the first kicker that differs decides
        ("KS KH 9D 5C 2H", "KD KC 7S 6C 3H", "pair of kings, kicker nine (K-K-9-5-2) beats pair of kings, kicker seven (K-K-7-6-3)",
         "đôi Già, lá lẻ 9 (K-K-9-5-2) thắng đôi Già, lá lẻ 7 (K-K-7-6-3)"),
        # same top card in the front: English reads down to the card that decided, Vietnamese names the top
        # card and says which card decided (review 6, item 27: "mậu thầu 10-9" is no way players talk)
        ("TS 9H 4D", "TD 8C 4S", "ten-nine high (10-9-4) beats ten-eight high (10-8-4)",
         "mậu thầu 10 (10-9-4) thắng mậu thầu 10 (10-8-4), hơn ở lá thứ hai"),
        # a high card named by its ranks alone still shows its cards (review 6, item 26)
        ("6S 5H 4D", "6D 5C 3S", "six-five-four high (6-5-4) beats six-five-three high (6-5-3)",
         "mậu thầu 6 (6-5-4) thắng mậu thầu 6 (6-5-3), hơn ở lá thứ ba"),
        # the first kicker ties too: every card down to the one that decided, none skipped
        ("KS KH 9D 6C 3H", "KD KC 9S 5C 2H", "pair of kings, kickers nine-six (K-K-9-6-3) beats pair of kings, kickers nine-five (K-K-9-5-2)",
         "đôi Già, lá lẻ 9-6 (K-K-9-6-3) thắng đôi Già, lá lẻ 9-5 (K-K-9-5-2)"),
        # same top pair: the second pair decides, and both are in the name
        ("KS KH 9D 9C 4H", "KD KC 8S 8C AH", "two pair, kings and nines (K-K-9-9-4) beats two pair, kings and eights (K-K-8-8-A)",
         "thú Già-9 (K-K-9-9-4) thắng thú Già-8 (K-K-8-8-A)"),
        # both pairs tie: the fifth card
        ("KS KH 9D 9C 4H", "KD KC 9S 9H 3C", "two pair, kings and nines, kicker four (K-K-9-9-4) beats two pair, kings and nines, kicker three (K-K-9-9-3)",
         "thú Già-9, lá lẻ 4 (K-K-9-9-4) thắng thú Già-9, lá lẻ 3 (K-K-9-9-3)"),
        # flushes: read from the top down to the card that decided
        ("AS JS 9S 5S 2S", "AH JH 8H 7H 6H", "flush, ace-jack-nine high (A-J-9-5-2) beats flush, ace-jack-eight high (A-J-8-7-6)",
         "thùng Át (A-J-9-5-2) thắng thùng Át (A-J-8-7-6), hơn ở lá thứ ba"),
        # the wheel is the second straight under wheel "second" (§2.2), and says so; read from the top down, as its cards
        ("AS 2H 3D 4C 5H", "KS QH JD TC 9H", "straight, five down to ace (5-4-3-2-A, second highest under this ruleset) beats straight, king down to nine (K-Q-J-10-9)",
         "sảnh A-2-3-4-5 (theo bộ luật này lớn thứ nhì, chỉ sau sảnh từ 10 đến Át) thắng sảnh từ 9 đến Già (K-Q-J-10-9)"),
        ("8S 8H 8D 5C 5H", "7S 7H 7D KC KH", "full house, eights full of fives (8-8-8-5-5) beats full house, sevens full of kings (7-7-7-K-K)",
         "cù lũ 8 đôi 5 (8-8-8-5-5) thắng cù lũ 7 đôi Già (7-7-7-K-K)"),
        ("AS AH AD AC 2H", "9S 9H 9D 9C KH", "four aces (A-A-A-A-2) beats four nines (9-9-9-9-K)",
         "tứ quý Át (A-A-A-A-2) thắng tứ quý 9 (9-9-9-9-K)"),
        ("AS KS QS JS TS", "AH 2H 3H 4H 5H", "royal flush (A-K-Q-J-10) beats steel wheel (5-4-3-2-A)",
         "thùng phá sảnh thượng (A-K-Q-J-10) thắng thùng phá sảnh hạ (5-4-3-2-A)"),
        ("AS AH AD", "KS KH KD", "trip aces (A-A-A) beats three kings (K-K-K)", "sám Át (A-A-A) thắng sám Già (K-K-K)"),
    ],
)  # fmt: skip
def test_a_chi_line_names_both_hands_ranks_and_decider(winner: str, loser: str, english: str, vietnamese: str) -> None:
    assert said(winner, loser) == (english, vietnamese)


def test_the_wheel_is_lowest_where_the_ruleset_says_so() -> None:
    """Under wheel "lowest" the same wheel loses to a six-high straight, is read 5 down to A, and says it
    ranks lowest: the straight players dispute most, as "second" says it ranks second."""
    english, vietnamese = said("2S 3H 4D 5C 6H", "AS 2H 3D 4C 5D", wheel="lowest")
    assert english == (
        "straight, six down to two (6-5-4-3-2) beats straight, five down to ace (5-4-3-2-A, lowest under this ruleset)"
    )
    assert vietnamese == "sảnh từ 2 đến 6 (6-5-4-3-2) thắng sảnh A-2-3-4-5 (nhỏ nhất theo bộ luật này)"


MACHINE_NAMES = re.compile("|".join(rf"\b{name}\b" for name in [*HAND_NAMES, *PATTERN_NAMES] if "_" in name))
"""The ids of hands and instant-win patterns that are not also words (``pair`` and ``flush`` are)."""
RANK = re.compile(
    r"\((?:10|[2-9JQKA])(?:-(?:10|[2-9JQKA]))+(?:, [^)]+)?\)|(?:10|[2-9])(?:-(?:10|[2-9]))+$|(?:10|[2-9])(?:-(?:10|[2-9]))+ thắng"
    r"|A-2-3-4-5"
)
"""A hand's cards: in parentheses (a wheel may say where it ranks), the wheel as players write it, or its own words where they name every
card ("mậu thầu 6-5-4")."""


def _golden_requests() -> list[dict[str, Any]]:
    return [json.loads(line)["request"] for name in ("public", "house-public", "house2-public")
            for line in (GOLDEN / f"{name}.jsonl").read_text().splitlines() if line.strip()]  # fmt: skip


@pytest.mark.parametrize("language", ["en", "vi"])
def test_every_golden_chi_line_explains_itself(language: str) -> None:
    """Every golden room: each chi line between two hands names both with their cards' ranks, a
    same-category line names the rank that decided, and no explanation holds a machine name."""
    beats = " beats " if language == "en" else " thắng "
    checked = 0
    for request in _golden_requests():
        try:
            result = json.loads(dumps(score_document(request, None, language), language))
        except RoomRejected:
            continue
        for line in result["ledger"]:
            assert not MACHINE_NAMES.search(line["explanation"]), line["explanation"]
            if line["step"] != "chi" or line["hands"]["payer"] is None:
                continue
            winner, loser = line["explanation"].split(": ", 1)[1].split(beats)
            assert RANK.search(winner) and RANK.search(loser), line["explanation"]
            if line["hands"]["payee"] == line["hands"]["payer"]:
                won_ranks, lost_ranks = (side.split(" (")[0] for side in (winner, loser))
                decided = language == "vi" and ", hơn ở lá thứ " in loser  # a high card or flush named by its top
                assert won_ranks != lost_ranks or decided, line["explanation"]  # the names differ by the deciding rank
            checked += 1
    assert checked > 300
