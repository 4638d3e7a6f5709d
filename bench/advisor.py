"""The arrangement advisor: quality by the real scoring pipeline, and speed against the floor.

Quality: heads-up deals per ruleset, duplicate format: each deal is played twice with the
hands swapped, the advisor on one side and a baseline on the other, scored by
service.scoring; the figure is the advisor's mean units per game with a 95% interval
(per-deal means, normal approximation). Baselines: (a) lexicographic, "strongest back, then
strongest middle"; (b) a uniformly random legal arrangement. In maubinh-bao the advisor
declares when it recommends it; baselines never declare.

Duplicate matches: the new advisor (its default, strong field) against today's (the weak field),
heads-up and in four-player rooms (see ``duplicate``).

Speed: p50 and p99 per hand of the advisor (cards in, decision out) against the lexicographic
floor (same evaluation of the 13 cards, then argmax over the splits), in alternating rounds.

Run: .venv/bin/python bench/advisor.py [--deals 10000] [--duplicate-deals 2000] [--speed-hands 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from service.advisor.advise import advise
from service.advisor.splits import evaluate_subsets, legal_splits, lexicographic, split_cards
from service.contract import Opponents
from service.game.cards import CARD_TEXT, DECK, Card
from service.game.hands import POSITIONS
from service.rulesets import Ruleset
from service.rulesets.catalogue import builtin_catalogue
from service.scoring import score
from service.validation import load_room


def as_text(hands: dict[str, tuple[Card, ...]]) -> dict[str, list[str]]:
    return {p: [CARD_TEXT[c] for c in hands[p]] for p in POSITIONS}


def baseline_lexicographic(cards: tuple[Card, ...], ruleset: Ruleset, rng: np.random.Generator) -> dict[str, Any]:
    subsets = evaluate_subsets(cards, ruleset.wheel)
    return as_text(split_cards(subsets, lexicographic(subsets, ruleset.wheel)))


def baseline_random(cards: tuple[Card, ...], ruleset: Ruleset, rng: np.random.Generator) -> dict[str, Any]:
    subsets = evaluate_subsets(cards, ruleset.wheel)
    legal, *_ = legal_splits(subsets)
    return as_text(split_cards(subsets, int(legal[int(rng.integers(len(legal)))])))


def advisor(cards: tuple[Card, ...], ruleset: Ruleset, opponents: Opponents = "strong") -> dict[str, Any]:
    advice = advise(cards, ruleset, opponents=opponents)
    player: dict[str, Any] = as_text(advice.chosen.arrangement)
    if advice.declare:
        player["declare"] = True
    return player


def game(ruleset: Ruleset, hero: dict[str, Any], villain: dict[str, Any]) -> int:
    room = load_room({"ruleset": ruleset.id, "players": [{"id": "advisor", **hero}, {"id": "baseline", **villain}]})
    return score(room).players[0].units


def quality(ruleset: Ruleset, deals: int, seed: int) -> dict[str, tuple[float, float]]:
    rng = np.random.default_rng(seed)
    per_deal: dict[str, list[float]] = {"lexicographic": [], "random": []}
    baselines = {"lexicographic": baseline_lexicographic, "random": baseline_random}
    for _ in range(deals):
        order = rng.permutation(52)[:26].tolist()
        hand_a = tuple(DECK[c] for c in order[:13])
        hand_b = tuple(DECK[c] for c in order[13:])
        ours = {"a": advisor(hand_a, ruleset), "b": advisor(hand_b, ruleset)}
        for name, baseline in baselines.items():
            theirs_a, theirs_b = baseline(hand_a, ruleset, rng), baseline(hand_b, ruleset, rng)
            units = game(ruleset, ours["a"], theirs_b) + game(ruleset, ours["b"], theirs_a)
            per_deal[name].append(units / 2)
    return {
        name: (statistics.fmean(values), 1.96 * statistics.stdev(values) / len(values) ** 0.5)
        for name, values in per_deal.items()
    }


def room_units(ruleset: Ruleset, seats: list[dict[str, Any]]) -> list[int]:
    room = load_room({"ruleset": ruleset.id, "players": [{"id": f"p{k}", **s} for k, s in enumerate(seats)]})
    return [p.units for p in score(room).players]


def duplicate(ruleset: Ruleset, deals: int, seed: int) -> dict[str, tuple[float, float]]:
    """The new advisor (strong field) against today's (weak field), duplicate format.

    Heads-up: each deal twice, hands swapped; the figure is the new advisor's mean units per game.
    Four players: the new advisor takes each seat in turn against three of today's; the figure is
    its units in that seat minus what today's advisor made there with the same cards (so 0 is par)."""
    rng = np.random.default_rng([seed, 4])
    heads_up: list[float] = []
    four: list[float] = []
    for _ in range(deals):
        order = rng.permutation(52).tolist()
        hands = [tuple(DECK[c] for c in order[13 * k : 13 * k + 13]) for k in range(4)]
        new = [advisor(h, ruleset, "strong") for h in hands]
        old = [advisor(h, ruleset, "weak") for h in hands]
        units = room_units(ruleset, [new[0], old[1]])[0] + room_units(ruleset, [new[1], old[0]])[0]
        heads_up.append(units / 2)
        if ruleset.max_players >= 4:
            par = room_units(ruleset, old)
            four.append(
                statistics.fmean(room_units(ruleset, [*old[:s], new[s], *old[s + 1 :]])[s] - par[s] for s in range(4))
            )
    figures = {"heads-up": heads_up}
    if four:
        figures["four players"] = four
    return {
        name: (statistics.fmean(values), 1.96 * statistics.stdev(values) / len(values) ** 0.5)
        for name, values in figures.items()
    }


