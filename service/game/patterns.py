"""Instant-win patterns (docs/rules.md §4).

The 13-card patterns depend only on the cards. ``three_straights`` and
``three_flushes`` are found in constant time: a hand's rank multiset is a
single number (the sum of ``5 ** rank``), and every sum of one 3-card and two
5-card straights is precomputed; suits need only their counts.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from service.game.cards import DECK, RED_SUITS, Card
from service.game.hand_strengths import RANK_KEY, STRAIGHT_ORDERS, Category, rank_key
from service.game.hands import POSITIONS, HandTable, HandValue, Position

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Mask = NDArray[np.bool_]


class Pattern(enum.StrEnum):
    """Every instant-win pattern (§4), listed once: the rulesets' schema, openapi.yaml, the scalar
    checks and the advisor's masks are all tested against this enumeration."""

    DRAGON_FLUSH = "dragon_flush"
    DRAGON = "dragon"
    THIRTEEN_SAME_COLOR = "thirteen_same_color"
    TWELVE_SAME_COLOR = "twelve_same_color"
    FIVE_PAIRS_TRIPLE = "five_pairs_triple"
    SIX_PAIRS = "six_pairs"
    THREE_FLUSHES = "three_flushes"
    THREE_STRAIGHTS = "three_straights"
    FOUR_OF_A_KIND = "four_of_a_kind"
    FULL_HOUSE_MIDDLE = "full_house_middle"
    TRIPS_FRONT = "trips_front"
    STRAIGHT_FLUSH = "straight_flush"


@dataclass(frozen=True)
class OnChi:
    """An arrangement pattern: a hand of ``category`` at one of ``positions`` of a non-fouled arrangement."""

    category: Category
    positions: tuple[Position, ...]


ON_CHI: Final[Mapping[Pattern, OnChi]] = {
    Pattern.FOUR_OF_A_KIND: OnChi(Category.FOUR_OF_A_KIND, ("back", "middle")),
    Pattern.FULL_HOUSE_MIDDLE: OnChi(Category.FULL_HOUSE, ("middle",)),
    Pattern.TRIPS_FRONT: OnChi(Category.THREE_OF_A_KIND, ("front",)),
    Pattern.STRAIGHT_FLUSH: OnChi(Category.STRAIGHT_FLUSH, ("back", "middle")),
}
"""The one definition of the arrangement patterns, read by :func:`arrangement_patterns` for one
arrangement and by the advisor for every split at once."""

ARRANGEMENT_PATTERNS: Final = tuple(p for p in Pattern if p in ON_CHI)
CARD_PATTERNS: Final = tuple(p for p in Pattern if p not in ON_CHI)
"""The patterns that depend only on the 13 cards, found by :func:`card_patterns`."""

PATTERN_NAMES: Final[Mapping[str, tuple[str, str]]] = {
    Pattern.DRAGON_FLUSH: ("Dragon flush", "Rồng cuốn"),
    Pattern.DRAGON: ("Dragon", "Sảnh rồng"),
    Pattern.THIRTEEN_SAME_COLOR: ("Thirteen of one colour", "13 lá đồng màu"),
    Pattern.TWELVE_SAME_COLOR: ("Twelve of one colour", "12 lá đồng màu"),
    Pattern.FIVE_PAIRS_TRIPLE: ("Five pairs and trips", "Năm đôi một sám"),
    Pattern.SIX_PAIRS: ("Six pairs", "Lục phé bôn"),
    Pattern.THREE_FLUSHES: ("Three flushes", "Ba thùng"),
    Pattern.THREE_STRAIGHTS: ("Three straights", "Ba sảnh"),
    Pattern.FOUR_OF_A_KIND: ("Four of a kind", "Tứ quý"),
    Pattern.FULL_HOUSE_MIDDLE: ("Full house in the middle", "Cù lũ chi giữa"),
    Pattern.TRIPS_FRONT: ("Trips in the front", "Sám chi 3 lá"),
    Pattern.STRAIGHT_FLUSH: ("Straight flush", "Thùng phá sảnh"),
}

_THREE_CARD_STRAIGHTS: Final = [(12, 0, 1)] + [(r, r + 1, r + 2) for r in range(11)]  # A-2-3 … Q-K-A
_FIVE_CARD_STRAIGHTS: Final = [tuple(sorted(s)) for s in STRAIGHT_ORDERS["second"]]


