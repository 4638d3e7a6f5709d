"""The most members or items each place of a request body may hold, checked before anything loads it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from service.contract import Fault, escape
from service.texts import Text

MOST_MEMBERS = 32
"""No object of a request holds more members than this (the largest has seven fields)."""


class Bound(NamedTuple):
    most: int
    text: str = "fault.too_many_members"
    code: str = "too_many"


EVERY = "*"
"""Any index of an array, in a place of BOUNDS."""
BOUNDS: dict[tuple[str, ...], Bound] = {
    (): Bound(MOST_MEMBERS),
    ("players",): Bound(8, "fault.player_count_unchecked", "player_count"),
    ("players", EVERY): Bound(MOST_MEMBERS),
    ("claimed",): Bound(MOST_MEMBERS),
    ("claimed", "amounts"): Bound(MOST_MEMBERS),
    ("claimed", "ledger"): Bound(1000, "fault.too_many_items"),
    ("claimed", "ledger", EVERY): Bound(MOST_MEMBERS),
}
"""The most members (of an object) or items (of an array) at each place of a request body (twice the
largest room's players, for one). Checked before marshmallow loads anything, and a place past its
bound is refused on its size alone: otherwise one batch room could make the service check, and
list, a million unknown fields."""


BELOW: dict[tuple[str, ...], frozenset[str]] = {
    place[:depth]: frozenset(other[depth] for other in BOUNDS if len(other) > depth and other[:depth] == place[:depth])
    for place in BOUNDS
    for depth in range(len(place))
}
"""For each place on the way to a bound, the steps below it that lead to one: the walk's map, made once."""


def oversized(raw: Any, path: tuple[str, ...] = (), place: tuple[str, ...] = ()) -> Iterator[Fault]:
    """The places of ``raw`` past their bound; the walk goes only where BOUNDS has a place below, and
    only into containers within their bound, so it costs no more than the bounds allow. ``place`` is
    ``path`` with each array index read as EVERY, carried down rather than made again at each node."""
    bound = BOUNDS.get(place)
    if bound and isinstance(raw, dict | list) and len(raw) > bound.most:
        message = Text(bound.text, most=bound.most, count=len(raw))
        yield Fault("".join(f"/{escape(step)}" for step in path), message, bound.code)
        return
    below = BELOW.get(place)
    if not below:
        return
    if isinstance(raw, dict):
        for key in sorted(raw.keys() & below):
            yield from oversized(raw[key], (*path, key), (*place, key))
    elif isinstance(raw, list) and EVERY in below:
        every = (*place, EVERY)
        for index, item in enumerate(raw):
            yield from oversized(item, (*path, str(index)), every)
