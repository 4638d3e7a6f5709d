"""The explained path, whole process, against another build of maubinh (issue 56), in turns.

Issue 56 measured a plain reference implementation of the rules at 295 rooms/s beside `maubinh score`
at 3,792 rooms/s (12.9x), on its day's main. The reference is not in this repository, so ours is
measured against that main (OTHER: a build of it, say a git worktree of 3c564dc, compiled) in turns, and
the multiple of the reference follows: 12.9 x OTHER's time / ours (``--their-multiple``).

Figures, each the median over rounds of ours and OTHER's taking turns (this host's speed drifts by 2x
in a day; a ratio within one round does not):
1. `maubinh score --jsonl` over 1,151 of bench/rooms.py's four-player rooms, the default --jobs (the
   cores): the issue's own measure, start-up included;
2. the same over --rooms (many) rooms, the default --jobs, and with --jobs 1 (one core against one core);
3. with --instructions, what a room costs each build in instructions (valgrind, 600 rooms less 100, so
   start-up cancels), --jobs 1: the figure noise does not move.
Over many rooms, the multiple is read two ways: with the reference speeding up as OTHER does when its
start-up is shared by more rooms (the first figure, the stricter), and with the reference's time growing
in proportion to its rooms, as a plain implementation's does whose start-up is a small part of its 3.9 s
over the issue's rooms (the second).
OTHER is a `maubinh` executable, or a source tree whose modules are built in place, run with this
venv's Python; the issue's day, say:
    git worktree add /tmp/issue-day 3c564dc && (cd /tmp/issue-day && $PWD/.venv/bin/python setup.py build_ext --inplace)
Both run with bytecode caches, as installed (PYTHONDONTWRITEBYTECODE is dropped: a source tree without
them would compile its modules at every start, and the ratio would flatter ours).
Run: .venv/bin/python bench/explained.py --against OTHER [--rooms 20000] [--rounds 7] [--instructions]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from instructions import instructions
from rooms import four_player_rooms

MAUBINH = str(Path(sys.executable).with_name("maubinh"))
ISSUE_ROOMS = 1151


LAUNCH = "import sys; sys.path.insert(0, sys.argv.pop(1)); from service.entry_point import main; sys.exit(main())"
"""A source tree's maubinh, as its console script would start it."""


def launcher(other: str) -> list[str]:
    return [sys.executable, "-c", LAUNCH, other] if Path(other).is_dir() else [other]


def whole(maubinh: list[str], rooms: Path, *jobs: str) -> float:
    """Seconds from process start to exit."""
    started = time.perf_counter()
    subprocess.run(
        [*maubinh, "score", "--jsonl", *jobs, "-o", "/dev/null", str(rooms)], check=True, capture_output=True
    )
    return time.perf_counter() - started


def main() -> None:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the commands below, and valgrind's, inherit it
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", metavar="OTHER", required=True, help="the other build's maubinh")
    parser.add_argument("--rooms", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--their-multiple", type=float, default=12.9, help="OTHER's multiple of the reference")
    parser.add_argument("--instructions", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="maubinh-explained-"))
    files = {}
    for count in (ISSUE_ROOMS, args.rooms, 100, 600):
        files[count] = work / f"rooms-{count}.jsonl"
        files[count].write_text("".join(json.dumps(r) + "\n" for r in four_player_rooms(count, seed=5)))
    ours, other = [MAUBINH], launcher(args.against)
    for maubinh in (ours, other):  # both builds score the rooms
        subprocess.run([*maubinh, "score", "--jsonl", "--jobs", "1", str(files[100])], check=True, capture_output=True)
    cases = [
        (f"{ISSUE_ROOMS:,} rooms, default --jobs (the issue's measure)", files[ISSUE_ROOMS], ()),
        (f"{args.rooms:,} rooms, default --jobs", files[args.rooms], ()),
        (f"{args.rooms:,} rooms, --jobs 1", files[args.rooms], ("--jobs", "1")),
    ]
    print(f"maubinh score --jsonl, whole process, ours against {args.against} in turns, {args.rounds} rounds, medians:")
    for label, rooms, jobs in cases:
        whole(ours, rooms, *jobs), whole(other, rooms, *jobs)  # warm the file and bytecode caches
        turns = []
        for k in range(args.rounds):  # each goes first in every other round
            if k % 2:
                theirs_first = whole(other, rooms, *jobs)
                turns.append((whole(ours, rooms, *jobs), theirs_first))
            else:
                ours_first = whole(ours, rooms, *jobs)
                turns.append((ours_first, whole(other, rooms, *jobs)))
        mine, theirs = (statistics.median(t[k] for t in turns) for k in (0, 1))
        ratios = sorted(other / mine for mine, other in turns)
        ratio = statistics.median(ratios)
        count = len(rooms.read_bytes().splitlines())
        print(
            f"  {label}: ours {mine:.2f} s ({count / mine:,.0f} rooms/s), its {theirs:.2f} s;"
            f" its time / ours {ratio:.3f} (rounds {ratios[0]:.3f}-{ratios[-1]:.3f}):"
            f" {args.their_multiple * ratio:.1f}x the reference (goal >= 20x)"
        )
        if count == ISSUE_ROOMS:
            reference_a_room = args.their_multiple * theirs / ISSUE_ROOMS
        else:  # the reading above has the reference speed up with more rooms as OTHER does (its start-up shared)
            print(
                f"    against a reference whose time grows with its rooms ({args.their_multiple} x OTHER's time"
                f" over {ISSUE_ROOMS:,} rooms, per room): {reference_a_room * count / mine:.1f}x"
            )
    if args.instructions:
        counts = {}
        for name, maubinh in (("ours", ours), ("its", other)):
            small, large = (
                instructions([*maubinh, "score", "--jsonl", "--jobs", "1", "-o", "/dev/null", str(files[n])])
                for n in (100, 600)
            )
            counts[name] = (large - small) / 500
        print(
            f"  instructions a room, --jobs 1 (600 rooms less 100): ours {counts['ours'] / 1e6:.2f} M,"
            f" its {counts['its'] / 1e6:.2f} M: its / ours {counts['its'] / counts['ours']:.3f}"
        )


if __name__ == "__main__":
    main()
