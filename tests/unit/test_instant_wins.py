"""§4 instant wins: each pattern, each ruleset and mode, and the §9.4 items about them."""

import pytest
from helpers import lines, non_fouling, room, scored, seat, units

from service.game.hands import hand_table, parse_hand
from service.game.patterns import CARD_PATTERNS, card_patterns, three_flushes_split, three_straights_split

PATTERN_CARDS = {
    "dragon_flush": "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    "dragon": "2S 3C 4D 5H 6S 7C 8D 9H TS JC QD KH AS",
    "thirteen_same_color": "2S 3S 4S 5S 6S 7S 8S 9S 2C 3C JC QC KC",
    "twelve_same_color": "2S 3S 4S 5S 6S 7S 8S 9S 2C 3C JC QC KH",
    "five_pairs_triple": "AS AC AD 2H 2C 3H 3C 4D 4C 5H 5S 6D 6S",
    "six_pairs": "AS AC 2H 2C 3H 3C 4D 4C 5H 5S 6D 6S KD",
    "three_flushes": "2D 5D 7D 6D 9D 3H 4H 5H 7H 8H 8S 9S TS",
    "three_straights": "2S 3C 4D 5H 6S 5C 6D 7H 8S 9C QD KH AS",
}
# Everything each set of cards qualifies for, worked out by hand from §4's definitions.
QUALIFIES = {
    "dragon_flush": {"dragon_flush", "dragon", "thirteen_same_color", "three_flushes", "three_straights"},
    "dragon": {"dragon", "three_straights"},
    "thirteen_same_color": {"thirteen_same_color", "three_flushes"},  # 8 spades + 5 clubs: 5+3 and 5
    "twelve_same_color": {"twelve_same_color"},
    "five_pairs_triple": {"five_pairs_triple", "six_pairs"},
    "six_pairs": {"six_pairs"},
    "three_flushes": {"three_flushes"},
    "three_straights": {"three_straights"},
}
TABLE = hand_table("second")
ALL = frozenset(CARD_PATTERNS)


@pytest.mark.parametrize("pattern", PATTERN_CARDS)
def test_pattern_detection(pattern: str) -> None:
    found = card_patterns(parse_hand(PATTERN_CARDS[pattern]), TABLE, ALL)
    assert set(found) == QUALIFIES[pattern]


def test_no_pattern_in_an_ordinary_hand() -> None:
    assert card_patterns(parse_hand("KC KD 4S 6H 8C QC QD 3S 5H 7C JC JD 2S"), TABLE, ALL) == {}


def test_quads_count_as_two_pairs_and_trips_as_one() -> None:
    assert "six_pairs" in card_patterns(parse_hand("AS AC AD AH 2H 2C 3H 3C 4D 4C 5H 5S KD"), TABLE, ALL)
    five_and_quads = card_patterns(parse_hand("AS AC AD AH 2H 2C 3H 3C 4D 4C 5H 5S 5D"), TABLE, ALL)
    assert {"six_pairs", "five_pairs_triple"} <= set(five_and_quads)
    assert "six_pairs" not in card_patterns(parse_hand("AS AC AD 2H 2C 2D 3H 3C 4D 4C 5H 9S KD"), TABLE, ALL)


def test_three_card_straights_do_not_wrap() -> None:
    # K-A-2 is no straight: 2-6 | 5-9 | K A 2? needs a third 2 — use Q K A versus K A 2.
    assert three_straights_split(parse_hand("KS AC 2D 3H 4S 5C 6D 7H 8S 9C 5D 6S 7C"), TABLE) is None
    split = three_straights_split(parse_hand("AS 2C 3D 3H 4S 5C 6D 7H TS JC QD KH AH"), TABLE)
    assert split is not None and sorted(str(c)[0] for c in split.front) == ["2", "3", "A"]


