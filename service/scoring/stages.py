"""The settlement's stages, in the order of docs/rules.md: each a pure function of the evaluated room
that returns its ledger lines, every number read from a ruleset field the line names."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import NamedTuple

from service.hands import HAND_NAMES, POSITIONS, Position
from service.patterns import PATTERN_NAMES
from service.rulesets import Ruleset
from service.scoring.evaluation import EvaluatedRoom, pair_indices
from service.scoring.results import LedgerLine, PlayerResult, Step
from service.texts import KeyedName, Message, Named

FOUL_REASONS: dict[str, Named] = {
    code: KeyedName(code, key)
    for code, key in {
        "left": "foul_reason.left",
        "timed_out": "foul_reason.timed_out",
        "front_beats_middle": "foul_reason.front_beats_middle",
        "middle_beats_back": "foul_reason.middle_beats_back",
    }.items()
}
"""Each ``foul_reason`` code (a machine field, and its English) and the key of its Vietnamese."""
PATTERNS_NAMED: dict[str, Named] = {pattern: Named(pattern, names[1]) for pattern, names in PATTERN_NAMES.items()}


@lru_cache(maxsize=256)
def position_names(ruleset: Ruleset) -> dict[str, Named]:
    """Positions as a text says them: the id in English, the ruleset's label (Chi 1, Chi cuối…) in Vietnamese."""
    return {p: Named(p, ruleset.labels[p]) for p in POSITIONS}


def _line(
    room: EvaluatedRoom,
    step: Step,
    payer: int,
    payee: int,
    units: int,
    rule: str,
    explanation: Message,
    position: Position | None = None,
    hands: Mapping[str, str | None] | None = None,
) -> LedgerLine:
    return LedgerLine(step, room.players[payer].id, room.players[payee].id, units, rule, explanation, position, hands)


# The stages: each reads the evaluated room and returns its ledger lines.


def instant_win_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§4: the weaker side of a pair pays the stronger instant win; equal strengths exchange nothing."""
    lines = []
    for pair in room.pairs:
        if pair.settled_by != "instant_win":
            continue
        a, b = room.players[pair.i].instant_win, room.players[pair.j].instant_win
        if a is not None and (b is None or a.strength > b.strength):
            winner, loser, win = pair.i, pair.j, a
        elif b is not None and (a is None or b.strength > a.strength):
            winner, loser, win = pair.j, pair.i, b
        else:
            continue
        lines.append(
            _line(
                room,
                "instant_win",
                loser,
                winner,
                win.units,
                f"instant_wins.table[{win.pattern}].units",
                (
                    "ledger.instant_win",
                    {"winner": room.players[winner].id, "pattern": PATTERNS_NAMED[win.pattern], "units": win.units},
                ),
            )
        )
    return lines


def chi_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§5: a ``chi`` line of 1 per chi won and, where the chi value v > 1, a ``bonus`` line of v − 1."""
    lines: list[LedgerLine] = []
    bonuses: list[LedgerLine] = []
    names = position_names(room.ruleset)
    for pair in room.pairs:
        for position, winner, value, key in zip(POSITIONS, pair.winners, pair.values, pair.bonus_keys, strict=False):
            if winner is None:
                continue
            loser = pair.j if winner == pair.i else pair.i
            win, lose = room.players[winner], room.players[loser]
            assert win.hands is not None
            info = win.hands[position].info
            lost_to = None if lose.fouled or lose.hands is None else lose.hands[position].info.id
            hands = {"payee": info.id, "payer": lost_to}
            where = names[position]
            if lost_to is None:
                how = ("ledger.chi_foul", {"position": where, "loser": lose.id})
            else:
                how = (
                    "ledger.chi",
                    {"position": where, "winner_hand": HAND_NAMES[info.id], "loser_hand": HAND_NAMES[lost_to]},
                )
            lines.append(
                _line(
                    room,
                    "chi",
                    loser,
                    winner,
                    1,
                    "docs/rules.md §5: one unit per chi won",
                    how,
                    position,
                    hands,
                )
            )
            if value > 1:
                assert key is not None  # a chi worth more than 1 has a bonus entry
                bonuses.append(
                    _line(
                        room,
                        "bonus",
                        loser,
                        winner,
                        value - 1,
                        f"bonuses.{position}.{key}",
                        (
                            "ledger.bonus_added" if room.ruleset.bonus_mode == "add" else "ledger.bonus",
                            {"position": where, "hand": HAND_NAMES[key], "value": value, "bonus": value - 1},
                        ),
                        position,
                        hands,
                    )
                )
    return lines + bonuses


def sweepers(room: EvaluatedRoom) -> set[int]:
    """§11.1 bắt sập làng: in a room of 3 or more, a player who is not fouled, had no pair settled by an
    instant win, and scoops every opponent who did not foul."""
    players = room.players
    if len(players) < 3:
        return set()
    scooped = {(winner, loser) for _, winner, loser in room.scoops}
    blocked = {k for pair in room.pairs if pair.settled_by == "instant_win" for k in (pair.i, pair.j)}
    return {
        a
        for a, player in enumerate(players)
        if not player.fouled
        and a not in blocked
        and all((a, b) in scooped or players[b].fouled for b in range(len(players)) if b != a)
    }


class ScoopPayment(NamedTuple):
    units: int
    basis: int
    multiplier: int
    sweep: int
    rule: str


