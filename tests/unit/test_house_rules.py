"""House rules (docs/rules.md §11): each knob worked by hand, alone and combined.

The rooms (tests/helpers.py), hands written back | middle | front (maubinh-2020 unless a test patches it):

- Q: 9S 9D 9C 9H 4D (four of a kind, back bonus 4) | 8S 8H 8C 6C 6D (full house, middle bonus 2)
  | AH 3D 2C (A-high): chi values 4, 2, 1 when won, total 7.
- P: AS AD 7C 7D 2H (two pair) | KS KH 5H 5D 3S (two pair) | QH JD 4C (Q-high): loses every chi
  to Q; its own chi values are 1, 1, 1.
- C: TS TC TD 2S 2D (full house) | JS JC 4S 4H 5S (two pair) | QS 6S 3C (Q-high): loses every
  chi to Q; against P it wins the back (full house, no back bonus: 1) and loses middle and front.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from helpers import (
    C_FOULED,
    P_CARDS,
    P_FOULED,
    SAP_LANG,
    SIX_PAIRS,
    P,
    Q,
    heads_up,
    lines,
    room,
    scored,
    seat,
    step_totals,
    three,
    units,
    variant,
    with_aces,
)

from service.contract import RoomRejected
from service.documents import score_document


def test_the_base_room_as_the_rules_have_it() -> None:
    """Chi 1 + 1 + 1, bonuses 3 (quads, 4 − 1) and 1 (full house, 2 − 1): total 7; scoop 7 × (3 − 1) = 14."""
    result = heads_up("maubinh-2020")
    assert units(result) == {"P": -21, "Q": 21}
    assert [(line[0], line[3]) for line in lines(result)] == [
        ("chi", 1), ("chi", 1), ("chi", 1), ("bonus", 3), ("bonus", 1), ("scoop", 14)
    ]  # fmt: skip


# scoop.basis


def test_scoop_basis_chi_multiplies_the_chi_won_not_the_bonuses() -> None:
    """chi 3 + bonus 4 = 7, scoop 3 chi × (3 − 1) = 6: P pays 13 (not 21)."""
    result = heads_up(variant({"scoop": {"basis": "chi"}}))
    assert units(result) == {"P": -13, "Q": 13}
    assert lines(result, "scoop") == [("scoop", "P", "Q", 6, None)]
    assert result["ledger"][-1]["rule"] == "scoop.multiplier, scoop.basis"


def test_scoop_basis_chi_with_sap_lang() -> None:
    """maubinh-2020 with the sập làng table, 3 players. A scoops B and C, each scooped by one
    opponent: m = table[3][1] = 2. Scoop 3 × (2 − 1) = 3 from each. A: 7 + 3 from each = +20;
    B: −10 + 1 from C (C wins 1 chi, B wins 2); C: −10 − 1."""
    result = three(variant({"scoop": {"multiplier": None, "table": SAP_LANG, "basis": "chi"}}))
    assert units(result) == {"A": 20, "B": -9, "C": -11}
    assert [line[3] for line in lines(result, "scoop")] == [3, 3]


# bonuses.mode


def test_bonus_mode_add_pays_the_entry_on_top_of_the_chi() -> None:
    """Back 1 + 4, middle 1 + 2, front 1: total 9; scoop 9 × 2 = 18; P pays 27."""
    result = heads_up(variant({"bonuses": {"mode": "add"}}))
    assert units(result) == {"P": -27, "Q": 27}
    assert lines(result, "bonus") == [("bonus", "P", "Q", 4, "back"), ("bonus", "P", "Q", 2, "middle")]


def test_bonus_mode_add_with_scoop_basis_chi() -> None:
    """Total 9 (as above) and scoop 3 × 2 = 6: 15."""
    result = heads_up(variant({"bonuses": {"mode": "add"}, "scoop": {"basis": "chi"}}))
    assert units(result) == {"P": -15, "Q": 15}


def test_an_entry_of_1_is_worth_1_replaced_and_2_added() -> None:
    """A front pair entry of 1 changes nothing in replace mode; in add mode a won pair is worth 2.
    Here Q's front is A-high (no entry) and back/middle keep their entries: only the front entry
    is new, so replace gives 21 as before."""
    assert units(heads_up(variant({"bonuses": {"front": {"high_card": 1}}}))) == {"P": -21, "Q": 21}
    # add: back 5, middle 3, front 1 + 1 = 2: total 10, scoop 20: 30
    result = heads_up(variant({"bonuses": {"mode": "add", "front": {"high_card": 1}}}))
    assert units(result) == {"P": -30, "Q": 30}
    assert lines(result, "bonus")[-1] == ("bonus", "P", "Q", 1, "front")


def test_a_more_specific_entry_wins_even_when_smaller() -> None:
    """Quad aces are four_aces before four_of_a_kind (§5): an entry of 2 beats the category's 4."""
    ace_back = "AS AD AC AH 4D | 8S 8H 8C 6C 6D | QH 3D 2C"
    other = "KS KH 5H 5D 3S | 9S 9D 7C 7D 2H | JH JD 4C"
    ruleset = variant({"bonuses": {"back": {"four_aces": 2}}, "scoop": {"multiplier": 1}})
    result = scored(room(ruleset, seat("P", other), seat("Q", ace_back)))
    assert ("bonus", "P", "Q", 1, "back") in lines(result, "bonus")


