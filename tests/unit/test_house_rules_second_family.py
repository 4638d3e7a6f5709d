"""House rules, second family (docs/rules.md §12): each knob worked by hand, alone and combined.

The rooms are tests/helpers.py's (maubinh-2020 unless a test patches it: scoop × 3, fouls scooped,
back quads 4, middle full house 2). Against every other seat Q's chi are worth 4, 2 and 1 (total
7). P loses every chi to Q; C loses every chi to Q; between them C wins the back and P the middle
and the front (each worth 1): P nets 1 from C. D (below) loses every chi to Q and to C, and wins
only the back from P.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from helpers import (
    C_FOULED,
    DECK_TEXT,
    P_CARDS,
    P_FOULED,
    SIX_PAIRS,
    C,
    P,
    Q,
    heads_up,
    lines,
    non_fouling,
    room,
    scored,
    seat,
    three,
    units,
    variant,
    with_aces,
)

from service.contract import RoomRejected
from service.documents import score_document

D = "TH JH QC KC AC | 7S 7H KD QD 8D | 3H 5C 6H"  # straight | pair of 7s | 6-high: the 13 cards left
Q_FOULED = "8S 8H 8C 6C 6D | 9S 9D 9C 9H 4D | AH 3D 2C"  # middle (quads) beats back (full house)
SIX_PAIRS_FOULED = "5S 5C 4S 4H 3C | 7S 7H 6S 6H 2S | TS 3H 2D"
TABLE_234 = [{"room_size": 2, "by_scoopers": [2]}, {"room_size": 3, "by_scoopers": [2, 3]},
             {"room_size": 4, "by_scoopers": [2, 3, 4]}]  # fmt: skip


def rules(result: dict[str, Any], step: str) -> list[str]:
    return [line["rule"] for line in result["ledger"] if line["step"] == step]


def four(ruleset: Any) -> dict[str, Any]:
    return scored(room(ruleset, seat("A", Q), seat("B", P), seat("C", C), seat("D", D)))


# scoop.basis fixed


def test_a_fixed_scoop_pays_its_units_whatever_was_won() -> None:
    """Chi 3 + bonus 4 = 7; the scoop is a fixed 3 × (2 − 1) = 3, not 7 × 1: P pays 10."""
    result = heads_up(variant({"scoop": {"multiplier": 2, "basis": "fixed", "fixed_units": 3}}))
    assert units(result) == {"P": -10, "Q": 10}
    assert lines(result, "scoop") == [("scoop", "P", "Q", 3, None)]
    assert rules(result, "scoop") == ["scoop.multiplier, scoop.fixed_units"]


def test_a_fixed_scoop_with_a_sap_lang_table() -> None:
    """4 players, table by scoopers 2/3/4 in a room of 4, fixed 3. A scoops B, C and D; C scoops D
    too, so D has 2 scoopers (m = 3), B and C one (m = 2). Scoops: B→A 3 × 1, C→A 3 × 1, D→A 3 × 2,
    D→C 3 × 2. Chi: A 7 from each; B nets 1 from C and 1 from D; C takes 3 from D.
    A 21 + 12 = 33; B −10 + 2 = −8; C −10 − 1 + 3 + 6 = −2; D −13 − 1 − 9 = −23."""
    patch = {"scoop": {"multiplier": None, "table": TABLE_234, "basis": "fixed", "fixed_units": 3}}
    result = four(variant(patch))
    assert units(result) == {"A": 33, "B": -8, "C": -2, "D": -23}
    assert lines(result, "scoop") == [
        ("scoop", "B", "A", 3, None),
        ("scoop", "C", "A", 3, None),
        ("scoop", "D", "A", 6, None),
        ("scoop", "D", "C", 6, None),
    ]
    assert rules(result, "scoop")[2] == "scoop.table[room_size=4].by_scoopers[2], scoop.fixed_units"


def test_a_fixed_scoop_swept_pays_m_times_s_minus_1() -> None:
    """3 players, fixed 4, multiplier 2, sweep 3 (sweep_pays scoop): A sweeps; each scoop 4 × (2 × 3 − 1)
    = 20, so 27 from B and from C; B nets 1 from C. A +54, B −26, C −28."""
    patch = {"scoop": {"multiplier": 2, "basis": "fixed", "fixed_units": 4, "sweep_multiplier": 3}}
    assert units(three(variant(patch))) == {"A": 54, "B": -26, "C": -28}


# scoop.sweep_multiplier as a table


def test_a_sweep_table_multiplies_by_the_room_s_size() -> None:
    """Sweep 2 in a room of 3, 5 in a room of 4; scoop × 3. Room of 3: each scoop 7 × (3 × 2 − 1) = 35,
    42 from each (A +84, B −41, C −43). Room of 4 (m by flat multiplier 3, D scooped by A and C):
    A sweeps: 7 × (3 × 5 − 1) = 98 from each, 105 from each: A +315. C's scoop of D is not a sweep
    (A scoops C): 3 × 2 = 6, so 9. B: −105 + 1 + 1 = −103; C: −105 − 1 + 9 = −97; D: −105 − 1 − 9."""
    table = [{"room_size": 3, "multiplier": 2}, {"room_size": 4, "multiplier": 5}]
    ruleset = variant({"scoop": {"sweep_multiplier": table}})
    assert units(three(ruleset)) == {"A": 84, "B": -41, "C": -43}
    result = four(ruleset)
    assert units(result) == {"A": 315, "B": -103, "C": -97, "D": -115}
    assert rules(result, "scoop")[0] == "scoop.multiplier × scoop.sweep_multiplier[room_size=4]"


# scoop.sweep_pays total


def test_sweep_pays_total_with_a_fixed_foul_payment() -> None:
    """3 players, C fouled, fixed foul 5, sweep 2 paying the total. A scoops B (7, scoop 7 × 2 = 14)
    and C pays A and B 5 each: A sweeps. Then B pays A its total again, 7 × (2 − 1), and C its fixed
    payment again, 5 × (2 − 1). A 7 + 14 + 7 + 5 + 5 = 38; B −28 + 5 = −23; C −15."""
    patch = {
        "fouls": {"foul_is_scoop": False, "fixed_units": 5},
        "scoop": {"sweep_multiplier": 2, "sweep_pays": "total"},
    }
    result = three(variant(patch), C_FOULED)
    assert units(result) == {"A": 38, "B": -23, "C": -15}
    assert lines(result, "scoop") == [
        ("scoop", "B", "A", 14, None),
        ("scoop", "B", "A", 7, None),
        ("scoop", "C", "A", 5, None),
    ]
    assert rules(result, "scoop") == [
        "scoop.multiplier",
        "scoop.sweep_pays, scoop.sweep_multiplier",
        "scoop.sweep_pays, scoop.sweep_multiplier, fouls.fixed_units",
    ]


@pytest.mark.parametrize(
    ("left_is_scooped", "expected"),
    [
        # A: 7 + 14 + 7 from each of B and C; B −28 + 3 + 6 (it scoops the leaver too); C −28 − 9.
        (True, {"A": 56, "B": -19, "C": -37}),
        # The leaver is not scooped: A 7 + 14 + 7 from B, 7 + 7 from C; B −28 + 3; C −14 − 3.
        (False, {"A": 42, "B": -25, "C": -17}),
    ],
)
def test_sweep_pays_total_with_a_leaver(left_is_scooped: bool, expected: dict[str, int]) -> None:
    """C left: A wins C's chi by foul (7) and B wins C's (3, values 1 each). A sweeps (B scooped, C
    fouled). Its scoops stay total × (3 − 1); each opponent pays its total again × (2 − 1) = 7."""
    patch = {"scoop": {"sweep_multiplier": 2, "sweep_pays": "total"}, "fouls": {"left_is_scooped": left_is_scooped}}
    result = three(variant(patch), C.replace("|", " "), status="left")
    assert units(result) == expected
    assert ("scoop", "C", "A", 7, None) in lines(result, "scoop")


def test_no_sweep_line_heads_up() -> None:
    """A room of 2 is never swept: the base room's 21, sweep or not."""
    patch = {"scoop": {"sweep_multiplier": 2, "sweep_pays": "total"}}
    assert units(heads_up(variant(patch))) == {"P": -21, "Q": 21}


