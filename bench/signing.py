"""What signing, and feeding the transparency log, cost a scoring server in wall time, side by side in one
run (issues 56 and 54).

Two `maubinh serve` run at once, as a user starts them, and take turns under the same load (each goes
first in every other round), so the host's changing speed falls on both alike; only one is under load at
a time. ``--against signing``: a server that signs its answers (MAUBINH_SIGNING_KEY_FILE) against one that
does not. ``--against log``: two signing servers, one of them feeding every ruling to a `maubinh log serve`
(MAUBINH_LOG_URL, the folder store) started here, against one that does not.
Each round, for each server: POST /v1/score (one four-player room) closed loop under wrk at 16 and at 4
connections, then rate-limited (hey, 8 connections) at half the rate it reached at 16. Figures: medians over
the rounds; the second server's requests/s at 16 as a share of the first's, per round (goal for signing:
at most 10% fewer; for the log: p99 within today's goals, <= 60 ms saturated and <= 15 ms at half rate).
Run: .venv/bin/python bench/signing.py [--against signing|log] [--rounds 7] [--seconds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from load import WRK_REPORT, WRK_SCRIPT, free_port, hey_fixed_rate, require, room_body, wait_ready, wrk

LOADS = ("at16", "at4", "half")


def start(work: Path, name: str, command: list[str], extra: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    metrics = work / f"metrics-{name}"
    metrics.mkdir()
    env = {**os.environ, "MAUBINH_LOG_REQUESTS": "off", "PROMETHEUS_MULTIPROC_DIR": str(metrics), **extra}
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", *command, "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return process, f"http://127.0.0.1:{port}"


def key(work: Path, name: str) -> str:
    path = work / f"{name}.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(path)], check=True, capture_output=True)
    return str(path)


def log_size(base: str) -> dict[str, int]:
    with urllib.request.urlopen(base + "/healthz", timeout=5) as answer:
        found: dict[str, int] = json.loads(answer.read())
        return found


def measure(base: str, script: Path, body: Path, seconds: int) -> dict[str, dict[str, float]]:
    at16 = wrk(base + "/v1/score", script, seconds, 16)
    at4 = wrk(base + "/v1/score", script, seconds, 4)
    half = hey_fixed_rate(base + "/v1/score", body, at16["rps"] / 2, seconds, workers=8)
    return {"at16": at16, "at4": at4, "half": half}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--against", choices=("signing", "log"), default="signing")
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    require("wrk", "hey", "openssl")
    work = Path(tempfile.mkdtemp(prefix="maubinh-signing-"))
    body = room_body(work)
    script = work / "score.lua"
    script.write_text(WRK_SCRIPT.format(body=body) + WRK_REPORT)
    signing = {"MAUBINH_SIGNING_KEY_FILE": key(work, "signing")}
    log: tuple[subprocess.Popen[bytes], str] | None = None
    if args.against == "signing":
        names = ("unsigned", "signed")
        servers = {
            "unsigned": start(work, "unsigned", ["serve"], {}),
            "signed": start(work, "signed", ["serve"], signing),
        }
    else:
        names = ("signed", "signed+log")
        log = start(
            work, "log", ["log", "serve", "--dir", str(work / "log")], {"MAUBINH_LOG_KEY_FILE": key(work, "log")}
        )
        fed = signing | {"MAUBINH_LOG_URL": log[1]}
        servers = {
            "signed": start(work, "signed", ["serve"], signing),
            "signed+log": start(work, "fed", ["serve"], fed),
        }
        time.sleep(1)
        log_size(log[1])  # up: the log has no /readyz
    rounds: list[dict[str, dict[str, dict[str, float]]]] = []
    try:
        for _, base in servers.values():
            wait_ready(base)
        warm = {name: wrk(base + "/v1/score", script, 2, 16)["requests"] for name, (_, base) in servers.items()}
        for k in range(args.rounds):
            order = names if k % 2 else names[::-1]
            rounds.append({name: measure(servers[name][1], script, body, args.seconds) for name in order})
            print(f"round {k + 1}: " + "; ".join(
                f"{name} {rounds[-1][name]['at16']['rps']:.0f} req/s, p99 {rounds[-1][name]['at16']['p99_ms']:.1f} ms "
                f"at 16, {rounds[-1][name]['half']['p99_ms']:.1f} ms at half rate" for name in names), flush=True)  # fmt: skip
        if log:
            time.sleep(3)
            seen = log_size(log[1])
    finally:
        for process, _ in [*servers.values(), *([log] if log else [])]:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    print(f"POST /v1/score, four players: {args.rounds} rounds of {args.seconds} s a load, taking turns; "
          f"{os.cpu_count()} cores shared with the load generators{' and the log' if log else ''}; medians")  # fmt: skip
    for name in names:

        def median(load: str, figure: str) -> float:
            return statistics.median(r[name][load][figure] for r in rounds)  # noqa: B023

        errors = sum(r[name][load]["errors"] for r in rounds for load in LOADS)
        print(f"  {name:<10}: {median('at16', 'rps'):6.0f} req/s, p99 {median('at16', 'p99_ms'):6.2f} ms at 16 "
              f"connections, {median('at4', 'p99_ms'):6.2f} ms at 4; at half rate ({median('half', 'rps'):.0f}/s) "
              f"p50 {median('half', 'p50_ms'):5.2f} ms, p99 {median('half', 'p99_ms'):5.2f} ms; errors {errors:.0f}")  # fmt: skip
    first, second = names
    shares = sorted(r[second]["at16"]["rps"] / r[first]["at16"]["rps"] for r in rounds)
    fewer = 1 - statistics.median(shares)
    goal = " (goal <= 10%)" if args.against == "signing" else ""
    print(f"{second} / {first} requests/s at 16, per round: median {statistics.median(shares):.3f} "
          f"(rounds {shares[0]:.3f}-{shares[-1]:.3f}): {100 * fewer:.1f}% fewer{goal}")  # fmt: skip
    if log:
        answered = warm[second] + sum(r[second][load]["requests"] for r in rounds for load in LOADS)
        print(f"the log, after the run: {seen['sequenced']:.0f} entries sequenced, {seen['size']:.0f} in its checkpoint, "
              f"of {answered:.0f} rulings {second} signed")  # fmt: skip
    print("today's goals: p99 <= 60 ms at 4 and 16 connections with 0 errors; p99 <= 15 ms at half rate")


if __name__ == "__main__":
    main()
