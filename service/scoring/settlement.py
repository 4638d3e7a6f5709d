"""The settlement's stages, in the order of docs/rules.md: each a pure function of the evaluated room
that returns its ledger lines, every number read from a ruleset field the line names. The aces, last,
are scoring/aces.py's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from service.hand_words import deciding_rank, said
from service.hands import HAND_NAMES, POSITIONS, Position
from service.patterns import PATTERN_NAMES
from service.rulesets import Ruleset
from service.scoring.evaluation import FIXED_FOUL, FOUL, INSTANT_WIN, EvaluatedMany, EvaluatedRoom, Pair
from service.scoring.results import InstantWin, LedgerLine, Step
from service.texts import KeyedName, Message, Named, phrasebook

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Ints = NDArray[np.int64]
    Mask = NDArray[np.bool_]

FOUL_REASONS: Final[dict[str, Named]] = {
    code: KeyedName(phrasebook("en")[key], key)
    for code, key in {"left": "foul_reason.left", "timed_out": "foul_reason.timed_out"}.items()
}
"""Each ``foul_reason`` code's words in an explanation: its English, and the key of its Vietnamese."""
ORDER_FOULS: Final[dict[str, tuple[str, str, str]]] = {
    "front_beats_middle": ("foul_reason.front_beats_middle", "front", "middle"),
    "middle_beats_back": ("foul_reason.middle_beats_back", "middle", "back"),
}
"""The arrangement fouls: each names the stronger and the weaker chi."""


@lru_cache(maxsize=256)
def foul_reasons(ruleset: Ruleset) -> dict[str, Named]:
    """Every foul reason's words under ``ruleset``: an arrangement foul names its two chi by the
    ruleset's own labels in Vietnamese, since their numbers differ (in maubinh-bao chi 1 is the front)."""
    reasons = dict(FOUL_REASONS)
    for code, (key, stronger, weaker) in ORDER_FOULS.items():
        en = phrasebook("en")[key].format(stronger=stronger, weaker=weaker)
        labels = {p: ruleset.labels[p][:1].lower() + ruleset.labels[p][1:] for p in (stronger, weaker)}
        reasons[code] = Named(en, phrasebook("vi")[key].format(stronger=labels[stronger], weaker=labels[weaker]))
    return reasons


PATTERNS_NAMED: Final[dict[str, Named]] = {
    pattern: Named(en.lower(), vi[:1].lower() + vi[1:]) for pattern, (en, vi) in PATTERN_NAMES.items()
}
"""A pattern's name inside a sentence: lower case, as the hands' names are."""
FOUL_BY_STATUS: Final = {
    "ledger.chi_foul": "ledger.chi_foul_status",
    "ledger.foul_fixed": "ledger.foul_fixed_status",
    "ledger.foul_multiplied": "ledger.foul_multiplied_status",
}
"""A player who left or timed out did not foul an arrangement: its lines say it is counted as fouled."""


def _foul_key(key: str, reason: str | None) -> str:
    return key if reason in ORDER_FOULS else FOUL_BY_STATUS[key]


@lru_cache(maxsize=256)
def position_names(ruleset: Ruleset) -> dict[str, Named]:
    """Positions as a text says them: the id in English, the ruleset's label (Chi 1, Chi cuối…) in Vietnamese."""
    return {p: Named(p, ruleset.labels[p]) for p in POSITIONS}


