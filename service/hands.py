"""Hand evaluation (docs/rules.md §2): 3- and 5-card hands on one strength scale.

A hand's strength is one ``int``: the category, then the comparison vector of
§2.2 as base-14 digits (a rank ``r`` is the digit ``r + 1``; a missing card is
0). A 3-card hand is padded with zeros, so that ``front > middle`` is a single
comparison and a 3-card hand equal to the top of a 5-card hand is never the
stronger one (§2.2, "front against middle").

The tables are built once, declaratively, from one line per category in
strength order; ``wheel`` only changes the order of the straights.

>>> table = hand_table("second")
>>> table.describe(parse_hand("KS KH 9D")).category.id, table.describe(parse_hand("KD KC QS 3C 2C")).category.id
('pair', 'pair')
>>> table.evaluate3(parse_hand("KS KH AD")) > table.evaluate5(parse_hand("KD KC QS 3C 2C"))
True
>>> table.evaluate3(parse_hand("KS KH QD")) > table.evaluate5(parse_hand("KD KC QS 3C 2C"))
False
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal

from service import package_files
from service.cards import ACE, DECK, Card, parse_card
from service.texts import Named

if TYPE_CHECKING:  # numpy loads only where hands are evaluated many at once (a one-room start-up does without)
    import numpy as np
    from numpy.typing import NDArray

Wheel = Literal["second", "lowest"]
Position = Literal["back", "middle", "front"]
POSITIONS: Final[tuple[Position, ...]] = ("back", "middle", "front")

DIGITS: Final = 5
BASE: Final = 14
CATEGORY_UNIT: Final[int] = BASE**DIGITS


class Category(enum.IntEnum):
    """The hand categories of §2.1, weakest first; the value is the rank."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8

    @property
    def id(self) -> str:
        return self.name.lower()

    @property
    def name_vi(self) -> str:
        return _CATEGORY_NAMES[self][1]

    @property
    def name_en(self) -> str:
        return _CATEGORY_NAMES[self][0]


class Kind(enum.StrEnum):
    """Named sub-kinds (§2.1): they add no category, only bonuses and names."""

    ROYAL_FLUSH = "royal_flush"
    STEEL_WHEEL = "steel_wheel"
    FOUR_ACES = "four_aces"
    TRIP_ACES = "trip_aces"

    @property
    def name_vi(self) -> str:
        return _KIND_NAMES[self][1]

    @property
    def name_en(self) -> str:
        return _KIND_NAMES[self][0]


_CATEGORY_NAMES: Final = {
    Category.HIGH_CARD: ("High card", "Mậu thầu"),
    Category.PAIR: ("Pair", "Đôi"),
    Category.TWO_PAIR: ("Two pair", "Thú"),
    Category.THREE_OF_A_KIND: ("Three of a kind", "Sám"),
    Category.STRAIGHT: ("Straight", "Sảnh"),
    Category.FLUSH: ("Flush", "Thùng"),
    Category.FULL_HOUSE: ("Full house", "Cù lũ"),
    Category.FOUR_OF_A_KIND: ("Four of a kind", "Tứ quý"),
    Category.STRAIGHT_FLUSH: ("Straight flush", "Thùng phá sảnh"),
}
_KIND_NAMES: Final = {
    Kind.ROYAL_FLUSH: ("Royal flush", "Thùng phá sảnh thượng"),
    Kind.STEEL_WHEEL: ("Steel wheel", "Thùng phá sảnh hạ"),
    Kind.FOUR_ACES: ("Four aces", "Tứ quý Át"),
    Kind.TRIP_ACES: ("Trip aces", "Sám Át"),
}

HAND_IDS: Final[tuple[str, ...]] = (*(c.id for c in Category), *(k.value for k in Kind))
"""Every category's and kind's id; the array form numbers a hand by its place here (its kind's, if any)."""

HAND_NAMES: Final[dict[str, Named]] = {
    **{c.id: Named(c.name_en.lower(), c.name_vi.lower()) for c in Category},
    **{k.value: Named(k.name_en.lower(), k.name_vi.lower().replace(" át", " Át")) for k in Kind},
}
"""A category's or kind's id (a bonus table's key) → its name in each language, as a sentence says it."""

WHEEL_RANKS: Final = frozenset({ACE, 0, 1, 2, 3})
BROADWAY_RANKS: Final = frozenset(range(8, 13))
_PLAIN_STRAIGHTS: Final = [frozenset(range(low, low + 5)) for low in range(0, 8)]  # 2-6 … 9-K