# fouls.fixed_units


def test_fixed_foul_payment_replaces_chi_bonus_and_scoop() -> None:
    """Base: Q wins 3 chi by foul, 7, scooped ×3: 21. With fixed_units 6: one foul line of 6."""
    assert units(heads_up("maubinh-2020", P_FOULED)) == {"P": -21, "Q": 21}
    patch = {"fouls": {"foul_is_scoop": False, "fixed_units": 6}}
    result = heads_up(variant(patch), P_FOULED)
    assert lines(result) == [("foul", "P", "Q", 6, None)]
    assert result["ledger"][0]["rule"] == "fouls.fixed_units"
    assert result["showdown"][0]["settled_by"] == "fixed_foul"


def test_fixed_foul_payment_from_a_leaver() -> None:
    patch = {"fouls": {"foul_is_scoop": False, "fixed_units": 6}}
    result = heads_up(variant(patch), P_CARDS, status="left")
    assert lines(result) == [("foul", "P", "Q", 6, None)]


def test_fixed_foul_payment_when_both_foul_nothing_passes() -> None:
    patch = {"fouls": {"foul_is_scoop": False, "fixed_units": 6}}
    q_fouled = "8S 8H 8C 6C 6D | 9S 9D 9C 9H 4D | AH 3D 2C"
    result = scored(room(variant(patch), seat("P", P_FOULED), seat("Q", q_fouled)))
    assert lines(result) == []
    assert result["showdown"][0]["settled_by"] == "both_fouled"


def test_fixed_foul_payment_is_not_paid_when_an_instant_win_ends_the_round() -> None:
    """maubinh-chi-at ends the round on an instant win: C's six pairs (6 units) from each, nothing else,
    though P fouled against Q."""
    patch = {"fouls": {"foul_is_scoop": False, "fixed_units": 6}}
    result = scored(room(variant(patch, "maubinh-chi-at"), seat("P", P_FOULED), seat("Q", Q), seat("C", SIX_PAIRS)))
    assert lines(result) == [("instant_win", "P", "C", 6, None), ("instant_win", "Q", "C", 6, None)]


def test_fixed_foul_pairs_are_not_scoops_in_the_sap_lang_count() -> None:
    """maubinh-chi-at (sập làng, foul_is_scoop false once fixed_units is set), 3 players: C fouled.
    A scoops B by comparison: k(B) = 1, m = table[3][1] = 2. Under chi-at's bonuses A's chi are worth
    4 (quads), 4 (middle full house) and 1: total 9, scoop 9 × (2 − 1) = 9. C pays A and B 5 each as
    fixed payments: no chi, no scoop, and they do not count as scoopers."""
    patch = {"fouls": {"foul_is_scoop": False, "fixed_units": 5}}
    result = three(variant(patch, "maubinh-chi-at"), C_FOULED)
    assert lines(result, "foul") == [("foul", "C", "A", 5, None), ("foul", "C", "B", 5, None)]
    assert lines(result, "scoop") == [("scoop", "B", "A", 9, None)]
    assert result["ledger"][-1]["rule"] == "fouls.fixed_units"


