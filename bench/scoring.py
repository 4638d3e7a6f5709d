"""Four-player rooms scored per second in one process, response bytes included.

Figures from one run, medians over rounds:
- pipeline: validated room → settlement → response JSON bytes;
- full: request bytes → parse → validate (marshmallow) → settle → response bytes (what the CLI and API do);
- the same two for the same rooms under a house-rule variant (each room's ruleset patched: sập ×2,
  scoop on the chi won, bonuses added, a fixed foul payment), resolved through the variant cache as
  a backend sending its house rules with every room would be. Goal: >= 0.8x the built-in rate.
Run: .venv/bin/python bench/scoring.py [--rooms N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from rooms import four_player_rooms

from service.documents import score_document
from service.scoring import score
from service.serialize import dumps, result_json
from service.strict_json import loads
from service.validation import load_room


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    requests = four_player_rooms(args.rooms)
    patch = {"scoop": {"multiplier": 2, "table": None, "basis": "chi"}, "bonuses": {"mode": "add"},
             "fouls": {"foul_is_scoop": False, "foul_multiplier": 1, "fixed_units": 6}}  # fmt: skip
    variants = [{**r, "ruleset": {"base": r["ruleset"], "patch": patch}} for r in requests]
    rooms = {"built-in": [load_room(r) for r in requests], "variant": [load_room(r) for r in variants]}
    bodies = {
        "built-in": [json.dumps(r).encode() for r in requests],
        "variant": [json.dumps(r).encode() for r in variants],
    }

    def pipeline(kind: str) -> float:
        start = time.perf_counter()
        for room in rooms[kind]:
            dumps(result_json(score(room)))
        return len(rooms[kind]) / (time.perf_counter() - start)

    def full(kind: str) -> float:
        start = time.perf_counter()
        for body in bodies[kind]:
            dumps(score_document(loads(body)))
        return len(bodies[kind]) / (time.perf_counter() - start)

    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for kind in ("built-in", "variant"):
            samples.setdefault(("pipeline", kind), []).append(pipeline(kind))
            samples.setdefault(("full", kind), []).append(full(kind))
    median = {key: statistics.median(values) for key, values in samples.items()}
    pipe, whole = median[("pipeline", "built-in")], median[("full", "built-in")]
    import service.scoring

    compiled = "compiled by mypyc" if (service.scoring.__file__ or "").endswith(".so") else "pure Python"
    print(
        f"four-player rooms per round: {len(requests):,}; rounds: {args.rounds}; medians, one process; pipeline {compiled}"
    )
    print(f"pipeline + response bytes       : {pipe:>9,.0f} rooms/s   {1e6 / pipe:6.1f} us/room (goal >= 10,000/s)")
    print(f"bytes in -> validate -> bytes out: {whole:>9,.0f} rooms/s   {1e6 / whole:6.1f} us/room")
    print(f"validation share of the full path: {1 - whole / pipe:.0%}")
    for stage in ("pipeline", "full"):
        variant = median[(stage, "variant")]
        ratio = variant / median[(stage, "built-in")]
        print(
            f"house-rule variant, {stage:<8}       : {variant:>9,.0f} rooms/s   {ratio:.2f}x the built-in rate (goal >= 0.8x)"
        )


if __name__ == "__main__":
    main()
