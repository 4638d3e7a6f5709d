"""Hand evaluation (docs/rules.md §2): 3- and 5-card hands on one strength scale.

A hand table evaluates a hand to its strength (service.game.hand_strengths: one ``int`` a hand,
3- and 5-card hands on one scale), names it, and orders its cards as §2.2 reads them; one table a
``wheel`` setting, and beside it the array form that evaluates many hands at once.

>>> table = hand_table("second")
>>> table.describe(parse_hand("KS KH 9D")).category.id, table.describe(parse_hand("KD KC QS 3C 2C")).category.id
('pair', 'pair')
>>> table.evaluate3(parse_hand("KS KH AD")) > table.evaluate5(parse_hand("KD KC QS 3C 2C"))
True
>>> table.evaluate3(parse_hand("KS KH QD")) > table.evaluate5(parse_hand("KD KC QS 3C 2C"))
False
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Final, Literal

from service.game.cards import ACE, DECK, Card, parse_card
from service.game.hand_strengths import (
    CATEGORY_UNIT,
    FIVE_CARD_LINES,
    HAND_IDS,
    RANK_KEY,
    STRAIGHT_ORDERS,
    SUIT_BIT,
    Category,
    Kind,
    Strengths,
    Wheel,
    strength_of,
    wheel_free_strengths,
)

if TYPE_CHECKING:  # numpy loads only where hands are evaluated many at once (a one-room start-up does without)
    import numpy as np
    from numpy.typing import NDArray

Position = Literal["back", "middle", "front"]
POSITIONS: Final[tuple[Position, ...]] = ("back", "middle", "front")


@dataclass(frozen=True, slots=True)
class HandInfo:
    """What a strength means, computed once per strength: category, kind, ids and names."""

    category: Category
    kind: Kind | None
    id: str
    name_vi: str
    name_en: str
    bonus_keys: tuple[str, ...]
    """Bonus-table keys this hand matches, most specific first (§5)."""

    @classmethod
    def of(cls, category: Category, kind: Kind | None) -> HandInfo:
        named = kind if kind is not None else category
        keys = (kind.value, category.id) if kind else (category.id,)
        return cls(category, kind, keys[0], named.name_vi, named.name_en, keys)


@dataclass(order=True, slots=True, unsafe_hash=True)
class HandValue:
    """An evaluated hand; hands compare by strength alone (suits never rank)."""

    strength: int
    info: HandInfo = field(compare=False)
    cards: tuple[Card, ...] = field(default=(), compare=False)

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(self, strength: int, info: HandInfo, cards: tuple[Card, ...] = ()) -> None:
        self.strength = strength
        self.info = info
        self.cards = cards

    @property
    def category(self) -> Category:
        return self.info.category

    @property
    def kind(self) -> Kind | None:
        return self.info.kind


class HandTable:
    """Lookup tables for one ``wheel`` setting; build with :func:`hand_table`."""

    def __init__(self, wheel: Wheel) -> None:
        shared = wheel_free_strengths()
        built = Strengths(dict(shared.plain5), dict(shared.flush5), dict(shared.three), dict(shared.kinds))
        for line in FIVE_CARD_LINES:
            if not line.straight:
                continue
            for index, straight in enumerate(STRAIGHT_ORDERS[wheel]):
                built.add(line, sorted(straight, reverse=True), strength_of(line.category, [index + 1]))
        self.wheel: Wheel = wheel
        self.plain5 = built.plain5
        self.flush5 = built.flush5
        self.three = built.three
        self.kinds = built.kinds
        self.infos: dict[int, HandInfo] = {}
        self.evaluate5 = _evaluator5(self.plain5, self.flush5)
        self.evaluate3 = _evaluator3(self.three)
        self._arrays: _ArrayTables | None = None

    def evaluate(self, cards: Sequence[int]) -> int:
        if len(cards) == 5:
            return self.evaluate5(cards)
        if len(cards) == 3:
            return self.evaluate3(cards)
        raise ValueError(f"a hand has 3 or 5 cards, not {len(cards)}")

    def describe(self, cards: Sequence[Card]) -> HandValue:
        """Evaluate and name a hand; its cards ordered as §2.2 reads them."""
        strength = self.evaluate5(cards) if len(cards) == 5 else self.evaluate3(cards)
        info = self.info(strength)
        return HandValue(strength, info, display_order(cards, info.category))

    def describe_all(self, arrangement: Mapping[Position, Sequence[Card]]) -> dict[Position, HandValue]:
        """Each chi of an arrangement, described."""
        return {p: self.describe(arrangement[p]) for p in POSITIONS}

    def info(self, strength: int) -> HandInfo:
        """What a strength means, made once per strength."""
        info = self.infos.get(strength)
        if info is None:
            info = self.infos[strength] = HandInfo.of(category_of(strength), self.kinds.get(strength))
        return info

    def bonus_keys_by_id(self) -> tuple[tuple[str, ...], ...]:
        """Each hand id's bonus keys, most specific first, by its place in HAND_IDS."""
        return self._array_tables().bonus_keys

    def _array_tables(self) -> _ArrayTables:
        if self._arrays is None:
            self._arrays = _ArrayTables.of(self)
        return self._arrays

    def rank_keys_of(self, cards: NDArray[np.int8]) -> NDArray[np.int64]:
        """The array form of :func:`rank_key`: each hand's (cards along the last axis) rank multiset."""
        each = self._array_tables().rank_keys[cards]
        keys: NDArray[np.int64] = each[..., 0].copy()
        for card in range(1, cards.shape[-1]):  # card by card over every hand: numpy sums a short last axis slowly
            keys += each[..., card]
        return keys

    def evaluate_many(self, cards: NDArray[np.int8]) -> tuple[NDArray[np.int64], NDArray[np.int8], NDArray[np.int64]]:
        """The array form of evaluate5 and evaluate3, for hands along the last axis (5 or 3 cards): each
        hand's strength, its id's place in HAND_IDS (its bonus keys are that id's HandInfo's), and its
        rank key."""
        import numpy as np

        tables = self._array_tables()
        key = self.rank_keys_of(cards)
        if cards.shape[-1] == 3:
            at = np.searchsorted(tables.three_keys, key)
            return tables.three_strengths[at], tables.three_ids[at], key
        suits = cards & 3
        flush = np.logical_and.reduce(suits == suits[..., :1], axis=-1)
        at = np.searchsorted(tables.five_keys, key)
        return (
            np.where(flush, tables.flush_strengths[at], tables.plain_strengths[at]),
            np.where(flush, tables.flush_ids[at], tables.plain_ids[at]),
            key,
        )


