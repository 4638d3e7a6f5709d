"""A backend's claimed settlement against the computed one: the claim's types and rules, and what
differs, per player, per ledger line and per step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.contract import MAX_EXACT_AMOUNT, Fault, RoomRejected, escape
from service.scoring import Result
from service.texts import Named, Text, numeral


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
        said = {**entry, "step": STEP_TEXTS[step or "unstated"]}
        if theirs == 0:
            out["missing"].append(
                {**entry, "computed": mine, "explanation": Text("verify.line_missing", **said, amount=mine)}
            )
        elif mine == 0:
            out["extra"].append(
                {**entry, "claimed": theirs, "explanation": Text("verify.line_extra", **said, amount=theirs)}
            )
        elif mine != theirs:
            differs = Text("verify.line_different", **said, computed=mine, claimed=theirs)
            out["different"].append({**entry, "computed": mine, "claimed": theirs, "explanation": differs})
    return out


def _verdict(players: list[dict[str, Any]], ledger: dict[str, list[Any]] | None) -> list[Text]:
    """The answer in a sentence or a few, for the agent who reads it to a player: it agrees; or whose
    amounts differ; or, every total right, which lines the game booked under the wrong step (a line
    the rules have under one step and the game under another, same payer, payee and amount) and the rest."""
    wrong = sum(1 for p in players if p["difference"])
    if wrong:
        return [Text("verify.amounts_differ", count=wrong, players=len(players))]
    if ledger is None or not any(ledger.values()):
        return [Text("verify.agrees")]
    said: list[Text] = [Text("verify.steps_differ")]
    missing = list(ledger["missing"])
    for extra in ledger["extra"]:
        same = (extra["payer"], extra["payee"], extra["claimed"])
        twin = next((m for m in missing if (m["payer"], m["payee"], m["computed"]) == same and m["step"]), None)
        if extra["step"] is None:
            twin = None
        if twin is None:
            said.append(extra["explanation"])
            continue
        missing.remove(twin)
        said.append(Text("verify.line_relabelled", payer=extra["payer"], payee=extra["payee"], amount=extra["claimed"],
                         claimed_step=STEP_TEXTS[extra["step"]], computed_step=STEP_TEXTS[twin["step"]]))  # fmt: skip
    said += [m["explanation"] for m in missing] + [d["explanation"] for d in ledger["different"]]
    return [said[0], *(Text("verify.list_item", line=line) for line in said[1:])]


def _check_difference(player: str, claimed: int, computed: int) -> None:
    """Refuse a claim so far from the computed amount that the difference passes 2^53 − 1 (each is
    within it, but not their difference)."""
    if abs(claimed - computed) > MAX_EXACT_AMOUNT:
        message = Text("fault.claim_difference_out_of_range", claimed=claimed, computed=computed, high=MAX_EXACT_AMOUNT)
        raise RoomRejected([Fault(f"/claimed/amounts/{escape(player)}", message, "amount_out_of_range")])


Flow = tuple[str, str, str | None, int]
"""A ledger line as verify reads it: payer, payee, step, amount."""


def _pair_flows(lines: list[Flow]) -> dict[tuple[str, str], int]:
    """What each payer pays each payee, net, over ``lines`` (one key per pair, the payer first)."""
    net: dict[tuple[str, str], int] = {}
    for payer, payee, _, amount in lines:
        if (payee, payer) in net:
            net[payee, payer] -= amount
        else:
            net[payer, payee] = net.get((payer, payee), 0) + amount
    return net


def corrections(
    players: list[dict[str, Any]], computed: list[Flow], claimed: list[Flow] | None
) -> list[dict[str, Any]]:
    """Who still owes whom, and how much, to go from the claim to the rules: for a claim with ledger
    lines that sum to its amounts, pair by pair as its lines differ from the computed ones; otherwise
    each player the claim credited too much pays back those it credited too little, in request order."""
    order = {p["id"]: k for k, p in enumerate(players)}
    if claimed is not None:
        flows = _pair_flows(computed)
        for (payer, payee), amount in _pair_flows(claimed).items():
            if (payee, payer) in flows:
                flows[payee, payer] += amount
            else:
                flows[payer, payee] = flows.get((payer, payee), 0) - amount
        owed = [(a, b, n) if n > 0 else (b, a, -n) for (a, b), n in flows.items() if n]
        nets = {p["id"]: 0 for p in players}
        for payer, payee, amount in owed:
            nets[payer] += amount
            nets[payee] -= amount
        if all(nets[p["id"]] == p["difference"] for p in players):
            return [
                {"payer": a, "payee": b, "amount": n}
                for a, b, n in sorted(owed, key=lambda f: (order[f[0]], order[f[1]]))
            ]
    debtors = [[p["id"], p["difference"]] for p in players if p["difference"] > 0]
    creditors = [[p["id"], -p["difference"]] for p in players if p["difference"] < 0]
    out = []
    while debtors and creditors:
        amount = min(debtors[0][1], creditors[0][1])
        out.append({"payer": debtors[0][0], "payee": creditors[0][0], "amount": amount})
        for side in (debtors, creditors):
            side[0][1] -= amount
            if side[0][1] == 0:
                side.pop(0)
    return out


def _joined(parts: list[Named]) -> Named:
    """Named parts as one list, in each language's words ("Q 4,000 and R 2,000")."""
    if len(parts) == 1:
        return parts[0]
    return Named(
        ", ".join(parts[:-1]) + " and " + parts[-1], ", ".join(p.vi for p in parts[:-1]) + " và " + parts[-1].vi
    )


