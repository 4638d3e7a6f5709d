"""Receipts' rulings checked many at a time: each room's answered ledger against the rules' array form.

Applying the rules again room by room is most of what a receipt costs (bench/receipts.py --stages). The
array form (:func:`service.scoring.settle_many_by_line`) settles many rooms of one ruleset and size at
once and gives what each player pays each other under each step and position: a room's ledger, its
lines summed by what names them. Where no two lines of a room share those four, that is the ledger line
by line, and an answer agrees with it exactly when the per-room check (:func:`rescoring.rescorer`) finds
the same lines and amounts. Rooms are taken here only where that holds and the arrays read the room as
the per-room path would (:mod:`service.validation.room_arrays`); everything else (a refusal, a patch, a
ruleset whose sweep adds a second scoop line to a pair, an answer that does not agree) is left to the
per-room check, which says why, so a verdict never depends on which path reached it.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from service.game.hands import POSITIONS
from service.rulesets.catalogue import Catalogue
from service.scoring import STEPS, settle_many_by_line
from service.validation.room_arrays import Seated, read_room

NAMES: Final[dict[tuple[str, str | None], int]] = {
    name: k for k, name in enumerate((step, where) for step in STEPS for where in (None, *POSITIONS))
}
"""Each (step, position) a line can name, as a number."""
Line = tuple[int, int, int, int]
"""An answered line: its (step, position) (:data:`NAMES`), payer and payee by their place in the room, units."""


@dataclass
class _Group:
    """The rooms of one ruleset and size taken so far (:class:`Seated`): each one's ticket and amounts,
    and their answered lines, flat (``rooms`` gives each line's room by its place in the group)."""

    seated: Seated
    tickets: list[int] = field(default_factory=list)
    amounts: list[int] = field(default_factory=list)
    rooms: list[int] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)

    def agreeing(self) -> list[int]:
        rooms, readable, stakes = self.seated.rooms()
        count = len(self.tickets)
        flows, refused = settle_many_by_line(rooms)
        names = list(flows)
        paid = np.stack([flows[name] for name in names])  # (names, rooms, payer, payee)
        units = paid.sum(axis=(0, 2)) - paid.sum(axis=(0, 3))
        amounts = np.array(self.amounts, dtype=np.int64).reshape(count, self.seated.size)
        agrees = (units * stakes[:, None] == amounts).all(axis=-1)
        agrees &= readable & ~refused
        place = np.full(len(NAMES), -1, dtype=np.int64)
        place[[NAMES[name] for name in names]] = np.arange(len(names))
        lines = np.array(self.lines, dtype=np.int64).reshape(-1, 4)
        where, room = place[lines[:, 0]], np.array(self.rooms, dtype=np.int64)
        named = where >= 0
        agrees[room[~named]] = False  # a line the rules never write
        answered = np.zeros_like(paid)
        answered[where[named], room[named], lines[named, 1], lines[named, 2]] = lines[named, 3]
        agrees &= (answered == paid).all(axis=(0, 2, 3))  # every line in its place, and no other
        return [ticket for ticket, yes in zip(self.tickets, agrees.tolist(), strict=True) if yes]


class Rulings:
    """Rooms and the rulings answered for them, taken one at a time and checked together."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        self.groups: dict[tuple[int, int], _Group] = {}
        self.taken = 0

    def take(self, room: Any, answered: Any) -> int | None:
        """A ticket for this room and its answered result, or None where only the per-room check can
        check it. The room's ruleset is the one its answer pins (as :func:`rescoring.rescorer` reads it)."""
        if type(answered) is not dict or type(room) is not dict:
            return None
        pinned, ledger, players = answered.get("ruleset"), answered.get("ledger"), answered.get("players")
        if type(pinned) is not dict or type(ledger) is not list or type(players) is not list:
            return None
        ruleset = self.catalogue.get(f"{pinned.get('id')}@{pinned.get('version')}")
        if ruleset is None or ruleset.digest != pinned.get("digest"):
            return None
        read = read_room(room, lambda _: ruleset, 0)
        if read is None:
            return None
        _, stake, seated = read
        size = len(seated.ids)
        if ruleset.sweep_pays == "total" and ruleset.sweep_multiplier(size)[0] > 1:
            return None  # a sweeper is paid a second scoop line by each opponent: two lines of one name
        lines = _lines(ledger, list(seated.ids), stake)
        amounts = _amounts(players, list(seated.ids))
        if lines is None or amounts is None:
            return None
        group = self.groups.get((id(ruleset), size))
        if group is None:
            group = self.groups[id(ruleset), size] = _Group(Seated(ruleset, size))
        ticket = self.taken
        self.taken += 1
        group.rooms += [len(group.tickets)] * len(lines)
        group.tickets.append(ticket)
        group.lines += lines
        group.amounts += amounts
        group.seated.add(stake, seated)
        return ticket

    def agreeing(self) -> set[int]:
        """The tickets whose rulings are what the rules give. A group the arrays fail on is left to the
        per-room check whole, the failure printed."""
        found: set[int] = set()
        for group in self.groups.values():
            try:
                found.update(group.agreeing())
            except Exception:
                traceback.print_exc(file=sys.stderr)
        return found


def _lines(ledger: list[Any], ids: list[str], stake: int) -> list[Line] | None:
    """An answer's ledger as :data:`Line` each; None where two lines share a step, position, payer and
    payee, or a line is not one a ledger holds (its amount not its units times the stake, its units not
    positive)."""
    place = {who: k for k, who in enumerate(ids)}
    lines: list[Line] = []
    seen: set[tuple[int, int, int]] = set()
    for each in ledger:
        if type(each) is not dict:
            return None
        line: dict[str, Any] = each
        step, position, units, amount = line.get("step"), line.get("position"), line.get("units"), line.get("amount")
        payer, payee = line.get("payer"), line.get("payee")
        if type(step) is not str or type(payer) is not str or type(payee) is not str:
            return None
        if position is not None and type(position) is not str:
            return None
        name, paying, paid = NAMES.get((step, position)), place.get(payer), place.get(payee)
        if name is None or paying is None or paid is None or (name, paying, paid) in seen:
            return None
        if type(units) is not int or units <= 0 or type(amount) is not int or amount != units * stake:
            return None
        seen.add((name, paying, paid))
        lines.append((name, paying, paid, units))
    return lines


def _amounts(players: list[Any], ids: list[str]) -> list[int] | None:
    """The answer's amount for each player, in the room's order; None where it names them otherwise."""
    if len(players) != len(ids):
        return None
    amounts = []
    for player, who in zip(players, ids, strict=True):
        if type(player) is not dict or player.get("id") != who or type(player.get("amount")) is not int:
            return None
        amounts.append(player["amount"])
    return amounts
