"""The arrangement advisor ("gợi ý"): the split with the best expected result.

Method (README "Arrangement advisor"):

1. The 13 cards are evaluated once: every 5-card subset (1,287) and 3-card subset (286),
   vectorised with numpy on the same strength scale as the scoring pipeline.
2. Every one of the 72,072 splits is then a triple of subset indices; fouled splits are dropped.
3. Each split is scored against *a field*: for each position, the distribution of one opponent's
   hand strength there, shipped as package data (``scripts/build_field.py``, seeded). Two fields:
   ``strong`` (the default), opponents who arrange as this advisor does, built per built-in
   ruleset by fictitious play; ``weak``, random hands arranged by the lexicographic rule. From the
   field, per subset: P(win), P(loss), the chi value the ruleset pays us when we win (bonus table)
   and the chi value we expect to pay when we lose. The expectation adds the scoop (the ruleset's
   multiplier for its smallest room, one scooper, on its basis: the total, or the 3 chi) assuming
   the three positions are independent. House rules are weighed as they are: the bonus table and
   its mode, the scoop multiplier and basis. A fixed foul payment and the sweep multiplier never
   apply in this model: neither the advisor nor the field fouls, and a heads-up room has nobody
   to sweep.
4. The search values splits back by back (a back and its 56 middle/front pairs): first the 32 backs
   with the highest upper bounds, then only the backs whose bound reaches the best splits found. It
   returns what valuing all 72,072 would, for a fraction of the work (tests/unit/test_arrange.py).
5. Instant wins: every pattern the cards (or some legal split) qualify for is reported; in a
   declared ruleset the advisor says whether declaring (its units, for sure) beats playing out.

Limits: one opponent (heads-up); the field ignores which cards we hold; positions are treated as
independent for scoops; aces (chi Át) are not weighed.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from importlib import resources
from typing import Any, cast, get_args

import numpy as np
import numpy.typing as npt

from service.cards import CARD_TEXT, Card
from service.contract import Opponents
from service.hands import CATEGORY_UNIT, POSITIONS, Category, HandTable, Kind, Position, Wheel, hand_table
from service.patterns import ON_CHI, OnChi, Pattern, Split, arrangement_patterns, card_patterns
from service.rulesets import Ruleset
from service.serialize import hands_json, pattern_json, ruleset_block

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]

COMBOS5: Ints = np.array(list(itertools.combinations(range(13), 5)), dtype=np.int64)
COMBOS3: Ints = np.array(list(itertools.combinations(range(13), 3)), dtype=np.int64)


def _index_by_mask(combos: Ints) -> Ints:
    """A card-position bit mask → the index of that subset in ``combos`` (-1 for other masks)."""
    index = np.full(1 << 13, -1, dtype=np.int64)
    index[(1 << combos).sum(axis=1)] = np.arange(len(combos))
    return index


@cache
def splits() -> tuple[Ints, Ints, Ints]:
    """All 72,072 splits as (back, middle, front) indices into COMBOS5, COMBOS5, COMBOS3: each back in
    COMBOS5 order, then its middles as the combinations of its 8 remaining positions, in order."""
    backs = len(COMBOS5)
    taken = np.zeros((backs, 13), dtype=bool)
    taken[np.arange(backs)[:, None], COMBOS5] = True
    remaining = np.nonzero(~taken)[1].reshape(backs, 8)
    middles = remaining[:, np.array(list(itertools.combinations(range(8), 5)))]
    middle_masks = (1 << middles).sum(axis=2)
    back_masks = (1 << COMBOS5).sum(axis=1)
    front_masks = ((1 << 13) - 1) ^ back_masks[:, None] ^ middle_masks
    back = np.repeat(np.arange(backs), middle_masks.shape[1])
    return back, _index_by_mask(COMBOS5)[middle_masks].ravel(), _index_by_mask(COMBOS3)[front_masks].ravel()


@dataclass(frozen=True)
class _Lookup:
    """A hand table as sorted numpy arrays, so that strengths can be found for many hands at once."""

    plain_keys: Ints
    plain_strengths: Ints
    flush_keys: Ints
    flush_strengths: Ints
    three_keys: Ints
    three_strengths: Ints
    all_strengths: Ints  # every strength of the scale, sorted: a strength's rank is its index here
    plain_ranks: Ints
    flush_ranks: Ints
    three_ranks: Ints


@cache
def _lookup(wheel: Wheel) -> _Lookup:
    table = hand_table(wheel)

    def arrays(mapping: dict[int, int]) -> tuple[Ints, Ints]:
        keys = np.array(sorted(mapping), dtype=np.int64)
        return keys, np.array([mapping[k] for k in keys.tolist()], dtype=np.int64)

    plain = arrays(table.plain5)
    flush = arrays(table.flush5)
    three = arrays(table.three)
    every = np.sort(np.concatenate([plain[1], flush[1], three[1]]))
    every = every[np.concatenate([[True], every[1:] != every[:-1]])]  # np.unique would import numpy.ma
    ranks = (np.searchsorted(every, strengths) for strengths in (plain[1], flush[1], three[1]))
    return _Lookup(*plain, *flush, *three, every, *ranks)


RANK_KEYS: Ints = np.array([5 ** (c >> 2) for c in range(52)], dtype=np.int64)


@dataclass(frozen=True)
class Subsets:
    """The 13 cards' subset strengths, and their ranks on the whole scale: the one evaluation a
    request needs."""

    cards: tuple[Card, ...]
    five: Ints
    three: Ints
    five_ranks: Ints
    three_ranks: Ints


def evaluate_subsets(cards: tuple[Card, ...], wheel: Wheel) -> Subsets:
    lookup = _lookup(wheel)
    hand = np.array(cards, dtype=np.int64)
    keys5 = RANK_KEYS[hand][COMBOS5].sum(axis=1)
    suits5 = (hand & 3)[COMBOS5]
    flush = (suits5 == suits5[:, :1]).all(axis=1)
    at = np.searchsorted(lookup.plain_keys, keys5)
    five, five_ranks = lookup.plain_strengths[at], lookup.plain_ranks[at]
    if flush.any():
        at = np.searchsorted(lookup.flush_keys, keys5[flush])
        five[flush], five_ranks[flush] = lookup.flush_strengths[at], lookup.flush_ranks[at]
    at = np.searchsorted(lookup.three_keys, RANK_KEYS[hand][COMBOS3].sum(axis=1))
    return Subsets(cards, five, lookup.three_strengths[at], five_ranks, lookup.three_ranks[at])


MIDDLES_PER_BACK = 56
"""C(8, 5): splits() lists each back's middles together, so split k has back k // 56."""


