"""The advisor's regret, by Monte Carlo with the real scoring pipeline.

For each hand (seeded), the candidate splits are the best distinct splits of the advisor under
either field (``--candidates`` of each, by its own model) and the lexicographic split. They all
play the same opponents: ``--opponents`` 13-card hands drawn from the 39 cards left, arranged by
the advisor (its default, strong field; it declares BÁO when it recommends it) or by the
lexicographic rule, each room scored heads-up by service.scoring.

Regret of a choice = EV of the best candidate − EV of the choice, cross-fitted so that it is not
inflated by noise: the best candidate is picked on one half of the opponents and both are valued
on the other half, and the two ways are averaged. Figures: mean regret per hand with a 95% interval
(normal, over hands), the share of hands losing more than 0.25, how often the best candidate on
all opponents is the advisor's own top choice, and, paired on the same opponents, the new
advisor's EV minus today's (the weak field's).

Run: .venv/bin/python bench/regret.py [--hands 120] [--opponents 240] [--candidates 24] [--jobs 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from service.advisor.advise import advise
from service.advisor.splits import evaluate_subsets, lexicographic, split_cards
from service.contract import PlayerEntry, Room
from service.game.cards import DECK, Card
from service.game.hands import POSITIONS, Position
from service.rulesets import Ruleset
from service.rulesets.catalogue import builtin_catalogue
from service.scoring import score

Hands = dict[Position, tuple[Card, ...]]
ADVISORS = ("strong", "weak")
OPPONENT_KINDS = ("advisor", "lexicographic")


def _entry(player: str, hands: Hands, declare: bool = False) -> PlayerEntry:
    return PlayerEntry(player, hands["back"] + hands["middle"] + hands["front"], dict(hands), declare=declare)


def _triple(hands: Hands, ruleset: Ruleset) -> tuple[int, ...]:
    return tuple(ruleset.hand_table.describe(hands[p]).strength for p in POSITIONS)


def lexicographic_hands(cards: tuple[Card, ...], ruleset: Ruleset) -> Hands:
    subsets = evaluate_subsets(tuple(sorted(cards)), ruleset.wheel)
    return split_cards(subsets, lexicographic(subsets, ruleset.wheel))


@dataclass(frozen=True)
class HandResult:
    regret: dict[tuple[str, str], float]
    """(opponent kind, advisor) → cross-fitted regret of that advisor's choice."""
    top_is_best: dict[tuple[str, str], bool]
    gain: dict[str, float]
    """opponent kind → EV(strong advisor's choice) − EV(weak advisor's choice)."""


def one_hand(job: tuple[str, int, int, int, int]) -> HandResult:
    ruleset_id, seed, hand_index, opponents, width = job
    ruleset = builtin_catalogue().latest[ruleset_id]
    rng = np.random.default_rng([seed, hand_index, *ruleset_id.encode()])
    order = rng.permutation(52).tolist()
    hero = tuple(DECK[c] for c in order[:13])
    rest = order[13:]
    advice = {name: advise(hero, ruleset, width - 1, name) for name in ADVISORS}
    candidates: list[Hands] = []
    seen: set[tuple[int, ...]] = set()
    for hands in (
        [a.play.arrangement for a in advice.values()]
        + [s.arrangement for a in advice.values() for s in a.ranked]
        + [lexicographic_hands(hero, ruleset)]
    ):
        triple = _triple(hands, ruleset)
        if triple not in seen:
            seen.add(triple)
            candidates.append(hands)
    chosen = {
        "strong": 0,
        "weak": next(
            k
            for k, c in enumerate(candidates)
            if _triple(c, ruleset) == _triple(advice["weak"].play.arrangement, ruleset)
        ),
    }
    drawn = [tuple(DECK[rest[i]] for i in rng.choice(39, size=13, replace=False).tolist()) for _ in range(opponents)]
    regret: dict[tuple[str, str], float] = {}
    top_is_best: dict[tuple[str, str], bool] = {}
    gain: dict[str, float] = {}
    for kind in OPPONENT_KINDS:
        villains = []
        for cards in drawn:
            if kind == "advisor":
                theirs = advise(cards, ruleset)
                villains.append(_entry("villain", theirs.chosen.arrangement, theirs.declare))
            else:
                villains.append(_entry("villain", lexicographic_hands(cards, ruleset)))
        ev = np.array(
            [[score(Room(ruleset, (_entry("hero", c), v))).players[0].units for v in villains] for c in candidates],
            dtype=np.float64,
        )
        half_a, half_b = ev[:, 0::2].mean(axis=1), ev[:, 1::2].mean(axis=1)
        best_all = int(np.argmax(ev.mean(axis=1)))
        for name, index in chosen.items():
            cross = (
                half_b[int(np.argmax(half_a))] - half_b[index] + half_a[int(np.argmax(half_b))] - half_a[index]
            ) / 2
            regret[(kind, name)] = float(cross)
            top_is_best[(kind, name)] = best_all == index
        gain[kind] = float(ev[chosen["strong"]].mean() - ev[chosen["weak"]].mean())
    return HandResult(regret, top_is_best, gain)


def interval(values: list[float]) -> str:
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / len(values) ** 0.5
    return f"{mean:+.3f} ± {half:.3f}"


def report(ruleset_id: str, results: list[HandResult], seconds: float, args: Any) -> None:
    print(
        f"{ruleset_id}: {len(results)} hands × {args.opponents} common opponents "
        f"({args.candidates} best of each field + lexicographic as candidates), {seconds:.0f} s"
    )
    for kind in OPPONENT_KINDS:
        for name in ADVISORS:
            values = [r.regret[(kind, name)] for r in results]
            losing = sum(v > 0.25 for v in values) / len(values)
            top = sum(r.top_is_best[(kind, name)] for r in results) / len(results)
            label = "new advisor (strong field)" if name == "strong" else "today's advisor (weak field)"
            print(
                f"  opponents {kind:13s} {label:29s}: regret {interval(values)} units/game; "
                f"{losing:.0%} of hands lose > 0.25; its choice is the best candidate in {top:.0%}"
            )
        print(f"  opponents {kind:13s} new − today, paired: {interval([r.gain[kind] for r in results])} units/game")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hands", type=int, default=120)
    parser.add_argument("--opponents", type=int, default=240)
    parser.add_argument("--candidates", type=int, default=24)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--ruleset", action="append")
    args = parser.parse_args()
    context = multiprocessing.get_context("fork")
    with context.Pool(args.jobs) as pool:
        for ruleset_id in args.ruleset or ["maubinh-2020", "maubinh-chi-at", "maubinh-bao"]:
            started = time.perf_counter()
            jobs = [(ruleset_id, args.seed, k, args.opponents, args.candidates) for k in range(args.hands)]
            results = pool.map(one_hand, jobs, chunksize=1)
            report(ruleset_id, results, time.perf_counter() - started, args)


if __name__ == "__main__":
    main()
