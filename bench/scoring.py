"""Four-player rooms scored per second in one process, response bytes included.

Figures from one run, medians over rounds (a variant's ratio: the median of each round's ratio):
- pipeline: validated room → settlement → response JSON bytes;
- full: request bytes → parse → validate (marshmallow) → settle → response bytes (what the CLI and API do);
- the same two for the same rooms under a house-rule variant (each room's ruleset patched: sập ×2,
  scoop on the chi won, bonuses added, a fixed foul payment), resolved through the variant cache as
  a backend sending its house rules with every room would be. Goal: >= 0.8x the built-in rate;
- under a variant of the second family (docs/rules.md §12: a fixed scoop basis, a sweep table paid as
  the total again, fouled pairs compared, instant wins netted and played out, the ace balance),
  loaded from an operator's file and named by its id, as a game moving onto the service ships its
  rules (examples/rulesets/). Goal: >= 0.95x the built-in rate;
- and the same second-family patch sent inline with every room: its full path also parses the
  patch's ~600 bytes of JSON, as any patch of that size costs; no goal, the difference is printed.
Run: .venv/bin/python bench/scoring.py [--rooms N] [--rounds R]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from rooms import four_player_rooms

from service.documents import score_document
from service.rulesets.operator_folder import catalogue_for
from service.scoring import score
from service.serialize import dumps, result_json
from service.support.strict_json import loads
from service.validation import load_room


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    requests = four_player_rooms(args.rooms)
    patch = {"scoop": {"multiplier": 2, "table": None, "basis": "chi"}, "bonuses": {"mode": "add"},
             "fouls": {"foul_is_scoop": False, "foul_multiplier": 1, "fixed_units": 6}}  # fmt: skip
    second = {
        "scoop": {"multiplier": 2, "table": None, "basis": "fixed", "fixed_units": 3, "sweep_pays": "total",
                  "sweep_multiplier": [{"room_size": 3, "multiplier": 3}, {"room_size": 4, "multiplier": 4}]},
        "fouls": {"both_fouled": "compare"},
        "instant_wins": {"ends_round": False, "collision": "difference", "settles_pair": False},
        "aces": {"room_size": 4, "mode": "balance", "units_per_ace": 1, "no_ace_pays": None,
                 "collector_min_aces": None, "four_aces_receives": None},
    }  # fmt: skip
    operator_files = Path(tempfile.mkdtemp())
    for base in {r["ruleset"] for r in requests}:
        document = {"base": base, "patch": {**second, "id": f"second-{base}"}}
        (operator_files / f"second-{base}.json").write_text(json.dumps(document))
    catalogue = catalogue_for(str(operator_files))
    variants = {
        "house-rule": [{**r, "ruleset": {"base": r["ruleset"], "patch": patch}} for r in requests],
        "second family": [{**r, "ruleset": f"second-{r['ruleset']}"} for r in requests],
        "second family inline": [{**r, "ruleset": {"base": r["ruleset"], "patch": second}} for r in requests],
    }
    kinds = ("built-in", *variants)
    every = {"built-in": requests, **variants}
    rooms = {kind: [load_room(r, catalogue) for r in every[kind]] for kind in kinds}
    bodies = {kind: [json.dumps(r).encode() for r in every[kind]] for kind in kinds}

    def pipeline(kind: str) -> float:
        start = time.perf_counter()
        for room in rooms[kind]:
            dumps(result_json(score(room)))
        return len(rooms[kind]) / (time.perf_counter() - start)

    def full(kind: str) -> float:
        start = time.perf_counter()
        for body in bodies[kind]:
            dumps(score_document(loads(body), catalogue))
        return len(bodies[kind]) / (time.perf_counter() - start)

    gc.freeze()  # the rooms built above are never garbage: collections would only scan them
    samples: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        for kind in kinds[round_ % len(kinds) :] + kinds[: round_ % len(kinds)]:  # no kind always runs first
            samples.setdefault(("pipeline", kind), []).append(pipeline(kind))
            samples.setdefault(("full", kind), []).append(full(kind))
    median = {key: statistics.median(values) for key, values in samples.items()}

    def ratio(stage: str, kind: str) -> float:
        """The median of each round's ratio: a slow spell on a shared machine slows both sides of it."""
        return statistics.median(
            v / b for v, b in zip(samples[(stage, kind)], samples[(stage, "built-in")], strict=True)
        )

    pipe, whole = median[("pipeline", "built-in")], median[("full", "built-in")]
    import service.scoring

    compiled = "compiled by mypyc" if (service.scoring.__file__ or "").endswith(".so") else "pure Python"
    print(
        f"four-player rooms per round: {len(requests):,}; rounds: {args.rounds}; medians, one process; pipeline {compiled}"
    )
    print(f"pipeline + response bytes       : {pipe:>9,.0f} rooms/s   {1e6 / pipe:6.1f} us/room (goal >= 10,000/s)")
    print(f"bytes in -> validate -> bytes out: {whole:>9,.0f} rooms/s   {1e6 / whole:6.1f} us/room")
    print(f"validation share of the full path: {1 - whole / pipe:.0%}")
    goals = {"house-rule": 0.8, "second family": 0.95, "second family inline": None}
    for kind, goal in goals.items():
        for stage in ("pipeline", "full"):
            rate = median[(stage, kind)]
            aim = (
                f"(goal >= {goal}x)"
                if goal
                else f"({1e6 / rate - 1e6 / median[(stage, 'second family')]:+.1f} us/room)"
            )
            print(
                f"{kind + ', ' + stage:<33}: {rate:>9,.0f} rooms/s   {ratio(stage, kind):.2f}x the built-in rate {aim}"
            )


if __name__ == "__main__":
    main()
