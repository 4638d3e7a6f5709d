"""The strength scale of 3- and 5-card hands (docs/rules.md §2) and its lookup tables.

A hand's strength is one ``int``: the category, then the comparison vector of §2.2 as base-14 digits
(a rank ``r`` is the digit ``r + 1``; a missing card is 0). A 3-card hand is padded with zeros, so that
``front > middle`` is a single comparison and a 3-card hand equal to the top of a 5-card hand is never
the stronger one (§2.2, "front against middle").

The tables are built once, declaratively, from one line per category in strength order; ``wheel``
only changes the order of the straights. What both wheels share is read from a file
(:data:`STRENGTHS_FILE`), written by ``scripts/build_hand_strengths.py``.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, Literal

from service import package_files
from service.game.cards import ACE
from service.texts import Named

Wheel = Literal["second", "lowest"]

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


def strength_of(category: Category, digits: Sequence[int]) -> int:
    """The category, then the digits (most significant first, missing ones 0) in base BASE."""
    return int(category) * CATEGORY_UNIT + sum(d * w for d, w in zip(digits, _DIGIT_WEIGHTS, strict=False))


def multisets(counts: Sequence[int]) -> list[list[int]]:
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


@dataclass(frozen=True)
class Strengths:
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
def wheel_free_strengths() -> Strengths:
    """The tables shared by both wheels, read from :data:`STRENGTHS_FILE`: building them takes ~143 M
    instructions, a fifth of a one-room CLI's start-up (bench/cli.py); reading them with orjson, ~10 M."""
    import orjson

    written = orjson.loads(package_files.read_bytes("service", "data", STRENGTHS_FILE))
    return strengths_read(written)


def strengths_read(written: dict[str, list[list[Any]]]) -> Strengths:
    """:func:`strengths_written`' document → the tables."""
    kinds = {strength: Kind(name) for strength, name in zip(*written["kinds"], strict=True)}
    plain5, flush5, three = (dict(zip(*written[name], strict=True)) for name in ("plain5", "flush5", "three"))
    return Strengths(plain5, flush5, three, kinds)


def strengths_written(built: Strengths) -> dict[str, list[list[Any]]]:
    """The tables as JSON: each as its keys' list and its values' list, in the order built."""
    document: dict[str, list[list[Any]]] = {
        name: [list(table), list(table.values())]
        for name, table in (("plain5", built.plain5), ("flush5", built.flush5), ("three", built.three))
    }
    document["kinds"] = [list(built.kinds), [kind.value for kind in built.kinds.values()]]
    return document


def build_wheel_free_strengths() -> Strengths:
    """Every hand but the straights, whose order alone depends on the wheel: shared by both wheels'
    tables (and written to :data:`STRENGTHS_FILE`)."""
    built = Strengths({}, {}, {}, {})
    for line in FIVE_CARD_LINES:
        if line.straight:
            continue
        for ranks in multisets(line.counts):
            if line.straight is False and _is_straight(ranks):
                continue
            built.add(line, ranks, strength_of(line.category, [r + 1 for r in ranks]))
    for line in THREE_CARD_LINES:
        for ranks in multisets(line.counts):
            built.add(line, ranks, strength_of(line.category, [r + 1 for r in ranks]), five_cards=False)
    return built
