"""A split's expected units against one opponent from a field: per position, P(win), P(loss) and
the chi values at stake, then the scoop, for any rows of the split grid, with an upper bound per row.
Every value is the settlement's own (scoring.chi_value, scoring.scoop_payment), asked, not restated."""

from __future__ import annotations

from functools import cache, cached_property, lru_cache
from typing import NamedTuple

import numpy as np

from service.advisor.opponents import OpponentField
from service.advisor.splits import COMBOS5, MIDDLES_PER_BACK, Floats, Ints, Subsets, grid, lookup, split_grid
from service.game.hand_strengths import CATEGORY_UNIT, Category, Kind, Wheel
from service.game.hands import HandInfo, Position, hand_table
from service.rulesets import Ruleset
from service.scoring import chi_value, scoop_payment


def chi_values(strengths: Ints, ruleset: Ruleset, position: Position) -> Floats:
    """The chi value each hand earns when it wins at ``position``: the settlement's own rule
    (scoring.chi_value), asked once for each category and named kind the hands belong to."""
    values = np.ones(len(strengths), dtype=np.float64)
    categories = strengths // CATEGORY_UNIT
    for category in Category:
        at = categories == category
        if at.any():
            values[at] = chi_value(ruleset, position, HandInfo.of(category, None).bonus_keys)[0]
    for kind, kind_strengths in _kind_strengths(ruleset.wheel).items():
        at = np.isin(strengths, kind_strengths)
        if at.any():
            category = Category(int(kind_strengths[0]) // CATEGORY_UNIT)
            values[at] = chi_value(ruleset, position, HandInfo.of(category, kind).bonus_keys)[0]
    return values


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


class ChiRule:
    """A ruleset's chi values at one position, compared and hashed by what decides them (wheel, bonus
    row and mode): house rules that differ only elsewhere (a title, a scoop) share their terms."""

    def __init__(self, ruleset: Ruleset, position: Position) -> None:
        self.ruleset, self.position = ruleset, position
        self.key = (ruleset.wheel, position, ruleset.bonus_mode, tuple(sorted(ruleset.bonuses[position].items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChiRule) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


def _scale_terms(ruleset: Ruleset, position: Position, the_field: OpponentField) -> Floats:
    return _terms(ChiRule(ruleset, position), the_field)


@lru_cache(maxsize=3 * 16)
def _terms(rule: ChiRule, the_field: OpponentField) -> Floats:
    """The terms of every strength on the scale (one row per rank) against ``the_field`` at a position:
    computed once per chi rule and field (0.3 MB each), then taken row by row for each hand's subsets."""
    ruleset, position = rule.ruleset, rule.position
    strengths = lookup(ruleset.wheel).all_strengths
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


class HeadsUpScoop(NamedTuple):
    """What the settlement's own scoop (scoring.scoop_payment) pays heads-up, one scooper, no sweep:
    affine in what was won, so asked three times, at nothing won, one chi and one unit of total."""

    per_scoop: int
    """Paid for any scoop of three chi: the fixed basis's extra (§12.1) plus three chi's."""
    per_unit: int
    """Paid per unit of total(A, B)."""

    @classmethod
    def of(cls, ruleset: Ruleset) -> HeadsUpScoop:
        def pays(chi_won: int, total: int) -> int:
            return scoop_payment(ruleset, ruleset.min_players, 1, chi_won, total, sweeping=False).units

        fixed = pays(0, 0)
        return cls(fixed + 3 * (pays(1, 0) - fixed), pays(0, 1) - fixed)

    @property
    def pays(self) -> bool:
        return bool(self.per_scoop or self.per_unit)


class SplitValues:
    """The expected units of one hand's splits against one opponent from a field, for any rows of the
    split grid (a row is a back and its 56 middle/front pairs), and an upper bound per row."""

    def __init__(self, subsets: Subsets, ruleset: Ruleset, the_field: OpponentField) -> None:
        self.subsets = subsets
        self.terms = {
            "back": _scale_terms(ruleset, "back", the_field).take(subsets.five_ranks, axis=0),
            "middle": _scale_terms(ruleset, "middle", the_field).take(subsets.five_ranks, axis=0),
            "front": _scale_terms(ruleset, "front", the_field).take(subsets.three_ranks, axis=0),
        }
        self.scoop = HeadsUpScoop.of(ruleset)
        self.grid = grid(subsets)

    @property
    def legal_count(self) -> int:
        return int(np.count_nonzero(self.grid.legal))

    def of_rows(self, rows: Ints) -> tuple[Ints, Floats]:
        """The legal splits in ``rows`` (ascending), and their expected units.

        Each position's terms are computed once per subset (1,287 or 286 of them) and kept side by side,
        so that a split costs one gather of a short row per position."""
        middle_grid, front_grid = split_grid()
        legal = self.grid.legal[rows]
        row, column = np.nonzero(legal)
        back = rows[row]
        terms = self.terms
        b = terms["back"].take(back, axis=0)
        m = terms["middle"].take(middle_grid[rows][legal], axis=0)
        f = terms["front"].take(front_grid[rows][legal], axis=0)
        expected = b[:, GAIN] + m[:, GAIN] + f[:, GAIN]
        scoop = self.scoop
        if scoop.pays:
            sweep = b[:, WIN] * m[:, WIN] * f[:, WIN]
            swept = b[:, LOSE] * m[:, LOSE] * f[:, LOSE]
            if scoop.per_scoop:
                expected += scoop.per_scoop * (sweep - swept)
            if scoop.per_unit:
                paid = b[:, VALUE] + m[:, VALUE] + f[:, VALUE]
                owed = b[:, LOSS_VALUE] + m[:, LOSS_VALUE] + f[:, LOSS_VALUE]
                expected += scoop.per_unit * (sweep * paid - swept * owed)
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
        scoop = self.scoop
        if scoop.pays:
            sweep = back[:, WIN] * most(middles, at_middle, WIN) * most(fronts, at_front, WIN)
            swept = back[:, LOSE] * least(middles, at_middle, LOSE) * least(fronts, at_front, LOSE)
            if scoop.per_scoop:
                bound += scoop.per_scoop * (sweep - swept)
            if scoop.per_unit:
                paid = back[:, VALUE] + most(middles, at_middle, VALUE) + most(fronts, at_front, VALUE)
                owed = back[:, LOSS_VALUE] + least(middles, at_middle, LOSS_VALUE) + least(fronts, at_front, LOSS_VALUE)
                bound += scoop.per_unit * (sweep * paid - swept * owed)
        bound[strongest < 0] = -np.inf  # every split of this back fouls
        return bound


def expected_units(subsets: Subsets, ruleset: Ruleset, the_field: OpponentField) -> tuple[Ints, Floats]:
    """Every legal split and its expected units against one opponent from ``the_field``."""
    return SplitValues(subsets, ruleset, the_field).of_rows(np.arange(len(COMBOS5)))