def speed(hands: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ruleset = builtin_catalogue().latest["maubinh-2020"]
    deals = [tuple(DECK[c] for c in rng.permutation(52)[:13].tolist()) for _ in range(hands)]
    advise(deals[0], ruleset)  # build caches
    ours: list[float] = []
    floor: list[float] = []
    for cards in deals:
        start = time.perf_counter()
        subsets = evaluate_subsets(cards, ruleset.wheel)
        lexicographic(subsets, ruleset.wheel)
        floor.append(time.perf_counter() - start)
        start = time.perf_counter()
        advise(cards, ruleset)
        ours.append(time.perf_counter() - start)

    def pct(values: list[float], q: float) -> float:
        return float(np.percentile(values, q)) * 1000

    print(f"speed, {hands:,} hands, maubinh-2020, medians and tails in ms per hand:")
    print(f"  lexicographic floor : p50 {pct(floor, 50):.2f}  p99 {pct(floor, 99):.2f}")
    print(f"  advisor             : p50 {pct(ours, 50):.2f}  p99 {pct(ours, 99):.2f}")
    print(f"  ratio p50           : {pct(ours, 50) / pct(floor, 50):.2f}x (goal <= 3)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deals", type=int, default=10_000)
    parser.add_argument("--speed-hands", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--duplicate-deals", type=int, default=2000)
    parser.add_argument("--ruleset", action="append")
    parser.add_argument("--only", choices=("speed", "duplicate", "quality"), action="append", help="these parts")
    args = parser.parse_args()
    parts = args.only or ["speed", "duplicate", "quality"]
    if "speed" in parts:
        speed(args.speed_hands, args.seed)
    for ruleset_id in (args.ruleset or sorted(builtin_catalogue().latest)) if "duplicate" in parts else []:
        started = time.perf_counter()
        figures = duplicate(builtin_catalogue().latest[ruleset_id], args.duplicate_deals, args.seed)
        print(
            f"duplicate, {ruleset_id}, new advisor vs today's, {args.duplicate_deals:,} deals ({time.perf_counter() - started:.0f} s):"
        )
        for name, (mean, half) in figures.items():
            print(f"  {name:12s}: {mean:+.3f} units/deal  95% CI [{mean - half:+.3f}, {mean + half:+.3f}]")
    for ruleset_id in (args.ruleset or sorted(builtin_catalogue().latest)) if "quality" in parts else []:
        started = time.perf_counter()
        figures = quality(builtin_catalogue().latest[ruleset_id], args.deals, args.seed)
        print(f"quality, {ruleset_id}, {args.deals:,} deals x 2 seats ({time.perf_counter() - started:.0f} s):")
        for name, (mean, half) in figures.items():
            verdict = "ahead" if mean - half > 0 else "NOT clearly ahead"
            print(
                f"  advisor vs {name:13s}: {mean:+.3f} units/game  95% CI [{mean - half:+.3f}, {mean + half:+.3f}]  {verdict}"
            )


if __name__ == "__main__":
    main()