STRAIGHT_ORDERS: Final[dict[Wheel, tuple[frozenset[int], ...]]] = {
    "second": (*_PLAIN_STRAIGHTS, WHEEL_RANKS, BROADWAY_RANKS),
    "lowest": (WHEEL_RANKS, *_PLAIN_STRAIGHTS, BROADWAY_RANKS),
}
"""Straights weakest first, by the ruleset's ``wheel`` setting (§2.2)."""

# Per card: a rank key whose sum identifies the rank multiset of a hand (no rank
# appears 5 times), and a suit bit whose AND over a hand is non-zero for a flush.
RANK_KEY: Final[tuple[int, ...]] = tuple(5 ** (c >> 2) for c in range(52))
SUIT_BIT: Final[tuple[int, ...]] = tuple(1 << (c & 3) for c in range(52))


_POWERS_OF_5: Final[tuple[int, ...]] = tuple(5**r for r in range(13))
_DIGIT_WEIGHTS: Final[tuple[int, ...]] = tuple(BASE ** (DIGITS - 1 - position) for position in range(DIGITS))


def rank_key(ranks: Sequence[int]) -> int:
    return sum(map(_POWERS_OF_5.__getitem__, ranks))


def _strength(category: Category, digits: Sequence[int]) -> int:
    """The category, then the digits (most significant first, missing ones 0) in base BASE."""
    return int(category) * CATEGORY_UNIT + sum(d * w for d, w in zip(digits, _DIGIT_WEIGHTS, strict=False))


def _multisets(counts: Sequence[int]) -> list[list[int]]:
    """Every rank vector of a count pattern such as (2, 1, 1): groups by count,
    each group high to low, in the order §2.2 compares them."""
    groups = [(count, len(list(same))) for count, same in itertools.groupby(counts)]
    vectors: list[tuple[list[int], frozenset[int]]] = [([], frozenset())]
    for count, how_many in groups:
        vectors = [
            (vector + [r for r in chosen for _ in range(count)], used.union(chosen))
            for vector, used in vectors
            for chosen in itertools.combinations([r for r in range(12, -1, -1) if r not in used], how_many)
        ]
    return [vector for vector, _ in vectors]


def _is_straight(ranks: Sequence[int]) -> bool:
    return frozenset(ranks) in STRAIGHT_ORDERS["second"] and len(set(ranks)) == 5


@dataclass(frozen=True)
class _Line:
    """One line of the declarative table: a category and the hands it holds."""

    category: Category
    counts: tuple[int, ...]
    suited: bool | None  # True: flush only; False: not a flush; None: either
    straight: bool | None = None


FIVE_CARD_LINES: Final = (
    _Line(Category.HIGH_CARD, (1, 1, 1, 1, 1), suited=False, straight=False),
    _Line(Category.PAIR, (2, 1, 1, 1), suited=None),
    _Line(Category.TWO_PAIR, (2, 2, 1), suited=None),
    _Line(Category.THREE_OF_A_KIND, (3, 1, 1), suited=None),
    _Line(Category.STRAIGHT, (1, 1, 1, 1, 1), suited=False, straight=True),
    _Line(Category.FLUSH, (1, 1, 1, 1, 1), suited=True, straight=False),
    _Line(Category.FULL_HOUSE, (3, 2), suited=None),
    _Line(Category.FOUR_OF_A_KIND, (4, 1), suited=None),
    _Line(Category.STRAIGHT_FLUSH, (1, 1, 1, 1, 1), suited=True, straight=True),
)
THREE_CARD_LINES: Final = (
    _Line(Category.HIGH_CARD, (1, 1, 1), suited=None),
    _Line(Category.PAIR, (2, 1), suited=None),
    _Line(Category.THREE_OF_A_KIND, (3,), suited=None),
)


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


@dataclass(frozen=True)
class _Strengths:
    """Rank key → strength tables and the named kinds, before the hand table's evaluators."""

    plain5: dict[int, int]
    flush5: dict[int, int]
    three: dict[int, int]
    kinds: dict[int, Kind]

    def add(self, line: _Line, ranks: list[int], strength: int, five_cards: bool = True) -> None:
        key = rank_key(ranks)
        if not five_cards:
            self.three[key] = strength
        else:
            if line.suited is not False:
                self.flush5[key] = strength
            if line.suited is not True:
                self.plain5[key] = strength
        if (kind := _kind_of(line.category, ranks, five_cards)) is not None:
            self.kinds[strength] = kind


