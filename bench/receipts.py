"""Receipts by the million (issue 53): `maubinh receipts verify` over a month of signed receipts, whole
process, every check run (the rules applied again), against PyNaCl alone verifying bare Ed25519
signatures on the same host, in the same run.

Figures (medians over rounds; the commands run in turns, start-up included):
- PyNaCl's `crypto_sign_open` on a 64-byte signature over a 330-byte signature base, one core: the floor;
- `receipts verify --format jsonl --jobs 1` receipts/s, and its ratio to the floor (goal >= 0.30x);
- `--jobs 2` against `--jobs 1` (goal >= 1.6x);
- the peak RSS of the largest process on the month and on a month four times as long (memory bounded:
  it must not grow with the input).
Run: .venv/bin/python bench/receipts.py [--receipts N] [--rounds R] [--against OTHER]
(OTHER: another build's source tree, compiled, say a git worktree: its --jobs 1 in the same turns)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).parent))

from explained import launcher
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


def timed(command: list[str]) -> tuple[float, float]:
    """Seconds, and the CPU seconds it and its workers spent (user and system): on a host shared with
    other work, CPU seconds a receipt say what wall time cannot."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def rss(command: list[str]) -> int:
    """The peak RSS (KiB) of ``command``'s largest process, measured alone (/usr/bin/time would do)."""
    done = subprocess.run(
        [sys.executable, "-c", "import resource,subprocess,sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,"
         " stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", *command],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(done.stdout)


def stages(month: Path, keys: Path, count: int = 3000) -> None:
    """Where a receipt's time goes: each stage of the check timed alone over the month's score receipts
    (this process, the compiled modules if built), against the whole check of the same receipts."""
    import json

    from service.rulesets.catalogue import builtin_catalogue
    from service.support.strict_json import loads
    from service.trust.receipt_lines import ReceiptLines
    from service.trust.receipt_reading import read_receipt, read_signed_answer
    from service.trust.rescoring import _ledger, rescorer
    from service.trust.rulings_in_bulk import Rulings
    from service.trust.signing import room_digest

    jwks = json.loads(keys.read_text())
    checker = ReceiptLines(jwks, builtin_catalogue(), "en")
    read = [line for line in month.read_bytes().splitlines()[:count] if b'"path":"/v1/score"' in line]
    lines = [line for line in read if checker(line)[0]["verified"]]  # the genuine ones: every stage runs
    receipts = [json.loads(line) for line in lines]
    requests = [json.loads(r["request"]["body"]) for r in receipts]
    answers = [json.loads(r["response"]["body"]) for r in receipts]
    bodies = [r["response"]["body"].encode() for r in receipts]
    headers = [{name.lower(): value for name, value in r["response"]["headers"].items()} for r in receipts]
    rescore = rescorer(builtin_catalogue())

    def each(label: str, work: Any) -> float:
        start = time.perf_counter()
        for k in range(len(lines)):
            work(k)
        spent = (time.perf_counter() - start) / len(lines) * 1e6
        print(f"  {label:<52}: {spent:6.1f} us")
        return spent

    print(f"a receipt's stages, {len(lines):,} genuine score receipts, one process:")
    start = time.perf_counter()
    for k in range(0, len(lines), 1024):
        checker.many(lines[k : k + 1024])
    together = (time.perf_counter() - start) / len(lines) * 1e6
    print(f"  {'the whole check, rulings together (1,024 at a time)':<52}: {together:6.1f} us")
    rulings = Rulings(builtin_catalogue())
    start = time.perf_counter()
    for k in range(len(lines)):
        rulings.take(requests[k], answers[k])
    taking = (time.perf_counter() - start) / len(lines) * 1e6
    start = time.perf_counter()
    rulings.agreeing()
    arrays = (time.perf_counter() - start) / len(lines) * 1e6
    print(f"  {'  of which the rooms taken (their ledgers read)':<52}: {taking:6.1f} us")
    print(f"  {'  of which the rules applied again, in arrays':<52}: {arrays:6.1f} us")
    whole = each("the whole check, one receipt at a time", lambda k: checker(lines[k]))
    parts = [
        each("read the receipt (its shape, then orjson)", lambda k: read_receipt(lines[k])),
        each("content digest (SHA-256 of the answer)", lambda k: hashlib.sha256(receipts[k]["response"]["body"].encode()).digest()),
        each("signature (base written here, libsodium)", lambda k: checker.keys.verify(
            receipts[k]["response"]["status"], headers[k], b"", jwks, "/v1/score")),
        each("read the request (strict JSON)", lambda k: loads(receipts[k]["request"]["body"])),
        each("the answer's body as bytes (UTF-8)", lambda k: receipts[k]["response"]["body"].encode()),
        each("read the answer (the members checked: msgspec)", lambda k: read_signed_answer(bodies[k])),
        each("room digest (canonical JSON, SHA-256)", lambda k: room_digest(requests[k])),
        each("the rules applied again, room by room", lambda k: rescore("/v1/score", requests[k], answers[k])),
        each("  of which the answer's ledger read for comparison", lambda k: _ledger(answers[k])),
    ]  # fmt: skip
    print(f"  {'the rest (shape, rooms, money, records)':<52}: {whole - sum(parts[:-1]):6.1f} us")
    each("(the line read strictly, as one not compact is)", lambda k: loads(lines[k]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--receipts", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stages", action="store_true", help="where a receipt's time goes, and no more")
    parser.add_argument("--against", metavar="OTHER", help="another build (a source tree): its --jobs 1 too, in turns")
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a source tree without bytecode caches compiles at each start
    work = Path(tempfile.mkdtemp())
    month, keys, _ = write_month(work / "month", args.receipts)
    if args.stages:
        stages(month, keys)
        shutil.rmtree(work, ignore_errors=True)
        return
    lines = len(month.read_bytes().splitlines())
    verify = [MAUBINH, "receipts", "verify", "--keys", str(keys), "--format", "jsonl"]
    floor, one, two, cpu1, cpu2, theirs = [], [], [], [], [], []
    load = os.getloadavg()[0]
    for _ in range(args.rounds):  # in turns, so a change in the host's load falls on each alike
        floor.append(nacl_rate())
        for runs, cpus, jobs in ((one, cpu1, "1"), (two, cpu2, "2")):
            seconds, cpu = timed([*verify, "--jobs", jobs, str(month)])
            runs.append(seconds)
            cpus.append(cpu)
        if args.against:
            theirs.append(timed([*launcher(args.against), *verify[1:], "--jobs", "1", str(month)])[0])
    nacl, s1, s2 = statistics.median(floor), statistics.median(one), statistics.median(two)
    c1, c2 = statistics.median(cpu1), statistics.median(cpu2)
    rate1, rate2 = lines / s1, lines / s2
    small = rss([*verify, "--jobs", "1", str(month)])
    longer = work / "longer.jsonl"
    with longer.open("wb") as out:
        for _ in range(4):
            out.write(month.read_bytes())
    large = rss([*verify, "--jobs", "1", str(longer)])
    print(f"receipts: {lines:,} ({month.stat().st_size / 2**20:.0f} MiB); rounds: {args.rounds}; medians; "
          f"2 cores; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")  # fmt: skip
    print(f"PyNaCl alone, bare Ed25519 verifications : {nacl:>9,.0f} /s")
    print(f"receipts verify --jobs 1                 : {rate1:>9,.0f} receipts/s ({s1:.2f} s): "
          f"{rate1 / nacl:.3f}x PyNaCl (goal >= 0.30x)")  # fmt: skip
    print(f"receipts verify --jobs 2                 : {rate2:>9,.0f} receipts/s ({s2:.2f} s): "
          f"{s1 / s2:.2f}x --jobs 1 (goal >= 1.6x)")  # fmt: skip
    if theirs:
        other = statistics.median(theirs)
        each = [t / o for t, o in zip(theirs, one, strict=True)]
        print(f"{args.against} --jobs 1: {lines / other:>9,.0f} receipts/s ({other:.2f} s): "
              f"{lines / other / nacl:.3f}x PyNaCl; ours {other / s1:.2f}x as fast (rounds {min(each):.2f}-{max(each):.2f})")  # fmt: skip
    print(f"CPU a receipt, start-up included: --jobs 1 {c1 / lines * 1e6:,.0f} us, --jobs 2 {c2 / lines * 1e6:,.0f} us "
          f"(both workers and the parent); --jobs 2 had {c2 / s2:.2f} cores of the 2")  # fmt: skip
    print(f"peak RSS, --jobs 1: {small / 1024:.0f} MiB on {lines:,} receipts, {large / 1024:.0f} MiB on {4 * lines:,} "
          f"({4 * month.stat().st_size / 2**20:.0f} MiB)")  # fmt: skip
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
