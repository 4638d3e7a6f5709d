"""The best splits without valuing them all: backs by upper bound, then only those that could
place a split among the best; one suggestion per strength triple."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from service.advisor.expectation import SplitValues
from service.advisor.splits import COMBOS5, Floats, Ints, Subsets, split_cards, splits
from service.game.cards import Card
from service.game.hand_strengths import CATEGORY_UNIT
from service.game.hands import POSITIONS, Position
from service.game.patterns import ON_CHI, OnChi, Pattern


@dataclass(frozen=True)
class Suggestion:
    split: int
    expected_units: float
    arrangement: dict[Position, tuple[Card, ...]]
    """The cards at each position."""


def pattern_holders(values: SplitValues, patterns: frozenset[str]) -> dict[str, Suggestion | None]:
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

        legal, expected = search(values, np.flatnonzero(categories["back"] >= rule.category), best_held)
        candidates = np.flatnonzero(holding(legal))
        if len(candidates):
            tied = candidates[expected[candidates] == expected[candidates].max()]
            best = int(tied[np.argmin(legal[tied])])  # ties: the lower split index
            split = int(legal[best])
            holders[pattern] = Suggestion(split, float(expected[best]), split_cards(subsets, split))
    return holders


def distinct_best(subsets: Subsets, legal: Ints, expected: Floats, count: int) -> list[Suggestion]:
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


def search(values: SplitValues, rows: Ints, bar_of: Callable[[Ints, Floats], float]) -> tuple[Ints, Floats]:
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


def best_distinct(values: SplitValues, count: int) -> list[Suggestion]:
    """:func:`distinct_best` over every legal split, valuing only the backs whose bound could place a
    split among the best ``count``: the same suggestions, for a fraction of the work."""
    every_row = np.arange(len(COMBOS5))
    legal, expected = search(values, every_row, lambda _, expected: _distinct_floor(expected, count))
    return distinct_best(values.subsets, legal, expected, count)
