"""Four-player rooms scored per second in one process, response bytes included.

Two figures, same run, medians over rounds:
- pipeline: validated room → settlement → response JSON bytes (the issue's goal: >= 10,000/s);
- full: request bytes → parse → validate (marshmallow) → settle → response bytes (what the CLI and API do).
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

from service.documents import loads, score_document
from service.requests import load_room
from service.scoring import score
from service.serialize import dumps, result_json


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    requests = four_player_rooms(args.rooms)
    rooms = [load_room(r) for r in requests]
    bodies = [json.dumps(r).encode() for r in requests]

    def pipeline() -> float:
        start = time.perf_counter()
        for room in rooms:
            dumps(result_json(score(room)))
        return len(rooms) / (time.perf_counter() - start)

    def full() -> float:
        start = time.perf_counter()
        for body in bodies:
            dumps(score_document(loads(body)))
        return len(bodies) / (time.perf_counter() - start)

    samples: dict[str, list[float]] = {"pipeline": [], "full": []}
    for _ in range(args.rounds):
        samples["pipeline"].append(pipeline())
        samples["full"].append(full())
    pipe, whole = statistics.median(samples["pipeline"]), statistics.median(samples["full"])
    import service.scoring

    compiled = "compiled by mypyc" if (service.scoring.__file__ or "").endswith(".so") else "pure Python"
    print(
        f"four-player rooms per round: {len(rooms):,}; rounds: {args.rounds}; medians, one process; pipeline {compiled}"
    )
    print(f"pipeline + response bytes       : {pipe:>9,.0f} rooms/s   {1e6 / pipe:6.1f} us/room (goal >= 10,000/s)")
    print(f"bytes in -> validate -> bytes out: {whole:>9,.0f} rooms/s   {1e6 / whole:6.1f} us/room")
    print(f"validation share of the full path: {1 - whole / pipe:.0%}")


if __name__ == "__main__":
    main()
