"""Receipts by the million (issue 53): `maubinh receipts verify` over a month of signed receipts, whole
process, every check run (the rules applied again), against PyNaCl alone verifying bare Ed25519
signatures on the same host, in the same run.

Figures (medians over rounds; the commands run in turns, start-up included):
- PyNaCl's `crypto_sign_open` on a 64-byte signature over a 330-byte signature base, one core: the floor;
- `receipts verify --format jsonl --jobs 1` receipts/s, and its ratio to the floor (goal >= 0.30x);
- `--jobs 2` against `--jobs 1` (goal >= 1.6x);
- the peak RSS of the largest process on the month and on a month four times as long (memory bounded:
  it must not grow with the input).
Run: .venv/bin/python bench/receipts.py [--receipts N] [--rounds R]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from receipt_month import write_month

MAUBINH = str(Path(sys.executable).with_name("maubinh"))


def nacl_rate(count: int = 20_000) -> float:
    """Bare Ed25519 verifications a second, one core, with PyNaCl (libsodium)."""
    from nacl.bindings import crypto_sign, crypto_sign_open, crypto_sign_seed_keypair

    public, secret = crypto_sign_seed_keypair(b"k" * 32)
    messages = [crypto_sign(b"x" * 300 + str(k).encode(), secret) for k in range(1000)]
    start = time.perf_counter()
    for k in range(count):
        crypto_sign_open(messages[k % 1000], public)
    return count / (time.perf_counter() - start)


def timed(command: list[str]) -> tuple[float, int]:
    """Seconds, and the peak RSS (KiB) of the largest process it ran (itself or a worker)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    return seconds, max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def rss(command: list[str]) -> int:
    """The peak RSS (KiB) of ``command``'s largest process, measured alone (/usr/bin/time would do)."""
    done = subprocess.run(
        [sys.executable, "-c", "import resource,subprocess,sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,"
         " stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", *command],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--receipts", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp())
    month, keys, _ = write_month(work / "month", args.receipts)
    lines = len(month.read_bytes().splitlines())
    verify = [MAUBINH, "receipts", "verify", "--keys", str(keys), "--format", "jsonl"]
    floor, one, two = [], [], []
    for _ in range(args.rounds):  # in turns, so a change in the host's load falls on each alike
        floor.append(nacl_rate())
        one.append(timed([*verify, "--jobs", "1", str(month)])[0])
        two.append(timed([*verify, "--jobs", "2", str(month)])[0])
    nacl, s1, s2 = statistics.median(floor), statistics.median(one), statistics.median(two)
    rate1, rate2 = lines / s1, lines / s2
    small = rss([*verify, "--jobs", "1", str(month)])
    longer = work / "longer.jsonl"
    with longer.open("wb") as out:
        for _ in range(4):
            out.write(month.read_bytes())
    large = rss([*verify, "--jobs", "1", str(longer)])
    print(f"receipts: {lines:,} ({month.stat().st_size / 2**20:.0f} MiB); rounds: {args.rounds}; medians; 2 cores")
    print(f"PyNaCl alone, bare Ed25519 verifications : {nacl:>9,.0f} /s")
    print(f"receipts verify --jobs 1                 : {rate1:>9,.0f} receipts/s ({s1:.2f} s): "
          f"{rate1 / nacl:.3f}x PyNaCl (goal >= 0.30x)")  # fmt: skip
    print(f"receipts verify --jobs 2                 : {rate2:>9,.0f} receipts/s ({s2:.2f} s): "
          f"{s1 / s2:.2f}x --jobs 1 (goal >= 1.6x)")  # fmt: skip
    print(f"peak RSS, --jobs 1: {small / 1024:.0f} MiB on {lines:,} receipts, {large / 1024:.0f} MiB on {4 * lines:,} "
          f"({4 * month.stat().st_size / 2**20:.0f} MiB)")  # fmt: skip
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