def _paid_back(correction: dict[str, Any]) -> Named:
    """A correction that returns what the game made its payee pay too much: "Q phải trả lại P 3.000"."""
    payer, payee, amount = correction["payer"], correction["payee"], numeral(correction["amount"])
    return Named(f"{payer} must pay {payee} back {amount.en}", f"{payer} phải trả lại {amount.vi} cho {payee}")


def refunds(owed: list[dict[str, Any]], computed: list[Flow], claimed: list[Flow] | None) -> frozenset[tuple[str, str]]:
    """The corrections (payer, payee) that give back money the game's own lines moved: the claim had the
    payee pay the payer at least that much more than the rules do. Review 7: with amounts alone, or
    lines that never moved money between the two, "S phải trả lại 4.000 cho Q" said S got Q's money."""

    def paid(flows: list[Flow], payer: str, payee: str) -> int:
        return sum(amount for a, b, _, amount in flows if (a, b) == (payer, payee))

    if claimed is None:
        return frozenset()
    return frozenset(
        (c["payer"], c["payee"]) for c in owed
        if paid(claimed, c["payee"], c["payer"]) - paid(computed, c["payee"], c["payer"]) >= c["amount"]
    )  # fmt: skip


def who_owes_whom(player: str, owed: list[dict[str, Any]], refunded: frozenset[tuple[str, str]] = frozenset()) -> Text:
    """What is left for ``player`` to pay or to be paid, its counterparts named: no sign to read. Where
    every correction of the player is ``refunded`` (it returns what the game's lines made its payee pay
    the payer too much), it is said as a refund, as an agent says it: "Q phải trả lại P 3.000"."""
    mine = [c for c in owed if player in (c["payer"], c["payee"])]
    if mine and all((c["payer"], c["payee"]) in refunded for c in mine):
        return Text("verify.paid_back", clauses=_joined([_paid_back(c) for c in mine]))
    pays = [Named(f"{c['payee']} {numeral(c['amount'])}", f"{numeral(c['amount']).vi} cho {c['payee']}")
            for c in owed if c["payer"] == player]  # fmt: skip
    gets = [Named(f"{numeral(c['amount'])} by {c['payer']}", f"{numeral(c['amount']).vi} từ {c['payer']}")
            for c in owed if c["payee"] == player]  # fmt: skip
    if pays and gets:  # Vietnamese: each debtor its own clause ("và …, và" chained two badly)
        debtors = "; ".join(f"{c['payer']} còn phải trả {numeral(c['amount']).vi} cho {player}" for c in owed
                            if c["payee"] == player)  # fmt: skip
        return Text("verify.owes_and_is_owed", id=player, pays=_joined(pays), gets=_joined(gets),
                    debtors=Named("", debtors))  # fmt: skip
    if pays:
        return Text("verify.owes", id=player, pays=_joined(pays))
    return Text("verify.is_owed", id=player, gets=_joined(gets))