@pytest.mark.parametrize(
    ("cards", "finder"),
    [
        ("2S 3S 4S 5S 6S 5C 6D 7H 8S 9C QD KH AS", three_straights_split),  # §9.4 item 2: a SF part
        ("2D 3D 4D 5D 6D 3H 4H 5H 7H 8H 8S 9S TS", three_flushes_split),
        ("2D 5D 7D 6D 9D JD KD QD 3H 4H 5H 7H 8H", three_flushes_split),  # 8 diamonds: 5 + 3
        ("2D 5D 7D 6D 9D JD KD QD 3D 4D 5H 7H 8H", three_flushes_split),  # 10 diamonds: 5 + 5
    ],
)
def test_the_split_found_is_real_and_never_fouls(cards: str, finder) -> None:  # type: ignore[no-untyped-def]
    hand = parse_hand(cards)
    split = finder(hand, TABLE)
    assert split is not None
    assert sorted(split.back + split.middle + split.front) == sorted(hand)
    assert TABLE.evaluate5(split.back) >= TABLE.evaluate5(split.middle) >= TABLE.evaluate3(split.front)


UNITS = {
    "maubinh-2020": {
        "dragon_flush": 24,
        "dragon": 12,
        "five_pairs_triple": 6,
        "six_pairs": 3,
        "three_flushes": 3,
        "three_straights": 3,
    },
    "maubinh-chi-at": {
        "dragon_flush": 78,
        "dragon": 26,
        "thirteen_same_color": 26,
        "five_pairs_triple": 12,
        "twelve_same_color": 12,
        "six_pairs": 6,
        "three_straights": 6,
        "three_flushes": 6,
    },
    "maubinh-bao": {
        "dragon_flush": 100,
        "dragon": 30,
        "thirteen_same_color": 9,
        "six_pairs": 6,
        "three_flushes": 6,
        "three_straights": 6,
    },
}


def _opponent_for(cards: list[str]) -> str:
    """A legal arrangement of 13 cards disjoint from ``cards`` with no pattern of its own."""
    from helpers import deal

    return non_fouling(deal(1, [cards, None])[1])


@pytest.mark.parametrize(("ruleset", "pattern"), [(r, p) for r in UNITS for p in UNITS[r]])
def test_instant_win_pays_its_units_and_settles_the_pair(ruleset: str, pattern: str) -> None:
    cards = PATTERN_CARDS[pattern].split()
    wheel = "lowest" if ruleset == "maubinh-bao" else "second"
    extra = {"declare": True} if ruleset == "maubinh-bao" else {}
    holder = seat("H", non_fouling(cards, wheel), **extra)
    result = scored(room(ruleset, holder, seat("O", _opponent_for(cards))))
    assert result["players"][0]["instant_win"]["pattern"] == pattern
    assert lines(result) == [("instant_win", "O", "H", UNITS[ruleset][pattern], None)]
    assert result["showdown"][0]["settled_by"] == "instant_win" and result["showdown"][0]["chi"] == []


ARRANGED_PATTERNS = {
    "four_of_a_kind": "9S 9H 9D 9C 2H | AS AC 3H 4H 6S | TS TC 8S",
    "full_house_middle": "KS KH KD 4C 4D | QS QH QC 3H 3S | TS TC 8S",
    "trips_front": "KS KH KD 4C 4D | 2D 5D 7D 9D JD | TS TC TH",
    "straight_flush": "5C 6C 7C 8C 9C | AS AD 3H 4H 6S | TS TD 8S",
}


@pytest.mark.parametrize("pattern", ARRANGED_PATTERNS)
def test_declared_arrangement_patterns_in_bao(pattern: str) -> None:
    hands = ARRANGED_PATTERNS[pattern]
    opponent = _opponent_for(hands.replace("|", " ").split())
    result = scored(room("maubinh-bao", seat("H", hands, declare=True), seat("O", opponent)))
    assert result["players"][0]["instant_win"]["pattern"] == pattern
    assert lines(result) == [("instant_win", "O", "H", 3, None)]


