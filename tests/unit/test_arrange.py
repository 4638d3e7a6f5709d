"""The arrangement advisor: never fouls, uses exactly the cards, is deterministic, and spots
every instant-win pattern the scoring pipeline would detect."""

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np
import pytest
from helpers import DECK_TEXT
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import service.advisor.search as search_module
from service.advisor.expectation import SplitValues, expected_units
from service.advisor.opponents import OpponentField, opponents_field, weak_field
from service.advisor.search import best_distinct, pattern_holders
from service.advisor.splits import COMBOS3, COMBOS5, evaluate_subsets, legal_splits, lexicographic, split_cards, splits
from service.contract import RoomRejected
from service.documents import arrange_document, evaluate_document, score_document
from service.game.cards import Card, parse_card
from service.game.hand_strengths import CATEGORY_UNIT
from service.game.hands import POSITIONS, hand_table
from service.game.patterns import ON_CHI
from service.rulesets import Ruleset
from service.rulesets.catalogue import builtin_catalogue
from service.scoring import qualifying_patterns


def parse_cards(texts: Iterable[str]) -> tuple[Card, ...]:
    return tuple(parse_card(text) for text in texts)


RULESETS = sorted(builtin_catalogue().latest)
E1_P = ["AS", "AD", "7C", "7D", "2H", "KS", "KH", "9H", "5D", "3S", "QH", "JD", "4C"]


def arrange(ruleset: str, cards: list[str], alternatives: int = 3) -> dict[str, Any]:
    return arrange_document({"ruleset": ruleset, "cards": cards, "alternatives": alternatives})


def check_legal(ruleset: str, cards: list[str], suggestion: dict[str, Any]) -> None:
    arrangement = suggestion["arrangement"]
    assert sorted(c for p in POSITIONS for c in arrangement[p]) == sorted(str(parse_card(c)) for c in cards)
    assert [len(arrangement[p]) for p in POSITIONS] == [5, 5, 3]
    evaluated = evaluate_document({"ruleset": ruleset, **arrangement})
    assert not evaluated["fouled"], arrangement


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(RULESETS), st.permutations(DECK_TEXT))
def test_never_fouls_and_uses_exactly_the_cards(ruleset: str, deck: list[str]) -> None:
    cards = deck[:13]
    result = arrange(ruleset, cards)
    check_legal(ruleset, cards, result)
    for alternative in result["alternatives"]:
        check_legal(ruleset, cards, alternative)
    values = [result["expected_units"]] + [a["expected_units"] for a in result["alternatives"]]
    if not result["instant_win"] and not (result["declare"] or {}).get("recommended"):
        assert values == sorted(values, reverse=True)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(RULESETS), st.permutations(DECK_TEXT))
def test_deterministic_and_independent_of_card_order_and_notation(ruleset: str, deck: list[str]) -> None:
    cards = deck[:13]
    first = arrange(ruleset, cards)
    assert arrange(ruleset, cards) == first
    shuffled = sorted(cards, reverse=True)
    lowered = [c.lower().replace("t", "10") for c in shuffled]
    again = arrange(ruleset, lowered)
    assert again["expected_units"] == first["expected_units"]
    strengths = lambda r: [r["hands"][p]["strength"] for p in POSITIONS]  # noqa: E731
    assert strengths(again) == strengths(first)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["maubinh-2020", "maubinh-chi-at"]), st.permutations(DECK_TEXT))
def test_reports_what_scoring_would_award_in_automatic_rulesets(ruleset_id: str, deck: list[str]) -> None:
    cards = deck[:13]
    result = arrange(ruleset_id, cards)
    opponent = deck[13:26]
    room = {
        "ruleset": ruleset_id,
        "players": [{"id": "me", **result["arrangement"]}, {"id": "them", "status": "left", "cards": opponent}],
    }
    scored = score_document(room)["players"][0]["instant_win"]
    assert (scored or {}).get("pattern") == (result["instant_win"] or {}).get("pattern")


