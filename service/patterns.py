"""Instant-win patterns (RULES §4).

The 13-card patterns depend only on the cards. ``three_straights`` and
``three_flushes`` are found in constant time: a hand's rank multiset is a
single number (the sum of ``5 ** rank``), and every sum of one 3-card and two
5-card straights is precomputed; suits need only their counts.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from service.cards import DECK, RED_SUITS, Card
from service.hands import RANK_KEY, STRAIGHT_ORDERS, Category, HandTable, HandValue, Position, rank_key

CARD_PATTERNS = (
    "dragon_flush",
    "dragon",
    "thirteen_same_color",
    "twelve_same_color",
    "five_pairs_triple",
    "six_pairs",
    "three_flushes",
    "three_straights",
)
ARRANGEMENT_PATTERNS = ("four_of_a_kind", "full_house_middle", "trips_front", "straight_flush")

PATTERN_NAMES: Mapping[str, tuple[str, str]] = {
    "dragon_flush": ("Dragon flush", "Rồng cuốn"),
    "dragon": ("Dragon", "Sảnh rồng"),
    "thirteen_same_color": ("Thirteen of one colour", "Đồng hoa (13 đen / 13 đỏ)"),
    "twelve_same_color": ("Twelve of one colour", "12 đen / 12 đỏ"),
    "five_pairs_triple": ("Five pairs and trips", "Năm đôi một sám"),
    "six_pairs": ("Six pairs", "Lục phé bôn"),
    "three_flushes": ("Three flushes", "Ba thùng"),
    "three_straights": ("Three straights", "Ba sảnh"),
    "four_of_a_kind": ("Four of a kind", "Tứ quý"),
    "full_house_middle": ("Full house in the middle", "Cù lũ chi giữa"),
    "trips_front": ("Trips in the front", "Sám chi đầu"),
    "straight_flush": ("Straight flush", "Thùng phá sảnh"),
}

_THREE_CARD_STRAIGHTS = [(12, 0, 1)] + [(r, r + 1, r + 2) for r in range(11)]  # A-2-3 … Q-K-A
_FIVE_CARD_STRAIGHTS = [tuple(sorted(s)) for s in STRAIGHT_ORDERS["second"]]


def _three_straight_splits() -> dict[int, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
    splits: dict[int, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {}
    for front in _THREE_CARD_STRAIGHTS:
        for first, second in itertools.combinations_with_replacement(_FIVE_CARD_STRAIGHTS, 2):
            ranks = (*front, *first, *second)
            if max(ranks.count(r) for r in ranks) <= 4:
                splits.setdefault(rank_key(ranks), (front, first, second))
    return splits


THREE_STRAIGHT_SPLITS = _three_straight_splits()
"""Rank-multiset key → (3-card, 5-card, 5-card) rank sets of one such split."""

_DIAMONDS, _HEARTS = sorted(RED_SUITS)
THREE_FLUSH_SUIT_COUNTS = {(5, 5, 3, 0), (8, 5, 0, 0), (10, 3, 0, 0), (13, 0, 0, 0)}


@dataclass(frozen=True)
class Split:
    """A 3/5/5 split found by the service, ordered so that it never fouls."""

    back: tuple[Card, ...]
    middle: tuple[Card, ...]
    front: tuple[Card, ...]


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


@dataclass(frozen=True, slots=True)
class CardStats:
    """What the 13-card patterns (and the ace count) need, from one pass over the cards."""

    rank_counts: list[int]
    suit_counts: list[int]
    rank_key: int


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
    if rank_counts.count(1) == 13:
        found["dragon"] = None
        if 13 in suit_counts:
            found["dragon_flush"] = None
    red = suit_counts[_DIAMONDS] + suit_counts[_HEARTS]
    if red in (0, 13):
        found["thirteen_same_color"] = None
    elif red in (1, 12):
        found["twelve_same_color"] = None
    if rank_counts.count(2) + rank_counts.count(3) + 2 * rank_counts.count(4) == 6:
        found["six_pairs"] = None
        if 3 in rank_counts:  # 13 cards: the trips plus five pairs; quads as trips would need 7 pairs
            found["five_pairs_triple"] = None
    if stats.rank_key in THREE_STRAIGHT_SPLITS and "three_straights" in wanted:
        found["three_straights"] = three_straights_split(cards, table, stats.rank_key)
    if "three_flushes" in wanted and tuple(sorted(suit_counts, reverse=True)) in THREE_FLUSH_SUIT_COUNTS:
        found["three_flushes"] = three_flushes_split(cards, table)
    if not found:
        return found
    return {p: s for p, s in found.items() if p in wanted}


def arrangement_patterns(hands: Mapping[Position, HandValue]) -> list[str]:
    """Patterns of a non-fouled arrangement (``maubinh-bao``'s BÁO on one chi)."""
    found = []
    strong = (hands["back"].category, hands["middle"].category)
    if Category.FOUR_OF_A_KIND in strong:
        found.append("four_of_a_kind")
    if hands["middle"].category == Category.FULL_HOUSE:
        found.append("full_house_middle")
    if hands["front"].category == Category.THREE_OF_A_KIND:
        found.append("trips_front")
    if Category.STRAIGHT_FLUSH in strong:
        found.append("straight_flush")
    return found
