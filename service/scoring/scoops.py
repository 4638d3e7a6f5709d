"""The scoop stage (docs/rules.md §6, §11.1, §12.1): what each scoop pays, basis × (m × s − 1), and a
sweeper's extra (bắt sập làng); and beside it, its array form for many rooms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from service.rulesets import Ruleset
from service.scoring.evaluation import EvaluatedMany, EvaluatedRoom
from service.scoring.pairs import FIXED_FOUL, INSTANT_WIN, Pair
from service.scoring.results import LedgerLine
from service.scoring.settlement import (
    FOUL_REASONS,
    ledger_line,
    no_flows,
    pay,
    product_said,
    times_said,
    with_bonus,
    with_knobs,
)
from service.texts import Named, ledger_fields, numeral, phrasebook

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from service.scoring.settlement import Flows

    Ints = NDArray[np.int64]
    Mask = NDArray[np.bool_]


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


def _opening(winner: str, loser: str, by: Named, fouled: bool, reason: Named | None) -> Named:
    """Who scooped whom, in Vietnamese: a fouled loser's scoop is said as the foul it is, not as a
    win of the other's hands (which may have been weaker); one who left or timed out, by its status."""
    key = "ledger.scoop_won" if not fouled else "ledger.scoop_fouled_status" if reason else "ledger.scoop_fouled"
    fields = {"winner": winner, "loser": loser}
    en, vi = (reason.en, reason.vi) if reason else ("", "")
    return Named(
        phrasebook("en")[key].format(**fields, by=by.en, reason=en),
        phrasebook("vi")[key].format(**fields, by=by.vi, reason=vi),
    )


def _sweep_opening(loser: str, fouled: bool, reason: Named | None) -> Named:
    """Before a sweep's factor, in Vietnamese: why a fouled loser counts as scooped (its sentence says
    the sweeper's factor next, so the foul comes first and the scoop is not said as a win)."""
    if not fouled:
        return Named("", "")
    key = "ledger.sweep_fouled_status" if reason else "ledger.sweep_fouled"
    return Named("", phrasebook("vi")[key].format(loser=loser, reason=reason.vi if reason else ""))


def _status_reason(code: str | None) -> Named | None:
    """A status that counts as a foul (left, timed out), in words; None for an arrangement's foul."""
    return FOUL_REASONS.get(code or "")


def _sweep_said(s: int) -> Named:
    """How much a sweep multiplies each scoop, said: "nhân đôi" for 2."""
    return Named(f"× {s}", "nhân đôi" if s == 2 else f"nhân {s}")


def _factor_said(m: int, s: int) -> Named:
    """The scoop's factor under a sweep, reckoned aloud: "3 × 2 = 6" (players check it, and "gấp 6"
    beside "nhân đôi" left them to work out 3 × 2 alone)."""
    return Named(f"{m} × {s} = {m * s}", f"{numeral(m).vi} × {numeral(s).vi} = {numeral(m * s).vi}")


def _scoop_line(room: EvaluatedRoom, pair: Pair, winner: int, loser: int, scoopers: int, sweeping: bool) -> LedgerLine:
    n = len(room.players)
    pays = scoop_payment(room.ruleset, n, scoopers, pair.chi_won(winner), pair.total(winner), sweeping)
    s, m = pays.sweep, pays.multiplier
    key = SCOOP_TEXTS[room.ruleset.scoop_basis, s > 1]
    won, lost = room.players[winner].id, room.players[loser].id
    by = _scooped_by(lost, scoopers, n - 1, pays.rule.startswith("scoop.table"))
    fouled = room.players[loser].fouled
    reason = _status_reason(room.players[loser].foul_reason)
    fields: dict[str, Any] = {
        "winner": won,
        "loser": lost,
        "by": by,
        "with_bonus": with_bonus(pays.basis),
        "gap": times_said(m * s),
        "pays": product_said(pays.basis, m * s - 1, pays.units),
        "sweep": s,
        "basis": pays.basis,
        "multiplier": f"({m} × {s} − 1)" if s > 1 else f"({m} − 1)",
        "times": m * s,
        "extra": m * s - 1,
        "units": pays.units,
    }
    said = ledger_fields(key)  # a scoop's opening or a sweep's, each worded only where its text says it
    if "won" in said:
        fields["won"] = _opening(won, lost, by, fouled, reason)
    if "sweep_opening" in said:
        fields["sweep_opening"] = _sweep_opening(lost, fouled, reason)
    if "sweep_by" in said:
        fields["sweep_by"] = _sweep_said(s)
    if "factor" in said:
        fields["factor"] = _factor_said(m, s)
    return ledger_line(room, "scoop", loser, winner, pays.units, with_knobs(pays.rule, pair), (key, fields))


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
            "gap": times_said(s),
            "pays": product_said(paid, s - 1, paid * (s - 1)),
        },
    )
    return ledger_line(room, "scoop", other, sweeper, paid * (s - 1), with_knobs(rule, pair), explanation)


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


# The array form, for many rooms of one ruleset and size (the bulk engine).


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


def scoop_flows(room: EvaluatedMany) -> Flows:
    """The array form of :func:`scoop_lines`: each scoop's payment by :func:`scoop_payment` (asked once
    for each number of scoopers and sweeping or not, with a basis of 1), times its basis."""
    import numpy as np

    ruleset, flows = room.ruleset, no_flows(room)
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
            pay(flows, loser, winner, np.where(scooped, factor * basis, 0))
    if ruleset.sweep_pays == "total" and s > 1:
        fixed = ruleset.fixed_foul_units
        for pair in room.pairs:
            for side, (sweeper, other) in enumerate(((pair.i, pair.j), (pair.j, pair.i))):
                paid = pair.totals[side]
                if fixed is not None:
                    paid = np.where(pair.settled_by == FIXED_FOUL, fixed, paid)
                pay(flows, other, sweeper, np.where(sweeping[:, sweeper], paid * (s - 1), 0))
    return {("scoop", None): flows}
