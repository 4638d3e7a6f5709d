"""Build the advisor's field tables (service/data/field-<wheel>.npz) by simulation.

The field is what one opponent holds at each position: random 13-card hands from a full deck,
arranged by the lexicographic rule (strongest back, then middle, then front). Seeded and
re-runnable: the same seed and sample count give the same file.

Run: .venv/bin/python scripts/build_field.py [--samples 100000] [--seed 2026] [--wheel second|lowest]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from service.arrange import COMBOS3, COMBOS5, evaluate_subsets, lexicographic, splits
from service.cards import DECK
from service.hands import POSITIONS

OUT = Path(__file__).resolve().parents[1] / "service" / "data"


def build(wheel: str, samples: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    back, middle, front = splits()
    drawn: dict[str, list[int]] = {p: [] for p in POSITIONS}
    started = time.perf_counter()
    for _ in range(samples):
        cards = tuple(DECK[c] for c in rng.choice(52, size=13, replace=False).tolist())
        subsets = evaluate_subsets(cards, wheel)  # type: ignore[arg-type]
        split = lexicographic(subsets, wheel)  # type: ignore[arg-type]
        drawn["back"].append(int(subsets.five[back[split]]))
        drawn["middle"].append(int(subsets.five[middle[split]]))
        drawn["front"].append(int(subsets.three[front[split]]))
    arrays: dict[str, np.ndarray] = {}
    for position in POSITIONS:
        strengths, counts = np.unique(np.array(drawn[position], dtype=np.int64), return_counts=True)
        arrays[f"{position}_strengths"] = strengths
        arrays[f"{position}_counts"] = counts.astype(np.int64)
    description = f"random 13-card hands arranged lexicographically (wheel {wheel}), seed {seed}"
    path = OUT / f"field-{wheel}.npz"
    np.savez_compressed(
        path, samples=np.int64(samples), seed=np.int64(seed), description=np.str_(description), **arrays
    )
    print(
        f"{path.name}: {samples:,} hands in {time.perf_counter() - started:.0f} s; "
        f"distinct strengths {[len(arrays[f'{p}_strengths']) for p in POSITIONS]}"
    )
    assert len(COMBOS5) == 1287 and len(COMBOS3) == 286
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--wheel", choices=["second", "lowest"], action="append")
    args = parser.parse_args()
    for wheel in args.wheel or ["second", "lowest"]:
        build(wheel, args.samples, args.seed)


if __name__ == "__main__":
    main()
