import itertools
import random

import pytest

from service.game.hand_strengths import Category, Kind
from service.game.hands import hand_table, parse_hand

SECOND = hand_table("second")
LOWEST = hand_table("lowest")


def strength(text: str, table=SECOND) -> int:  # type: ignore[no-untyped-def]
    return table.evaluate(parse_hand(text))


@pytest.mark.parametrize(
    ("hand", "category", "kind"),
    [
        ("AS KD 9C 7H 2S", Category.HIGH_CARD, None),
        ("AS AD 9C 7H 2S", Category.PAIR, None),
        ("AS AD 9C 9H 2S", Category.TWO_PAIR, None),
        ("9S 9D 9C 7H 2S", Category.THREE_OF_A_KIND, None),
        ("AS AD AC 7H 2S", Category.THREE_OF_A_KIND, None),
        ("5S 6D 7C 8H 9S", Category.STRAIGHT, None),
        ("AS 2D 3C 4H 5S", Category.STRAIGHT, None),
        ("2S 5S 9S JS KS", Category.FLUSH, None),
        ("9S 9D 9C 2H 2S", Category.FULL_HOUSE, None),
        ("9S 9D 9C 9H 2S", Category.FOUR_OF_A_KIND, None),
        ("AS AD AC AH 2S", Category.FOUR_OF_A_KIND, Kind.FOUR_ACES),
        ("5H 6H 7H 8H 9H", Category.STRAIGHT_FLUSH, None),
        ("TH JH QH KH AH", Category.STRAIGHT_FLUSH, Kind.ROYAL_FLUSH),
        ("AH 2H 3H 4H 5H", Category.STRAIGHT_FLUSH, Kind.STEEL_WHEEL),
        ("AS KD 2C", Category.HIGH_CARD, None),
        ("QS QD 2C", Category.PAIR, None),
        ("7S 7D 7C", Category.THREE_OF_A_KIND, None),
        ("AS AD AC", Category.THREE_OF_A_KIND, Kind.TRIP_ACES),
        ("QS KS AS", Category.HIGH_CARD, None),  # three suited/consecutive cards are no flush or straight
    ],
)
def test_categories_and_named_kinds(hand: str, category: Category, kind: Kind | None) -> None:
    described = SECOND.describe(parse_hand(hand))
    assert (described.category, described.kind) == (category, kind)


def test_names_in_vietnamese_and_english() -> None:
    described = SECOND.describe(parse_hand("9S 9D 9C 2H 2S"))
    assert (described.info.name_vi, described.info.name_en) == ("Cù lũ", "Full house")
    royal = SECOND.describe(parse_hand("TH JH QH KH AH"))
    assert (royal.info.name_vi, royal.info.name_en) == ("Thùng phá sảnh thượng", "Royal flush")


@pytest.mark.parametrize(
    ("stronger", "weaker"),
    [
        ("2S 2D 3C 4H 5S", "AS KD QC JH 9S"),  # category first
        ("AS AD 3C 4H 5S", "KS KD QC JH 9S"),  # pair rank
        ("KS KD QC 4H 3S", "KH KC QD 4D 2S"),  # pair, then kickers high to low
        ("AS AD 3C 3H 2S", "KS KD QC QH JS"),  # two pair: high pair
        ("AS AD 3C 3H 5S", "AH AC 3S 3D 4S"),  # two pair: kicker
        ("9S 9D 9C 3H 2S", "8S 8D 8C AH KS"),  # trips rank
        ("9S 9D 9C 2H 2S", "8S 8D 8C AH AS"),  # full house: trips rank
        ("9S 9D 9C 3H 3S", "9H 9C 9D 2H 2S"),  # full house: then pair rank
        ("KS JS 9S 7S 3S", "KD JD 9D 7D 2D"),  # flush: all cards high to low
        ("7S 7D 7C 7H 2S", "6S 6D 6C 6H AS"),
    ],
)
def test_comparison_by_category_then_rank_vector(stronger: str, weaker: str) -> None:
    assert strength(stronger) > strength(weaker)


def test_suits_never_break_ties() -> None:
    assert strength("AS KS QD JD 9C") == strength("AH KH QC JC 9D")
    assert strength("AS AD KC") == strength("AH AC KD")


def test_wheel_second_is_the_second_highest_straight() -> None:
    wheel, broadway, king_high = "AS 2D 3C 4H 5S", "TS JD QC KH AD", "9S TD JC QH KD"
    assert strength(broadway) > strength(wheel) > strength(king_high) > strength("2S 3D 4C 5H 6D")
    assert strength("AH 2H 3H 4H 5H") > strength("9H TH JH QH KH")  # steel wheel > K-high straight flush


