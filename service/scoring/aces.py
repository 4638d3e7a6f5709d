"""The chi Át stage (docs/rules.md §7, §11.1, §12.1): settled last and never multiplied, by collectors
or by balance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.game.hand_strengths import HAND_IDS
from service.game.hands import POSITIONS
from service.rulesets import AceBalance, AceCollectors
from service.scoring.evaluation import EvaluatedMany, EvaluatedRoom
from service.scoring.pairs import pair_indices
from service.scoring.results import LedgerLine, PlayerResult
from service.scoring.settlement import ledger_line, no_flows
from service.texts import Named, listed, numeral, phrasebook

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from service.scoring.settlement import Flows

    Ints = NDArray[np.int64]


def _four_aces_arranged(player: PlayerResult) -> bool:
    return (
        not player.fouled
        and player.hands is not None
        and any(player.hands[p].kind is not None and player.hands[p].kind == "four_aces" for p in ("back", "middle"))
    )


def ace_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§7, last and never multiplied, in rooms of the rule's size: by collectors (§7, §11.1) or by
    balance (§12.1); none at all when someone holds an instant win and the rule skips it then."""
    rule = room.ruleset.aces
    if rule is None or len(room.players) != rule.room_size:
        return []
    if rule.skip_when_instant_win and any(p.instant_win is not None for p in room.players):
        return []
    if isinstance(rule, AceBalance):
        return _ace_balance_lines(room, rule)
    return _ace_collector_lines(room, rule)


def _ace_balance_lines(room: EvaluatedRoom, rule: AceBalance) -> list[LedgerLine]:
    """§12.1: each player's balance is (aces − 1) × u; creditors in request order collect from the
    debtors in request order, each debtor paying what it still owes, until paid."""
    u = rule.units_per_ace
    owed = [(p.aces - 1) * u for p in room.players]
    lines: list[LedgerLine] = []
    for creditor in range(len(owed)):
        for debtor in range(len(owed)):
            if owed[creditor] <= 0:
                break
            if owed[debtor] >= 0:
                continue
            paid = min(owed[creditor], -owed[debtor])
            owed[debtor] += paid
            owed[creditor] -= paid
            values = {
                "payer": room.players[debtor].id,
                "payee": room.players[creditor].id,
                "payer_aces": _aces_held(room.players[debtor].aces),
                "payee_aces": _aces_held(room.players[creditor].aces),
                "payer_owes": _balance(room.players[debtor].aces, u),
                "payee_gets": _balance(room.players[creditor].aces, u),
                "units_per_ace": u,
                "units": paid,
            }
            lines.append(
                ledger_line(room, "ace", debtor, creditor, paid, "aces.units_per_ace", ("ledger.ace_balance", values))
            )
    return lines


def _aces_held(aces: int) -> Named:
    """What a player holds, in a sentence: "holds 2 aces", "có 2 lá Át", "holds no ace", "không có Át"."""
    if aces == 0:
        return Named("holds no ace", "không có Át")
    return Named(f"holds {aces} ace{'s' if aces > 1 else ''}", f"có {aces} lá Át")


def _balance(aces: int, u: int) -> Named:
    """A player's whole balance against the one-ace standard, in Vietnamese: the line that follows pays
    only a part of it where several players pay or collect, so the whole is said first."""
    held = _aces_held(aces)
    if aces < 1:
        return Named(held.en, f"{held.vi} nào, thiếu 1 lá so với chuẩn nên trả {u} chi")
    return Named(held.en, f"{held.vi}, dư {aces - 1} lá nên nhận {(aces - 1) * u} chi")