# fouls.both_fouled compare


def test_two_fouled_players_compare_and_one_scoops_the_other() -> None:
    """P and Q both fouled, compared as if neither had: Q's back full house (1, no back bonus), middle
    quads (8), front A-high (1): 10, and a scoop 10 × (3 − 1) = 20: P pays 30. No foul line though
    foul_multiplier is 2, and the scoop stands though foul_is_scoop is false (they are compared as
    players who did not foul). Both are still reported fouled."""
    patch = {"fouls": {"both_fouled": "compare", "foul_is_scoop": False, "foul_multiplier": 2}}
    result = scored(room(variant(patch), seat("P", P_FOULED), seat("Q", Q_FOULED)))
    assert units(result) == {"P": -30, "Q": 30}
    assert lines(result) == [
        ("chi", "P", "Q", 1, "back"),
        ("chi", "P", "Q", 1, "middle"),
        ("chi", "P", "Q", 1, "front"),
        ("bonus", "P", "Q", 7, "middle"),
        ("scoop", "P", "Q", 20, None),
    ]
    assert all("fouls.both_fouled" in rule for rule in (line["rule"] for line in result["ledger"]))
    assert [p["fouled"] for p in result["players"]] == [True, True]
    assert result["showdown"][0]["settled_by"] == "comparison"
    assert result["ledger"][0]["hands"] == {"payee": "full_house", "payer": "two_pair"}


