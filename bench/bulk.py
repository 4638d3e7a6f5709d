"""The bulk engine: claims of amounts checked many rooms at a time (`maubinh verify --jsonl`, and
`maubinh verify --rooms` over the table of rooms).

Figures, for four-player rooms whose claims of amounts agree, under the three built-ins and random §11/§12
variants (an operator's folder of them, named by id as an audit's rounds name their rulesets):
- instructions per room, whole process, `--jobs 1` (valgrind: (I(large) − I(small)) / rooms between),
  the engine against the per-room path (`MAUBINH_BULK_ENGINE=0`) in the same run (goal <= 150k), and
  the engine reading the table of rooms (goal <= 40k; converting to it is not counted);
- rooms per second per core (median of rounds) with `--jobs 1`, and `--jobs 2` against it, each way;
- with --differential N: N random rooms under random rulesets, the engine against the per-room path
  (tests/unit/test_bulk_engine.py runs 100,000 in CI; the bench 1,000,000), zero differences.
Run: .venv/bin/python bench/bulk.py [--rooms N] [--rounds R] [--differential N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

from instructions import instructions  # noqa: E402
from rooms import four_player_rooms  # noqa: E402
from rooms_at_random import RandomRoom, ruleset_patch  # noqa: E402

from service.game.cards import DECK  # noqa: E402
from service.rulesets import RulesetError  # noqa: E402
from service.rulesets.operator_folder import catalogue_for  # noqa: E402
from service.scoring import score  # noqa: E402

MAUBINH = str(Path(sys.executable).with_name("maubinh"))
DECK_NUMBERS = {str(card): number for number, card in enumerate(DECK)}
BUILT_INS = ("maubinh-2020", "maubinh-chi-at", "maubinh-bao")


def variants_folder(work: Path, count: int, seed: int) -> list[str]:
    """``count`` random §11/§12 variants for four players, as an operator's files; their ids."""
    rng = random.Random(seed)
    folder = work / "rulesets"
    folder.mkdir()
    ids: list[str] = []
    while len(ids) < count:
        name = f"variant-{len(ids)}"
        patch = {**ruleset_patch(rng), "id": name, "players": {"min": 2, "max": 4}}
        document = {"base": f"{rng.choice(BUILT_INS)}", "patch": patch}
        (folder / name).mkdir()
        (folder / name / "1.json").write_text(json.dumps(document))
        try:
            catalogue_for(str(folder)).resolve(name)
        except RulesetError:
            (folder / name / "1.json").unlink()
            (folder / name).rmdir()
            continue
        ids.append(name)
    return ids


def claims_file(path: Path, count: int, rulesets: list[str], folder: Path, seed: int) -> None:
    """Four-player rounds with claims of amounts that agree, the amounts by the per-room path."""
    catalogue = catalogue_for(str(folder))
    with path.open("w") as out:
        for room in four_player_rooms(count, seed=seed, rulesets=tuple(rulesets)):
            ruleset = catalogue.resolve(room["ruleset"])
            players = [(p["id"], [DECK_NUMBERS[c] for c in p["back"] + p["middle"] + p["front"]], "arranged", False)
                       for p in room["players"]]  # fmt: skip
            units = [p.units for p in score(RandomRoom(room["ruleset"], room["stake"], players).room(ruleset)).players]
            room["claimed"] = {
                "amounts": {p["id"]: u * room["stake"] for p, u in zip(room["players"], units, strict=True)}
            }
            out.write(json.dumps(room) + "\n")


def verify(path: Path, jobs: int) -> list[str]:
    if path.suffix == ".parquet":
        return [MAUBINH, "verify", "--rooms", str(path), "--jobs", str(jobs), "-o", os.devnull]
    return [MAUBINH, "verify", "--jsonl", str(path), "--jobs", str(jobs), "-o", os.devnull]


def table_of(lines: list[bytes], size: int, work: Path, env: dict[str, str]) -> Path:
    """The first ``size`` claims as a table of rooms (``maubinh rooms``)."""
    part, table = work / f"{size}.jsonl", work / f"{size}.parquet"
    part.write_bytes(b"".join(lines[:size]))
    subprocess.run([MAUBINH, "rooms", str(part), "-o", str(table)], check=True, env={**os.environ, **env},
                   capture_output=True)  # fmt: skip
    return table


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--differential", type=int, default=0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="maubinh-bulk-"))
    rulesets = [*BUILT_INS, *variants_folder(work, 12, seed=5)]
    env = {"MAUBINH_RULESETS_DIR": str(work / "rulesets")}
    many = work / "many.jsonl"
    claims_file(many, max(args.rooms, 32768), rulesets, work / "rulesets", seed=2)
    lines = many.read_bytes().splitlines(keepends=True)
    print(f"{len(rulesets)} rulesets: the built-ins and {len(rulesets) - 3} random variants; four players a room")
    print("| path | instructions a room (whole process, --jobs 1) | rooms between |")
    print("|---|---|---|")
    per = {}
    # the per-room path over fewer rooms: under valgrind it takes about ten times the engine's time a room
    for name, extra, small, large, table in (
        ("bulk engine, JSON lines", {}, 8192, 32768, False),
        ("per-room path", {"MAUBINH_BULK_ENGINE": "0"}, 500, 2500, False),
        ("bulk engine, table of rooms", {}, 32768, 131072, True),
    ):
        fixed = {**env, **extra, "PYTHONHASHSEED": "0"}
        counts = []
        for size in (small, large):
            part = work / f"{size}.jsonl"
            part.write_bytes(b"".join(lines[:size]))
            counts.append(instructions(verify(table_of(lines, size, work, env) if table else part, 1), fixed))
        per[name] = (counts[1] - counts[0]) / (large - small)
        print(f"| {name} | {per[name] / 1e3:.1f} k | {large - small:,} |")
    print(f"engine / per-room: {per['bulk engine, JSON lines'] / per['per-room path']:.3f} (goal: <= 150k a room)")
    print(f"table of rooms: {per['bulk engine, table of rooms'] / 1e3:.1f} k a room (goal: <= 40k a room)")
    whole = table_of(lines, len(lines), work, env)
    for name, source in (("JSON lines", many), ("table of rooms", whole)):
        seconds: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.rounds):
            for jobs in (1, 2):
                start = time.perf_counter()
                subprocess.run(verify(source, jobs), check=True, env={**os.environ, **env})
                seconds[jobs].append(time.perf_counter() - start)
        one, two = statistics.median(seconds[1]), statistics.median(seconds[2])
        print(f"{name}: {len(lines):,} rooms, median of {args.rounds} rounds, start-up included:")
        print(f"| --jobs 1 | {one:.2f} s | {len(lines) / one:,.0f} rooms/s |")
        print(f"| --jobs 2 | {two:.2f} s | {len(lines) / two:,.0f} rooms/s | {one / two:.2f}x --jobs 1 |")
    if args.differential:
        os.environ["MAUBINH_DIFFERENTIAL_ROOMS"] = str(args.differential)
        from unit.test_bulk_engine import test_the_array_form_settles_every_room_as_the_per_room_path_does

        started = time.perf_counter()
        test_the_array_form_settles_every_room_as_the_per_room_path_does()
        print(
            f"differential: {args.differential:,} random rooms, 0 differences ({time.perf_counter() - started:.0f} s)"
        )


if __name__ == "__main__":
    main()
