"""The settlement pipeline (docs/rules.md §2.3–§7, §9.4).

request → :class:`Room` → :func:`evaluate_room` (hands, fouls, instant wins and every pair's
chi-by-chi comparison, decided once) → the stages, each a pure function of the evaluated room
that returns its ledger lines: instant wins → chi and bonuses → scoops → fouls → aces. A small
:class:`Ledger` totals them. No stage reads another's state; every number comes from a ruleset
field that the line names.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, NamedTuple

from service.cards import ACE, Card
from service.contract import Fault, PlayerEntry, Room, RoomRejected, Status
from service.hands import HAND_NAMES, POSITIONS, HandValue, Position
from service.patterns import PATTERN_NAMES, CardStats, Split, arrangement_patterns, card_patterns, card_stats
from service.rulesets import Ruleset
from service.texts import KeyedName, Message, Named, Text

Step = Literal["instant_win", "chi", "bonus", "scoop", "foul", "ace"]
STEPS: tuple[Step, ...] = ("instant_win", "chi", "bonus", "scoop", "foul", "ace")


@dataclass(frozen=True)
class InstantWin:
    pattern: str
    units: int
    strength: int
    split: Split | None = None


class LedgerLine(NamedTuple):
    step: Step
    payer: str
    payee: str
    units: int
    rule: str
    explanation: Message
    position: Position | None = None
    hands: Mapping[str, str | None] | None = None


@dataclass
class PlayerResult:
    id: str
    status: Status
    hands: dict[Position, HandValue] | None
    fouled: bool
    foul_reason: str | None
    aces: int
    instant_win: InstantWin | None
    declared: bool
    units: int = 0


SettledBy = Literal["instant_win", "comparison", "foul", "fixed_foul", "both_fouled", "round_ended"]


class ChiOutcome(NamedTuple):
    position: Position
    winner: str | None
    units: int


@dataclass
class PairShowdown:
    """What passed between two players: for the chi-by-chi reveal and the summary table."""

    players: tuple[str, str]
    settled_by: SettledBy
    chi: list[ChiOutcome] = field(default_factory=list)
    scooped_by: str | None = None
    units: dict[str, int] = field(default_factory=dict)


@dataclass
class Result:
    room: Room
    players: list[PlayerResult]
    ledger: list[LedgerLine]
    showdown: list[PairShowdown]


def arrangement_foul(hands: Mapping[Position, HandValue]) -> str | None:
    """Why an arrangement fouls (§2.3), or None: equal hands are legal."""
    if hands["front"].strength > hands["middle"].strength:
        return "front_beats_middle"
    if hands["middle"].strength > hands["back"].strength:
        return "middle_beats_back"
    return None


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


def _evaluate_player(entry: PlayerEntry, ruleset: Ruleset, stats: CardStats) -> PlayerResult:
    table = ruleset.hand_table
    hands: dict[Position, HandValue] | None = None
    if entry.arrangement is not None:
        hands = table.describe_all(entry.arrangement)
    reason = None
    if entry.status == "left":
        reason = "left"
    elif entry.status == "timed_out" and ruleset.timeout == "foul":
        reason = "timed_out"
    elif hands is not None:
        reason = arrangement_foul(hands)
    aces = stats.rank_counts[ACE]
    return PlayerResult(
        id=entry.id,
        status=entry.status,
        hands=hands,
        fouled=reason is not None,
        foul_reason=reason,
        aces=aces,
        instant_win=None,
        declared=entry.declare,
    )


def qualifying_patterns(
    cards: tuple[Card, ...],
    hands: Mapping[Position, HandValue] | None,
    fouled: bool,
    ruleset: Ruleset,
    stats: CardStats | None = None,
) -> dict[str, Split | None]:
    """Every pattern of the ruleset's table these cards (and arrangement) qualify for."""
    found = card_patterns(cards, ruleset.hand_table, ruleset.card_patterns, stats)
    if hands is not None and not fouled:
        found |= dict.fromkeys(ruleset_arrangement_patterns(hands, ruleset))
    return found


def ruleset_arrangement_patterns(hands: Mapping[Position, HandValue], ruleset: Ruleset) -> list[str]:
    """The patterns of the ruleset's table that this (non-fouled) arrangement holds (maubinh-bao's BÁO
    on a chi). The advisor asks the same."""
    if not ruleset.arrangement_patterns:
        return []
    return [p for p in arrangement_patterns(hands) if p in ruleset.arrangement_patterns]


def _strongest(found: Mapping[str, Split | None], ruleset: Ruleset) -> InstantWin | None:
    row = ruleset.strongest(found)
    return InstantWin(row.pattern, row.units, row.strength, found[row.pattern]) if row else None


def _instant_wins(room: Room, players: list[PlayerResult], stats: list[CardStats]) -> None:
    ruleset = room.ruleset
    faults = []
    for index, (entry, player) in enumerate(zip(room.players, players, strict=True)):
        if entry.status == "left":
            continue
        if ruleset.instant_mode == "declared" and not entry.declare:
            continue
        found = qualifying_patterns(entry.cards, player.hands, player.fouled, ruleset, stats[index])
        player.instant_win = _strongest(found, ruleset)
        if entry.declare and player.instant_win is None:
            faults.append(
                Fault(
                    f"/players/{index}/declare",
                    Text(
                        "fault.false_declaration_fouled" if player.fouled else "fault.false_declaration",
                        ruleset=ruleset.id,
                    ),
                    "false_declaration",
                )
            )
    if faults:
        raise RoomRejected(faults)


