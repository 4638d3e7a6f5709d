"""How many one-line mutations of the rules and the validation the fast suite kills.

Each mutation changes one line of a copy of ``service/`` (pure Python: the compiled modules left out,
so that the change is what runs) and runs the fast suite (``pytest -m "not slow" -x``) against it. A
mutation is killed when the suite fails, and survives when it passes: a survivor is a rule no test
pins. (A front equal to its middle is no mutation to test: a three-card hand's strength sits just below
the five-card hand with the lowest kickers, so the two are never equal.) A bench, not a CI gate: it prints each mutation, killed or not, in how long, and the kill rate.
Run: .venv/bin/python bench/mutations.py [--only N]        (about 2 minutes a survivor, less a kill)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]


class Mutation(NamedTuple):
    path: str
    before: str
    after: str
    rule: str


MUTATIONS = (
    Mutation("service/validation/fields.py", "MOST_CARDS = 13", "MOST_CARDS = 14",
             "a card list is refused on its length past 13"),
    Mutation("service/scoring/evaluation.py", 'if hands["middle"].strength > hands["back"].strength:',
             'if hands["middle"].strength >= hands["back"].strength:', "§2.3: equal hands are legal"),
    Mutation("service/scoring/evaluation.py", 'if hands["front"].strength > hands["middle"].strength:',
             'if hands["front"].strength > hands["back"].strength:', "§2.3: front above middle fouls"),
    Mutation("service/scoring/pairs.py", "winner = None if strength_a == strength_b else i if strength_a > strength_b else j",
             "winner = None if strength_a == strength_b else j if strength_a > strength_b else i",
             "§5: the stronger chi wins"),
    Mutation("service/scoring/pairs.py", "winner = None if strength_a == strength_b else",
             "winner = i if strength_a == strength_b else", "§5: a tied chi pays nothing"),
    Mutation("service/scoring/pairs.py", 'return (table[key] + 1 if ruleset.bonus_mode == "add" else table[key]), key',
             "return table[key], key", "§7: bonuses add to the chi's unit in add mode"),
    Mutation("service/scoring/pairs.py", "            winner: int | None = j if a.fouled else i",
             "            winner: int | None = i if a.fouled else j", "§8: a fouled player loses every chi"),
    Mutation("service/scoring/scoops.py", "return ScoopPayment(basis * (m * s - 1), basis, m, s,",
             "return ScoopPayment(basis * (m * s), basis, m, s,", "§6: a scoop pays basis × (m − 1) more"),
    Mutation("service/scoring/scoops.py", "        s, sweep_rule = ruleset.sweep_multiplier(room_size)\n        if s > 1:",
             "        s, sweep_rule = ruleset.sweep_multiplier(room_size)\n        s = 1\n        if s > 1:",
             "§11.1: a sweeper's scoops are multiplied"),
    Mutation("service/scoring/scoops.py", "return ledger_line(room, \"scoop\", other, sweeper, paid * (s - 1),",
             "return ledger_line(room, \"scoop\", other, sweeper, paid * s,", "§12.1: sweep_pays total pays T × (s − 1)"),
    Mutation("service/scoring/aces.py", "    owed = [(p.aces - 1) * u for p in room.players]",
             "    owed = [p.aces * u for p in room.players]", "§12.1: each balance is (aces − 1) × u"),
    Mutation("service/validation/bounds.py", "MOST_MEMBERS = 32", "MOST_MEMBERS = 33",
             "an object past 32 members is refused on its size"),
    Mutation("service/api/quotas.py", "used <= quota", "used < quota",
             "a caller gets exactly its rooms_per_minute, the last one included"),
    Mutation("service/bulk/engine.py", "claimed = [amounts[who] for who in room.ids]",
             "claimed = [amounts[who] for who in sorted(room.ids)]",
             "the bulk engine reads a claim's amounts seat by seat"),
)  # fmt: skip


def mutated_tree(work: Path, mutation: Mutation) -> Path:
    """A pure-Python copy of service/ with ``mutation`` applied (which must match exactly once)."""
    tree = work / "tree"
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(ROOT / "service", tree / "service", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    if mutation.before:
        target = tree / mutation.path
        text = target.read_text("utf-8")
        assert text.count(mutation.before) == 1, f"{mutation.path}: {mutation.before!r} is not there exactly once"
        target.write_text(text.replace(mutation.before, mutation.after), "utf-8")
    return tree


def run_suite(tree: Path) -> tuple[bool, float]:
    """The fast suite against ``tree``: (killed, seconds)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "MAUBINH_PURE_PYTHON": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "not slow", "-x", "-q", "-p", "no:cacheprovider",
         str(ROOT / "tests" / "api"), str(ROOT / "tests" / "unit")],
        cwd=tree, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done.returncode != 0, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=int, help="run only the mutation of this number")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="maubinh-mutations-"))
    probe = mutated_tree(work, Mutation("service/__init__.py", "", "", "none"))  # the tree as it is
    unmutated, seconds = run_suite(probe)
    assert not unmutated, "the fast suite fails on the unmutated pure-Python tree: fix that first"
    print(f"the unmutated tree passes the fast suite in {seconds:.0f} s")
    print("| # | where | rule | killed | seconds |")
    print("|---|---|---|---|---|")
    killed = ran = 0
    for number, mutation in enumerate(MUTATIONS, 1):
        if args.only is not None and number != args.only:
            continue
        was_killed, seconds = run_suite(mutated_tree(work, mutation))
        ran += 1
        killed += was_killed
        print(f"| {number} | {mutation.path} | {mutation.rule} | {'yes' if was_killed else '**no**'} | {seconds:.0f} |",
              flush=True)  # fmt: skip
    print(f"killed {killed} of {ran} ({killed / ran:.0%})")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