@cache
def _split_grid() -> tuple[Ints, Ints]:
    """The middle and front subset of every split, one row per back: the back's own values then
    broadcast along its row instead of being gathered split by split."""
    back, middle, front = splits()
    assert (back == np.arange(len(back)) // MIDDLES_PER_BACK).all()
    return middle.reshape(-1, MIDDLES_PER_BACK), front.reshape(-1, MIDDLES_PER_BACK)


@dataclass(frozen=True)
class _Grid:
    """Per back (row) and middle/front pair (column): the middle's and the front's rank on the strength
    scale, and whether the split does not foul."""

    middle_rank: npt.NDArray[np.int16]
    front_rank: npt.NDArray[np.int16]
    legal: npt.NDArray[np.bool_]


def _grid(subsets: Subsets) -> _Grid:
    """Ranks order hands as strengths do; as int16 the two gathers over 72,072 splits move less memory."""
    middle_grid, front_grid = _split_grid()
    five, three = subsets.five_ranks.astype(np.int16), subsets.three_ranks.astype(np.int16)
    middle, front = five.take(middle_grid), three.take(front_grid)
    return _Grid(middle, front, (five[:, None] >= middle) & (middle >= front))


def legal_splits(subsets: Subsets) -> tuple[Ints, Ints, Ints, Ints]:
    """Indices of the splits that do not foul, with their back, middle and front subset indices."""
    middle_grid, front_grid = _split_grid()
    fouls_not = _grid(subsets).legal
    legal = np.flatnonzero(fouls_not)
    return legal, legal // MIDDLES_PER_BACK, middle_grid[fouls_not], front_grid[fouls_not]


def lexicographic(subsets: Subsets, wheel: Wheel) -> int:
    """The floor: strongest back, then strongest middle, then front. Returns a split index."""
    legal, back, middle, front = legal_splits(subsets)
    every = _lookup(wheel).all_strengths
    rank5 = np.searchsorted(every, subsets.five)
    rank3 = np.searchsorted(every, subsets.three)
    key = (rank5[back] << 26) | (rank5[middle] << 13) | rank3[front]
    return int(legal[int(np.argmax(key))])


# The field: per wheel and position, an opponent's strengths and their frequencies.


@dataclass(frozen=True, eq=False)
class Field:
    """One opponent's strength distribution per position; hashed by identity (one per table)."""

    strengths: dict[Position, Ints]
    probabilities: dict[Position, Floats]
    samples: int
    description: str

    @classmethod
    def from_counts(cls, counts: dict[Position, tuple[Ints, Ints]], samples: int, description: str) -> Field:
        strengths = {p: counts[p][0].astype(np.int64) for p in POSITIONS}
        probabilities = {p: counts[p][1].astype(np.float64) / samples for p in POSITIONS}
        return cls(strengths, probabilities, samples, description)


@cache
def field_table(name: str) -> Field:
    """A shipped table, ``service/data/field-<name>.npz``."""
    path = resources.files("service").joinpath("data", f"field-{name}.npz")
    with path.open("rb") as stream, np.load(stream) as data:
        counts = {p: (data[f"{p}_strengths"], data[f"{p}_counts"]) for p in POSITIONS}
        return Field.from_counts(counts, int(data["samples"]), str(data["description"]))


def field(wheel: Wheel) -> Field:
    """The weak field: random hands arranged lexicographically."""
    return field_table(wheel)


STRONG_PREFIX = "strong-"


@cache
def strong_fields() -> dict[str, Wheel]:
    """The rulesets with a self-consistent field of their own (``field-strong-<id>.npz``), by id, and
    the wheel each was built under: found in the package data, not named in code."""
    found: dict[str, Wheel] = {}
    for entry in sorted(resources.files("service").joinpath("data").iterdir(), key=lambda e: e.name):
        name = entry.name.removeprefix("field-").removesuffix(".npz")
        if entry.name.startswith("field-") and name.startswith(STRONG_PREFIX):
            with entry.open("rb") as stream, np.load(stream) as data:
                found[name.removeprefix(STRONG_PREFIX)] = cast(Wheel, str(data["wheel"]))
    return found


def opponents_field(ruleset: Ruleset, opponents: Opponents) -> tuple[str, Field]:
    """The field named by ``opponents``, and the table it is: the strong one of the ruleset itself, else
    of its base (a variant plays against its base's field), provided it was built under the same
    wheel; else the first (by id) built under that wheel."""
    if opponents == "weak":
        return ruleset.wheel, field(ruleset.wheel)
    tables = strong_fields()
    same_wheel = [rid for rid, wheel in tables.items() if wheel == ruleset.wheel]
    candidates = (ruleset.id, ruleset.base.id if ruleset.base else None, *same_wheel)
    chosen = next(c for c in candidates if c is not None and tables.get(c) == ruleset.wheel)
    return f"{STRONG_PREFIX}{chosen}", field_table(f"{STRONG_PREFIX}{chosen}")


def build_tables() -> None:
    """Everything the advisor builds once per process, built now: the split grid, each wheel's
    lookup and the shipped fields."""
    _split_grid()
    for wheel in get_args(Wheel):
        _lookup(wheel)
        field(wheel)
    for ruleset_id in strong_fields():
        field_table(f"{STRONG_PREFIX}{ruleset_id}")


def chi_values(strengths: Ints, ruleset: Ruleset, position: Position) -> Floats:
    """The chi value a hand earns when it wins at ``position``: its bonus, most specific first, instead of
    1 or on top of it (bonuses.mode); else 1. scoring.chi_value is the same rule for one hand."""
    bonuses = ruleset.bonuses[position]
    values = np.zeros(len(strengths), dtype=np.float64)
    categories = strengths // CATEGORY_UNIT
    for category in Category:
        if category.id in bonuses:
            values[categories == category] = bonuses[category.id]
    kinds = _kind_strengths(ruleset.wheel)
    for kind, kind_strengths in kinds.items():
        if kind.value in bonuses:
            values[np.isin(strengths, kind_strengths)] = bonuses[kind.value]
    if ruleset.bonus_mode == "add":
        return values + 1.0
    return np.where(values > 0, values, 1.0)


@cache
def _kind_strengths(wheel: Wheel) -> dict[Kind, Ints]:
    table = hand_table(wheel)
    found: dict[Kind, list[int]] = {}
    for strength, kind in table.kinds.items():
        found.setdefault(kind, []).append(strength)
    return {kind: np.array(sorted(s), dtype=np.int64) for kind, s in found.items()}


GAIN, WIN, LOSE, VALUE, LOSS_VALUE = range(5)
"""The columns of a position's terms: the expected chi units at that position alone, P(win), P(loss),
our chi value when we win, and E[the opponent's chi value | we lose] (0 where we never lose)."""


@lru_cache(maxsize=3 * 64)
def _scale_terms(ruleset: Ruleset, position: Position, the_field: Field) -> Floats:
    """The terms of every strength on the scale (one row per rank) against ``the_field`` at
    ``position``: computed once per ruleset and field, then taken row by row for each hand's subsets."""
    strengths = _lookup(ruleset.wheel).all_strengths
    field_strengths = the_field.strengths[position]
    probabilities = the_field.probabilities[position]
    below = np.concatenate([[0.0], np.cumsum(probabilities)])
    above_value = np.concatenate(
        [np.cumsum((probabilities * chi_values(field_strengths, ruleset, position))[::-1])[::-1], [0.0]]
    )
    right = np.searchsorted(field_strengths, strengths, side="right")
    win = below[np.searchsorted(field_strengths, strengths, side="left")]
    lose = 1.0 - below[right]
    paid = above_value[right]
    loss_value = np.divide(paid, lose, out=np.zeros_like(paid), where=lose > 0)
    value = chi_values(strengths, ruleset, position)
    return np.stack([win * value - lose * loss_value, win, lose, value, loss_value], axis=1)


class _SplitValues:
    """The expected units of one hand's splits against one opponent from a field, for any rows of the
    split grid (a row is a back and its 56 middle/front pairs), and an upper bound per row."""

    def __init__(self, subsets: Subsets, ruleset: Ruleset, the_field: Field) -> None:
        self.subsets = subsets
        self.terms = {
            "back": _scale_terms(ruleset, "back", the_field).take(subsets.five_ranks, axis=0),
            "middle": _scale_terms(ruleset, "middle", the_field).take(subsets.five_ranks, axis=0),
            "front": _scale_terms(ruleset, "front", the_field).take(subsets.three_ranks, axis=0),
        }
        self.scoop = ruleset.scoop_multiplier(ruleset.min_players, 1)[0] - 1
        self.scoop_on_chi = ruleset.scoop_basis == "chi"
        self.grid = _grid(subsets)

    @property
    def legal_count(self) -> int:
        return int(np.count_nonzero(self.grid.legal))

    def of_rows(self, rows: Ints) -> tuple[Ints, Floats]:
        """The legal splits in ``rows`` (ascending), and their expected units.

        Each position's terms are computed once per subset (1,287 or 286 of them) and kept side by side,
        so that a split costs one gather of a short row per position."""
        middle_grid, front_grid = _split_grid()
        legal = self.grid.legal[rows]
        row, column = np.nonzero(legal)
        back = rows[row]
        terms = self.terms
        b = terms["back"].take(back, axis=0)
        m = terms["middle"].take(middle_grid[rows][legal], axis=0)
        f = terms["front"].take(front_grid[rows][legal], axis=0)
        expected = b[:, GAIN] + m[:, GAIN] + f[:, GAIN]
        if self.scoop:
            sweep = b[:, WIN] * m[:, WIN] * f[:, WIN]
            swept = b[:, LOSE] * m[:, LOSE] * f[:, LOSE]
            if self.scoop_on_chi:
                expected += self.scoop * 3 * (sweep - swept)
            else:
                paid = b[:, VALUE] + m[:, VALUE] + f[:, VALUE]
                owed = b[:, LOSS_VALUE] + m[:, LOSS_VALUE] + f[:, LOSS_VALUE]
                expected += self.scoop * (sweep * paid - swept * owed)
        return back * MIDDLES_PER_BACK + column, expected

    @cached_property
    def row_bounds(self) -> Floats:
        """Per back, no less than any of its splits is worth.

        Its legal middles, and so its fronts, are no stronger than the strongest of those middles:
        each middle and front term is replaced by its maximum over the subsets up to that strength
        (for what we win) or its minimum (for what being scooped costs, subtracted). The terms are
        not negative and scoop multipliers are at least 1, so the bound holds term by term."""
        five_ranks, three_ranks = self.subsets.five_ranks, self.subsets.three_ranks
        strongest = ((self.grid.middle_rank + 1) * self.grid.legal).max(axis=1).astype(np.int64) - 1
        by_five, by_three = np.argsort(five_ranks, kind="stable"), np.argsort(three_ranks, kind="stable")
        at_middle = np.searchsorted(five_ranks[by_five], strongest, side="right") - 1
        at_front = np.searchsorted(three_ranks[by_three], strongest, side="right") - 1
        back = self.terms["back"]
        middles, fronts = self.terms["middle"][by_five], self.terms["front"][by_three]

        def most(terms: Floats, at: Ints, column: int) -> Floats:
            return np.maximum.accumulate(terms[:, column])[at]

        def least(terms: Floats, at: Ints, column: int) -> Floats:
            return np.minimum.accumulate(terms[:, column])[at]

        bound = back[:, GAIN] + most(middles, at_middle, GAIN) + most(fronts, at_front, GAIN)
        if self.scoop:
            sweep = back[:, WIN] * most(middles, at_middle, WIN) * most(fronts, at_front, WIN)
            swept = back[:, LOSE] * least(middles, at_middle, LOSE) * least(fronts, at_front, LOSE)
            if self.scoop_on_chi:
                bound += self.scoop * 3 * (sweep - swept)
            else:
                paid = back[:, VALUE] + most(middles, at_middle, VALUE) + most(fronts, at_front, VALUE)
                owed = back[:, LOSS_VALUE] + least(middles, at_middle, LOSS_VALUE) + least(fronts, at_front, LOSS_VALUE)
                bound += self.scoop * (sweep * paid - swept * owed)
        bound[strongest < 0] = -np.inf  # every split of this back fouls
        return bound


def expected_units(subsets: Subsets, ruleset: Ruleset, the_field: Field) -> tuple[Ints, Floats]:
    """Every legal split and its expected units against one opponent from ``the_field``."""
    return _SplitValues(subsets, ruleset, the_field).of_rows(np.arange(len(COMBOS5)))


@dataclass(frozen=True)
class Suggestion:
    split: int
    expected_units: float
    hands: dict[Position, tuple[Card, ...]]


def split_cards(subsets: Subsets, split: int) -> dict[Position, tuple[Card, ...]]:
    back, middle, front = splits()
    cards = subsets.cards

    def pick(combo: Ints) -> tuple[Card, ...]:
        return tuple(cards[i] for i in combo.tolist())

    return {
        "back": pick(COMBOS5[back[split]]),
        "middle": pick(COMBOS5[middle[split]]),
        "front": pick(COMBOS3[front[split]]),
    }


def _pattern_holders(values: _SplitValues, patterns: frozenset[str]) -> dict[str, Suggestion | None]:
    """For each arrangement pattern (maubinh-bao's BÁO on a chi), the best legal split holding it.

    The masks read the same definition as patterns.arrangement_patterns (ON_CHI); tests/unit/test_arrange.py
    checks the two against each other by brute force. A chi of a category needs a back of at least that
    category, so only those backs' rows are valued."""
    subsets = values.subsets
    five_categories = subsets.five // CATEGORY_UNIT
    categories = {"back": five_categories, "middle": five_categories, "front": subsets.three // CATEGORY_UNIT}
    by_position = dict(zip(POSITIONS, splits(), strict=True))
    holders: dict[str, Suggestion | None] = {}
    for pattern in sorted(patterns):
        rule = ON_CHI[Pattern(pattern)]
        holders[pattern] = None
        if not any((categories[p] == rule.category).any() for p in rule.positions):
            continue

        def holding(legal: Ints, rule: OnChi = rule) -> npt.NDArray[np.bool_]:
            held = [categories[p][by_position[p][legal]] == rule.category for p in rule.positions]
            return cast(npt.NDArray[np.bool_], np.logical_or.reduce(held))

        def best_held(legal: Ints, expected: Floats) -> float:
            held = expected[holding(legal)]
            return float(held.max()) if len(held) else -np.inf

        legal, expected = _search(values, np.flatnonzero(categories["back"] >= rule.category), best_held)
        candidates = np.flatnonzero(holding(legal))
        if len(candidates):
            tied = candidates[expected[candidates] == expected[candidates].max()]
            best = int(tied[np.argmin(legal[tied])])  # ties: the lower split index
            split = int(legal[best])
            holders[pattern] = Suggestion(split, float(expected[best]), split_cards(subsets, split))
    return holders


def _arrangement_json(hands: dict[Position, tuple[Card, ...]], table: HandTable, ruleset: Ruleset) -> dict[str, Any]:
    described = table.describe_all(hands)
    return {
        "arrangement": {p: [CARD_TEXT[c] for c in described[p].cards] for p in POSITIONS},
        "hands": hands_json(described, ruleset),
    }


def _distinct_best(subsets: Subsets, legal: Ints, expected: Floats, count: int) -> list[Suggestion]:
    """The best splits by expected units, one per (back, middle, front) strength triple: splits that
    differ only by equal cards (suits swapped) are the same suggestion. Ties: the lower split index.

    Only the splits worth at least the pool's last are sorted, ties at that value included; the pool
    grows when suit swaps fill it with fewer than ``count`` triples."""
    back, middle, front = splits()
    pool = count * 16
    while True:
        if pool < len(legal):
            floor = -np.partition(-expected, pool - 1)[pool - 1]
            top = np.flatnonzero(expected >= floor)
        else:
            top = np.arange(len(legal))
        seen: set[tuple[int, int, int]] = set()
        found = []
        for k in top[np.lexsort((legal[top], -expected[top]))].tolist():
            split = int(legal[k])
            triple = (
                int(subsets.five[back[split]]),
                int(subsets.five[middle[split]]),
                int(subsets.three[front[split]]),
            )
            if triple not in seen:
                seen.add(triple)
                found.append(Suggestion(split, float(expected[k]), split_cards(subsets, split)))
                if len(found) == count:
                    return found
        if len(top) == len(legal):
            return found
        pool *= 4


FIRST_ROWS = 32
"""Backs valued first, those of the highest bounds: their best splits set the bar the other backs'
bounds must reach to be valued at all."""
BOUND_SLACK = 1e-9
"""A bound and a split's value add the same terms in different orders; a back is skipped only when its
bound is below the bar by more than rounding."""


def _distinct_floor(expected: Floats, count: int) -> float:
    """The ``count``-th highest distinct value: no higher than the ``count``-th best distinct triple's,
    since equal triples have equal values."""
    values = np.sort(expected)[::-1]
    distinct = values[np.concatenate([[True], values[1:] != values[:-1]])]
    return float(distinct[count - 1]) if len(distinct) >= count else -np.inf


def _search(values: _SplitValues, rows: Ints, bar_of: Callable[[Ints, Floats], float]) -> tuple[Ints, Floats]:
    """The legal splits of ``rows`` (ascending) that could be the best, and their values.

    The rows with the highest bounds are valued first; ``bar_of`` reads the bar from their splits
    (what the best found are worth), and only the other rows whose bound reaches it are valued after.
    The splits left out are each worth less than the bar."""
    if len(rows) <= FIRST_ROWS:
        return values.of_rows(rows)
    bounds = values.row_bounds[rows]
    first = np.sort(np.argpartition(-bounds, FIRST_ROWS)[:FIRST_ROWS])
    legal, expected = values.of_rows(rows[first])
    reaching = bounds >= bar_of(legal, expected) - BOUND_SLACK
    reaching[first] = False
    if reaching.any():
        more_legal, more_expected = values.of_rows(rows[np.flatnonzero(reaching)])
        legal, expected = np.concatenate([legal, more_legal]), np.concatenate([expected, more_expected])
    return legal, expected


def _best_distinct(values: _SplitValues, count: int) -> list[Suggestion]:
    """:func:`_distinct_best` over every legal split, valuing only the backs whose bound could place a
    split among the best ``count``: the same suggestions, for a fraction of the work."""
    every_row = np.arange(len(COMBOS5))
    legal, expected = _search(values, every_row, lambda _, expected: _distinct_floor(expected, count))
    return _distinct_best(values.subsets, legal, expected, count)


@dataclass(frozen=True)
class Advice:
    """What the advisor decided for 13 cards, before any JSON."""

    chosen: Suggestion
    play: Suggestion
    """The best split to play out; ``chosen`` differs only when a pattern is worth more."""
    ranked: list[Suggestion]
    patterns: list[tuple[str, Split | None]]
    """Every qualifying pattern, in table order, with the service's split for three flushes/straights."""
    strongest: str | None
    declare: bool
    """In a declared ruleset: press BÁO (the strongest pattern pays more than playing out)."""
    instant_win: str | None
    """What scoring would award for ``chosen`` (automatic), or what to declare (declared)."""
    legal_splits: int


def advise(cards: tuple[Card, ...], ruleset: Ruleset, alternatives: int = 0, opponents: Opponents = "strong") -> Advice:
    """Decide for 13 cards; ties go to the lower split of the cards in canonical order."""
    cards = tuple(sorted(cards))
    table = ruleset.hands
    subsets = evaluate_subsets(cards, ruleset.wheel)
    values = _SplitValues(subsets, ruleset, opponents_field(ruleset, opponents)[1])
    ranked = _best_distinct(values, alternatives + 1)
    play = ranked[0]
    found: dict[str, Split | None] = dict(card_patterns(cards, table, ruleset.card_patterns))
    holders = _pattern_holders(values, ruleset.arrangement_patterns)
    found |= {p: None for p, holder in holders.items() if holder is not None}
    patterns = [(row.pattern, found[row.pattern]) for row in ruleset.instant_wins if row.pattern in found]
    strongest_row = ruleset.strongest(p for p, _ in patterns)
    strongest = strongest_row.pattern if strongest_row else None
    take = strongest is not None and ruleset.instant_win_row(strongest).units > play.expected_units
    chosen = play
    if take and strongest is not None and (holder := holders.get(strongest)) is not None:
        chosen = holder
    if ruleset.instant_mode == "declared":
        return Advice(chosen, play, ranked, patterns, strongest, take, strongest if take else None, values.legal_count)
    realised = set(card_patterns(cards, table, ruleset.card_patterns))
    realised |= set(arrangement_patterns_of(chosen.hands, table, ruleset))
    realised_row = ruleset.strongest(realised)
    instant_win = realised_row.pattern if realised_row else None
    return Advice(chosen, play, ranked, patterns, strongest, False, instant_win, values.legal_count)


def arrange_json(
    ruleset: Ruleset, cards: tuple[Card, ...], alternatives: int, opponents: Opponents = "strong"
) -> dict[str, Any]:
    """The ``POST /v1/arrange`` response."""
    table = ruleset.hands
    advice = advise(cards, ruleset, alternatives, opponents)
    rows = {row.pattern: row for row in ruleset.instant_wins}
    patterns = [pattern_json(p, rows[p].units, rows[p].strength, split) for p, split in advice.patterns]
    by_id = {p["pattern"]: p for p in patterns}
    declare = None
    if ruleset.instant_mode == "declared" and advice.strongest is not None:
        declare = {
            "recommended": advice.declare,
            "pattern": advice.strongest,
            "declare_units": ruleset.instant_win_row(advice.strongest).units,
            "play_expected_units": round(advice.play.expected_units, 4),
        }
    table_name, the_field = opponents_field(ruleset, opponents)
    return {
        "ruleset": ruleset_block(ruleset),
        **_arrangement_json(advice.chosen.hands, table, ruleset),
        "expected_units": round(advice.chosen.expected_units, 4),
        "instant_win": by_id[advice.instant_win] if advice.instant_win else None,
        "declare": declare,
        "patterns": patterns,
        "alternatives": [
            {**_arrangement_json(s.hands, table, ruleset), "expected_units": round(s.expected_units, 4)}
            for s in advice.ranked
            if s.split != advice.chosen.split
        ][:alternatives],
        "model": {
            "opponents": 1,
            "opponents_field": opponents,
            "field_table": table_name,
            "field": the_field.description,
            "field_samples": the_field.samples,
            "legal_splits": advice.legal_splits,
        },
    }


def arrangement_patterns_of(hands: dict[Position, tuple[Card, ...]], table: HandTable, ruleset: Ruleset) -> list[str]:
    if not ruleset.arrangement_patterns:
        return []
    described = table.describe_all(hands)
    return [p for p in arrangement_patterns(described) if p in ruleset.arrangement_patterns]
