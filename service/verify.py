"""A backend's claimed settlement against the computed one: the claim's types and rules, and what
differs, per player, per ledger line and per step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.contract import MAX_EXACT_AMOUNT, Fault, RoomRejected, escape
from service.scoring import Result
from service.texts import Text


@dataclass(frozen=True)
class ClaimedLine:
    payer: str
    payee: str
    amount: int
    step: str | None


@dataclass(frozen=True)
class Claim:
    """What a game backend says it settled: each player's amount and, optionally, its ledger."""

    amounts: dict[str, int]
    ledger: tuple[ClaimedLine, ...] | None


def claim_faults(data: dict[str, Any]) -> list[Fault]:
    """A claim must name exactly the room's players, sum to zero, and pay only between them."""
    players = [p["id"] for p in data["players"]]
    amounts = data["claimed"]["amounts"]
    faults = [
        Fault(
            f"/claimed/amounts/{escape(who)}", Text("fault.claim_unknown_player", id=who[:64]), "claim_unknown_player"
        )
        for who in amounts
        if who not in players
    ]
    faults += [
        Fault("/claimed/amounts", Text("fault.claim_missing_player", id=who), "claim_missing_player")
        for who in players
        if who not in amounts
    ]
    if sum(amounts.values()) != 0:
        total = sum(amounts.values())
        faults.append(Fault("/claimed/amounts", Text("fault.claim_not_zero_sum", total=total), "claim_not_zero_sum"))
    moved = sum(line["amount"] for line in data["claimed"].get("ledger", []))
    if moved > MAX_EXACT_AMOUNT:
        message = Text("fault.claim_ledger_out_of_range", total=moved, high=MAX_EXACT_AMOUNT)
        faults.append(Fault("/claimed/ledger", message, "amount_out_of_range"))
    for k, line in enumerate(data["claimed"].get("ledger", [])):
        faults += [
            Fault(
                f"/claimed/ledger/{k}/{side}",
                Text("fault.claim_unknown_player", id=line[side][:64]),
                "claim_unknown_player",
            )
            for side in ("payer", "payee")
            if line[side] not in players
        ]
    return faults


AMOUNTS_ONLY = "amounts"
"""The step a disagreeing claim without ledger lines is counted under: only its amounts can differ."""
STEP_TEXTS = {
    "instant_win": Text("step.instant_win"),
    "chi": Text("step.chi"),
    "bonus": Text("step.bonus"),
    "scoop": Text("step.scoop"),
    "foul": Text("step.foul"),
    "ace": Text("step.ace"),
    "unstated": Text("step.unstated"),
    AMOUNTS_ONLY: Text("step.amounts"),
}
"""How a verify explanation, the metrics and the audit report name a step (``unstated``: a claimed
line that gave none)."""


def _by_step(lines: list[tuple[str, str, str | None, int]], player: str) -> dict[str, int]:
    """Net amount per step for one player over (payer, payee, step, amount) lines."""
    net: dict[str, int] = {}
    for payer, payee, step, amount in lines:
        key = step or "unstated"
        if player in (payer, payee):
            net[key] = net.get(key, 0) + (amount if payee == player else -amount)
    return net


def _ledger_differences(computed: list[tuple[str, str, str | None, int]], claim: Claim) -> dict[str, list[Any]]:
    """Claimed lines against computed ones, matched by payer, payee and step (amounts summed per key;
    a claimed line without a step is matched by payer and payee alone)."""
    assert claim.ledger is not None
    stepless = all(line.step is None for line in claim.ledger)
    totals: dict[tuple[str, str, str | None], list[int]] = {}
    for payer, payee, step, amount in computed:
        totals.setdefault((payer, payee, None if stepless else step), [0, 0])[0] += amount
    for line in claim.ledger:
        totals.setdefault((line.payer, line.payee, line.step), [0, 0])[1] += line.amount
    out: dict[str, list[Any]] = {"missing": [], "extra": [], "different": []}
    for (payer, payee, step), (mine, theirs) in totals.items():
        entry = {"payer": payer, "payee": payee, "step": step}
        if theirs == 0:
            out["missing"].append({**entry, "computed": mine})
        elif mine == 0:
            out["extra"].append({**entry, "claimed": theirs})
        elif mine != theirs:
            out["different"].append({**entry, "computed": mine, "claimed": theirs})
    return out


def _check_difference(player: str, claimed: int, computed: int) -> None:
    """Refuse a claim so far from the computed amount that the difference passes 2^53 − 1 (each is
    within it, but not their difference)."""
    if abs(claimed - computed) > MAX_EXACT_AMOUNT:
        message = Text("fault.claim_difference_out_of_range", claimed=claimed, computed=computed, high=MAX_EXACT_AMOUNT)
        raise RoomRejected([Fault(f"/claimed/amounts/{escape(player)}", message, "amount_out_of_range")])


def compare(result: Result, claim: Claim, stake: int) -> dict[str, Any]:
    """What differs between a claim and the computed settlement: per player (with the steps that
    explain it), per ledger line when the claim has lines, and whether they agree at all."""
    computed: list[tuple[str, str, str | None, int]] = [
        (line.payer, line.payee, line.step, line.units * stake) for line in result.ledger
    ]
    claimed: list[tuple[str, str, str | None, int]] | None = None
    if claim.ledger is not None and any(each.step for each in claim.ledger):  # lines without steps explain no step
        claimed = [(each.payer, each.payee, each.step, each.amount) for each in claim.ledger]
    players = []
    for player in result.players:
        mine, theirs = player.units * stake, claim.amounts[player.id]
        _check_difference(player.id, theirs, mine)
        entry: dict[str, Any] = {"id": player.id, "claimed": theirs, "computed": mine, "difference": theirs - mine}
        if theirs != mine:
            steps = _by_step(computed, player.id)
            if claimed is None:
                entry["explanation"] = [
                    Text("verify.computed_step", step=STEP_TEXTS[step], amount=amount) for step, amount in steps.items()
                ] + [Text("verify.claim_total", claimed=theirs, difference=theirs - mine, computed=mine)]
            else:
                said = _by_step(claimed, player.id)
                entry["explanation"] = [
                    Text(
                        "verify.step_differs",
                        step=STEP_TEXTS[step],
                        computed=steps.get(step, 0),
                        claimed=said.get(step, 0),
                    )
                    for step in dict.fromkeys([*steps, *said])
                    if steps.get(step, 0) != said.get(step, 0)
                ]
        players.append(entry)
    ledger = None if claim.ledger is None else _ledger_differences(computed, claim)
    agrees = all(p["difference"] == 0 for p in players) and (ledger is None or not any(ledger.values()))
    return {"agrees": agrees, "players": players, "ledger": ledger}


def settles(status: int, body: dict[str, Any]) -> bool:
    """A verify answer whose claim agrees: the batch tools count it and write only disagreements."""
    return status == 200 and body.get("agrees") is True