def _kind_of(category: Category, ranks: list[int], five_cards: bool) -> Kind | None:
    if category == Category.STRAIGHT_FLUSH:
        return {BROADWAY_RANKS: Kind.ROYAL_FLUSH, WHEEL_RANKS: Kind.STEEL_WHEEL}.get(frozenset(ranks))
    if category == Category.FOUR_OF_A_KIND and ranks[0] == ACE:
        return Kind.FOUR_ACES
    if category == Category.THREE_OF_A_KIND and ranks[0] == ACE and not five_cards:
        return Kind.TRIP_ACES
    return None


STRENGTHS_FILE: Final = "hand-strengths.json"
"""In ``service/data``: :func:`build_wheel_free_strengths`' tables as written by
``scripts/build_hand_strengths.py``; tests/unit/test_hands.py holds the file equal to a fresh build."""


@cache
def _wheel_free_strengths() -> _Strengths:
    """The tables shared by both wheels, read from :data:`STRENGTHS_FILE`: building them takes ~143 M
    instructions, a fifth of a one-room CLI's start-up (bench/cli.py); reading them with orjson, ~10 M."""
    import orjson

    written = orjson.loads(package_files.read_bytes("service", "data", STRENGTHS_FILE))
    return strengths_read(written)


def strengths_read(written: dict[str, list[list[Any]]]) -> _Strengths:
    """:func:`strengths_written`' document → the tables."""
    kinds = {strength: Kind(name) for strength, name in zip(*written["kinds"], strict=True)}
    plain5, flush5, three = (dict(zip(*written[name], strict=True)) for name in ("plain5", "flush5", "three"))
    return _Strengths(plain5, flush5, three, kinds)


def strengths_written(built: _Strengths) -> dict[str, list[list[Any]]]:
    """The tables as JSON: each as its keys' list and its values' list, in the order built."""
    document: dict[str, list[list[Any]]] = {
        name: [list(table), list(table.values())]
        for name, table in (("plain5", built.plain5), ("flush5", built.flush5), ("three", built.three))
    }
    document["kinds"] = [list(built.kinds), [kind.value for kind in built.kinds.values()]]
    return document


def build_wheel_free_strengths() -> _Strengths:
    """Every hand but the straights, whose order alone depends on the wheel: shared by both wheels'
    tables (and written to :data:`STRENGTHS_FILE`)."""
    built = _Strengths({}, {}, {}, {})
    for line in FIVE_CARD_LINES:
        if line.straight:
            continue
        for ranks in _multisets(line.counts):
            if line.straight is False and _is_straight(ranks):
                continue
            built.add(line, ranks, _strength(line.category, [r + 1 for r in ranks]))
    for line in THREE_CARD_LINES:
        for ranks in _multisets(line.counts):
            built.add(line, ranks, _strength(line.category, [r + 1 for r in ranks]), five_cards=False)
    return built


class HandTable:
    """Lookup tables for one ``wheel`` setting; build with :func:`hand_table`."""

    def __init__(self, wheel: Wheel) -> None:
        shared = _wheel_free_strengths()
        built = _Strengths(dict(shared.plain5), dict(shared.flush5), dict(shared.three), dict(shared.kinds))
        for line in FIVE_CARD_LINES:
            if not line.straight:
                continue
            for index, straight in enumerate(STRAIGHT_ORDERS[wheel]):
                built.add(line, sorted(straight, reverse=True), _strength(line.category, [index + 1]))
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
        import numpy as np

        keys: NDArray[np.int64] = np.add.reduce(self._array_tables().rank_keys[cards], axis=-1)
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


def display_order(cards: Sequence[Card], category: Category) -> tuple[Card, ...]:
    """Groups first (quads, trips, pairs), then high to low, suits S C D H; straights from the top.

    Each card's place is a number with the card in its low six bits, so that plain integers sort."""
    if category in _UNGROUPED:
        keyed = [_HIGH_FIRST[c] << 6 | c for c in cards]
    else:
        counts = [0] * 13
        for c in cards:
            counts[c >> 2] += 1
        keyed = [(_GROUP_WEIGHT[counts[c >> 2]] + _HIGH_FIRST[c]) << 6 | c for c in cards]
    keyed.sort()
    ordered = [DECK[k & 63] for k in keyed]
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
