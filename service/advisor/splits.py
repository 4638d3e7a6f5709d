"""Splits of 13 cards into back, middle and front: the 72,072 of them as subset indices, each
subset's strength found for a whole hand at once, and which splits do not foul."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from service.game.cards import Card
from service.game.hand_strengths import Wheel
from service.game.hands import Position, hand_table

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
class Lookup:
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
def lookup(wheel: Wheel) -> Lookup:
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
    return Lookup(*plain, *flush, *three, every, *ranks)


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
    table = lookup(wheel)
    hand = np.array(cards, dtype=np.int64)
    keys5 = RANK_KEYS[hand][COMBOS5].sum(axis=1)
    suits5 = (hand & 3)[COMBOS5]
    flush = (suits5 == suits5[:, :1]).all(axis=1)
    at = np.searchsorted(table.plain_keys, keys5)
    five, five_ranks = table.plain_strengths[at], table.plain_ranks[at]
    if flush.any():
        at = np.searchsorted(table.flush_keys, keys5[flush])
        five[flush], five_ranks[flush] = table.flush_strengths[at], table.flush_ranks[at]
    at = np.searchsorted(table.three_keys, RANK_KEYS[hand][COMBOS3].sum(axis=1))
    return Subsets(cards, five, table.three_strengths[at], five_ranks, table.three_ranks[at])


MIDDLES_PER_BACK = 56
"""C(8, 5): splits() lists each back's middles together, so split k has back k // 56."""


@cache
def split_grid() -> tuple[Ints, Ints]:
    """The middle and front subset of every split, one row per back: the back's own values then
    broadcast along its row instead of being gathered split by split."""
    back, middle, front = splits()
    assert (back == np.arange(len(back)) // MIDDLES_PER_BACK).all()
    return middle.reshape(-1, MIDDLES_PER_BACK), front.reshape(-1, MIDDLES_PER_BACK)


@dataclass(frozen=True)
class Grid:
    """Per back (row) and middle/front pair (column): the middle's and the front's rank on the strength
    scale, and whether the split does not foul."""

    middle_rank: npt.NDArray[np.int16]
    front_rank: npt.NDArray[np.int16]
    legal: npt.NDArray[np.bool_]


def grid(subsets: Subsets) -> Grid:
    """Ranks order hands as strengths do; as int16 the two gathers over 72,072 splits move less memory."""
    middle_grid, front_grid = split_grid()
    five, three = subsets.five_ranks.astype(np.int16), subsets.three_ranks.astype(np.int16)
    middle, front = five.take(middle_grid), three.take(front_grid)
    return Grid(middle, front, (five[:, None] >= middle) & (middle >= front))


def legal_splits(subsets: Subsets) -> tuple[Ints, Ints, Ints, Ints]:
    """Indices of the splits that do not foul, with their back, middle and front subset indices."""
    middle_grid, front_grid = split_grid()
    fouls_not = grid(subsets).legal
    legal = np.flatnonzero(fouls_not)
    return legal, legal // MIDDLES_PER_BACK, middle_grid[fouls_not], front_grid[fouls_not]


def lexicographic(subsets: Subsets, wheel: Wheel) -> int:
    """The floor: strongest back, then strongest middle, then front. Returns a split index."""
    legal, back, middle, front = legal_splits(subsets)
    every = lookup(wheel).all_strengths
    rank5 = np.searchsorted(every, subsets.five)
    rank3 = np.searchsorted(every, subsets.three)
    key = (rank5[back] << 26) | (rank5[middle] << 13) | rank3[front]
    return int(legal[int(np.argmax(key))])


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