class _ArrayTables:
    """One hand table as sorted arrays: rank keys, and each key's strength and hand id, plain and flush;
    and each hand id's bonus keys (its HandInfo's), by its place in HAND_IDS. (A plain class: compiled, a
    dataclass would read its numpy annotations when the module loads.)"""

    def __init__(
        self,
        rank_keys: NDArray[np.int64],
        five_keys: NDArray[np.int64],
        plain_strengths: NDArray[np.int64],
        plain_ids: NDArray[np.int8],
        flush_strengths: NDArray[np.int64],
        flush_ids: NDArray[np.int8],
        three_keys: NDArray[np.int64],
        three_strengths: NDArray[np.int64],
        three_ids: NDArray[np.int8],
        bonus_keys: tuple[tuple[str, ...], ...],
    ) -> None:
        self.rank_keys = rank_keys
        self.five_keys = five_keys
        self.plain_strengths = plain_strengths
        self.plain_ids = plain_ids
        self.flush_strengths = flush_strengths
        self.flush_ids = flush_ids
        self.three_keys = three_keys
        self.three_strengths = three_strengths
        self.three_ids = three_ids
        self.bonus_keys = bonus_keys

    @classmethod
    def of(cls, table: HandTable) -> _ArrayTables:
        import numpy as np

        ids = {s: HAND_IDS.index(kind.value) for s, kind in table.kinds.items()}

        def hand_id(strength: int) -> int:
            """Its kind's place in HAND_IDS, else its category's (the category's value is its place)."""
            return -1 if strength < 0 else ids.get(strength, strength // CATEGORY_UNIT)

        five = sorted(table.plain5)
        flush = [table.flush5.get(key, -1) for key in five]  # -1: no flush has these ranks
        three = sorted(table.three)
        arrays = (
            np.array(RANK_KEY, dtype=np.int64),
            np.array(five, dtype=np.int64),
            np.array([table.plain5[key] for key in five], dtype=np.int64),
            np.array([hand_id(table.plain5[key]) for key in five], dtype=np.int8),
            np.array(flush, dtype=np.int64),
            np.array([hand_id(s) for s in flush], dtype=np.int8),
            np.array(three, dtype=np.int64),
            np.array([table.three[key] for key in three], dtype=np.int64),
            np.array([hand_id(table.three[key]) for key in three], dtype=np.int8),
        )
        infos = [HandInfo.of(c, None) for c in Category] + [table.info(s) for s in sorted(table.kinds)]
        keys = {info.id: info.bonus_keys for info in infos}
        return cls(*arrays, tuple(keys[hand] for hand in HAND_IDS))


def display_order(cards: Sequence[int], category: Category) -> tuple[Card, ...]:
    """Groups first (quads, trips, pairs), then high to low, suits S C D H; straights from the top.

    Each card's place is a number with the card in its low six bits, so that plain integers sort.
    (The cards are read as ``int``s, which compiled code adds and shifts natively, not as Cards.)"""
    if category in _UNGROUPED:
        keyed = [_HIGH_FIRST[c] << 6 | c for c in cards]
    else:
        counts = [0] * 13
        for c in cards:
            counts[c >> 2] += 1
        keyed = [(_GROUP_WEIGHT[counts[c >> 2]] + _HIGH_FIRST[c]) << 6 | c for c in cards]
    keyed.sort()
    deck = DECK
    ordered = [deck[k & 63] for k in keyed]
    if category in _STRAIGHTS and ordered[0] >> 2 == ACE and ordered[1] >> 2 == 3:
        return (*ordered[1:], ordered[0])  # 5-4-3-2-A
    return tuple(ordered)


def _evaluator5(plain: dict[int, int], flush: dict[int, int]) -> Callable[[Sequence[int]], int]:
    """Five cards → strength; the tables are closed over so the hot path does no global look-ups."""
    rank_keys, suit_bits = RANK_KEY, SUIT_BIT

    def evaluate5(cards: Sequence[int]) -> int:
        a, b, c, d, e = cards
        key = rank_keys[a] + rank_keys[b] + rank_keys[c] + rank_keys[d] + rank_keys[e]
        if suit_bits[a] & suit_bits[b] & suit_bits[c] & suit_bits[d] & suit_bits[e]:
            return flush[key]
        return plain[key]

    return evaluate5


def _evaluator3(three: dict[int, int]) -> Callable[[Sequence[int]], int]:
    rank_keys = RANK_KEY

    def evaluate3(cards: Sequence[int]) -> int:
        a, b, c = cards
        return three[rank_keys[a] + rank_keys[b] + rank_keys[c]]

    return evaluate3


_CATEGORIES: Final = tuple(Category)
_STRAIGHTS: Final = (Category.STRAIGHT, Category.STRAIGHT_FLUSH)
_GROUP_WEIGHT: Final = (0, 256, 128, 64, 0)  # by how many cards share the rank: quads first, singles last
_HIGH_FIRST: Final = tuple(52 - (c & ~3) + (c & 3) for c in range(52))  # rank high to low, then suit S C D H
_UNGROUPED: Final = frozenset((Category.HIGH_CARD, Category.STRAIGHT, Category.FLUSH, Category.STRAIGHT_FLUSH))


def category_of(strength: int) -> Category:
    return _CATEGORIES[strength // CATEGORY_UNIT]


@cache
def hand_table(wheel: Wheel) -> HandTable:
    """The tables for a wheel setting, built once per process."""
    return HandTable(wheel)


def parse_hand(text: str) -> tuple[Card, ...]:
    """``"AS KD 7C"`` → cards; a convenience for tests and doctests."""
    return tuple(parse_card(t) for t in text.split())