def test_undeclared_qualifying_player_plays_normally_in_bao() -> None:
    hands = ARRANGED_PATTERNS["four_of_a_kind"]
    result = scored(room("maubinh-bao", seat("H", hands), seat("O", _opponent_for(hands.replace("|", " ").split()))))
    assert result["players"][0]["instant_win"] is None
    assert lines(result, "instant_win") == [] and lines(result, "chi")


def test_declared_but_fouled_keeps_13_card_patterns() -> None:
    """§9.4 item 3: six pairs survive a fouled arrangement."""
    six_pairs = "2H 3H 4D 5H KD | 2C 3C 4C 5S 6D | AS AC 6S"  # middle straight beats back K-high
    result = scored(
        room(
            "maubinh-bao",
            seat("H", six_pairs, declare=True),
            seat("O", _opponent_for(six_pairs.replace("|", " ").split())),
        )
    )
    holder = result["players"][0]
    assert holder["fouled"] and holder["foul_reason"] == "middle_beats_back"
    assert holder["instant_win"]["pattern"] == "six_pairs"
    assert lines(result) == [("instant_win", "O", "H", 6, None)]  # an instant win, not a foul penalty


def test_declared_arrangement_pattern_in_a_fouled_arrangement_is_a_false_declaration() -> None:
    from service.contract import RoomRejected

    fouled_quads = "AS AC 3H 4H 6S | 9S 9H 9D 9C 2H | TS TC 8S"
    opponent = _opponent_for(fouled_quads.replace("|", " ").split())
    with pytest.raises(RoomRejected) as rejected:
        scored(room("maubinh-bao", seat("H", fouled_quads, declare=True), seat("O", opponent)))
    assert [f.pointer for f in rejected.value.faults] == ["/players/0/declare"]


def test_equal_strength_instant_wins_pass_nothing() -> None:
    six_pairs = "AS AC 2H 2C 3H 3C 4D 4C 5H 5S 6D 6S KD"
    straights = "7S 8C 9D TH JS 7C 8D 9H TC JD QS KH AD"  # 7-J, 7-J, Q-K-A: three straights
    result = scored(
        room("maubinh-chi-at", seat("A", six_pairs, status="timed_out"), seat("B", straights, status="timed_out"))
    )
    assert [p["instant_win"]["pattern"] for p in result["players"]] == ["six_pairs", "three_straights"]
    assert result["ledger"] == [] and result["showdown"][0]["settled_by"] == "instant_win"


def test_the_stronger_instant_win_collects_its_own_units() -> None:
    five_pairs_triple = "AS AC AD 2H 2C 3H 3C 4D 4C 5H 5S 6D 6S"
    straights = "7S 8C 9D TH JS 7C 8D 9H TC JD QS KH AH"
    result = scored(
        room(
            "maubinh-2020", seat("A", non_fouling(five_pairs_triple.split())), seat("B", non_fouling(straights.split()))
        )
    )
    assert lines(result) == [("instant_win", "B", "A", 6, None)]


def test_fouled_holder_collects_and_is_reported_fouled_in_automatic_rulesets() -> None:
    """§4 and §9.4 item 4."""
    fouled = "2S 3C 4D 5H 6S | 7C 8D 9H TS JC | QD KH AS"  # dragon, middle J-high straight beats back
    result = scored(room("maubinh-2020", seat("D", fouled), seat("O", _opponent_for(fouled.replace("|", " ").split()))))
    assert result["players"][0]["fouled"] and result["players"][0]["instant_win"]["pattern"] == "dragon"
    assert lines(result) == [("instant_win", "O", "D", 12, None)]


def test_fouled_player_facing_an_instant_win_pays_the_instant_win_not_the_foul() -> None:
    dragon = "2S 3C 4D 5H 6S 7C 8D 9H TS JC QD KH AS"
    fouled_opponent = "KC KD 4S 6H 8C | QC 3S 5C 7S 2H | AD AH 2D"  # front AA beats middle Q-high
    result = scored(
        room("maubinh-bao", seat("D", non_fouling(dragon.split(), "lowest"), declare=True), seat("O", fouled_opponent))
    )
    assert lines(result) == [("instant_win", "O", "D", 30, None)]


