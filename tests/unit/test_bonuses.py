"""§5 bonuses: each ruleset's table, by the most specific kind, paid only on a won chi."""

import pytest
from helpers import lines, room, scored, seat

LOSER = "KC KD 4S 6H 8C | QC QD 3S 5H 7C | JC JD 2S"  # pairs K > Q > J, no bonus anywhere

# (position, winner's arrangement) — every winner avoids the loser's cards.
HANDS = {
    ("back", "four_of_a_kind"): "9S 9H 9D 9C 2H | AS AC 3H 4H 6S | TS TC 8S",
    ("back", "four_aces"): "AS AH AD AC 2H | KS KH 3H 4H 6S | TS TC 8S",
    ("back", "straight_flush"): "5D 6D 7D 8D 9D | AS AC 3H 4H 6S | TS TC 8S",
    ("back", "royal_flush"): "TH JH QH KH AH | AS AC 3H 4H 6S | TS TC 8S",
    ("back", "steel_wheel"): "AD 2D 3D 4D 5D | AS AC 3H 4H 6S | TS TC 8S",
    ("middle", "full_house"): "9S 9H 9D 9C 2H | AS AC AH 3H 3D | TS TC 8S",
    ("middle", "four_of_a_kind"): "5D 6D 7D 8D 9D | TS TH TD TC 2H | AS AC 8S",
    ("middle", "four_aces"): "5D 6D 7D 8D 9D | AS AH AD AC 2H | TS TC 8S",
    ("middle", "straight_flush"): "TH JH QH KH AH | 5D 6D 7D 8D 9D | AS AC 8S",
    ("middle", "royal_flush"): "TH JH QH KH AH | TS JS QS KS AS | 2H 3H 8S",
    ("middle", "steel_wheel"): "TH JH QH KH AH | AD 2D 3D 4D 5D | AS AC 8S",
    ("front", "three_of_a_kind"): "9S 9H 9D 9C 2H | 2D 3D 4D 6D 8D | TS TC TH",
    ("front", "trip_aces"): "9S 9H 9D 9C 2H | 2D 3D 4D 6D 8D | AS AC AH",
}

# Chi value of each (position, hand) per ruleset, copied by hand from docs/rules.md §9; a hand whose
# own kind has no row falls back to its category's row (most specific first), else 1.
VALUES = {
    "maubinh-2020": {
        ("back", "four_of_a_kind"): 4,
        ("back", "four_aces"): 4,
        ("back", "straight_flush"): 5,
        ("back", "royal_flush"): 5,
        ("back", "steel_wheel"): 5,
        ("middle", "full_house"): 2,
        ("middle", "four_of_a_kind"): 8,
        ("middle", "four_aces"): 8,
        ("middle", "straight_flush"): 10,
        ("middle", "royal_flush"): 10,
        ("middle", "steel_wheel"): 10,
        ("front", "three_of_a_kind"): 3,
        ("front", "trip_aces"): 3,
    },
    "maubinh-chi-at": {
        ("back", "four_of_a_kind"): 4,
        ("back", "four_aces"): 16,
        ("back", "straight_flush"): 5,
        ("back", "royal_flush"): 10,
        ("back", "steel_wheel"): 7,
        ("middle", "full_house"): 4,
        ("middle", "four_of_a_kind"): 8,
        ("middle", "four_aces"): 32,
        ("middle", "straight_flush"): 10,
        ("middle", "royal_flush"): 20,
        ("middle", "steel_wheel"): 14,
        ("front", "three_of_a_kind"): 5,
        ("front", "trip_aces"): 15,
    },
}

VALUES["maubinh-bao"] = dict(VALUES["maubinh-2020"])  # docs/rules.md §9.3 lists the same entries as §9.1

CASES = [(ruleset, position, hand) for ruleset in VALUES for (position, hand) in HANDS]


@pytest.mark.parametrize(("ruleset", "position", "hand"), CASES)
def test_bonus_table_entry(ruleset: str, position: str, hand: str) -> None:
    result = scored(room(ruleset, seat("W", HANDS[(position, hand)]), seat("L", LOSER)))
    assert not any(p["fouled"] or p["instant_win"] for p in result["players"])
    value = VALUES[ruleset][(position, hand)]
    assert ("chi", "L", "W", 1, position) in lines(result, "chi")
    bonus = [line for line in lines(result, "bonus") if line[4] == position]
    assert bonus == [("bonus", "L", "W", value - 1, position)]
    rule = next(line["rule"] for line in result["ledger"] if line["step"] == "bonus" and line["position"] == position)
    assert rule.startswith(f"bonuses.{position}.")


def test_no_bonus_on_a_tied_chi() -> None:
    a = "9S 9H 9D 9C 2H | AS AC 3H 4H 6S | TS TC 8S"
    b = "5S 5H 5D 5C 2D | AD AH 3D 4D 6D | TD TH 8C"  # different quads in back, same middle/front ranks
    result = scored(room("maubinh-2020", seat("A", a), seat("B", b)))
    assert lines(result, "bonus") == [("bonus", "B", "A", 3, "back")]
    assert [line[4] for line in lines(result, "chi")] == ["back"]  # middle and front tie: nothing passes


def test_no_bonus_paid_by_the_holder_of_a_losing_special_hand() -> None:
    """A bonus goes to the winner of the chi, never to a loser with a special hand."""
    winner = "TH JH QH KH AH | TS JS QS KS AS | 2H 3H 8S"
    loser = "5D 6D 7D 8D 9D | 4C 4D 4S 7C 7S | 9C 9H 2C"
    result = scored(room("maubinh-2020", seat("W", winner), seat("L", loser)))
    assert [line[1:] for line in lines(result, "bonus")] == [("L", "W", 4, "back"), ("L", "W", 9, "middle")]