def _three_straight_splits() -> dict[int, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
    """Each straight holds a rank at most once, so three of them never need a fifth card of a rank:
    every sum of keys is a hand's."""
    fives = [(rank_key(five), five) for five in _FIVE_CARD_STRAIGHTS]
    splits: dict[int, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {}
    for front in _THREE_CARD_STRAIGHTS:
        front_key = rank_key(front)
        for (first_key, first), (second_key, second) in itertools.combinations_with_replacement(fives, 2):
            splits.setdefault(front_key + first_key + second_key, (front, first, second))
    return splits


THREE_STRAIGHT_SPLITS: Final = _three_straight_splits()
"""Rank-multiset key → (3-card, 5-card, 5-card) rank sets of one such split."""

_DIAMONDS, _HEARTS = sorted(RED_SUITS)
THREE_FLUSH_SUIT_COUNTS: Final = {(5, 5, 3, 0), (8, 5, 0, 0), (10, 3, 0, 0), (13, 0, 0, 0)}


@dataclass(unsafe_hash=True)
class Split:
    """A 3/5/5 split found by the service, ordered so that it never fouls."""

    back: tuple[Card, ...]
    middle: tuple[Card, ...]
    front: tuple[Card, ...]

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(self, back: tuple[Card, ...], middle: tuple[Card, ...], front: tuple[Card, ...]) -> None:
        self.back = back
        self.middle = middle
        self.front = front


def _as_cards(cards: list[int]) -> tuple[Card, ...]:
    return tuple(DECK[c] for c in sorted(cards, reverse=True))


def _order(table: HandTable, first: list[int], second: list[int], front: list[int]) -> Split:
    if table.evaluate5(second) > table.evaluate5(first):
        first, second = second, first
    return Split(back=_as_cards(first), middle=_as_cards(second), front=_as_cards(front))


def three_straights_split(cards: Sequence[int], table: HandTable, key: int | None = None) -> Split | None:
    if key is None:
        key = sum(RANK_KEY[c] for c in cards)
    found = THREE_STRAIGHT_SPLITS.get(key)
    if found is None:
        return None
    remaining = sorted(cards)
    parts: list[list[int]] = []
    for ranks in found:
        part = []
        for r in ranks:
            card = next(c for c in remaining if c >> 2 == r)
            remaining.remove(card)
            part.append(card)
        parts.append(part)
    front, first, second = parts
    return _order(table, first, second, front)


def three_flushes_split(cards: Sequence[int], table: HandTable) -> Split | None:
    by_suit: list[list[int]] = [[], [], [], []]
    for c in sorted(cards, reverse=True):
        by_suit[c & 3].append(c)
    if tuple(sorted((len(s) for s in by_suit), reverse=True)) not in THREE_FLUSH_SUIT_COUNTS:
        return None
    fives: list[list[int]] = []
    front: list[int] = []
    for suited in sorted(by_suit, key=len, reverse=True):
        rest = suited
        while len(rest) >= 5 and len(fives) < 2:
            fives.append(rest[:5])
            rest = rest[5:]
        front.extend(rest)
    return _order(table, fives[0], fives[1], front)


@dataclass(slots=True)
class CardStats:
    """What the 13-card patterns (and the ace count) need, from one pass over the cards."""

    rank_counts: list[int]
    suit_counts: list[int]
    rank_key: int

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(self, rank_counts: list[int], suit_counts: list[int], rank_key: int) -> None:
        self.rank_counts = rank_counts
        self.suit_counts = suit_counts
        self.rank_key = rank_key


def card_stats(cards: Sequence[int]) -> CardStats:
    rank_counts = [0] * 13
    suit_counts = [0, 0, 0, 0]
    key = 0
    for c in cards:
        rank_counts[c >> 2] += 1
        suit_counts[c & 3] += 1
        key += RANK_KEY[c]
    return CardStats(rank_counts, suit_counts, key)


def card_patterns(
    cards: Sequence[int], table: HandTable, wanted: frozenset[str], stats: CardStats | None = None
) -> dict[str, Split | None]:
    """The 13-card patterns among ``wanted`` that these cards qualify for."""
    found: dict[str, Split | None] = {}
    stats = stats or card_stats(cards)
    rank_counts, suit_counts = stats.rank_counts, stats.suit_counts
    ranks_held = [0] * 5  # how many ranks are held once, twice, three and four times
    for held in rank_counts:
        ranks_held[held] += 1
    if ranks_held[1] == 13:
        found["dragon"] = None
        if 13 in suit_counts:
            found["dragon_flush"] = None
    red = suit_counts[_DIAMONDS] + suit_counts[_HEARTS]
    if red in (0, 13):
        found["thirteen_same_color"] = None
    elif red in (1, 12):
        found["twelve_same_color"] = None
    if ranks_held[2] + ranks_held[3] + 2 * ranks_held[4] == 6:
        found["six_pairs"] = None
        if ranks_held[3]:  # 13 cards: the trips plus five pairs; quads as trips would need 7 pairs
            found["five_pairs_triple"] = None
    if stats.rank_key in THREE_STRAIGHT_SPLITS and "three_straights" in wanted:
        found["three_straights"] = three_straights_split(cards, table, stats.rank_key)
    if "three_flushes" in wanted and tuple(sorted(suit_counts, reverse=True)) in THREE_FLUSH_SUIT_COUNTS:
        found["three_flushes"] = three_flushes_split(cards, table)
    if not found:
        return found
    return {p: s for p, s in found.items() if p in wanted}


def arrangement_patterns(hands: Mapping[Position, HandValue]) -> list[str]:
    """Patterns of a non-fouled arrangement (``maubinh-bao``'s BÁO on one chi), by :data:`ON_CHI`."""
    return [
        pattern
        for pattern, rule in ON_CHI.items()
        if any(hands[position].category == rule.category for position in rule.positions)
    ]


def tally(values: NDArray[np.int64], size: int) -> NDArray[np.int64]:
    """How many times each of 0 … size − 1 occurs along the last axis (a count per row, all at once)."""
    import numpy as np

    rows = values.reshape(-1, values.shape[-1]).astype(np.int64)
    rows += np.arange(len(rows))[:, None] * size  # each row's values counted in a range of its own
    counts: NDArray[np.int64] = np.bincount(rows.ravel(), minlength=len(rows) * size)
    return counts.reshape(*values.shape[:-1], size)


def card_pattern_masks(
    rank_counts: NDArray[np.int64], suit_counts: NDArray[np.int64], rank_keys: NDArray[np.int64]
) -> dict[str, Mask]:
    """The array form of :func:`card_patterns`, for many players at once (along the leading axes), every
    pattern: whether each player's 13 cards qualify."""
    import numpy as np

    groups = tally(rank_counts, 5)  # how many ranks each player holds once, twice, three and four times
    dragon = groups[..., 1] == 13
    red = suit_counts[..., _DIAMONDS] + suit_counts[..., _HEARTS]
    six_pairs = groups[..., 2] + groups[..., 3] + 2 * groups[..., 4] == 6
    by_size = -np.sort(-suit_counts, axis=-1)
    layout = ((by_size[..., 0] * 14 + by_size[..., 1]) * 14 + by_size[..., 2]) * 14 + by_size[..., 3]
    three_flushes = np.zeros(rank_keys.shape, dtype=bool)
    for a, b, c, d in THREE_FLUSH_SUIT_COUNTS:
        three_flushes |= layout == ((a * 14 + b) * 14 + c) * 14 + d
    straights = np.array(_THREE_STRAIGHT_KEYS, dtype=np.int64)
    at = np.minimum(np.searchsorted(straights, rank_keys), len(straights) - 1)
    return {
        Pattern.DRAGON: dragon,
        Pattern.DRAGON_FLUSH: dragon & (by_size[..., 0] == 13),
        Pattern.THIRTEEN_SAME_COLOR: (red == 0) | (red == 13),
        Pattern.TWELVE_SAME_COLOR: (red == 1) | (red == 12),
        Pattern.SIX_PAIRS: six_pairs,
        Pattern.FIVE_PAIRS_TRIPLE: six_pairs & (groups[..., 3] > 0),
        Pattern.THREE_STRAIGHTS: straights[at] == rank_keys,
        Pattern.THREE_FLUSHES: three_flushes,
    }


_THREE_STRAIGHT_KEYS: Final = sorted(THREE_STRAIGHT_SPLITS)


def arrangement_pattern_masks(categories: NDArray[np.int64]) -> dict[str, Mask]:
    """The array form of :func:`arrangement_patterns`: ``categories`` of each chi in POSITIONS' order
    along the last axis, whether each arrangement holds each pattern (fouled or not)."""
    return {
        pattern: (categories[..., [POSITIONS.index(p) for p in rule.positions]] == rule.category).any(axis=-1)
        for pattern, rule in ON_CHI.items()
    }
