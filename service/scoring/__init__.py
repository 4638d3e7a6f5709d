"""The settlement pipeline (docs/rules.md §2.3–§7, §9.4): ``results`` (what it answers), ``evaluation``
(a room evaluated once), ``settlement``, ``scoops`` and ``aces`` (each stage's ledger lines, and beside
each its array form for many rooms) and, here, the ledger and score.

request → :class:`Room` → :func:`evaluate_room` (hands, fouls, instant wins and every pair's
chi-by-chi comparison, decided once) → the stages, each a pure function of the evaluated room
that returns its ledger lines: instant wins → chi and bonuses → scoops → fouls → aces. A small
:class:`Ledger` totals them. No stage reads another's state; every number comes from a ruleset
field that the line names.

May import: service.contract, service.rulesets, service.game, service.texts; no Flask, no marshmallow,
no signing (import-linter holds it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from service.contract import Room, Rooms
from service.game.hands import POSITIONS
from service.scoring.aces import ace_flows, ace_lines
from service.scoring.evaluation import (
    EvaluatedRoom,
    arrangement_foul,
    evaluate_many,
    evaluate_room,
    qualifying_patterns,
    ruleset_arrangement_patterns,
)
from service.scoring.pairs import chi_value
from service.scoring.results import STEPS, ChiOutcome, InstantWin, LedgerLine, PairShowdown, PlayerResult, Result, Step
from service.scoring.scoops import scoop_flows, scoop_lines, scoop_payment
from service.scoring.settlement import (
    chi_flows,
    chi_lines,
    foul_flows,
    foul_lines,
    instant_win_flows,
    instant_win_lines,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from service.scoring.settlement import Flows

STAGES: Final = (instant_win_lines, chi_lines, scoop_lines, foul_lines, ace_lines)
"""The settlement's stages in the order of docs/rules.md; each stage's lines come after the previous
stage's (§9.4 item 10)."""
STAGES_MANY: Final = (instant_win_flows, chi_flows, scoop_flows, foul_flows, ace_flows)
"""The same stages' array forms (the bulk engine's): what each player pays each other, by step and position."""

__all__ = [
    "STAGES",
    "STEPS",
    "ChiOutcome",
    "InstantWin",
    "LedgerLine",
    "PairShowdown",
    "PlayerResult",
    "Result",
    "Step",
    "arrangement_foul",
    "chi_value",
    "evaluate_room",
    "qualifying_patterns",
    "ruleset_arrangement_patterns",
    "scoop_payment",
    "score",
    "settle_many",
    "settle_many_by_line",
]


class Ledger:
    """The room's ledger lines (given in step order; lines of 0 units are dropped), and what they add
    up to per player and per pair."""

    def __init__(self, room: EvaluatedRoom, lines: list[LedgerLine]) -> None:
        self.lines = [line for line in lines if line.units > 0]
        index = {player.id: k for k, player in enumerate(room.players)}
        self.units = [0] * len(room.players)
        self.pair_units: dict[tuple[int, int], int] = {}  # (i, j), i < j → what j paid i, net
        for line in self.lines:
            payer, payee = index[line.payer], index[line.payee]
            self.units[payer] -= line.units
            self.units[payee] += line.units
            key = (payer, payee) if payer < payee else (payee, payer)
            self.pair_units[key] = self.pair_units.get(key, 0) + (line.units if payee < payer else -line.units)


def _showdown(room: EvaluatedRoom, ledger: Ledger) -> list[PairShowdown]:
    scooped_by = {(pair.i, pair.j): room.players[winner].id for pair, winner, _ in room.scoops}
    showdown = []
    for pair in room.pairs:
        a, b = room.players[pair.i], room.players[pair.j]
        chi = [
            ChiOutcome(POSITIONS[k], None if winner is None else room.players[winner].id, pair.values[k])
            for k, winner in enumerate(pair.winners)
        ]
        net = ledger.pair_units.get((pair.i, pair.j), 0)
        showdown.append(
            PairShowdown((a.id, b.id), pair.settled_by, chi, scooped_by.get((pair.i, pair.j)), {a.id: net, b.id: -net})
        )
    return showdown


def score(room: Room) -> Result:
    """Settle one validated room; raises :class:`RoomRejected` for a false declaration."""
    evaluated = evaluate_room(room)
    ledger = Ledger(evaluated, [line for stage in STAGES for line in stage(evaluated)])
    for player, units in zip(evaluated.players, ledger.units, strict=True):
        player.units = units
    return Result(room, evaluated.players, ledger.lines, _showdown(evaluated, ledger))


def settle_many_by_line(rooms: Rooms) -> tuple[Flows, NDArray[np.bool_]]:
    """The array form of :func:`score`'s ledger: (step, position) → what each player pays each other,
    (rooms, payer, payee), the sum of its lines (each room's lines of one step, position, payer and
    payee); and the rooms a false declaration refuses (whose flows mean nothing)."""
    evaluated = evaluate_many(rooms)
    flows: Flows = {}
    for stage in STAGES_MANY:
        flows.update(stage(evaluated))
    return flows, evaluated.refused


def settle_many(rooms: Rooms) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """The array form of :func:`score`, amounts only: each player's units, (rooms, players), and the
    rooms a false declaration refuses (whose units mean nothing; the per-room path refuses them)."""
    import numpy as np

    flows, refused = settle_many_by_line(rooms)
    paid = sum(flows.values())
    assert not isinstance(paid, int)
    by_pair = np.ascontiguousarray(paid.transpose(1, 2, 0))  # (payer, payee, room): numpy sums a short last axis slowly
    units: NDArray[np.int64] = (by_pair.sum(axis=0) - by_pair.sum(axis=1)).T
    return units, refused