def ledger_line(
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


def _with_knobs(rule: str, pair: Pair) -> str:
    """A line's rule, and the §12.1 knobs that made its pair be settled as it was."""
    return ", ".join((rule, *pair.knobs)) if pair.knobs else rule


def _collision(a: InstantWin, b: InstantWin, ruleset: Ruleset) -> tuple[int, str] | None:
    """Two instant wins in one pair: which side (0: a, 1: b) is paid, or None. ``stronger`` (§4): by
    strength; ``difference`` (§12.1): the larger units, by the difference."""
    if ruleset.collision == "difference":
        return None if a.units == b.units else ((0 if a.units > b.units else 1), "instant_wins.collision")
    return None if a.strength == b.strength else ((0 if a.strength > b.strength else 1), "")


INSTANT_WIN_TEXTS: Final = {
    ("ledger.instant_win", True): "ledger.instant_win",
    ("ledger.instant_win", False): "ledger.instant_win_played",
    ("ledger.instant_win_difference", True): "ledger.instant_win_difference",
    ("ledger.instant_win_difference", False): "ledger.instant_win_difference_played",
}
"""An instant-win line's text, by whether the pair is then also played out (§12.1 settles_pair)."""


def instant_win_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§4: a pair where one player holds an instant win pays it; two holders pay by the ruleset's
    collision rule (the stronger, or the difference of the units). Paid whether or not the
    instant win also settles the pair (§12.1 settles_pair)."""
    lines: list[LedgerLine] = []
    if all(player.instant_win is None for player in room.players):
        return lines
    for pair in room.pairs:
        wins = (room.players[pair.i].instant_win, room.players[pair.j].instant_win)
        a, b = wins
        if a is None and b is None:
            continue
        knob = ""
        if a is not None and b is not None:
            decided = _collision(a, b, room.ruleset)
            if decided is None:
                continue
            side, knob = decided
        else:
            side = 0 if a is not None else 1
        winner, loser = (pair.i, pair.j) if side == 0 else (pair.j, pair.i)
        win, other = wins[side], wins[1 - side]
        assert win is not None
        rule = f"instant_wins.table[{win.pattern}].units"
        key = "ledger.instant_win"
        values: dict[str, Any] = {"winner": room.players[winner].id, "pattern": PATTERNS_NAMED[win.pattern]}
        units = win.units
        if knob and other is not None:
            units -= other.units
            rule += f" − instant_wins.table[{other.pattern}].units, {knob}"
            key = "ledger.instant_win_difference"
            values |= {"loser": room.players[loser].id, "other": PATTERNS_NAMED[other.pattern]}
            values |= {"units_won": win.units, "units_lost": other.units}
        key = INSTANT_WIN_TEXTS[key, room.ruleset.settles_pair]
        values["units"] = units
        lines.append(ledger_line(room, "instant_win", loser, winner, units, rule, (key, values)))
    return lines


def chi_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§5: a ``chi`` line of 1 per chi won and, where the chi value v > 1, a ``bonus`` line of v − 1."""
    lines: list[LedgerLine] = []
    bonuses: list[LedgerLine] = []
    ruleset = room.ruleset
    names, wheel, reasons = position_names(ruleset), ruleset.wheel, foul_reasons(ruleset)
    bonus_text = "ledger.bonus_added" if ruleset.bonus_mode == "add" else "ledger.bonus"
    for pair in room.pairs:
        for k, winner in enumerate(pair.winners):
            if winner is None:
                continue
            position, value, key = POSITIONS[k], pair.values[k], pair.bonus_keys[k]
            loser = pair.j if winner == pair.i else pair.i
            win, lose = room.players[winner], room.players[loser]
            assert win.hands is not None
            won = win.hands[position]
            lost = None if pair.settled_by == "foul" or lose.hands is None else lose.hands[position]
            hands = {"payee": won.info.id, "payer": None if lost is None else lost.info.id}
            where = names[position]
            if lost is None:
                reason = reasons[lose.foul_reason or "left"]
                how = (
                    _foul_key("ledger.chi_foul", lose.foul_reason),
                    {"position": where, "loser": lose.id, "reason": reason},
                )
            else:
                decided = deciding_rank(won.strength, lost.strength)
                how = (
                    "ledger.chi",
                    {
                        "position": where,
                        "winner_hand": said(won.strength, wheel, decided),
                        "loser_hand": said(lost.strength, wheel, decided),
                    },
                )
            lines.append(
                ledger_line(
                    room,
                    "chi",
                    loser,
                    winner,
                    1,
                    _with_knobs("docs/rules.md §5: one unit per chi won", pair),
                    how,
                    position,
                    hands,
                )
            )
            if value > 1:
                assert key is not None  # a chi worth more than 1 has a bonus entry
                bonuses.append(
                    ledger_line(
                        room,
                        "bonus",
                        loser,
                        winner,
                        value - 1,
                        _with_knobs(f"bonuses.{position}.{key}", pair),
                        (
                            bonus_text,
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


@dataclass(slots=True)
class ScoopPayment:
    units: int
    basis: int
    multiplier: int
    sweep: int
    rule: str

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(self, units: int, basis: int, multiplier: int, sweep: int, rule: str) -> None:
        self.units = units
        self.basis = basis
        self.multiplier = multiplier
        self.sweep = sweep
        self.rule = rule


SCOOP_BASES: Final = {"total": "", "chi": ", scoop.basis", "fixed": ", scoop.fixed_units"}
"""Each scoop basis, and what a scoop line's rule adds to name it."""


SCOOP_TEXTS: Final = {
    ("total", False): "ledger.scoop_total_basis",
    ("chi", False): "ledger.scoop_chi_basis",
    ("fixed", False): "ledger.scoop_fixed_basis",
    ("total", True): "ledger.sweep_total_basis",
    ("chi", True): "ledger.sweep_chi_basis",
    ("fixed", True): "ledger.sweep_fixed_basis",
}
"""A scoop line's text by its basis, and whether a sweep multiplied it."""


def scoop_payment(
    ruleset: Ruleset, room_size: int, scoopers: int, chi_won: int, total: int, sweeping: bool
) -> ScoopPayment:
    """§6: what one scoop pays, basis × (m × s − 1): m flat or by room size and the scooped player's
    number of scoopers, s the sweep multiplier where a sweeper's scoops are multiplied (§11.1), else 1;
    the basis total(A,B), the chi won, or a fixed number of units (§12.1); and the ruleset fields it
    read. The advisor asks the same."""
    m, rule = ruleset.scoop_multiplier(room_size, scoopers)
    fixed_units = ruleset.scoop_fixed_units or 0
    s = 1
    if sweeping and ruleset.sweep_pays == "scoop":
        s, sweep_rule = ruleset.sweep_multiplier(room_size)
        if s > 1:
            rule += f" × {sweep_rule}"
    basis = total if ruleset.scoop_basis == "total" else chi_won if ruleset.scoop_basis == "chi" else fixed_units
    return ScoopPayment(basis * (m * s - 1), basis, m, s, rule + SCOOP_BASES[ruleset.scoop_basis])


def _scooped_by(loser: str, scoopers: int, opponents: int, counted: bool) -> Named:
    """How many of its opponents scooped the loser, said only where it had more than one and the
    multiplier depends on it (``counted``: scoop.table)."""
    if opponents == 1 or not counted:
        return Named("", "")
    key = "ledger.scooped_by_all" if scoopers == opponents else "ledger.scooped_by_some"
    fields = {"loser": loser, "scoopers": scoopers, "opponents": opponents}
    return Named(" " + phrasebook("en")[key].format(**fields), " " + phrasebook("vi")[key].format(**fields))


def _scoop_line(room: EvaluatedRoom, pair: Pair, winner: int, loser: int, scoopers: int, sweeping: bool) -> LedgerLine:
    n = len(room.players)
    pays = scoop_payment(room.ruleset, n, scoopers, pair.chi_won(winner), pair.total(winner), sweeping)
    s, m = pays.sweep, pays.multiplier
    key = SCOOP_TEXTS[room.ruleset.scoop_basis, s > 1]
    explanation = (
        key,
        {
            "winner": room.players[winner].id,
            "loser": room.players[loser].id,
            "by": _scooped_by(room.players[loser].id, scoopers, n - 1, pays.rule.startswith("scoop.table")),
            "sweep": s,
            "basis": pays.basis,
            "multiplier": f"({m} × {s} − 1)" if s > 1 else f"({m} − 1)",
            "times": m * s,
            "extra": m * s - 1,
            "units": pays.units,
        },
    )
    return ledger_line(room, "scoop", loser, winner, pays.units, _with_knobs(pays.rule, pair), explanation)


def _sweep_total_line(room: EvaluatedRoom, pair: Pair, sweeper: int) -> LedgerLine:
    """§12.1 sweep_pays total: the opponent pays the sweeper T × (s − 1), T what it paid in §5 (its
    chi and bonus lines) or, for a pair settled by a fixed foul payment, that payment."""
    ruleset, n = room.ruleset, len(room.players)
    other = pair.j if sweeper == pair.i else pair.i
    s, sweep_rule = ruleset.sweep_multiplier(n)
    fixed = pair.settled_by == "fixed_foul" and ruleset.fixed_foul_units is not None
    paid = ruleset.fixed_foul_units if fixed and ruleset.fixed_foul_units is not None else pair.total(sweeper)
    rule = f"scoop.sweep_pays, {sweep_rule}" + (", fouls.fixed_units" if fixed else "")
    explanation = (
        "ledger.sweep_pays_total",
        {
            "winner": room.players[sweeper].id,
            "loser": room.players[other].id,
            "total": paid,
            "sweep": s,
            "extra": s - 1,
            "units": paid * (s - 1),
        },
    )
    return ledger_line(room, "scoop", other, sweeper, paid * (s - 1), _with_knobs(rule, pair), explanation)


def scoop_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§6: each scoop pays basis × (m − 1), m flat or by room size and number of scoopers. A sweeper
    (§11.1) is paid more: each of its scoops basis × (m × s − 1) (``sweep_pays: scoop``), or one more
    line from each opponent of T × (s − 1) (``sweep_pays: total``, §12.1). Pairs in request order."""
    ruleset = room.ruleset
    if not room.scoops and ruleset.sweep_pays == "scoop":
        return []
    n = len(room.players)
    scoopers = [0] * n
    for _, _, loser in room.scoops:
        scoopers[loser] += 1
    sweeping = sweepers(room) if ruleset.sweep_multiplier(n)[0] > 1 else set()
    lines = [_scoop_line(room, pair, w, loser, scoopers[loser], w in sweeping) for pair, w, loser in room.scoops]
    if ruleset.sweep_pays == "scoop" or not sweeping:
        return lines
    by_pair: dict[tuple[int, int], list[LedgerLine]] = {}
    for line, (pair, _, _) in zip(lines, room.scoops, strict=True):
        by_pair.setdefault((pair.i, pair.j), []).append(line)
    ordered: list[LedgerLine] = []
    for pair in room.pairs:
        ordered.extend(by_pair.get((pair.i, pair.j), ()))
        ordered.extend(_sweep_total_line(room, pair, k) for k in (pair.i, pair.j) if k in sweeping)
    return ordered


def foul_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§6 and §11.1: a fouled player pays a non-fouled opponent the fixed foul payment, where the
    ruleset has one; else, where foul_multiplier f > 1, total × (f − 1) on top of the chi it lost."""
    ruleset = room.ruleset
    f = ruleset.foul_multiplier
    reasons = foul_reasons(ruleset)
    lines: list[LedgerLine] = []
    for pair in room.pairs:
        if pair.settled_by not in ("foul", "fixed_foul"):
            continue
        loser = pair.i if room.players[pair.i].fouled else pair.j
        winner = pair.j if loser == pair.i else pair.i
        code = room.players[loser].foul_reason
        who = {"loser": room.players[loser].id, "reason": reasons[code or "left"]}
        if pair.settled_by == "fixed_foul" and ruleset.fixed_foul_units is not None:
            fixed = ruleset.fixed_foul_units
            explanation = (_foul_key("ledger.foul_fixed", code), {**who, "fixed": fixed})
            lines.append(
                ledger_line(room, "foul", loser, winner, fixed, _with_knobs("fouls.fixed_units", pair), explanation)
            )
        elif f > 1:
            total = pair.total(winner)
            lines.append(
                ledger_line(
                    room,
                    "foul",
                    loser,
                    winner,
                    total * (f - 1),
                    _with_knobs("fouls.foul_multiplier", pair),
                    (
                        _foul_key("ledger.foul_multiplied", code),
                        {**who, "total": total, "multiplier": f, "extra": f - 1, "units": total * (f - 1)},
                    ),
                )
            )
    return lines


# The array form of each stage: what it moves to and from each player, over (rooms, players), for many
# rooms of one ruleset and size (the bulk engine). Each mirrors the stage named in its docstring.


def pay(units: Ints, payer: int, payee: int, amount: Ints) -> None:
    units[:, payer] -= amount
    units[:, payee] += amount


def no_units(room: EvaluatedMany) -> Ints:
    import numpy as np

    return np.zeros(room.fouled.shape, dtype=np.int64)


def instant_win_units(room: EvaluatedMany) -> Ints:
    """The array form of :func:`instant_win_lines`."""
    import numpy as np

    units = no_units(room)
    held, paid, strength = room.holds_instant_win, room.instant_units, room.instant_strength
    difference = room.ruleset.collision == "difference"
    for pair in room.pairs:
        i, j = pair.i, pair.j
        both = held[:, i] & held[:, j]
        for winner, loser in ((i, j), (j, i)):
            alone = held[:, winner] & ~held[:, loser]
            if difference:
                stronger = both & (paid[:, winner] > paid[:, loser])
                amount = np.where(alone, paid[:, winner], np.where(stronger, paid[:, winner] - paid[:, loser], 0))
            else:
                stronger = both & (strength[:, winner] > strength[:, loser])
                amount = np.where(alone | stronger, paid[:, winner], 0)
            pay(units, loser, winner, amount)
    return units


def chi_units(room: EvaluatedMany) -> Ints:
    """The array form of :func:`chi_lines`: each chi won pays its value, 1 and its bonus."""
    units = no_units(room)
    for pair in room.pairs:
        pay(units, pair.j, pair.i, pair.totals[0])
        pay(units, pair.i, pair.j, pair.totals[1])
    return units


def _sweepers_many(room: EvaluatedMany) -> Mask:
    """The array form of :func:`sweepers`: (rooms, players), where each player sweeps."""
    import numpy as np

    size = room.fouled.shape[1]
    if size < 3:
        return np.zeros(room.fouled.shape, dtype=bool)
    blocked = np.zeros(room.fouled.shape, dtype=bool)
    for pair in room.pairs:
        by_instant_win = pair.settled_by == INSTANT_WIN
        blocked[:, pair.i] |= by_instant_win
        blocked[:, pair.j] |= by_instant_win
    sweeping = ~room.fouled & ~blocked
    for a in range(size):
        for b in range(size):
            if b != a:
                sweeping[:, a] &= room.scooped[a, b] | room.fouled[:, b]
    return sweeping


def scoop_units(room: EvaluatedMany) -> Ints:
    """The array form of :func:`scoop_lines`: each scoop's payment by :func:`scoop_payment` (asked once
    for each number of scoopers and sweeping or not, with a basis of 1), times its basis."""
    import numpy as np

    ruleset, units = room.ruleset, no_units(room)
    size = room.fouled.shape[1]
    counted = np.zeros(room.fouled.shape, dtype=np.int64)  # each player's number of scoopers
    for (_, loser), scooped in room.scooped.items():
        counted[:, loser] += scooped
    s = ruleset.sweep_multiplier(size)[0]
    sweeping = _sweepers_many(room) if s > 1 else np.zeros(room.fouled.shape, dtype=bool)
    factors = np.array(
        [
            [scoop_payment(ruleset, size, k, 1, 1, sweep).units if k else 0 for sweep in (False, True)]
            for k in range(size)
        ],
        dtype=np.int64,
    )
    for pair in room.pairs:
        for side, (winner, loser) in enumerate(((pair.i, pair.j), (pair.j, pair.i))):
            scooped = room.scooped[winner, loser]
            basis = pair.totals[side] if ruleset.scoop_basis == "total" else 3 if ruleset.scoop_basis == "chi" else 1
            factor = factors[counted[:, loser], sweeping[:, winner].astype(np.int64)]
            pay(units, loser, winner, np.where(scooped, factor * basis, 0))
    if ruleset.sweep_pays == "total" and s > 1:
        fixed = ruleset.fixed_foul_units
        for pair in room.pairs:
            for side, (sweeper, other) in enumerate(((pair.i, pair.j), (pair.j, pair.i))):
                paid = pair.totals[side]
                if fixed is not None:
                    paid = np.where(pair.settled_by == FIXED_FOUL, fixed, paid)
                pay(units, other, sweeper, np.where(sweeping[:, sweeper], paid * (s - 1), 0))
    return units


def foul_units(room: EvaluatedMany) -> Ints:
    """The array form of :func:`foul_lines`."""
    import numpy as np

    ruleset, units = room.ruleset, no_units(room)
    extra, fixed = max(ruleset.foul_multiplier - 1, 0), ruleset.fixed_foul_units
    for pair in room.pairs:
        for side, (winner, loser) in enumerate(((pair.i, pair.j), (pair.j, pair.i))):
            lost = room.fouled[:, loser]
            amount = np.where((pair.settled_by == FOUL) & lost, pair.totals[side] * extra, 0)
            if fixed is not None:
                amount = np.where((pair.settled_by == FIXED_FOUL) & lost, fixed, amount)
            pay(units, loser, winner, amount)
    return units
