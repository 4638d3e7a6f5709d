"""§6 scoops and the foul penalty, §7 aces, leavers and time-outs: each worked by hand."""

from collections import Counter

import pytest
from helpers import deal, lines, room, scored, seat, units, with_aces

# Three players with no instant win; A and B both beat C at every position (hand-checked):
A = "9S 9H 9D 9C 2H | AS AC 3H 4H 6S | TS TC 8S"  # quads | pair A | pair T
B = "KC KD 4S 6H 8C | QC QD 3S 5H 7C | JC JD 2S"  # pair K | pair Q | pair J
C = "KS 7S 5C 3C 2C | QS 8D 6C 4C 2D | JS 7D 3D"  # K high | Q high | J high


@pytest.mark.parametrize(
    ("ruleset", "m_c", "want"),
    [
        # A vs B: A wins back (quads, chi value 4) and middle (1), B wins front (1): B pays A 4 net.
        # C pays A 4 + 1 + 1 = 6 and B 1 + 1 + 1 = 3, each times m for the scoop.
        ("maubinh-2020", 3, {"A": 4 + 6 * 3, "B": -4 + 3 * 3, "C": -(6 + 3) * 3}),  # flat ×3
        ("maubinh-chi-at", 3, {"A": 4 + 6 * 3, "B": -4 + 3 * 3, "C": -(6 + 3) * 3}),  # n=3, k=2 → ×3
        ("maubinh-bao", 2, {"A": 4 + 6 * 2, "B": -4 + 3 * 2, "C": -(6 + 3) * 2}),  # flat ×2
    ],
)
def test_scoop_by_comparison(ruleset: str, m_c: int, want: dict[str, int]) -> None:
    result = scored(room(ruleset, seat("A", A), seat("B", B), seat("C", C)))
    assert lines(result, "scoop") == [
        ("scoop", "C", "A", 6 * (m_c - 1), None),
        ("scoop", "C", "B", 3 * (m_c - 1), None),
    ]
    assert units(result) == want
    pair_ab = result["showdown"][0]
    assert pair_ab["players"] == ["A", "B"] and pair_ab["settled_by"] == "comparison"
    assert [(c["position"], c["winner"], c["units"]) for c in pair_ab["chi"]] == [
        ("back", "A", 4),
        ("middle", "A", 1),
        ("front", "B", 1),
    ]
    assert pair_ab["scooped_by"] is None and pair_ab["units"] == {"A": 4, "B": -4}
    assert result["showdown"][1]["scooped_by"] == "A"


def test_a_tie_on_one_chi_is_no_scoop() -> None:
    c_ties_front = "KS KH 7S 5C 2C | QS QH 6C 4C 3D | JS JH 2D"  # KK 7 < KK 8, QQ 6 < QQ 7, JJ 2 = JJ 2
    result = scored(room("maubinh-2020", seat("B", B), seat("C", c_ties_front)))
    assert not result["players"][1]["fouled"]
    assert [c["winner"] for c in result["showdown"][0]["chi"]] == ["B", "B", None]
    assert lines(result, "scoop") == []
    assert units(result) == {"B": 2, "C": -2}


SAP_LANG = {(2, 1): 2, (3, 1): 2, (3, 2): 3, (4, 1): 2, (4, 2): 2, (4, 3): 4}  # docs/rules.md §9.2, by hand


ARRANGED = [
    "KC KD 4S 6H 8C | QC QD 3S 5H 7C | JC JD 2S",  # pair K | pair Q | pair J
    "KS 7S 5C 3C 2C | QS 8D 6C 4C 2D | JS 7D 3D",  # K high | Q high | J high
    "AH TH 9D 6D 4D | AD 9C 8H 5S 3H | AS 7H 2H",  # A high | A high | A high
]
"""Legal, and no hand worth a bonus in maubinh-chi-at: each chi won over a fouled player is 1 unit."""


@pytest.mark.parametrize(("n", "fouled"), [(2, 1), (3, 1), (3, 2), (4, 1), (4, 2), (4, 3)])
def test_sap_lang_table_by_room_size_and_scoopers(n: int, fouled: int) -> None:
    """Timed-out players foul in maubinh-chi-at and fouls scoop: each of the k = n − fouled arranged
    players wins all three chi of a fouled one, 1 unit each (no bonus hands), so the scoop pays
    3 × (m − 1) with m from the table by room size and k."""
    k = n - fouled
    fixed = [hands.replace("|", "").split() for hands in ARRANGED[:k]]
    seats = deal(11 * n + fouled, [*fixed, *([None] * fouled)])
    players = [seat(f"p{i}", ARRANGED[i]) for i in range(k)]
    players += [seat(f"p{i}", " ".join(seats[i]), status="timed_out") for i in range(k, n)]
    result = scored(room("maubinh-chi-at", *players))
    m = SAP_LANG[(n, k)]
    scoops = [line for line in lines(result, "scoop") if int(line[1][1:]) >= k]
    assert sorted((payer, payee, units) for _, payer, payee, units, _ in scoops) == sorted(
        (f"p{f}", f"p{a}", 3 * (m - 1)) for f in range(k, n) for a in range(k)
    )


