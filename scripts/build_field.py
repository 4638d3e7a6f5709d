"""Build the advisor's field tables (service/data/field-<name>.npz) by simulation.

A field is what one opponent holds at each position. Two kinds ship:

- ``weak`` (``field-<wheel>.npz``): random 13-card hands arranged by the lexicographic rule
  (strongest back, then middle, then front).
- ``strong`` (``field-strong-<ruleset>.npz``, one per built-in ruleset): opponents who arrange
  as the advisor does. Built by fictitious play: round k draws fresh hands and arranges each
  with the advisor playing against the average of rounds 1..k-1 (round 1 plays against the weak
  field); the table is the average of every round's arrangements. After each round the script
  prints the model regret of the field it just played against: over the round's first
  ``--regret-hands`` hands, the expected units (against this round's arrangements) of the best
  split minus those of the split the advisor chose. Rounds stop when that regret falls by less
  than ``--min-gain`` of itself, or after ``--rounds``.

Seeded and re-runnable: the same arguments give the same files, byte for byte (``write_table``),
so the digests in the README check a rebuild. Times on the 2-core machine of 2026-11-30, one
core each: 450 s (maubinh-2020, 9 rounds), 618 s (maubinh-chi-at, 10), 547 s (maubinh-bao, 10).

Run: .venv/bin/python scripts/build_field.py weak [--samples 100000] [--seed 2026]
     .venv/bin/python scripts/build_field.py strong [--ruleset maubinh-2020 ...] [--hands 25000]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from service.advisor.expectation import expected_units
from service.advisor.opponents import OpponentField, weak_field
from service.advisor.splits import COMBOS3, COMBOS5, Ints, evaluate_subsets, lexicographic, splits
from service.game.cards import DECK, Card
from service.game.hand_strengths import Wheel
from service.game.hands import POSITIONS, Position
from service.rulesets import Ruleset
from service.rulesets.catalogue import builtin_catalogue

OUT = Path(__file__).resolve().parents[1] / "service" / "data"
STRONG_RULESETS = tuple(builtin_catalogue().latest)
"""Every built-in ruleset gets a strong field of its own."""


def deal(rng: np.random.Generator) -> tuple[Card, ...]:
    return tuple(sorted(DECK[c] for c in rng.choice(52, size=13, replace=False).tolist()))


def strengths_of(subsets_five: Ints, subsets_three: Ints, split: int) -> tuple[int, int, int]:
    back, middle, front = splits()
    return int(subsets_five[back[split]]), int(subsets_five[middle[split]]), int(subsets_three[front[split]])


def counts(drawn: list[tuple[int, int, int]]) -> dict[Position, tuple[Ints, Ints]]:
    table = np.array(drawn, dtype=np.int64)
    found: dict[Position, tuple[Ints, Ints]] = {}
    for column, position in enumerate(POSITIONS):
        strengths, number = np.unique(table[:, column], return_counts=True)
        found[position] = (strengths, number.astype(np.int64))
    return found


def write_table(path: Path, arrays: dict[str, Any]) -> str:
    """An .npz whose bytes depend only on the arrays (np.savez stamps each member with the time), so
    that a rebuild with the same arguments gives the same file and digest. Returns the sha256."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(arrays):
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asanyarray(arrays[name]), allow_pickle=False)
            member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(member, buffer.getvalue())
    return hashlib.sha256(path.read_bytes()).hexdigest()


def save(name: str, drawn: list[tuple[int, int, int]], description: str, **extra: Any) -> Path:
    path = OUT / f"field-{name}.npz"
    arrays: dict[str, Any] = {
        f"{p}_{kind}": values
        for p, pair in counts(drawn).items()
        for kind, values in zip(("strengths", "counts"), pair, strict=True)
    }
    arrays |= {"samples": np.int64(len(drawn)), "description": np.str_(description), **extra}
    digest = write_table(path, arrays)
    print(f"{path.name}: {len(drawn):,} hands, sha256 {digest}")
    return path