# scoop.sweep_multiplier


def test_sweep_doubles_again_when_one_player_scoops_the_whole_room() -> None:
    """Base: A scoops B and C: 7 + 7 × 2 = 21 from each; C wins 1 chi from B and B 2 from C.
    Sweep 2: scoop 7 × (3 × 2 − 1) = 35, so 42 from each: A +84, B −42 + 1, C −42 − 1."""
    assert units(three("maubinh-2020")) == {"A": 42, "B": -20, "C": -22}
    result = three(variant({"scoop": {"sweep_multiplier": 2}}))
    assert units(result) == {"A": 84, "B": -41, "C": -43}
    assert [line["rule"] for line in result["ledger"] if line["step"] == "scoop"] == [
        "scoop.multiplier × scoop.sweep_multiplier"
    ] * 2


def test_sweep_with_sap_lang() -> None:
    """Table m = 2 for one scooper; sweep 2: 7 × (2 × 2 − 1) = 21, so 28 from each. Without sweep
    7 × (2 − 1) = 7, so 14 from each."""
    table = {"multiplier": None, "table": SAP_LANG}
    assert units(three(variant({"scoop": table}))) == {"A": 28, "B": -13, "C": -15}
    assert units(three(variant({"scoop": {**table, "sweep_multiplier": 2}}))) == {"A": 56, "B": -27, "C": -29}


def test_sweep_counts_a_fouled_opponent_and_multiplies_the_scoop_by_foul() -> None:
    """C left (fouled; 2020 scoops leavers). A scoops B and C: sweeps. From C: 7 + 7 × 5 = 42; from B: 42.
    B scoops C too, by foul, but does not sweep (A scoops B): 3 + 3 × 2 = 9. A +84, B −33, C −51."""
    result = three(variant({"scoop": {"sweep_multiplier": 2}}), "TS TC TD 2S 2D JS JC 4S 4H 5S QS 6S 3C", status="left")
    assert units(result) == {"A": 84, "B": -33, "C": -51}


def test_no_sweep_when_an_instant_win_settled_one_of_the_pairs() -> None:
    """C holds six pairs (3 units from each). A scoops B, but A's pair with C was settled by §4: no
    sweep, so the variant scores exactly as the base."""
    base = three("maubinh-2020", SIX_PAIRS)
    swept = three(variant({"scoop": {"sweep_multiplier": 5}}), SIX_PAIRS)
    assert units(swept) == units(base) == {"A": 18, "B": -24, "C": 6}


def test_no_sweep_heads_up() -> None:
    assert units(heads_up(variant({"scoop": {"sweep_multiplier": 9}}))) == {"P": -21, "Q": 21}


def test_no_sweep_when_ends_round() -> None:
    """maubinh-chi-at ends the round on C's six pairs: no chi compared, so nothing to sweep."""
    result = three(variant({"scoop": {"sweep_multiplier": 9}}, "maubinh-chi-at"), SIX_PAIRS)
    assert {line[0] for line in lines(result)} == {"instant_win"}


def test_scoop_multiplier_1_pays_no_scoop_but_a_sweep_still_can() -> None:
    """m = 1: 7 × (1 − 1) = 0, no line. With sweep 3: 7 × (1 × 3 − 1) = 14 from each."""
    assert lines(three(variant({"scoop": {"multiplier": 1}})), "scoop") == []
    result = three(variant({"scoop": {"multiplier": 1, "sweep_multiplier": 3}}))
    assert [line[3] for line in lines(result, "scoop")] == [14, 14]


# aces