def scoop_payment(
    ruleset: Ruleset, room_size: int, scoopers: int, chi_won: int, total: int, sweeping: bool
) -> ScoopPayment:
    """§6: what one scoop pays, basis × (m × s − 1): m flat or by room size and the scooped player's
    number of scoopers, s the sweep multiplier for a sweeper (else 1), the basis total(A,B) or the
    chi won (§11.1); and the ruleset fields it read. The advisor asks the same."""
    m, rule = ruleset.scoop_multiplier(room_size, scoopers)
    s = ruleset.sweep_multiplier if sweeping else 1
    by_chi = ruleset.scoop_basis == "chi"
    if s > 1:
        rule += " × scoop.sweep_multiplier"
    if by_chi:
        rule += ", scoop.basis"
    basis = chi_won if by_chi else total
    return ScoopPayment(basis * (m * s - 1), basis, m, s, rule)


def scoop_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§6: the scooped player pays basis × (m − 1), m flat or by room size and number of scoopers; a
    sweeper's scoops pay basis × (m × s − 1). The basis is total(A,B), or the chi won (§11.1)."""
    ruleset = room.ruleset
    n = len(room.players)
    scoopers = [0] * n
    for _, _, loser in room.scoops:
        scoopers[loser] += 1
    sweeping = sweepers(room) if ruleset.sweep_multiplier > 1 else set()
    lines = []
    by_chi = ruleset.scoop_basis == "chi"
    for pair, winner, loser in room.scoops:
        pays = scoop_payment(ruleset, n, scoopers[loser], pair.chi_won(winner), pair.total(winner), winner in sweeping)
        s, m, basis = pays.sweep, pays.multiplier, pays.basis
        if s > 1:
            key = "ledger.sweep_chi_basis" if by_chi else "ledger.sweep_total_basis"
        else:
            key = "ledger.scoop_chi_basis" if by_chi else "ledger.scoop_total_basis"
        explanation = (
            key,
            {
                "winner": room.players[winner].id,
                "loser": room.players[loser].id,
                "scoopers": scoopers[loser],
                "opponents": n - 1,
                "sweep": s,
                "basis": basis,
                "multiplier": f"({m} × {s} − 1)" if s > 1 else f"({m} − 1)",
            },
        )
        lines.append(_line(room, "scoop", loser, winner, pays.units, pays.rule, explanation))
    return lines


def foul_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§6 and §11.1: a fouled player pays a non-fouled opponent the fixed foul payment, where the
    ruleset has one; else, where foul_multiplier f > 1, total × (f − 1) on top of the chi it lost."""
    ruleset = room.ruleset
    f = ruleset.foul_multiplier
    lines: list[LedgerLine] = []
    for pair in room.pairs:
        if pair.settled_by not in ("foul", "fixed_foul"):
            continue
        loser = pair.i if room.players[pair.i].fouled else pair.j
        winner = pair.j if loser == pair.i else pair.i
        who = {"loser": room.players[loser].id, "reason": FOUL_REASONS[room.players[loser].foul_reason or "left"]}
        if pair.settled_by == "fixed_foul" and ruleset.fixed_foul_units is not None:
            fixed = ruleset.fixed_foul_units
            explanation = ("ledger.foul_fixed", {**who, "fixed": fixed})
            lines.append(_line(room, "foul", loser, winner, fixed, "fouls.fixed_units", explanation))
        elif f > 1:
            total = pair.total(winner)
            lines.append(
                _line(
                    room,
                    "foul",
                    loser,
                    winner,
                    total * (f - 1),
                    "fouls.foul_multiplier",
                    ("ledger.foul_multiplied", {**who, "total": total, "multiplier": f}),
                )
            )
    return lines


def _four_aces_arranged(player: PlayerResult) -> bool:
    return (
        not player.fouled
        and player.hands is not None
        and any(player.hands[p].kind is not None and player.hands[p].kind == "four_aces" for p in ("back", "middle"))
    )


def ace_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§7, last and never multiplied: four aces not arranged together collect from everyone; else the
    players with no ace pay ``no_ace_pays`` shared among those with ``collector_min_aces`` or more."""
    rule = room.ruleset.aces
    players = room.players
    lines: list[LedgerLine] = []
    if rule is None or len(players) != rule.room_size:
        return lines
    quad = next((k for k, p in enumerate(players) if p.aces == 4), None)
    if quad is not None:
        holder = players[quad]
        if _four_aces_arranged(holder):
            return lines
        for other in range(len(players)):
            if other != quad:
                lines.append(
                    _line(
                        room,
                        "ace",
                        other,
                        quad,
                        rule.four_aces_receives,
                        "aces.four_aces_receives",
                        ("ledger.four_aces", {"holder": holder.id, "units": rule.four_aces_receives}),
                    )
                )
        return lines
    collectors = [k for k, p in enumerate(players) if p.aces >= rule.collector_min_aces]
    if not collectors:
        return lines
    share, remainder = divmod(rule.no_ace_pays, len(collectors))
    for i, j in pair_indices(len(players)):
        for payer, payee in ((i, j), (j, i)):
            if players[payer].aces == 0 and payee in collectors:
                extra = 1 if collectors.index(payee) < remainder else 0
                lines.append(
                    _line(
                        room,
                        "ace",
                        payer,
                        payee,
                        share + extra,
                        "aces.no_ace_pays",
                        (
                            "ledger.no_ace",
                            {
                                "payer": players[payer].id,
                                "pays": rule.no_ace_pays,
                                "collectors": len(collectors),
                                "least": rule.collector_min_aces,
                            },
                        ),
                    )
                )
    return lines


STAGES = (instant_win_lines, chi_lines, scoop_lines, foul_lines, ace_lines)
"""In the order of docs/rules.md; each stage's lines come after the previous stage's (§9.4 item 10)."""