def test_fouled_players_pass_nothing_between_them() -> None:
    seats = deal(5, [None, None])
    result = scored(room("maubinh-2020", *(seat(f"p{k}", " ".join(c), status="left") for k, c in enumerate(seats))))
    assert result["ledger"] == [] and result["showdown"][0]["settled_by"] == "both_fouled"


FOULED_B = "KC KD 4S 6H 8C | QC QD 3S 5H 7C | AD AH 2S"  # front AA beats middle QQ: fouled


def test_foul_penalty_in_bao_doubles_what_the_fouled_player_lost() -> None:
    result = scored(room("maubinh-bao", seat("A", A), seat("B", FOULED_B)))
    assert result["players"][1]["fouled"] and result["players"][1]["foul_reason"] == "front_beats_middle"
    # A wins every chi: back quads 4 (1 + 3 bonus), middle 1, front 1 → 6; foul line 6 × (2 − 1); no scoop.
    assert lines(result, "chi") == [("chi", "B", "A", 1, p) for p in ("back", "middle", "front")]
    assert lines(result, "bonus") == [("bonus", "B", "A", 3, "back")]  # §9.4 item 9: paid on a foul win
    assert lines(result, "scoop") == []
    assert lines(result, "foul") == [("foul", "B", "A", 6, None)]
    assert units(result) == {"A": 12, "B": -12}


def test_fouled_player_is_scooped_where_foul_is_scoop() -> None:
    result = scored(room("maubinh-2020", seat("A", A), seat("B", FOULED_B)))
    assert lines(result, "scoop") == [("scoop", "B", "A", 12, None)]  # total 6 × (3 − 1)
    assert lines(result, "foul") == []  # foul_multiplier 1
    assert units(result) == {"A": 18, "B": -18}


@pytest.mark.parametrize(
    ("ruleset", "scoop", "foul"),
    [
        ("maubinh-2020", [("scoop", "B", "A", 12, None)], []),  # left_is_scooped: ×3
        ("maubinh-chi-at", [], []),  # a leaver is fouled but not scooped
        ("maubinh-bao", [], [("foul", "B", "A", 6, None)]),  # a leaver pays the lủng penalty
    ],
)
def test_leavers_are_fouled_in_every_ruleset(ruleset: str, scoop: list[object], foul: list[object]) -> None:
    leaver = seat("B", "KC KD 4S 6H 8C QC QD 3S 5H 7C JC JD 2S", status="left")
    result = scored(room(ruleset, seat("A", A), leaver))
    player = result["players"][1]
    assert (player["fouled"], player["foul_reason"], player["hands"]) == (True, "left", None)
    assert len(lines(result, "chi")) == 3
    assert lines(result, "scoop") == scoop
    assert lines(result, "foul") == foul


def test_a_leaver_with_a_good_arrangement_is_still_fouled() -> None:
    result = scored(room("maubinh-chi-at", seat("A", B), seat("B", A, status="left")))
    assert result["players"][1]["fouled"] and result["players"][1]["hands"]["back"]["category"] == "four_of_a_kind"
    assert units(result) == {"A": 3, "B": -3}  # B's quads win nothing: B fouled, no scoop for a leaver


@pytest.mark.parametrize(
    ("ruleset", "fouled"),
    [("maubinh-2020", False), ("maubinh-chi-at", True), ("maubinh-bao", False)],
)
def test_timed_out_follows_the_rulesets_timeout(ruleset: str, fouled: bool) -> None:
    result = scored(room(ruleset, seat("A", A), seat("B", B, status="timed_out")))
    assert result["players"][1]["fouled"] is fouled
    assert result["players"][1]["foul_reason"] == ("timed_out" if fouled else None)


def test_timed_out_as_arranged_still_fouls_a_fouled_arrangement() -> None:
    result = scored(room("maubinh-2020", seat("A", A), seat("B", FOULED_B, status="timed_out")))
    assert result["players"][1]["foul_reason"] == "front_beats_middle"


# Aces (§7): maubinh-chi-at, four players, everyone timed out (fouled, so no chi passes).


def _ace_room(counts: list[int], seed: int = 1) -> dict[str, object]:
    seats = with_aces(seed, counts)
    return room(
        "maubinh-chi-at", *(seat(n, " ".join(c), status="timed_out") for n, c in zip("PQRS", seats, strict=True))
    )