def _four(counts: list[int], ruleset: Any, seed: int = 3, first_left: bool = False) -> dict[str, Any]:
    from helpers import non_fouling

    seats = with_aces(seed, counts)
    players = [seat(f"s{k}", non_fouling(hand)) for k, hand in enumerate(seats)]
    if first_left:
        players[0] = seat("s0", " ".join(seats[0]), status="left")
    return scored(room(ruleset, *players))


def test_ace_parameters_with_a_remainder() -> None:
    """no_ace_pays 5 among the 3 holders of 1+ aces: 5 div 3 = 1 each, and the first 5 mod 3 = 2
    collectors in request order one more: s0 2, s1 2, s2 1, all from s3."""
    aces = {"room_size": 4, "no_ace_pays": 5, "collector_min_aces": 1, "four_aces_receives": 20}
    result = _four([2, 1, 1, 0], variant({"aces": aces}, "maubinh-chi-at"))
    assert lines(result, "ace") == [
        ("ace", "s3", "s0", 2, None),
        ("ace", "s3", "s1", 2, None),
        ("ace", "s3", "s2", 1, None),
    ]


def test_four_aces_receive_the_ruleset_s_figure() -> None:
    """s0 holds the four aces and left, so did not arrange them (§9.4 item 7): 20 from each of three."""
    aces = {"room_size": 4, "no_ace_pays": 5, "collector_min_aces": 1, "four_aces_receives": 20}
    result = _four([4, 0, 0, 0], variant({"aces": aces}, "maubinh-chi-at"), first_left=True)
    assert lines(result, "ace") == [("ace", f"s{k}", "s0", 20, None) for k in (1, 2, 3)]
    assert step_totals(result)["s0"]["ace"] == 60


def test_aces_null_turns_the_settlement_off_and_a_patch_turns_it_on() -> None:
    assert lines(_four([2, 1, 1, 0], variant({"aces": None}, "maubinh-chi-at")), "ace") == []
    aces = {"room_size": 4, "no_ace_pays": 4, "collector_min_aces": 2, "four_aces_receives": 16}
    assert lines(_four([2, 1, 1, 0], variant({"aces": aces})), "ace") == [("ace", "s3", "s0", 4, None)]


def test_no_collector_and_zero_payments_write_no_line() -> None:
    nobody = {"room_size": 4, "no_ace_pays": 4, "collector_min_aces": 3, "four_aces_receives": 16}
    assert lines(_four([2, 1, 1, 0], variant({"aces": nobody}, "maubinh-chi-at")), "ace") == []
    free = {"room_size": 4, "no_ace_pays": 0, "collector_min_aces": 1, "four_aces_receives": 0}
    assert lines(_four([2, 1, 1, 0], variant({"aces": free}, "maubinh-chi-at")), "ace") == []


# amounts


def test_an_amount_past_2_53_is_refused_not_rounded() -> None:
    """Back quads worth 1 + 1000, middle full house 1 + 2, front 1: total 1005, scoop × 100: P pays
    100,500 units; at a stake of 10^12 that is 1.005 × 10^17, past 2^53 − 1 ≈ 9.007 × 10^15."""
    patch = {"bonuses": {"mode": "add", "back": {"four_of_a_kind": 1000}}, "scoop": {"multiplier": 100}}
    request = room(variant(patch), seat("P", P), seat("Q", Q), stake=10**12)
    with pytest.raises(RoomRejected) as refused:
        score_document(request)
    assert [(f.pointer, f.code) for f in refused.value.faults] == [("/stake", "amount_out_of_range")]
    request["stake"] = 1000
    assert score_document(request)["players"][1]["amount"] == (1001 + 3 + 1) * 100 * 1000


# Each knob with a leaver, and with both players fouled


def test_bonus_mode_add_with_a_leaver_pays_the_bonus_on_chi_won_by_foul() -> None:
    """P left (2020 scoops leavers). Q wins all three by foul, add mode: back 1 + 4, middle 1 + 2, front 1
    = 9; scoop 9 × (3 − 1) = 18; P pays 27, as when P arranged and lost (§9.4 item 9)."""
    result = heads_up(variant({"bonuses": {"mode": "add"}}), P_CARDS, status="left")
    assert units(result) == {"P": -27, "Q": 27}
    assert lines(result, "bonus") == [("bonus", "P", "Q", 4, "back"), ("bonus", "P", "Q", 2, "middle")]