def test_two_fouled_players_nothing_passes_by_default() -> None:
    assert lines(scored(room("maubinh-2020", seat("P", P_FOULED), seat("Q", Q_FOULED)))) == []


def test_a_fouled_player_who_gave_only_cards_is_not_compared() -> None:
    """P left with its 13 cards: nothing to compare, so nothing passes between two fouled players."""
    patch = {"fouls": {"both_fouled": "compare"}}
    result = scored(room(variant(patch), seat("P", P_CARDS, status="left"), seat("Q", Q_FOULED)))
    assert lines(result) == []


def test_a_fouled_player_never_sweeps_though_compared() -> None:
    """3 players, sweep 2; B (P fouled: K5 | A7 | Q-J-4) and C (C fouled: J4 | full house | Q-6-3)
    are compared: B wins back (1) and front (1), C the middle (full house, 2): they net 0, and neither
    sweeps. A scoops both by foul and sweeps: 7 + 7 × (3 × 2 − 1) = 42 from each."""
    patch = {"fouls": {"both_fouled": "compare"}, "scoop": {"sweep_multiplier": 2}}
    result = scored(room(variant(patch), seat("A", Q), seat("B", P_FOULED), seat("C", C_FOULED)))
    assert units(result) == {"A": 84, "B": -42, "C": -42}
    assert [line for line in lines(result) if {line[1], line[2]} == {"B", "C"}] == [
        ("chi", "C", "B", 1, "back"),
        ("chi", "B", "C", 1, "middle"),
        ("chi", "C", "B", 1, "front"),
        ("bonus", "B", "C", 1, "middle"),
    ]


# instant_wins.collision and settles_pair

DRAGON = "5S 6S 7S 8S 9S | TS JS QS KS AH | 2S 3S 4S"
X_SIX_PAIRS = "7C 7D 6C 6D 8C | 5C 5D 4C 4D 3C | 3D 2C 2D"
Y_THREE_FLUSHES = "3H 5H 7H 9H JH | 2S 4S 6S 8S TS | 9C JC KC"