def test_leavers_never_hold_an_instant_win() -> None:
    dragon = "2S 3C 4D 5H 6S 7C 8D 9H TS JC QD KH AS"
    result = scored(room("maubinh-2020", seat("D", dragon, status="left"), seat("O", _opponent_for(dragon.split()))))
    assert result["players"][0]["instant_win"] is None
    assert lines(result, "scoop")  # the leaver is fouled and, in maubinh-2020, scooped


def test_timed_out_players_are_checked_in_automatic_rulesets() -> None:
    dragon = "2S 3C 4D 5H 6S 7C 8D 9H TS JC QD KH AS"
    result = scored(
        room("maubinh-chi-at", seat("D", dragon, status="timed_out"), seat("O", _opponent_for(dragon.split())))
    )
    assert lines(result) == [("instant_win", "O", "D", 26, None)]


def test_ends_round_stops_every_comparison_in_the_room() -> None:
    from helpers import deal

    dragon = ["2S", "3C", "4D", "5H", "6S", "7C", "8D", "9H", "TS", "JC", "QD", "KH", "AS"]
    _, b, c = deal(3, [dragon, None, None])
    players = (seat("D", non_fouling(dragon)), seat("B", non_fouling(b)), seat("C", non_fouling(c)))
    chi_at = scored(room("maubinh-chi-at", *players))
    assert lines(chi_at) == [("instant_win", "B", "D", 26, None), ("instant_win", "C", "D", 26, None)]
    assert chi_at["showdown"][2]["settled_by"] == "round_ended" and units(chi_at)["B"] == -26
    twenty = scored(room("maubinh-2020", *players))
    assert twenty["showdown"][2]["settled_by"] == "comparison" and lines(twenty, "chi")


def test_same_strength_patterns_report_the_first_in_the_table() -> None:
    """§9.4 item 1: an all-black dragon in maubinh-chi-at is 'dragon'."""
    black_dragon = "2S 3C 4S 5C 6S 7C 8S 9C TS JC QS KC AC"
    result = scored(
        room(
            "maubinh-chi-at",
            seat("D", black_dragon, status="timed_out"),
            seat("O", _opponent_for(black_dragon.split())),
        )
    )
    assert result["players"][0]["instant_win"]["pattern"] == "dragon"


def test_twelve_of_one_colour_is_no_pattern_in_2020() -> None:
    cards = PATTERN_CARDS["twelve_same_color"].split()
    result = scored(room("maubinh-2020", seat("T", non_fouling(cards)), seat("O", _opponent_for(cards))))
    assert result["players"][0]["instant_win"] is None and lines(result, "chi")


def test_every_pattern_is_listed_once_and_every_list_agrees() -> None:
    """The rulesets' schema, openapi.yaml and the names all list exactly the Pattern enumeration;
    each pattern is either found from the 13 cards or defined on a chi (ON_CHI), never both."""
    import json
    from pathlib import Path

    import yaml

    from service.game.patterns import ARRANGEMENT_PATTERNS, ON_CHI, PATTERN_NAMES, Pattern

    root = Path(__file__).resolve().parents[2]
    schema = json.loads((root / "service" / "rulesets" / "schema.json").read_text("utf-8"))
    in_schema = schema["properties"]["instant_wins"]["properties"]["table"]["items"]["properties"]["pattern"]["enum"]
    spec = yaml.safe_load((root / "openapi.yaml").read_text("utf-8"))
    assert set(in_schema) == set(spec["components"]["schemas"]["Pattern"]["enum"]) == set(Pattern)
    assert set(PATTERN_NAMES) == set(Pattern)
    assert set(ARRANGEMENT_PATTERNS) == set(ON_CHI) and not set(ON_CHI) & set(CARD_PATTERNS)
    assert set(CARD_PATTERNS) | set(ON_CHI) == set(Pattern)