def test_wheel_lowest_is_the_lowest_straight() -> None:
    wheel, six_high = "AS 2D 3C 4H 5S", "2S 3D 4C 5H 6D"
    assert strength(six_high, LOWEST) > strength(wheel, LOWEST)
    assert strength("TS JD QC KH AD", LOWEST) > strength("9S TD JC QH KD", LOWEST)
    assert strength("AH 2H 3H 4H 5H", LOWEST) < strength("2H 3H 4H 5H 6H", LOWEST)


@pytest.mark.parametrize(
    ("front", "middle", "front_stronger"),
    [
        ("KS KH 9D", "KD KC QS 3C 2C", False),  # docs/rules.md §2.2: middle stronger
        ("KS KH QD", "KD KC QS 3C 2C", False),  # equal over the front's cards: not a foul
        ("KS KH AD", "KD KC QS 3C 2C", True),  # front KK A beats KK Q: foul
        ("KS KH AD", "KD KC QS 7C 3C", True),  # STYLE.md's ofcp-engine edge
        ("AS KH QD", "AD KC QS 3C 2C", False),  # high card, equal over three cards
        ("AS KH QD", "KD QC JS 3C 2C", True),  # A-high front beats K-high middle (one scale)
        ("7S 7H 7D", "2C 2D 2H 3S 3H", False),  # trips in front vs full house
        ("QS QH QD", "JC JD JH AS KH", True),  # trips vs trips: rank
    ],
)
def test_front_against_middle_on_one_scale(front: str, middle: str, front_stronger: bool) -> None:
    assert (strength(front) > strength(middle)) is front_stronger


def test_table_sizes_match_the_known_counts() -> None:
    # 7,462 distinct 5-card hand classes and 455 (13 high-card choose 3 + pairs + trips) 3-card classes.
    assert len(set(SECOND.plain5.values()) | set(SECOND.flush5.values())) == 7462
    assert len(set(SECOND.three.values())) == 286 + 156 + 13


def test_ordering_agrees_with_phevaluator_under_the_lowest_wheel() -> None:
    """phevaluator ranks 5-card hands in standard poker order, where A-2-3-4-5 is the lowest straight."""
    from phevaluator import evaluate_cards

    deck = [r + s for r in "23456789TJQKA" for s in "shdc"]
    rng = random.Random(7)
    for _ in range(3000):
        a, b = rng.sample(deck, 5), rng.sample(deck, 5)
        ours = LOWEST.evaluate(parse_hand(" ".join(a).upper())) - LOWEST.evaluate(parse_hand(" ".join(b).upper()))
        theirs = evaluate_cards(*b) - evaluate_cards(*a)  # phevaluator: lower is stronger
        assert (ours > 0) - (ours < 0) == (theirs > 0) - (theirs < 0), (a, b)


def test_every_straight_is_found_by_both_tables() -> None:
    for low in range(9):
        ranks = "A23456789TJQKA"[low : low + 5]
        hand = parse_hand(" ".join(r + s for r, s in zip(ranks, "SDCHS", strict=True)))
        for table in (SECOND, LOWEST):
            assert table.describe(hand).category == Category.STRAIGHT


def test_display_order_groups_first_then_high_to_low() -> None:
    shown = [str(c) for c in SECOND.describe(parse_hand("2H 9S 2C 9D 9C")).cards]
    assert shown == ["9S", "9C", "9D", "2C", "2H"]
    wheel = [str(c) for c in SECOND.describe(parse_hand("3C AS 5D 2H 4S")).cards]
    assert wheel == ["5D", "4S", "3C", "2H", "AS"]


def test_all_3_card_hands_rank_below_the_matching_5_card_hand() -> None:
    """No 3-card hand beats a 5-card hand holding the same cards plus two more (§2.2)."""
    deck = parse_hand(" ".join(r + s for r in "23456789TJQKA" for s in "SCDH"))
    rng = random.Random(3)
    for _ in range(2000):
        five = rng.sample(deck, 5)
        for three in itertools.combinations(five, 3):
            assert SECOND.evaluate3(three) <= SECOND.evaluate5(five)


def test_the_shipped_strengths_are_a_fresh_build_s() -> None:
    """service/data/hand-strengths.json is read at start-up instead of building the tables: it must be
    exactly what scripts/build_hand_strengths.py writes from today's rules, and read back as built."""
    import importlib.util
    from pathlib import Path

    from service.game.hand_strengths import (
        STRENGTHS_FILE,
        build_wheel_free_strengths,
        strengths_read,
        strengths_written,
    )

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("build_hand_strengths", root / "scripts" / "build_hand_strengths.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    shipped = (root / "service" / "data" / STRENGTHS_FILE).read_text("utf-8")
    assert shipped == script.text(), "run scripts/build_hand_strengths.py"
    built = build_wheel_free_strengths()
    assert strengths_read(strengths_written(built)) == built
    # 6,175 multisets of five ranks less the 10 straights; 286 + 156 + 13 of three; four aces with each
    # of 12 kickers, and trip aces
    assert (len(built.plain5), len(built.three), len(built.kinds)) == (6175 - 10, 455, 12 + 1)