def test_scoop_basis_chi_with_a_leaver_is_three_chi() -> None:
    """P left: Q's chi values 4 + 2 + 1 = 7; the scoop on the chi won is 3 × (3 − 1) = 6; P pays 13."""
    result = heads_up(variant({"scoop": {"basis": "chi"}}), P_CARDS, status="left")
    assert units(result) == {"P": -13, "Q": 13}


def test_a_leaver_who_is_not_scooped_pays_the_chi_only_whatever_the_basis() -> None:
    """left_is_scooped false: P pays Q's 7 in chi and bonuses, no scoop, under either basis."""
    for basis in ("total", "chi"):
        result = heads_up(
            variant({"fouls": {"left_is_scooped": False}, "scoop": {"basis": basis}}), P_CARDS, status="left"
        )
        assert units(result) == {"P": -7, "Q": 7}


def test_both_fouled_nothing_passes_under_any_knob() -> None:
    q_fouled = "8S 8H 8C 6C 6D | 9S 9D 9C 9H 4D | AH 3D 2C"
    patches = [
        {"bonuses": {"mode": "add"}},
        {"scoop": {"basis": "chi", "sweep_multiplier": 5}},
        {"fouls": {"foul_is_scoop": False, "fixed_units": 7}},
        {"fouls": {"foul_multiplier": 3}},
    ]
    for patch in patches:
        result = scored(room(variant(patch), seat("P", P_FOULED), seat("Q", q_fouled)))
        assert lines(result) == [], patch


def test_sweep_and_add_when_every_opponent_fouled() -> None:
    """3 players, B and C both fouled, foul_is_scoop true: A scoops both by foul and sweeps (× 2). A's
    chi values in add mode: 5 + 3 + 1 = 9, scoop 9 × (3 × 2 − 1) = 45, so 54 from each; B and C
    both fouled: nothing between them. A +108, B −54, C −54."""
    patch = {"bonuses": {"mode": "add"}, "scoop": {"sweep_multiplier": 2}}
    result = (
        three(variant(patch), C_FOULED)
        if False
        else scored(room(variant(patch), seat("A", Q), seat("B", P_FOULED), seat("C", C_FOULED)))
    )
    assert units(result) == {"A": 108, "B": -54, "C": -54}


def test_ace_parameters_with_ends_round() -> None:
    """maubinh-chi-at ends the round on s3's six pairs (6 from each, no chi compared), but the ace
    settlement still runs (§4) with the variant's figures: s3, holding no ace, pays no_ace_pays 9 to
    s0, the one holder of two (aces 2/1/1/0)."""
    from helpers import DECK_TEXT, non_fouling

    six = SIX_PAIRS.replace("|", " ").split()
    rest = [c for c in DECK_TEXT if c not in six and c[0] != "A"]  # 35 cards
    random.Random(1).shuffle(rest)
    hands = [["AS", "AD", *rest[:11]], ["AC", *rest[11:23]], ["AH", *rest[23:]]]
    aces = {"room_size": 4, "no_ace_pays": 9, "collector_min_aces": 2, "four_aces_receives": 16}
    players = [seat(f"s{k}", non_fouling(hand)) for k, hand in enumerate(hands)] + [seat("s3", SIX_PAIRS)]
    result = scored(room(variant({"aces": aces}, "maubinh-chi-at"), *players))
    assert [p["instant_win"] and p["instant_win"]["pattern"] for p in result["players"]] == [
        None,
        None,
        None,
        "six_pairs",
    ]
    assert lines(result, "instant_win") == [("instant_win", f"s{k}", "s3", 6, None) for k in range(3)]
    assert {line[0] for line in lines(result)} == {"instant_win", "ace"}
    assert lines(result, "ace") == [("ace", "s3", "s0", 9, None)]