def test_collision_difference_pays_the_difference_of_the_units() -> None:
    """Dragon (12 units) against six pairs (3): under stronger, 12; under difference, 12 − 3 = 9."""
    stronger = scored(room("maubinh-2020", seat("X", X_SIX_PAIRS), seat("D", DRAGON)))
    assert [p["instant_win"]["pattern"] for p in stronger["players"]] == ["six_pairs", "dragon"]
    assert lines(stronger) == [("instant_win", "X", "D", 12, None)]
    result = scored(
        room(variant({"instant_wins": {"collision": "difference"}}), seat("X", X_SIX_PAIRS), seat("D", DRAGON))
    )
    assert lines(result) == [("instant_win", "X", "D", 9, None)]
    assert result["ledger"][0]["rule"] == (
        "instant_wins.table[dragon].units − instant_wins.table[six_pairs].units, instant_wins.collision"
    )


def test_collision_difference_of_equal_units_passes_nothing() -> None:
    """Six pairs (3 units, strength 3) against three flushes (3 units, strength 2): the stronger takes 3;
    the difference is 0."""
    players = (seat("X", X_SIX_PAIRS), seat("Y", Y_THREE_FLUSHES))
    stronger = scored(room("maubinh-2020", *players))
    assert [p["instant_win"]["pattern"] for p in stronger["players"]] == ["six_pairs", "three_flushes"]
    assert lines(stronger) == [("instant_win", "Y", "X", 3, None)]
    assert lines(scored(room(variant({"instant_wins": {"collision": "difference"}}), *players))) == []


def test_settles_pair_false_plays_the_pair_out_with_a_fouled_holder() -> None:
    """H holds six pairs (3 units) but fouled its arrangement. Settling the pair: Q pays H 3. Played out
    too: Q wins every chi by foul, 7, and scoops, 7 × 2 = 14: H pays 21. H −18, Q +18."""
    assert units(scored(room("maubinh-2020", seat("H", SIX_PAIRS_FOULED), seat("Q", Q)))) == {"H": 3, "Q": -3}
    result = scored(room(variant({"instant_wins": {"settles_pair": False}}), seat("H", SIX_PAIRS_FOULED), seat("Q", Q)))
    assert units(result) == {"H": -18, "Q": 18}
    assert lines(result, "instant_win") == [("instant_win", "Q", "H", 3, None)]
    assert lines(result, "scoop") == [("scoop", "H", "Q", 14, None)]
    assert all(line["rule"].endswith("instant_wins.settles_pair") for line in result["ledger"][1:])
    assert result["players"][0]["fouled"] is True


def test_settles_pair_false_lets_the_holder_s_opponent_sweep() -> None:
    """C holds six pairs: 3 from A and from B. Played out, C (7-6 | 5-4 | T-high) loses every chi to A
    (7) and to B (two pair A-7 | K-5 | Q-high: 3). No pair is settled by §4, so A sweeps (× 2): each
    of A's scoops 7 × (3 × 2 − 1) = 35, so 42 from B and from C. B scoops C: 3 + 3 × (3 − 1) = 9.
    A 84 − 3 = 81; B −42 + 9 − 3 = −36; C −42 − 9 + 6 = −45."""
    patch = {"instant_wins": {"settles_pair": False}, "scoop": {"sweep_multiplier": 2}}
    result = three(variant(patch), SIX_PAIRS)
    assert units(result) == {"A": 81, "B": -36, "C": -45}


# aces.mode balance


def _aces(counts: list[int], aces: dict[str, Any], seed: int = 3) -> dict[str, Any]:
    seats = with_aces(seed, counts)
    players = [seat(f"s{k}", non_fouling(hand)) for k, hand in enumerate(seats)]
    return scored(room(variant({"aces": aces}, "maubinh-chi-at"), *players))


