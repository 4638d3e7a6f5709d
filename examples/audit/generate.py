"""Writes this folder's sample audit, seeded, so that it reads the same every time:

- month.jsonl: 3,000 rounds of November 2026, one request a line, under the three built-ins and the
  operator's club-saigon (version 1 for the first half of the month, version 2 after: rulesets/);
  2 to 4 players, their ids never in sorted order; some arrangements foul, some hands are instant wins
  (six pairs);
- claims.jsonl: the same rounds with the settlement a game backend recorded (``claimed``): the
  rules' own, except at the planted rounds, and two lines the backend wrote wrongly (refused);
- plants.json: each planted fault (line, round, what was done) with the money in dispute it makes,
  worked out here from the claimed and computed amounts, and their totals by step and ruleset.

Run from a checkout: .venv/bin/python examples/audit/generate.py (tests/system/test_audit_examples.py
checks that the files are this script's output).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from service.documents import score_document
from service.rulesets.operator_folder import catalogue_for

HERE = Path(__file__).resolve().parent
ROUNDS = 3000
SEED = 202611
RANKS = "23456789TJQKA"
DECK = [r + s for r in RANKS for s in "SCDH"]
PLANT_EVERY = 97
"""A fault is planted at every 97th round (from round 50): 30 plants, spread over the month."""
KINDS = ("amounts_shifted", "scoop_line_missing", "chi_line_doubled", "ledger_without_steps_short")


def tidy(cards: list[str]) -> dict[str, list[str]]:
    """Groups first into the back, then the middle: a quick arrangement, legal more often than not."""
    counts = Counter(c[0] for c in cards)
    ordered = sorted(cards, key=lambda c: (-counts[c[0]], -RANKS.index(c[0])))
    return {"back": ordered[:5], "middle": ordered[5:10], "front": ordered[10:]}


def six_pairs(rng: random.Random, deck: list[str]) -> list[str]:
    """Thirteen cards of six pairs and a single, taken from ``deck`` (which keeps the rest)."""
    ranks = rng.sample(RANKS, 7)
    hand = []
    for rank in ranks[:6]:
        hand += [c for c in deck if c[0] == rank][:2]
    hand += [c for c in deck if c[0] == ranks[6]][:1]
    for card in hand:
        deck.remove(card)
    return hand


def seat_names(k: int, players: int) -> list[str]:
    """Round ``k``'s player ids, seat by seat, never in sorted order (a backend names players as it
    likes): code that read a claim by sorted ids instead of seats would find wrong claims agreeing. Drawn
    apart from the deal, so that the cards and the plants are what they were."""
    order = random.Random(SEED * ROUNDS + k).sample(range(players), players)
    if order == sorted(order):
        order.reverse()
    return [f"p{k % 97}-{n}" for n in order]


def room(rng: random.Random, k: int) -> dict[str, Any]:
    day = 1 + k * 30 // ROUNDS
    ruleset = rng.choice(["maubinh-2020", "maubinh-bao", "maubinh-chi-at", "club-saigon"])
    if ruleset == "club-saigon":
        ruleset += "@1" if day <= 15 else "@2"  # the club's rules changed on the 16th
    players = rng.choice([2, 3, 4, 4])
    deck = DECK[:]
    rng.shuffle(deck)
    seats = []
    instant = rng.random() < 0.02
    names = seat_names(k, players)
    for i in range(players):
        cards = six_pairs(rng, deck) if instant and i == 0 else [deck.pop() for _ in range(13)]
        seat: dict[str, Any] = {"id": names[i], **tidy(cards)}
        if rng.random() < 0.05:  # a foul: the middle and the back swapped
            seat["back"], seat["middle"] = seat["middle"], seat["back"]
        if instant and i == 0 and ruleset == "maubinh-bao":
            seat["declare"] = True  # bao pays an instant win only when declared
        seats.append(seat)
    return {
        "ruleset": ruleset,
        "stake": rng.choice([1000, 2000, 5000]),
        "round_id": f"2026-11-{day:02d}/{k}",
        "players": seats,
    }


def claimed_lines(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"payer": each["payer"], "payee": each["payee"], "amount": each["amount"], "step": each["step"]}
        for each in answer["ledger"]
    ]


def net(lines: list[dict[str, Any]], players: list[str]) -> dict[str, int]:
    amounts = dict.fromkeys(players, 0)
    for line in lines:
        amounts[line["payer"]] -= line["amount"]
        amounts[line["payee"]] += line["amount"]
    return amounts


def in_dispute(claim: dict[str, Any], answer: dict[str, Any]) -> tuple[int, dict[str, int]]:
    """The money a claim moved wrongly: its positive differences by player, and by step (each player's
    difference within a step, netted; a claim without ledger lines is all ``amounts``)."""
    computed = {p["id"]: p["amount"] for p in answer["players"]}
    total = sum(max(0, claim["amounts"][who] - amount) for who, amount in computed.items())
    if "ledger" not in claim:
        return total, {"amounts": total} if total else {}
    if all("step" not in line for line in claim["ledger"]):  # lines without steps: matched, and counted, as one
        theirs = net(claim["ledger"], list(computed))
        return total, {"unstated": sum(max(0, theirs[who] - computed[who]) for who in computed)}
    by_step: Counter[str] = Counter()
    steps = {line["step"] for line in claim["ledger"]} | {line["step"] for line in answer["ledger"]}
    for step in steps:
        mine = net([each for each in claimed_lines(answer) if each["step"] == step], list(computed))
        theirs = net([each for each in claim["ledger"] if each["step"] == step], list(computed))
        by_step[step] += sum(max(0, theirs[who] - mine[who]) for who in computed)
    return total, {step: amount for step, amount in by_step.items() if amount}


def plant(kind: str, answer: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """A claim with one fault of ``kind``, or None when the round has nothing to plant it in."""
    players = [p["id"] for p in answer["players"]]
    lines = claimed_lines(answer)
    if kind == "amounts_shifted":
        a, b = rng.sample(players, 2)
        amounts = {p["id"]: p["amount"] for p in answer["players"]}
        shift = 2 * answer["stake"]
        amounts[a], amounts[b] = amounts[a] - shift, amounts[b] + shift
        return {"amounts": amounts}
    if kind == "scoop_line_missing":
        kept = [each for each in lines if each["step"] != "scoop"]
        return {"amounts": net(kept, players), "ledger": kept} if len(kept) < len(lines) else None
    if kind == "chi_line_doubled":
        chi = [k for k, each in enumerate(lines) if each["step"] == "chi"]
        if not chi:
            return None
        lines[chi[0]] = {**lines[chi[0]], "amount": 2 * lines[chi[0]]["amount"]}
        return {"amounts": net(lines, players), "ledger": lines}
    # a backend that writes lines without steps, and pays the last one short by one stake
    if not lines or lines[-1]["amount"] <= answer["stake"]:
        return None
    stepless = [{k: v for k, v in each.items() if k != "step"} for each in lines]
    stepless[-1]["amount"] -= answer["stake"]
    return {"amounts": net(stepless, players), "ledger": stepless}


def main(out: Path = HERE) -> None:
    rng = random.Random(SEED)
    catalogue = catalogue_for(str(HERE / "rulesets"))
    month, claims, plants = [], [], []
    totals: Counter[str] = Counter()
    by_ruleset: Counter[str] = Counter()
    for k in range(ROUNDS):
        request = room(rng, k)
        answer = score_document(request, catalogue)
        claim: dict[str, Any] = {"amounts": {p["id"]: p["amount"] for p in answer["players"]}}
        if k % 10 == 0:  # a tenth of the backends' records carry their ledger lines too
            claim["ledger"] = claimed_lines(answer)
        if k >= 50 and (k - 50) % PLANT_EVERY == 0:
            for kind in KINDS[len(plants) % len(KINDS) :] + KINDS[: len(plants) % len(KINDS)]:
                planted = plant(kind, answer, rng)
                if planted is not None:
                    claim = planted
                    total, steps = in_dispute(claim, answer)
                    ref = f"{answer['ruleset']['id']}@{answer['ruleset']['version']}"
                    plants.append({"line": k + 1, "round_id": request["round_id"], "kind": kind,
                                   "ruleset": ref, "in_dispute": total, "by_step": steps})  # fmt: skip
                    totals.update(steps)
                    by_ruleset[ref] += total
                    break
        month.append(json.dumps(request, separators=(",", ":")))
        claims.append(json.dumps({**request, "claimed": claim}, separators=(",", ":")))
    # two lines a backend wrote wrongly: refused, each with its code
    misnamed = json.loads(claims[1499])
    misnamed["ruleset"] = "maubinh-2021"
    claims[1499] = json.dumps(misnamed, separators=(",", ":"))
    refused = json.loads(claims[2499])
    refused["players"][1]["front"][0] = refused["players"][0]["front"][0]
    claims[2499] = json.dumps(refused, separators=(",", ":"))
    (out / "month.jsonl").write_text("\n".join(month) + "\n")
    (out / "claims.jsonl").write_text("\n".join(claims) + "\n")
    summary = {
        "plants": plants,
        "in_dispute": {
            "total": sum(p["in_dispute"] for p in plants),
            "by_step": dict(totals.most_common()),
            "by_ruleset": dict(by_ruleset.most_common()),
        },
        "refused": {"1500": "unknown_ruleset (maubinh-2021)", "2500": "duplicate_card (a card dealt twice)"},
    }
    (out / "plants.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
