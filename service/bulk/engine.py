"""The bulk engine: claims of amounts checked many rooms at a time.

A line the engine reads is one the per-room path would accept as it stands: the common shape of a
verify request (a ruleset id, stake, round id, players with arranged hands, status and declare, and a
claim of amounts alone), every value of its type and in its bounds, no card twice, the claim naming
exactly the room's players and summing to zero. Its rooms are grouped by ruleset and size and settled
by :func:`service.scoring.settle_many`, the array form of each rule. The engine only says which lines
agree; every other line (another shape, a refusal, a disagreement) is answered by the per-room path,
which explains it in words, so an answer never depends on which path read its line.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson

from service.contract import MAX_EXACT_AMOUNT
from service.rulesets import Ruleset, RulesetError
from service.rulesets.catalogue import Catalogue
from service.scoring import settle_many
from service.validation.room_arrays import Seated, read_room


@dataclass
class _Group:
    """The rooms of one ruleset and size read so far (:class:`Seated`): each one's line and claimed
    amounts, in player order."""

    seated: Seated
    lines: list[int] = field(default_factory=list)
    claimed: list[int] = field(default_factory=list)

    def agreeing(self) -> list[int]:
        """The lines whose claimed amounts are what the rules give: not a room whose cards are not all
        cards, all different (the per-room path refuses it), nor one a false declaration refuses."""
        rooms, readable, stakes = self.seated.rooms()
        units, refused = settle_many(rooms)
        amounts = units * stakes[:, None]
        claimed = np.array(self.claimed, dtype=np.int64).reshape(len(self.lines), self.seated.size)
        agrees = np.logical_and.reduce(amounts == claimed, axis=-1) & readable & ~refused
        return [line for line, yes in zip(self.lines, agrees.tolist(), strict=True) if yes]


class Reader:
    """Reads verify requests into groups by ruleset and size; a request of any other shape is not read."""

    def __init__(self, resolve: Callable[[str], Ruleset]) -> None:
        self._resolve = resolve
        self._rulesets: dict[str, Ruleset | None] = {}
        self.groups: dict[tuple[int, int], _Group] = {}

    def ruleset_of(self, reference: str) -> Ruleset | None:
        if reference not in self._rulesets:
            try:
                self._rulesets[reference] = self._resolve(reference)
            except RulesetError:
                self._rulesets[reference] = None
        return self._rulesets[reference]

    def read(self, number: int, document: Any, colons: int) -> bool:
        """Add one verify request to its group; False where the engine does not read its shape.
        ``colons``: how many its text holds, one a key unless inside the ruleset or round id (a key
        given twice, which orjson reads as the last, leaves one more than the keys read)."""
        read = read_room(document, self.ruleset_of, 1)
        claim = document.get("claimed") if read is not None else None
        if read is None or type(claim) is not dict or len(claim) != 1:
            return False  # its fields are ruleset, players, claimed and maybe stake and round id
        ruleset, stake, room = read
        size = len(room.ids)
        amounts = claim.get("amounts")
        if type(amounts) is not dict or len(amounts) != size:
            return False
        reference, round_id = document["ruleset"], document.get("round_id", "")
        keys = len(document) + room.keys + 1 + size
        if colons != keys + reference.count(":") + round_id.count(":"):
            return False
        try:
            claimed = [amounts[who] for who in room.ids]  # the players' ids, all different: the claim's keys
        except KeyError:
            return False
        if any(type(a) is not int or abs(a) > MAX_EXACT_AMOUNT for a in claimed) or sum(claimed) != 0:
            return False
        group = self.groups.get((id(ruleset), size))
        if group is None:
            group = self.groups[id(ruleset), size] = _Group(Seated(ruleset, size))
        group.lines.append(number)
        group.claimed += claimed
        group.seated.add(stake, room)
        return True

    def agreeing(self) -> set[int]:
        """The lines read whose claims agree. A group the engine fails on is left to the per-room path
        whole (which answers each line, or its 500), rather than failing the run; the failure is
        printed, as the per-room path prints its own, since the answers alone would not show it."""
        found: set[int] = set()
        for group in self.groups.values():
            try:
                found.update(group.agreeing())
            except Exception:
                traceback.print_exc(file=sys.stderr)
        return found


def agreeing_lines(
    lines: Sequence[bytes], first: int, catalogue: Catalogue, defaults: dict[str, Any] | None = None
) -> set[int]:
    """The numbers (from ``first``) of the verify lines whose claims the engine finds agree.

    A line is read by orjson where orjson reads it as strict_json does: it starts an object and holds
    no escape (an escaped character is left to the per-room path), and its colons count its keys."""
    reader = Reader(catalogue.resolve)
    for number, line in enumerate(lines, start=first):
        if not line.startswith(b"{") or b"\\" in line:
            continue
        try:
            document = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        colons = line.count(b":")
        if defaults and type(document) is dict:
            colons += len(defaults.keys() - document.keys())  # keys the line leaves to the defaults
            document = {**defaults, **document}
        reader.read(number, document, colons)
    return reader.agreeing()