PATTERN_HANDS = {
    "dragon": "2S 3C 4D 5H 6S 7C 8D 9H TS JC QD KH AS",
    "six_pairs": "AS AC 2H 2C 3H 3C 4D 4C 5H 5S 6D 6S KD",
    "five_pairs_triple": "AS AC AD 2H 2C 3H 3C 4D 4C 5H 5S 6D 6S",
    "three_flushes": "2D 5D 7D 6D 9D 3H 4H 5H 7H 8H 8S 9S TS",
    "three_straights": "2S 3C 4D 5H 6S 5C 6D 7H 8S 9C QD KH AS",
    "thirteen_same_color": "2S 3S 4S 5S 6S 7S 8S 9S 2C 3C JC QC KC",
    "twelve_same_color": "2S 3S 4S 5S 6S 7S 8S 9S 2C 3C JC QC KH",
    "quads": "9S 9H 9D 9C 2H AS AC 3H 4H 6S TS TC 8S",
    "full_house": "KS KH KD 4C 4D QS QH QC 3H 3S TS TC 8S",
    "trips": "KS KH KD 4C 5D 2D 5C 7D 9D JD TS TC TH",
    "straight_flush": "5C 6C 7C 8C 9C AS AD 3H 4H 6S TS TD 8S",
}


def _every_pattern_some_legal_split_has(ruleset_id: str, cards: list[str]) -> set[str]:
    """Brute force, independent of the advisor: every split, evaluated one by one."""
    ruleset = builtin_catalogue().get(ruleset_id)
    assert ruleset is not None
    table = hand_table(ruleset.wheel)
    hand = parse_cards(cards)
    found: set[str] = set()
    for back in itertools.combinations(range(13), 5):
        rest = [i for i in range(13) if i not in back]
        for middle in itertools.combinations(rest, 5):
            front = [i for i in rest if i not in middle]
            hands = {
                p: table.describe([hand[i] for i in idx])
                for p, idx in zip(POSITIONS, (back, middle, front), strict=True)
            }
            if hands["back"].strength >= hands["middle"].strength >= hands["front"].strength:
                found |= set(qualifying_patterns(hand, hands, False, ruleset))
    return found


@pytest.mark.slow  # brute force over all 72,072 splits, about a second a case
@pytest.mark.parametrize("ruleset", ["maubinh-2020", "maubinh-chi-at", "maubinh-bao"])
@pytest.mark.parametrize(
    "hand", ["dragon", "six_pairs", "three_flushes", "quads", "trips", "straight_flush", "full_house"]
)
def test_lists_every_pattern_the_pipeline_can_detect(ruleset: str, hand: str) -> None:
    cards = PATTERN_HANDS[hand].split()
    listed = {p["pattern"] for p in arrange(ruleset, cards)["patterns"]}
    assert listed == _every_pattern_some_legal_split_has(ruleset, cards)


@pytest.mark.parametrize("hand", sorted(PATTERN_HANDS))
def test_declared_ruleset_says_whether_to_declare(hand: str) -> None:
    cards = PATTERN_HANDS[hand].split()
    result = arrange("maubinh-bao", cards)
    declare = result["declare"]
    if not result["patterns"]:
        assert declare is None and result["instant_win"] is None
        return
    strongest = max(result["patterns"], key=lambda p: p["strength"])
    assert declare["pattern"] == strongest["pattern"]
    assert declare["recommended"] is (declare["declare_expected_units"] > declare["play_expected_units"])
    assert declare["declare_expected_units"] == declare["declare_units"]  # it settles the pair (§4)
    if declare["recommended"]:
        room = {
            "ruleset": "maubinh-bao",
            "players": [
                {"id": "me", "declare": True, **result["arrangement"]},
                {
                    "id": "them",
                    "status": "left",
                    "cards": [c for c in DECK_TEXT if c not in {str(parse_card(x)) for x in cards}][:13],
                },
            ],
        }
        assert score_document(room)["players"][0]["instant_win"]["pattern"] == declare["pattern"]


