"""The command line: start-up for one room, --jobs on a big file, and the advisor end to end.

Figures from one run, medians where repeated:
1. `maubinh score room.json` wall time, one room, from process start to exit (goal <= 150 ms), and its
   instructions (valgrind: this host's speed drifts by 2x across a day, the count does not);
2. `maubinh score --jsonl` over N four-player rooms with --jobs 1 and --jobs 2, in turn, a few
   rounds; the median of the rounds' speed-ups (goal >= 1.7x);
   `maubinh verify --jsonl` likewise, over the same rooms with claims of the amounts score gave (all agree),
   and over those claims --month times over (its start-up, 0.15 s, is a tenth of a run over 100,000);
3. `maubinh arrange --jsonl` (3 alternatives) over 200 hands: ms per hand from the CLI's own
   summary line, which times the lines and not the process start (goal <= 1.5 ms per hand), with
   --jobs 1 and with the default --jobs (the cores available).
Processes run with bytecode caches, as after an install (PYTHONDONTWRITEBYTECODE is dropped).
With --against OTHER (another build's `maubinh`, say a git worktree of an earlier commit, installed),
figure 1 runs in turns with OTHER's, and the median of the rounds' ratios is printed too: this host's
speed drifts by 2x, a ratio within one run does not.
Run: .venv/bin/python bench/cli.py [--rooms 100000] [--month 5] [--starts 15] [--rounds 3] [--against OTHER]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from instructions import instructions
from rooms import DECK, four_player_rooms

from service.support.cores import available_cores

MAUBINH = str(Path(sys.executable).with_name("maubinh"))


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""As installed: modules load from their bytecode caches, which the first run writes."""


def wall(*args: str, maubinh: str = MAUBINH) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([maubinh, *args], capture_output=True, text=True, check=True, env=ENV)
    return time.perf_counter() - started, done.stderr


def summary_seconds(stderr: str) -> float:
    return float(re.search(r"refused, ([\d.]+) s", stderr).group(1))  # type: ignore[union-attr]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=100_000)
    parser.add_argument("--starts", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3, help="of --jobs 1 against --jobs 2")
    parser.add_argument("--month", type=int, default=5, help="verify also over the claims this many times over")
    parser.add_argument("--against", metavar="OTHER", help="another build's maubinh, for figure 1 in turns")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="maubinh-cli-"))
    one = work / "room.json"
    one.write_text(json.dumps(four_player_rooms(1, seed=3)[0]))
    rooms = work / "rooms.jsonl"
    rooms.write_text("".join(json.dumps(r) + "\n" for r in four_player_rooms(args.rooms, seed=5)))
    rng = random.Random(11)
    hands = work / "hands.jsonl"
    hands.write_text(
        "".join(
            json.dumps(
                {"ruleset": ("maubinh-2020", "maubinh-chi-at", "maubinh-bao")[k % 3], "cards": rng.sample(DECK, 13)}
            )
            + "\n"
            for k in range(200)
        )
    )
    out = str(work / "out.jsonl")

    wall("score", str(one))  # warm the file cache, and write the bytecode and dataclass caches
    if args.against:
        wall("score", str(one), maubinh=args.against)
        turns = [
            (wall("score", str(one), "-o", out)[0], wall("score", str(one), "-o", out, maubinh=args.against)[0])
            for _ in range(args.starts)
        ]
        starts = sorted(ours for ours, _ in turns)
        theirs = statistics.median(other for _, other in turns)
        ratios = statistics.quantiles([ours / other for ours, other in turns], n=4)
    else:
        starts = sorted(wall("score", str(one), "-o", out)[0] for _ in range(args.starts))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed, for valgrind's run too
    start_instructions = instructions([MAUBINH, "score", str(one), "-o", out])
    pairs = [  # interleaved, a ratio per round: this host's speed drifts from one minute to the next
        (wall("score", "--jsonl", str(rooms), "--jobs", "1", "-o", out)[0],
         wall("score", "--jsonl", str(rooms), "--jobs", "2", "-o", out)[0])
        for _ in range(args.rounds)
    ]  # fmt: skip
    claims = work / "claims.jsonl"
    with open(out) as answers, claims.open("w") as written:
        for room, line in zip(rooms.read_text().splitlines(), answers, strict=True):
            amounts = {p["id"]: p["amount"] for p in json.loads(line)["players"]}
            written.write(json.dumps({**json.loads(room), "claimed": {"amounts": amounts}}) + "\n")
    month = work / "claims-month.jsonl"  # verify's start-up is a tenth of a run over the rooms alone
    month.write_bytes(claims.read_bytes() * args.month)
    verify_pairs, month_pairs = [], []
    for _ in range(args.rounds):
        for given, pairs_of in ((claims, verify_pairs), (month, month_pairs)):
            pairs_of.append((wall("verify", "--jsonl", str(given), "--jobs", "1", "-o", out)[0],
                             wall("verify", "--jsonl", str(given), "--jobs", "2", "-o", out)[0]))  # fmt: skip
    arranged = {
        jobs: [
            wall("arrange", "--jsonl", str(hands), "-o", out, *(("--jobs", "1") if jobs == 1 else ())) for _ in range(5)
        ]
        for jobs in (1, available_cores())
    }
    per_hand = {
        jobs: statistics.median(summary_seconds(err) / 200 * 1000 for _, err in runs) for jobs, runs in arranged.items()
    }
    with_start = {jobs: statistics.median(total for total, _ in runs) for jobs, runs in arranged.items()}

    print(f"maubinh score, one room, process start to exit: median {statistics.median(starts) * 1000:.0f} ms"
          f" (min {starts[0] * 1000:.0f}, max {starts[-1] * 1000:.0f}; {args.starts} runs; goal <= 150 ms);"
          f" {start_instructions / 1e6:.0f} M instructions")  # fmt: skip
    if args.against:
        print(f"  in turns with {args.against}: its median {theirs * 1000:.0f} ms; ours / its, median of"
              f" rounds {ratios[1]:.3f} (quartiles {ratios[0]:.3f}-{ratios[2]:.3f})")  # fmt: skip
    month_rooms = args.rooms * args.month
    for command, timed, count in (("score", pairs, args.rooms), ("verify", verify_pairs, args.rooms),
                                  ("verify", month_pairs, month_rooms)):  # fmt: skip
        jobs1, jobs2 = (statistics.median(p[k] for p in timed) for k in (0, 1))
        speedups = sorted(one / two for one, two in timed)
        print(f"maubinh {command} --jsonl, {count:,} rooms, medians of {args.rounds} rounds: --jobs 1 {jobs1:.1f} s"
              f" ({count / jobs1:,.0f} rooms/s), --jobs 2 {jobs2:.1f} s ({count / jobs2:,.0f} rooms/s):"
              f" {statistics.median(speedups):.2f}x (rounds {speedups[0]:.2f}-{speedups[-1]:.2f}; goal >= 1.7x)")  # fmt: skip
    for jobs in arranged:
        label = "--jobs 1" if jobs == 1 else f"default --jobs ({jobs}, the cores)"
        print(f"maubinh arrange --jsonl, 200 hands, 3 alternatives, {label}: {per_hand[jobs]:.2f} ms per hand"
              f" (median of 5; {with_start[jobs]:.2f} s with process start; goal <= 1.5 ms per hand)")  # fmt: skip


if __name__ == "__main__":
    main()