def _ace_collector_lines(room: EvaluatedRoom, rule: AceCollectors) -> list[LedgerLine]:
    """Four aces not arranged together collect from everyone; else the players with no ace pay
    ``no_ace_pays`` shared among those with ``collector_min_aces`` or more."""
    players = room.players
    lines: list[LedgerLine] = []
    quad = next((k for k, p in enumerate(players) if p.aces == 4), None)
    if quad is not None:
        holder = players[quad]
        if _four_aces_arranged(holder):
            return lines
        for other in range(len(players)):
            if other != quad:
                lines.append(
                    ledger_line(
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
    shares = [share + (1 if k < remainder else 0) for k in range(len(collectors))]
    least = rule.collector_min_aces
    said = {"pays": rule.no_ace_pays, "collectors": len(collectors), "least": least,
            "shares": _ace_shares([players[k].id for k in collectors], shares, remainder > 0, least)}  # fmt: skip
    key = "ledger.no_ace_one" if len(collectors) == 1 else "ledger.no_ace"
    for i, j in pair_indices(len(players)):
        for payer, payee in ((i, j), (j, i)):
            if players[payer].aces == 0 and payee in collectors:
                units = shares[collectors.index(payee)]
                values = {**said, "payer": players[payer].id, "payee": players[payee].id, "units": units}
                lines.append(ledger_line(room, "ace", payer, payee, units, "aces.no_ace_pays", (key, values)))
    return lines


def _ace_shares(collectors: list[str], shares: list[int], uneven: bool, least: int) -> Named:
    """What each collector gets of one payer's units, and why the first get more: in request order
    where that decides who gets the remainder, else by id (the order matters not). In Vietnamese, the
    whole clause after the payment: to whom, evenly or who takes the remainder (nobody listed for 0)."""
    held = list(zip(collectors, shares, strict=True)) if uneven else sorted(zip(collectors, shares, strict=True))
    en = ", ".join(f"{who} {n}" for who, n in held)
    if not uneven:
        vi = phrasebook("vi")["ledger.no_ace_even"].format(collectors=listed([who for who, _ in held]).vi, least=least)
        return Named(en, vi)
    en += "; the remainder goes to the first in request order"
    paid = [(who, n) for who, n in held if n]
    key = "ledger.no_ace_first" if len(paid) == 1 else "ledger.no_ace_remainder"
    vi = phrasebook("vi")[key].format(
        least=least,
        collectors=", ".join(collectors),
        pays=numeral(sum(shares)).vi,
        first=paid[0][0],
        shares=", ".join(f"{who} {numeral(n).vi} chi" for who, n in paid),
    )
    return Named(en, vi)


# The array form, for many rooms of one ruleset and size (the bulk engine).


def ace_flows(room: EvaluatedMany) -> Flows:
    """The array form of :func:`ace_lines`."""
    rule = room.ruleset.aces
    flows = no_flows(room)
    if rule is None or room.fouled.shape[1] != rule.room_size:
        return {("ace", None): flows}
    flows = _ace_balance_flows(room, rule) if isinstance(rule, AceBalance) else _ace_collector_flows(room, rule)
    if rule.skip_when_instant_win:
        flows[room.holds_instant_win.any(axis=-1)] = 0
    return {("ace", None): flows}


def _ace_balance_flows(room: EvaluatedMany, rule: AceBalance) -> Ints:
    """The array form of :func:`_ace_balance_lines`: creditors in request order are paid in full before
    the next, from debtors in request order, each drained before the next: what debtor d pays creditor c
    is where d's stretch of the debts and c's of the credits overlap, within what flows at all."""
    import numpy as np

    owed = (room.aces - 1) * rule.units_per_ace
    credit, debt = np.maximum(owed, 0), np.maximum(-owed, 0)
    flow = np.minimum(credit.sum(axis=-1), debt.sum(axis=-1))[:, None, None]
    credit_to, debt_to = np.cumsum(credit, axis=-1), np.cumsum(debt, axis=-1)
    credit_from, debt_from = credit_to - credit, debt_to - debt
    ends = np.minimum(np.minimum(debt_to[:, :, None], credit_to[:, None, :]), flow)
    starts = np.maximum(debt_from[:, :, None], credit_from[:, None, :])
    paid: Ints = np.maximum(ends - starts, 0)
    return paid


def _ace_collector_flows(room: EvaluatedMany, rule: AceCollectors) -> Ints:
    """The array form of :func:`_ace_collector_lines`."""
    import numpy as np

    aces = room.aces
    size = aces.shape[1]
    collector = aces >= rule.collector_min_aces
    collectors = np.maximum(collector.sum(axis=-1), 1)[:, None]
    place = np.cumsum(collector, axis=-1) - 1
    share = np.where(collector, rule.no_ace_pays // collectors + (place < rule.no_ace_pays % collectors), 0)
    payer = (aces == 0).astype(np.int64)
    others = ~np.eye(size, dtype=bool)
    flows: Ints = payer[:, :, None] * share[:, None, :] * others
    quad = aces == 4
    four_aces = HAND_IDS.index("four_aces")
    arranged = ~room.fouled & (
        room.hand_ids[..., [POSITIONS.index("back"), POSITIONS.index("middle")]] == four_aces
    ).any(axis=-1)
    held = quad.any(axis=-1)
    four = np.where((quad & arranged).any(axis=-1, keepdims=True), 0, quad * rule.four_aces_receives)
    flows[held] = (four[:, None, :] * others)[held]
    return flows
