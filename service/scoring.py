"""The settlement pipeline (RULES §2.3–§7, §9.4).

request → :class:`Room` → evaluate players → instant wins → chi and bonuses →
scoops → foul penalty → aces → :class:`Result`. Each stage only adds ledger
lines; every number comes from a ruleset field that the line names.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from service.cards import ACE, Card
from service.hands import POSITIONS, HandValue, Position
from service.patterns import CardStats, Split, arrangement_patterns, card_patterns, card_stats
from service.rulesets import Ruleset

Status = Literal["arranged", "timed_out", "left"]
Step = Literal["instant_win", "chi", "bonus", "scoop", "foul", "ace"]
STEPS: tuple[Step, ...] = ("instant_win", "chi", "bonus", "scoop", "foul", "ace")


@dataclass(frozen=True)
class Fault:
    """One thing wrong with a request: where (RFC 6901 pointer), what, and a stable code."""

    pointer: str
    message: str
    code: str = "invalid"


SEMANTIC_FAULTS = frozenset(
    {
        "duplicate_card",
        "duplicate_player_id",
        "missing_hand",
        "both_forms",
        "no_cards",
        "declare_not_allowed",
        "false_declaration",
    }
)
"""Faults JSON Schema cannot express: a request valid by openapi.yaml can still have them."""


class RoomRejected(ValueError):
    """The request breaks the contract or the rules (HTTP 422)."""

    def __init__(self, faults: list[Fault]) -> None:
        super().__init__("; ".join(f"{f.pointer}: {f.message}" for f in faults))
        self.faults = faults


@dataclass(frozen=True)
class PlayerEntry:
    """One player as the request gave them; ``arrangement`` is None for bare ``cards``."""

    id: str
    cards: tuple[Card, ...]
    arrangement: Mapping[Position, tuple[Card, ...]] | None = None
    status: Status = "arranged"
    declare: bool = False


@dataclass(frozen=True)
class Room:
    ruleset: Ruleset
    players: tuple[PlayerEntry, ...]
    stake: int = 1
    round_id: str | None = None


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
    explanation: str
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


class ChiOutcome(NamedTuple):
    position: Position
    winner: str | None
    units: int


@dataclass
class PairShowdown:
    """What passed between two players: for the chi-by-chi reveal and the summary table."""

    players: tuple[str, str]
    settled_by: Literal["instant_win", "comparison", "foul", "both_fouled", "round_ended"]
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


def _evaluate_player(entry: PlayerEntry, ruleset: Ruleset, stats: CardStats) -> PlayerResult:
    table = ruleset.hands
    hands: dict[Position, HandValue] | None = None
    if entry.arrangement is not None:
        hands = {p: table.describe(entry.arrangement[p]) for p in POSITIONS}
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
    found = card_patterns(cards, ruleset.hands, ruleset.card_patterns, stats)
    if hands is not None and not fouled and ruleset.arrangement_patterns:
        found |= {p: None for p in arrangement_patterns(hands) if p in ruleset.arrangement_patterns}
    return found


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
                    "declared an instant win (BÁO) but the cards qualify for no pattern of "
                    f"{ruleset.id}'s table" + (" (the arrangement fouls)" if player.fouled else ""),
                    "false_declaration",
                )
            )
    if faults:
        raise RoomRejected(faults)


def _pairs(n: int) -> Iterator[tuple[int, int]]:
    for i in range(n):
        for j in range(i + 1, n):
            yield i, j


class _Settlement:
    """Working state of one room's settlement; ``score`` drives the stages in order."""

    def __init__(self, room: Room, players: list[PlayerResult]) -> None:
        self.room = room
        self.ruleset = room.ruleset
        self.players = players
        self.lines: dict[Step, list[LedgerLine]] = {step: [] for step in STEPS}
        self.showdown: dict[tuple[int, int], PairShowdown] = {}
        self.chi_total: dict[tuple[int, int], int] = {}  # (winner, loser) → §5 total
        self.swept: set[tuple[int, int]] = set()  # (winner, loser): won all three chi
        self.pair_units: dict[tuple[int, int], int] = {}  # (i, j), i < j → what j paid i, net

    def pay(
        self,
        step: Step,
        payer: int,
        payee: int,
        units: int,
        rule: str,
        explanation: str,
        position: Position | None = None,
        hands: Mapping[str, str | None] | None = None,
    ) -> None:
        """Add one ledger line (none for 0 units) and book it to both players and their pair."""
        if units <= 0:
            return
        players = self.players
        self.lines[step].append(
            LedgerLine(step, players[payer].id, players[payee].id, units, rule, explanation, position, hands)
        )
        players[payer].units -= units
        players[payee].units += units
        key = (payer, payee) if payer < payee else (payee, payer)
        self.pair_units[key] = self.pair_units.get(key, 0) + (units if payee < payer else -units)

    def instant_win_pairs(self, i: int, j: int) -> bool:
        a, b = self.players[i].instant_win, self.players[j].instant_win
        if a is None and b is None:
            return False
        pair = PairShowdown((self.players[i].id, self.players[j].id), "instant_win")
        self.showdown[(i, j)] = pair
        if a is not None and (b is None or a.strength > b.strength):
            winner, loser, win = i, j, a
        elif b is not None and (a is None or b.strength > a.strength):
            winner, loser, win = j, i, b
        else:
            return True
        self.pay(
            "instant_win",
            loser,
            winner,
            win.units,
            f"instant_wins.table[{win.pattern}].units",
            f"{self.players[winner].id} holds {win.pattern}: {win.units} units, no chi compared (RULES §4)",
        )
        return True

    def compare(self, i: int, j: int) -> None:
        """§5 for one pair: chi by chi (or every chi to the side that did not foul), bonuses."""
        a, b = self.players[i], self.players[j]
        if a.fouled and b.fouled:
            self.showdown[(i, j)] = PairShowdown((a.id, b.id), "both_fouled")
            return
        pair = PairShowdown((a.id, b.id), "foul" if a.fouled or b.fouled else "comparison")
        self.showdown[(i, j)] = pair
        won_i = won_j = 0
        for position in POSITIONS:
            if a.fouled or b.fouled:
                winner = j if a.fouled else i
            else:
                assert a.hands is not None and b.hands is not None
                strength_a, strength_b = a.hands[position].strength, b.hands[position].strength
                if strength_a == strength_b:
                    pair.chi.append(ChiOutcome(position, None, 0))
                    continue
                winner = i if strength_a > strength_b else j
            if winner == i:
                won_i += 1
                value = self._pay_chi(i, j, position)
            else:
                won_j += 1
                value = self._pay_chi(j, i, position)
            pair.chi.append(ChiOutcome(position, self.players[winner].id, value))
        if won_i == 3 and self._scoopable(j):
            self.swept.add((i, j))
        elif won_j == 3 and self._scoopable(i):
            self.swept.add((j, i))

    def _pay_chi(self, winner: int, loser: int, position: Position) -> int:
        """One won chi: a chi line, and a bonus line where the hand's chi value v > 1."""
        win, lose = self.players[winner], self.players[loser]
        assert win.hands is not None
        info = win.hands[position].info
        lost_to = None if lose.fouled or lose.hands is None else lose.hands[position].info.id
        hands = {"payee": info.id, "payer": lost_to}
        how = f"{lose.id} fouled" if lose.fouled else f"{info.id} beats {lost_to}"
        self.pay("chi", loser, winner, 1, "RULES §5: one unit per chi won", f"{position}: {how}", position, hands)
        bonuses = self.ruleset.bonuses[position]
        value = 1
        for key in info.bonus_keys:
            if key in bonuses:
                value = bonuses[key]
                self.pay(
                    "bonus",
                    loser,
                    winner,
                    value - 1,
                    f"bonuses.{position}.{key}",
                    f"{position}: {key} is worth {value} chi = 1 chi + {value - 1} bonus",
                    position,
                    hands,
                )
                break
        self.chi_total[(winner, loser)] = self.chi_total.get((winner, loser), 0) + value
        return value

    def _scoopable(self, loser: int) -> bool:
        player = self.players[loser]
        if not player.fouled:
            return True
        if not self.ruleset.foul_is_scoop:
            return False
        return player.status != "left" or self.ruleset.left_is_scooped

    def scoops(self) -> None:
        n = len(self.players)
        scoopers = {loser: sum(1 for (_, lo) in self.swept if lo == loser) for loser in range(n)}
        for i, j in _pairs(n):
            for winner, loser in ((i, j), (j, i)):
                if (winner, loser) not in self.swept:
                    continue
                self.showdown[(i, j)].scooped_by = self.players[winner].id
                m, rule = self.ruleset.scoop_multiplier(n, scoopers[loser])
                total = self.chi_total.get((winner, loser), 0)
                self.pay(
                    "scoop",
                    loser,
                    winner,
                    total * (m - 1),
                    rule,
                    f"{self.players[winner].id} won all 3 chi against {self.players[loser].id}"
                    f" ({scoopers[loser]} of {n - 1} opponents scoop them): total {total} × ({m} − 1)",
                )

    def foul_penalties(self) -> None:
        f = self.ruleset.foul_multiplier
        if f <= 1:
            return
        for i, j in _pairs(len(self.players)):
            for winner, loser in ((i, j), (j, i)):
                if self.players[loser].fouled and not self.players[winner].fouled:
                    total = self.chi_total.get((winner, loser), 0)
                    self.pay(
                        "foul",
                        loser,
                        winner,
                        total * (f - 1),
                        "fouls.foul_multiplier",
                        f"{self.players[loser].id} fouled ({self.players[loser].foul_reason}):"
                        f" total {total} × ({f} − 1)",
                    )

    def aces(self) -> None:
        rule = self.ruleset.aces
        players = self.players
        if rule is None or len(players) != rule.room_size:
            return
        quad = next((k for k, p in enumerate(players) if p.aces == 4), None)
        if quad is not None:
            holder = players[quad]
            if (
                not holder.fouled
                and holder.hands
                and any(
                    holder.hands[p].kind is not None and holder.hands[p].kind == "four_aces" for p in ("back", "middle")
                )
            ):
                return
            for i, j in _pairs(len(players)):
                if quad in (i, j):
                    other = j if quad == i else i
                    self.pay(
                        "ace",
                        other,
                        quad,
                        rule.four_aces_receives,
                        "aces.four_aces_receives",
                        f"{holder.id} holds all four aces, not arranged together:"
                        f" {rule.four_aces_receives} from each player",
                    )
            return
        collectors = [k for k, p in enumerate(players) if p.aces >= rule.collector_min_aces]
        if not collectors:
            return
        share, remainder = divmod(rule.no_ace_pays, len(collectors))
        for i, j in _pairs(len(players)):
            for payer, payee in ((i, j), (j, i)):
                if players[payer].aces == 0 and payee in collectors:
                    extra = 1 if collectors.index(payee) < remainder else 0
                    self.pay(
                        "ace",
                        payer,
                        payee,
                        share + extra,
                        "aces.no_ace_pays",
                        f"{players[payer].id} holds no ace: {rule.no_ace_pays} units shared among "
                        f"the {len(collectors)} player(s) holding {rule.collector_min_aces}+ aces",
                    )

    def result(self) -> Result:
        ledger = [line for step in STEPS for line in self.lines[step]]
        for (i, j), pair in self.showdown.items():
            net = self.pair_units.get((i, j), 0)
            pair.units = {self.players[i].id: net, self.players[j].id: -net}
        showdown = [self.showdown[key] for key in sorted(self.showdown)]
        return Result(self.room, self.players, ledger, showdown)


def score(room: Room) -> Result:
    """Settle one validated room; raises :class:`RoomRejected` for a false declaration."""
    ruleset = room.ruleset
    stats = [card_stats(entry.cards) for entry in room.players]
    players = [_evaluate_player(entry, ruleset, s) for entry, s in zip(room.players, stats, strict=True)]
    _instant_wins(room, players, stats)
    settlement = _Settlement(room, players)
    anyone_instant = any(p.instant_win for p in players)
    for i, j in _pairs(len(players)):
        if settlement.instant_win_pairs(i, j):
            continue
        if ruleset.ends_round and anyone_instant:
            settlement.showdown[(i, j)] = PairShowdown((players[i].id, players[j].id), "round_ended")
            continue
        settlement.compare(i, j)
    settlement.scoops()
    settlement.foul_penalties()
    settlement.aces()
    return settlement.result()