def build_weak(wheel: Wheel, samples: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    drawn = []
    for _ in range(samples):
        subsets = evaluate_subsets(deal(rng), wheel)
        drawn.append(strengths_of(subsets.five, subsets.three, lexicographic(subsets, wheel)))
    description = f"random 13-card hands arranged lexicographically (wheel {wheel}), seed {seed}"
    print(f"weak {wheel}: {time.perf_counter() - started:.0f} s")
    return save(wheel, drawn, description, seed=np.int64(seed), wheel=np.str_(wheel))


def advisor_round(
    ruleset: Ruleset, against: OpponentField, hands: int, rng: np.random.Generator, regret_hands: int
) -> tuple[list[tuple[int, int, int]], float]:
    """One round: the advisor's arrangements against ``against``, and its model regret there."""
    drawn, kept = [], []
    for k in range(hands):
        subsets = evaluate_subsets(deal(rng), ruleset.wheel)
        legal, expected = expected_units(subsets, ruleset, against)
        choice = int(np.argmax(expected))
        drawn.append(strengths_of(subsets.five, subsets.three, int(legal[choice])))
        if k < regret_hands:
            kept.append((subsets, choice))
    played = OpponentField.from_counts(counts(drawn), len(drawn), "this round")
    regrets = []
    for subsets, choice in kept:
        _, expected = expected_units(subsets, ruleset, played)
        regrets.append(float(expected.max() - expected[choice]))
    return drawn, float(np.mean(regrets))


def build_strong(ruleset_id: str, hands: int, rounds: int, seed: int, regret_hands: int, min_gain: float) -> Path:
    ruleset = builtin_catalogue().get(ruleset_id)
    assert ruleset is not None, ruleset_id
    rng = np.random.default_rng([seed, *ruleset_id.encode()])
    against, every = weak_field(ruleset.wheel), []
    history: list[float] = []
    started = time.perf_counter()
    for round_number in range(1, rounds + 1):
        drawn, regret = advisor_round(ruleset, against, hands, rng, regret_hands)
        every.extend(drawn)
        history.append(regret)
        print(
            f"{ruleset_id} round {round_number}: model regret against its own play {regret:.4f} units "
            f"({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
        if len(history) > 1 and history[-2] - regret < min_gain * history[-2]:
            break
        against = OpponentField.from_counts(counts(every), len(every), "average so far")
    print(f"{ruleset_id}: {len(history)} rounds in {time.perf_counter() - started:.0f} s")
    description = (
        f"hands arranged by the advisor for {ruleset.id}@{ruleset.version}: fictitious play, "
        f"{len(history)} rounds of {hands:,} hands averaged, seed {seed}"
    )
    return save(
        f"strong-{ruleset_id}",
        every,
        description,
        seed=np.int64(seed),
        rounds=np.int64(len(history)),
        regret=np.array(history),
        wheel=np.str_(ruleset.wheel),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["weak", "strong"])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--samples", type=int, default=100_000, help="weak: hands per wheel")
    parser.add_argument("--wheel", choices=["second", "lowest"], action="append", help="weak: which wheels")
    parser.add_argument("--ruleset", choices=STRONG_RULESETS, action="append", help="strong: which rulesets")
    parser.add_argument("--hands", type=int, default=25_000, help="strong: hands per round")
    parser.add_argument("--rounds", type=int, default=10, help="strong: at most this many rounds")
    parser.add_argument("--regret-hands", type=int, default=2_000, help="strong: hands the regret is measured on")
    parser.add_argument("--min-gain", type=float, default=0.05, help="strong: stop when regret falls less than this")
    args = parser.parse_args()
    assert len(COMBOS5) == 1287 and len(COMBOS3) == 286
    if args.kind == "weak":
        for wheel in args.wheel or ["second", "lowest"]:
            build_weak(wheel, args.samples, args.seed)
    else:
        for ruleset_id in args.ruleset or STRONG_RULESETS:
            build_strong(ruleset_id, args.hands, args.rounds, args.seed, args.regret_hands, args.min_gain)


if __name__ == "__main__":
    main()
