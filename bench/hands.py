"""Hand evaluations per second: ours (compiled by mypyc; pure Python with MAUBINH_PURE_PYTHON=1) against phevaluator's C evaluator, same run.

Both evaluate the same random hands, in alternating rounds; figures are medians.
Run: .venv/bin/python bench/hands.py [--hands N] [--rounds R]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from phevaluator import _pheval  # the C evaluator behind phevaluator.evaluate_cards

from service.game.hands import hand_table


def rate(run: Callable[[], None], count: int) -> float:
    start = time.perf_counter()
    run()
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hands", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(1)
    fives = [tuple(rng.sample(range(52), 5)) for _ in range(args.hands)]
    threes = [tuple(rng.sample(range(52), 3)) for _ in range(args.hands)]
    table = hand_table("second")
    evaluate5, evaluate3, theirs = table.evaluate5, table.evaluate3, _pheval.evaluate_5cards

    def ours5() -> None:
        for hand in fives:
            evaluate5(hand)

    def ours3() -> None:
        for hand in threes:
            evaluate3(hand)

    def c5() -> None:
        for hand in fives:
            theirs(*hand)

    samples: dict[str, list[float]] = {"ours5": [], "ours3": [], "c5": []}
    for _ in range(args.rounds):
        samples["c5"].append(rate(c5, len(fives)))
        samples["ours5"].append(rate(ours5, len(fives)))
        samples["ours3"].append(rate(ours3, len(threes)))
    median = {k: statistics.median(v) for k, v in samples.items()}
    print(f"hands per round: {args.hands:,}; rounds: {args.rounds}; medians")
    print(f"phevaluator C, 5 cards : {median['c5']:>12,.0f} /s")
    print(
        f"maubinh,       5 cards : {median['ours5']:>12,.0f} /s   ratio {median['ours5'] / median['c5']:.2f}x (goal >= 0.40)"
    )
    print(f"maubinh,       3 cards : {median['ours3']:>12,.0f} /s   ratio {median['ours3'] / median['c5']:.2f}x")


if __name__ == "__main__":
    main()