def test_e1_player_p() -> None:
    result = arrange("maubinh-2020", E1_P, alternatives=2)
    check_legal("maubinh-2020", E1_P, result)
    assert result["hands"]["back"]["category"] == "straight"  # A-2-3-4-5, the second-best straight here
    assert len(result["alternatives"]) == 2
    triples = {tuple(a["hands"][p]["strength"] for p in POSITIONS) for a in [result, *result["alternatives"]]}
    assert len(triples) == 3  # no two suggestions differ only by swapped suits


def test_the_advisor_never_expects_less_than_the_lexicographic_floor() -> None:
    """Under its own model it picks the maximum, so the floor's split can only tie or lose."""
    import random

    rng = random.Random(5)
    for ruleset_id in RULESETS:
        ruleset = builtin_catalogue().get(ruleset_id)
        assert ruleset is not None
        for _ in range(20):
            cards = parse_cards(rng.sample(DECK_TEXT, 13))
            subsets = evaluate_subsets(cards, ruleset.wheel)
            legal, expected = expected_units(subsets, ruleset, weak_field(ruleset.wheel))
            floor = lexicographic(subsets, ruleset.wheel)
            assert expected.max() >= expected[list(legal).index(floor)]


def test_legal_splits_agree_with_brute_force() -> None:
    cards = parse_cards(E1_P)
    subsets = evaluate_subsets(cards, "second")
    legal, *_ = legal_splits(subsets)
    table = hand_table("second")
    brute = 0
    for back in itertools.combinations(range(13), 5):
        rest = [i for i in range(13) if i not in back]
        for middle in itertools.combinations(rest, 5):
            front = [i for i in rest if i not in middle]
            b, m, f = (table.evaluate([cards[i] for i in idx]) for idx in (back, middle, front))
            brute += b >= m >= f
    assert len(legal) == brute
    hands = split_cards(subsets, int(legal[0]))
    assert sorted(hands["back"] + hands["middle"] + hands["front"]) == sorted(cards)


@pytest.mark.parametrize(
    ("body", "pointers"),
    [
        ({"ruleset": "maubinh-2020", "cards": E1_P[:12]}, ["/cards"]),
        ({"ruleset": "maubinh-2020", "cards": [*E1_P[:12], "AS"]}, ["/cards/12"]),
        ({"ruleset": "nope", "cards": E1_P}, ["/ruleset"]),
        ({"ruleset": "maubinh-2020", "cards": E1_P, "alternatives": 21}, ["/alternatives"]),
        ({"ruleset": "maubinh-2020", "cards": E1_P, "extra": 1}, ["/extra"]),
        ({"cards": [*E1_P[:12], "1S"]}, ["/ruleset", "/cards/12"]),
    ],
)
def test_bad_requests_are_422_like_score(body: dict[str, Any], pointers: list[str]) -> None:
    with pytest.raises(RoomRejected) as rejected:
        arrange_document(body)
    assert [f.pointer for f in rejected.value.faults] == pointers


def test_the_answer_names_the_field_it_played_against() -> None:
    strong = arrange_document({"ruleset": "maubinh-chi-at", "cards": E1_P})
    weak = arrange_document({"ruleset": "maubinh-chi-at", "cards": E1_P, "opponents": "weak"})
    assert (strong["model"]["opponents_field"], strong["model"]["field_table"]) == ("strong", "strong-maubinh-chi-at")
    assert (weak["model"]["opponents_field"], weak["model"]["field_table"]) == ("weak", "second")
    assert "fictitious play" in strong["model"]["field"] and "lexicographically" in weak["model"]["field"]


@pytest.mark.parametrize(
    ("ruleset", "table"),
    [
        ({"base": "maubinh-chi-at", "patch": {"scoop": {"sweep_multiplier": 2}}}, "strong-maubinh-chi-at"),
        ({"base": "maubinh-bao", "patch": {"bonuses": {"mode": "add"}}}, "strong-maubinh-bao"),
        (
            {"base": "maubinh-bao", "patch": {"wheel": "second"}},
            "strong-maubinh-2020",
        ),  # its base's field is of the other wheel
    ],
)
def test_a_variant_plays_against_its_bases_field_of_its_own_wheel(ruleset: Any, table: str) -> None:
    assert arrange_document({"ruleset": ruleset, "cards": E1_P})["model"]["field_table"] == table