@pytest.mark.parametrize(
    ("counts", "want"),
    [
        ([2, 1, 1, 0], [("S", "P", 4)]),
        ([2, 2, 0, 0], [("R", "P", 2), ("S", "P", 2), ("R", "Q", 2), ("S", "Q", 2)]),
        ([3, 1, 0, 0], [("R", "P", 4), ("S", "P", 4)]),
        ([0, 3, 0, 1], [("P", "Q", 4), ("R", "Q", 4)]),
        ([1, 1, 1, 1], []),
        ([4, 0, 0, 0], [("Q", "P", 16), ("R", "P", 16), ("S", "P", 16)]),
        ([0, 0, 4, 0], [("P", "R", 16), ("Q", "R", 16), ("S", "R", 16)]),
    ],
)
def test_ace_distributions(counts: list[int], want: list[tuple[str, str, int]]) -> None:
    result = scored(_ace_room(counts))
    assert [p["aces"] for p in result["players"]] == counts
    assert Counter(line[1:4] for line in lines(result, "ace")) == Counter(want)
    assert lines(result) == lines(result, "ace")  # nothing else passes: all fouled, ace lines never multiplied


def _four_aces_holder(arrangement: str, status: str = "arranged") -> dict[str, object]:
    used = arrangement.replace("|", " ").split()
    seats = deal(9, [used, None, None, None])
    others = [seat(n, " ".join(c), status="timed_out") for n, c in zip("QRS", seats[1:], strict=True)]
    return room("maubinh-chi-at", seat("P", arrangement, status=status), *others)


def test_four_aces_arranged_together_in_the_back_skip_the_ace_settlement() -> None:
    result = scored(_four_aces_holder("AS AC AD AH 2C | KS KD 8C 8D 3H | QS QD 4C"))
    assert not result["players"][0]["fouled"]
    assert lines(result, "ace") == []
    assert lines(result, "bonus")[0] == ("bonus", "Q", "P", 15, "back")  # four_aces in the back: 16


def test_four_aces_arranged_together_in_the_middle_skip_too() -> None:
    result = scored(_four_aces_holder("6H 7H 8H 9H TH | AS AC AD AH 2C | QS QD 4C"))
    assert not result["players"][0]["fouled"]
    assert lines(result, "ace") == []


def test_four_aces_split_over_two_hands_collect_16_from_each() -> None:
    result = scored(_four_aces_holder("AS AC KD KH 2C | QS 8C 7D 5D 3H | AD AH 4C"))
    assert result["players"][0]["foul_reason"] == "front_beats_middle"
    assert Counter(line[1:4] for line in lines(result, "ace")) == Counter(
        [("Q", "P", 16), ("R", "P", 16), ("S", "P", 16)]
    )


def test_four_aces_split_in_a_legal_arrangement_collect_16_from_each() -> None:
    result = scored(_four_aces_holder("AS AC KD KH 2C | AD AH 8C 8D 3H | QS QD 4C"))
    assert not result["players"][0]["fouled"]
    assert len(lines(result, "ace")) == 3 and all(line[3] == 16 for line in lines(result, "ace"))


def test_four_aces_together_in_a_fouled_arrangement_collect_16_from_each() -> None:
    result = scored(_four_aces_holder("KS KD 8C 8D 3H | AS AC AD AH 2C | QS QD 4C"))
    assert result["players"][0]["foul_reason"] == "middle_beats_back"
    assert len(lines(result, "ace")) == 3 and all(line[2] == "P" and line[3] == 16 for line in lines(result, "ace"))


def test_four_aces_held_by_a_leaver_collect_16_from_each() -> None:
    """§9.4 item 7: fouled by status, the aces were never arranged."""
    result = scored(_four_aces_holder("AS AC AD AH 2C | KS KD 8C 8D 3H | QS QD 4C", status="left"))
    assert len(lines(result, "ace")) == 3 and all(line[2] == "P" and line[3] == 16 for line in lines(result, "ace"))


def test_no_ace_settlement_outside_four_player_chi_at_rooms() -> None:
    seats = with_aces(2, [2, 1, 1, 0])
    four = [seat(n, " ".join(c), status="left") for n, c in zip("PQRS", seats, strict=True)]
    assert lines(scored(room("maubinh-2020", *four)), "ace") == []
    three = deal(4, [["AS", "AC", *seats[0][2:]], None, None])
    result = scored(
        room("maubinh-chi-at", *(seat(n, " ".join(c), status="left") for n, c in zip("PQR", three, strict=True)))
    )
    assert lines(result, "ace") == []