def _step_lines(steps: dict[str, int], said: dict[str, int] | None) -> list[Text]:
    """Each step in which the claim differs: what the rules give and what the game recorded, or that it
    recorded none of it (no "+0"); a claim of amounts alone, what the rules give for each step."""
    if said is None:
        return [Text("verify.computed_step", step=STEP_TEXTS[step], amount=numeral(amount, signed=True))
                for step, amount in steps.items() if amount]  # fmt: skip  # a step netting 0 explains nothing
    lines = []
    for step in dict.fromkeys([*steps, *said]):
        mine, theirs = steps.get(step), said.get(step)
        if (mine or 0) == (theirs or 0):
            continue
        if theirs is None:
            lines.append(
                Text("verify.step_not_recorded", step=STEP_TEXTS[step], computed=numeral(mine or 0, signed=True))
            )
        elif mine is None:
            lines.append(Text("verify.step_not_in_rules", step=STEP_TEXTS[step], claimed=numeral(theirs, signed=True)))
        else:
            lines.append(Text("verify.step_differs", step=STEP_TEXTS[step], computed=numeral(mine, signed=True),
                              claimed=numeral(theirs, signed=True)))  # fmt: skip
    return lines


def compare(result: Result, claim: Claim, stake: int) -> dict[str, Any]:
    """What differs between a claim and the computed settlement: per player (who still owes whom, and
    the steps that explain it), per ledger line when the claim has lines, the corrections that would
    settle it, and whether they agree at all."""
    computed: list[Flow] = [(line.payer, line.payee, line.step, line.units * stake) for line in result.ledger]
    claimed: list[Flow] | None = None
    if claim.ledger is not None:
        claimed = [(each.payer, each.payee, each.step, each.amount) for each in claim.ledger]
    stepped = claimed if claimed is not None and any(step for _, _, step, _ in claimed) else None
    players: list[dict[str, Any]] = []
    for player in result.players:
        mine, theirs = player.units * stake, claim.amounts[player.id]
        _check_difference(player.id, theirs, mine)
        players.append({"id": player.id, "claimed": theirs, "computed": mine, "difference": theirs - mine})
    owed = corrections(players, computed, claimed)
    refunded = refunds(owed, computed, claimed)
    for entry in players:
        if entry["difference"] == 0:
            continue
        said = None if stepped is None else _by_step(stepped, entry["id"])  # lines without steps explain no step
        claimed_total, computed_total = numeral(entry["claimed"], signed=True), numeral(entry["computed"], signed=True)
        owes = who_owes_whom(entry["id"], owed, refunded)
        total = Text("verify.claim_total", id=entry["id"], claimed=claimed_total, computed=computed_total, owed=owes)
        entry["explanation"] = [total, *_step_lines(_by_step(computed, entry["id"]), said)]
    ledger = None if claim.ledger is None else _ledger_differences(computed, claim)
    agrees = all(p["difference"] == 0 for p in players) and (ledger is None or not any(ledger.values()))
    verdict = _verdict(players, ledger)
    return {"agrees": agrees, "explanation": verdict, "players": players, "ledger": ledger, "corrections": owed}


def settles(status: int, body: dict[str, Any]) -> bool:
    """A verify answer whose claim agrees: the batch tools count it and write only disagreements."""
    return status == 200 and body.get("agrees") is True