BALANCE = {"room_size": 4, "mode": "balance", "units_per_ace": 2, "no_ace_pays": None,
           "collector_min_aces": None, "four_aces_receives": None}  # fmt: skip


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        # balances (aces − 1) × 2: +6, −2, −2, −2 (four aces: no special rule, arranged or not)
        ([4, 0, 0, 0], [("s1", "s0", 2), ("s2", "s0", 2), ("s3", "s0", 2)]),
        # +4, 0, −2, −2
        ([3, 1, 0, 0], [("s2", "s0", 2), ("s3", "s0", 2)]),
        # +2, +2, −2, −2: s0 collects from s2 first; s1 then from s3
        ([2, 2, 0, 0], [("s2", "s0", 2), ("s3", "s1", 2)]),
        # +2, 0, 0, −2
        ([2, 1, 1, 0], [("s3", "s0", 2)]),
        # all 0
        ([1, 1, 1, 1], []),
        # −2, +4, 0, −2: the creditor takes from both debtors, in request order
        ([0, 3, 1, 0], [("s0", "s1", 2), ("s3", "s1", 2)]),
    ],
)
def test_the_ace_balance_for_every_spread(counts: list[int], expected: list[tuple[str, str, int]]) -> None:
    result = _aces(counts, BALANCE)
    assert [(line[1], line[2], line[3]) for line in lines(result, "ace")] == expected
    assert set(rules(result, "ace")) <= {"aces.units_per_ace"}


def test_the_ace_balance_with_a_larger_debt_split_among_creditors() -> None:
    """u = 3, aces 3/0/0/1 → +6, −3, −3, 0: s0 takes 3 from s1 and 3 from s2."""
    result = _aces([3, 0, 0, 1], {**BALANCE, "units_per_ace": 3})
    assert [(line[1], line[2], line[3]) for line in lines(result, "ace")] == [("s1", "s0", 3), ("s2", "s0", 3)]


def _ends_round_room(aces: dict[str, Any]) -> dict[str, Any]:
    """maubinh-chi-at ends the round on s3's six pairs; aces 2/1/1/0 among s0…s3."""
    six = SIX_PAIRS.replace("|", " ").split()
    rest = [c for c in DECK_TEXT if c not in six and c[0] != "A"]
    random.Random(1).shuffle(rest)
    hands = [["AS", "AD", *rest[:11]], ["AC", *rest[11:23]], ["AH", *rest[23:]]]
    players = [seat(f"s{k}", non_fouling(hand)) for k, hand in enumerate(hands)] + [seat("s3", SIX_PAIRS)]
    return scored(room(variant({"aces": aces}, "maubinh-chi-at"), *players))


def test_the_ace_balance_after_an_instant_win_runs_unless_skipped() -> None:
    """s3's six pairs end the round (6 from each). Balance u = 1: s0 +1, s3 −1: s3 pays s0 1. Skipped
    after an instant win: no ace line."""
    result = _ends_round_room({**BALANCE, "units_per_ace": 1})
    assert lines(result, "ace") == [("ace", "s3", "s0", 1, None)]
    assert lines(_ends_round_room({**BALANCE, "units_per_ace": 1, "skip_when_instant_win": True}), "ace") == []


def test_collectors_skipped_after_an_instant_win_too() -> None:
    """The §7 settlement: s3 (no ace) would pay s0 (two aces) 4; skipped after the instant win."""
    collectors = {"room_size": 4, "no_ace_pays": 4, "collector_min_aces": 2, "four_aces_receives": 16}
    assert lines(_ends_round_room(collectors), "ace") == [("ace", "s3", "s0", 4, None)]
    assert lines(_ends_round_room({**collectors, "skip_when_instant_win": True}), "ace") == []


# Bounds


def test_the_largest_knobs_stay_within_2_53_or_are_refused() -> None:
    """High cards worth 1 + 1000 in add mode, scoop 100, sweep 100: A's chi from B are worth 5 (quads),
    3 (full house) and 1001 (A-high), and its swept scoop 1,009 × (100 × 100 − 1) ≈ 10^7 units. At a
    stake of 10^12 that passes 2^53 − 1: refused at /stake, never rounded. (No knob multiplies more:
    units stay below 10^8 in any room.)"""
    top = {p: {k: 1000 for k in ("high_card", "pair", "two_pair")} for p in ("back", "middle", "front")}
    patch = {"bonuses": {"mode": "add", **top}, "scoop": {"multiplier": 100, "sweep_multiplier": 100}}
    request = room(variant(patch), seat("A", Q), seat("B", P), seat("C", C), stake=10**12)
    with pytest.raises(RoomRejected) as refused:
        score_document(request)
    assert [f.pointer for f in refused.value.faults] == ["/stake"]