@dataclass(frozen=True)
class Pair:
    """How one pair (i < j) is settled, decided once: who won each chi and what that chi is worth.

    ``winners``, ``values`` and ``bonus_keys`` run over POSITIONS; a tie has winner None, value 0.
    ``won`` and ``totals`` are per side (i, j): chi won, and total(A, B) of docs/rules.md §6.
    """

    i: int
    j: int
    settled_by: SettledBy
    winners: tuple[int | None, ...] = ()
    values: tuple[int, ...] = ()
    bonus_keys: tuple[str | None, ...] = ()
    won: tuple[int, int] = (0, 0)
    totals: tuple[int, int] = (0, 0)

    def chi_won(self, player: int) -> int:
        return self.won[0] if player == self.i else self.won[1]

    def total(self, player: int) -> int:
        """What the other player paid ``player`` in chi and bonus lines."""
        return self.totals[0] if player == self.i else self.totals[1]


@dataclass(frozen=True)
class EvaluatedRoom:
    """Everything the stages read: the room, its players evaluated, and how each pair is settled."""

    room: Room
    players: list[PlayerResult]
    pairs: tuple[Pair, ...]
    scoops: tuple[tuple[Pair, int, int], ...]
    """(pair, winner, loser) for every scoop (§6), in pair order."""

    @property
    def ruleset(self) -> Ruleset:
        return self.room.ruleset


def _pair_indices(n: int) -> Iterator[tuple[int, int]]:
    for i in range(n):
        for j in range(i + 1, n):
            yield i, j


def chi_value(ruleset: Ruleset, position: Position, bonus_keys: tuple[str, ...]) -> tuple[int, str | None]:
    """A won chi's value (§5, §11.1 bonuses.mode) and the bonus-table key that set it: the most specific
    entry, instead of 1 (``replace``) or on top of it (``add``); 1 where no entry matches."""
    table = ruleset.bonuses[position]
    for key in bonus_keys:
        if key in table:
            return (table[key] + 1 if ruleset.bonus_mode == "add" else table[key]), key
    return 1, None


def _compare(i: int, j: int, a: PlayerResult, b: PlayerResult, ruleset: Ruleset) -> Pair:
    """§5 for one pair: chi by chi, or every chi to the side that did not foul."""
    if a.fouled and b.fouled:
        return Pair(i, j, "both_fouled")
    winners: list[int | None] = []
    values: list[int] = []
    keys: list[str | None] = []
    won_i = won_j = total_i = total_j = 0
    for position in POSITIONS:
        if a.fouled or b.fouled:
            winner: int | None = j if a.fouled else i
        else:
            assert a.hands is not None and b.hands is not None
            strength_a, strength_b = a.hands[position].strength, b.hands[position].strength
            winner = None if strength_a == strength_b else i if strength_a > strength_b else j
        value, key = 0, None
        if winner is not None:
            hands = (a if winner == i else b).hands
            assert hands is not None
            value, key = chi_value(ruleset, position, hands[position].info.bonus_keys)
            if winner == i:
                won_i, total_i = won_i + 1, total_i + value
            else:
                won_j, total_j = won_j + 1, total_j + value
        winners.append(winner)
        values.append(value)
        keys.append(key)
    settled_by: SettledBy = "foul" if a.fouled or b.fouled else "comparison"
    return Pair(i, j, settled_by, tuple(winners), tuple(values), tuple(keys), (won_i, won_j), (total_i, total_j))


def _settle_pairs(players: list[PlayerResult], ruleset: Ruleset) -> tuple[Pair, ...]:
    anyone_instant = any(p.instant_win is not None for p in players)
    pairs = []
    for i, j in _pair_indices(len(players)):
        a, b = players[i], players[j]
        if a.instant_win is not None or b.instant_win is not None:
            pairs.append(Pair(i, j, "instant_win"))
        elif ruleset.ends_round and anyone_instant:
            pairs.append(Pair(i, j, "round_ended"))
        elif ruleset.fixed_foul_units is not None and a.fouled != b.fouled:
            pairs.append(Pair(i, j, "fixed_foul"))
        else:
            pairs.append(_compare(i, j, a, b, ruleset))
    return tuple(pairs)


def _scoopable(player: PlayerResult, ruleset: Ruleset) -> bool:
    if not player.fouled:
        return True
    if not ruleset.foul_is_scoop:
        return False
    return player.status != "left" or ruleset.left_is_scooped


def _scoops(
    pairs: tuple[Pair, ...], players: list[PlayerResult], ruleset: Ruleset
) -> tuple[tuple[Pair, int, int], ...]:
    """Every scoop (§6): all three chi won, from a loser the ruleset lets be scooped."""
    found = []
    for pair in pairs:
        for winner, loser in ((pair.i, pair.j), (pair.j, pair.i)):
            if pair.chi_won(winner) == 3 and _scoopable(players[loser], ruleset):
                found.append((pair, winner, loser))
    return tuple(found)


def evaluate_room(room: Room) -> EvaluatedRoom:
    """Hands, fouls, instant wins and pair comparisons; raises :class:`RoomRejected` for a false BÁO."""
    ruleset = room.ruleset
    stats = [card_stats(entry.cards) for entry in room.players]
    players = [_evaluate_player(entry, ruleset, s) for entry, s in zip(room.players, stats, strict=True)]
    _instant_wins(room, players, stats)
    pairs = _settle_pairs(players, ruleset)
    return EvaluatedRoom(room, players, pairs, _scoops(pairs, players, ruleset))


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
    for i, j in _pair_indices(len(players)):
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
            ChiOutcome(position, None if winner is None else room.players[winner].id, value)
            for position, winner, value in zip(POSITIONS, pair.winners, pair.values, strict=False)
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