def test_an_unknown_field_is_refused_at_its_pointer() -> None:
    with pytest.raises(RoomRejected) as refused:
        arrange_document({"ruleset": "maubinh-2020", "cards": E1_P, "opponents": "expert"})
    assert [(f.pointer, f.message) for f in refused.value.faults] == [("/opponents", "must be one of strong, weak")]


@pytest.mark.parametrize("ruleset", ["maubinh-2020", "maubinh-chi-at", "maubinh-bao"])
def test_the_strong_field_holds_stronger_fronts_than_leftovers(ruleset: str) -> None:
    """The point of the self-consistent field: opponents who arrange well keep pairs in front (the
    lexicographic field's fronts are mostly leftovers, high card)."""
    from service.advisor.opponents import field_table
    from service.game.hand_strengths import CATEGORY_UNIT

    def pair_or_better_in_front(name: str) -> float:
        the_field = field_table(name)
        strengths, probabilities = the_field.strengths["front"], the_field.probabilities["front"]
        return float(probabilities[strengths // CATEGORY_UNIT >= 1].sum())

    weak = pair_or_better_in_front(builtin_catalogue().latest[ruleset].wheel)
    strong = pair_or_better_in_front(f"strong-{ruleset}")
    assert weak < 0.15 and strong > 0.25


def test_the_split_table_deals_every_back_middle_and_front_once() -> None:
    back, middle, front = splits()
    masks = {
        (sum(1 << i for i in COMBOS5[b]), sum(1 << i for i in COMBOS5[m]), sum(1 << i for i in COMBOS3[f]))
        for b, m, f in zip(back.tolist(), middle.tolist(), front.tolist(), strict=True)
    }
    assert len(masks) == len(back) == 1287 * 56  # C(13,5) × C(8,5), no split twice
    assert all(b & m == b & f == m & f == 0 and b | m | f == (1 << 13) - 1 for b, m, f in masks)


SEARCH_RULESETS = [
    *(builtin_catalogue().get(r) for r in RULESETS),
    builtin_catalogue().variant(builtin_catalogue().get("maubinh-2020"), {"scoop": {"basis": "chi"}}),  # type: ignore[arg-type]
    builtin_catalogue().variant(builtin_catalogue().get("maubinh-bao"), {"bonuses": {"mode": "add"}}),  # type: ignore[arg-type]
]
WEAK_HAND = ["2D", "4H", "5C", "5H", "7S", "7C", "8D", "9S", "9D", "TC", "JC", "JD", "AS"]
"""Many splits worth about the same: its bounds leave most backs in play."""


def _search_hands() -> list[tuple[Card, ...]]:
    import random

    rng = random.Random(17)
    return [parse_cards(WEAK_HAND), parse_cards(E1_P), *(parse_cards(rng.sample(DECK_TEXT, 13)) for _ in range(6))]


@pytest.mark.parametrize("ruleset", SEARCH_RULESETS, ids=lambda r: r.id)
def test_no_split_is_worth_more_than_its_backs_bound(ruleset: Ruleset) -> None:
    for cards in _search_hands():
        values = SplitValues(evaluate_subsets(cards, ruleset.wheel), ruleset, weak_field(ruleset.wheel))
        legal, expected = values.of_rows(np.arange(len(COMBOS5)))
        best_of_back = np.full(len(COMBOS5), -np.inf)
        np.maximum.at(best_of_back, legal // 56, expected)
        assert (values.row_bounds >= best_of_back).all()


@pytest.mark.parametrize("first_rows", [1, 32])
@pytest.mark.parametrize("ruleset", SEARCH_RULESETS, ids=lambda r: r.id)
def test_the_pruned_search_suggests_what_sorting_every_split_suggests(
    ruleset: Ruleset, first_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The best splits by expected units, first by split index among equals, one per strength triple."""
    monkeypatch.setattr(search_module, "FIRST_ROWS", first_rows)
    for cards in _search_hands():
        subsets = evaluate_subsets(cards, ruleset.wheel)
        values = SplitValues(subsets, ruleset, opponents_field(ruleset, "strong")[1])
        legal, expected = values.of_rows(np.arange(len(COMBOS5)))
        back, middle, front = splits()
        expected_triples: list[tuple[int, float]] = []
        seen = set()
        for k in sorted(range(len(legal)), key=lambda k: (-expected[k], legal[k])):
            split = int(legal[k])
            triple = (subsets.five[back[split]], subsets.five[middle[split]], subsets.three[front[split]])
            if triple not in seen:
                seen.add(triple)
                expected_triples.append((split, float(expected[k])))
            if len(expected_triples) == 6:
                break
        for count in (1, 4, 6):
            found = [(s.split, s.expected_units) for s in best_distinct(values, count)]
            assert found == expected_triples[:count]


@pytest.mark.parametrize("first_rows", [1, 32])  # 1: the second round does most of the work
@pytest.mark.parametrize("hand", sorted(PATTERN_HANDS))
def test_the_pruned_search_finds_the_best_split_holding_each_pattern(
    hand: str, first_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The best split by expected units (then the lower split index) among the legal splits with the
    pattern's category on one of its chis, found by valuing every split."""
    monkeypatch.setattr(search_module, "FIRST_ROWS", first_rows)
    ruleset = builtin_catalogue().get("maubinh-bao")
    assert ruleset is not None
    subsets = evaluate_subsets(parse_cards(PATTERN_HANDS[hand].split()), ruleset.wheel)
    values = SplitValues(subsets, ruleset, opponents_field(ruleset, "strong")[1])
    legal, expected = values.of_rows(np.arange(len(COMBOS5)))
    back, middle, front = splits()
    categories = {
        "back": subsets.five[back[legal]] // CATEGORY_UNIT,
        "middle": subsets.five[middle[legal]] // CATEGORY_UNIT,
        "front": subsets.three[front[legal]] // CATEGORY_UNIT,
    }
    holders = pattern_holders(values, ruleset.arrangement_patterns)
    for pattern, rule in ON_CHI.items():
        held = [k for k in range(len(legal)) if any(categories[p][k] == rule.category for p in rule.positions)]
        holder = holders[pattern]
        if not held:
            assert holder is None
            continue
        best = min(held, key=lambda k: (-expected[k], legal[k]))
        assert holder is not None and (holder.split, holder.expected_units) == (int(legal[best]), float(expected[best]))


# The advisor's model is the settlement's rules (docs/rules.md §12 item 3): one split against one
# known arrangement, heads-up, is valued at exactly what the pipeline pays.

BONUS_KEYS = ["pair", "two_pair", "three_of_a_kind", "straight", "flush", "full_house", "four_of_a_kind",
              "straight_flush", "high_card", "trip_aces", "four_aces", "royal_flush", "steel_wheel"]  # fmt: skip
BONUS_ROW = st.dictionaries(st.sampled_from(BONUS_KEYS), st.one_of(st.none(), st.integers(1, 30)), max_size=4)
SCOOP_MULTIPLIER = st.one_of(
    st.fixed_dictionaries({"multiplier": st.integers(1, 6), "table": st.none()}),
    st.integers(1, 6).map(
        lambda m: {"multiplier": None, "table": [{"room_size": n, "by_scoopers": [m] * (n - 1)} for n in (2, 3, 4)]}
    ),
)
SCOOP_BASIS = st.one_of(
    st.fixed_dictionaries({"basis": st.sampled_from(["total", "chi"]), "fixed_units": st.none()}),
    st.fixed_dictionaries({"basis": st.just("fixed"), "fixed_units": st.integers(1, 20)}),
)
HEADS_UP_PATCHES = st.fixed_dictionaries(
    {
        "scoop": st.tuples(SCOOP_MULTIPLIER, SCOOP_BASIS, st.integers(1, 5), st.sampled_from(["scoop", "total"])).map(
            lambda t: {**t[0], **t[1], "sweep_multiplier": t[2], "sweep_pays": t[3]}
        ),
        "bonuses": st.fixed_dictionaries(
            {"mode": st.sampled_from(["replace", "add"]), "back": BONUS_ROW, "middle": BONUS_ROW, "front": BONUS_ROW}
        ),
        "instant_wins": st.fixed_dictionaries(
            {"settles_pair": st.booleans(), "ends_round": st.just(False)},
            optional={"collision": st.sampled_from(["stronger", "difference"])},
        ),
    },
    optional={"wheel": st.sampled_from(["second", "lowest"]), "fouls": st.just({"both_fouled": "compare"})},
)


def _one_arrangement(strengths: dict[str, int]) -> OpponentField:
    """A field that is one known arrangement: each position's strength with probability 1."""
    return OpponentField(
        {p: np.array([strengths[p]], dtype=np.int64) for p in POSITIONS},
        {p: np.array([1.0]) for p in POSITIONS},
        1,
        "one arrangement",
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    base=st.sampled_from(RULESETS),
    patch=HEADS_UP_PATCHES,
    deck=st.permutations(DECK_TEXT),
    picks=st.tuples(st.integers(0, 2**31), st.integers(0, 2**31)),
)
def test_the_model_value_of_one_split_against_another_is_what_the_pipeline_pays(
    base: str, patch: dict[str, Any], deck: list[str], picks: tuple[int, int]
) -> None:
    reference = {"base": base, "patch": patch}
    ruleset = builtin_catalogue().resolve(reference)
    ours, theirs = (evaluate_subsets(parse_cards(sorted(deck[k * 13 : k * 13 + 13])), ruleset.wheel) for k in (0, 1))
    their_legal = legal_splits(theirs)[0]
    their_split = int(their_legal[picks[1] % len(their_legal)])
    back, middle, front = splits()
    field = _one_arrangement(
        {
            "back": int(theirs.five[back[their_split]]),
            "middle": int(theirs.five[middle[their_split]]),
            "front": int(theirs.three[front[their_split]]),
        }
    )
    legal, expected = expected_units(ours, ruleset, field)
    k = picks[0] % len(legal)

    def entry(player: str, hands: dict[str, tuple[Card, ...]]) -> dict[str, Any]:
        return {"id": player, **{p: [str(c) for c in hands[p]] for p in POSITIONS}}

    mine, yours = split_cards(ours, int(legal[k])), split_cards(theirs, their_split)
    result = score_document({"ruleset": reference, "players": [entry("me", mine), entry("them", yours)]})
    assume(all(p["instant_win"] is None for p in result["players"]))
    assert result["players"][0]["units"] == pytest.approx(float(expected[k]), abs=1e-9)


SIX_PAIRS_STRONG = ["AS", "AH", "KS", "KH", "QS", "QH", "JS", "JH", "TS", "TH", "9S", "9H", "2C"]


def test_an_instant_win_that_does_not_settle_the_pair_is_always_worth_declaring() -> None:
    """Six pairs worth 1 unit: playing these cards out is worth more, so no BÁO (§4: the units instead of
    the play). Where the pair is still played out (settles_pair false) the unit comes on top: declare."""
    table = [{"pattern": "six_pairs", "units": 1, "strength": 1}]
    settles = arrange_document(
        {"ruleset": {"base": "maubinh-bao", "patch": {"instant_wins": {"table": table}}}, "cards": SIX_PAIRS_STRONG}
    )["declare"]
    assert settles["play_expected_units"] > 1 and settles["recommended"] is False
    patch = {"instant_wins": {"table": table, "settles_pair": False}}
    played = arrange_document({"ruleset": {"base": "maubinh-bao", "patch": patch}, "cards": SIX_PAIRS_STRONG})[
        "declare"
    ]
    assert played["recommended"] is True
    assert played["declare_expected_units"] == pytest.approx(1 + played["play_expected_units"], abs=1e-3)
