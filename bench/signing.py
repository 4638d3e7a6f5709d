"""Signing in wall time: POST /v1/score (four players) saturated under wrk on loopback, a server that signs
its answers (MAUBINH_SIGNING_KEY_FILE) against one that does not, side by side in one run (issue 56).

Both servers run at once, each `maubinh serve` as a user starts it, and take turns under the same wrk
load (each goes first in every other round), so the host's changing speed falls on both alike; only one
is under load at a time. Figures: requests/s and p99 of each, medians over the rounds, and the signed
server's requests/s as a share of the unsigned one's, per round (goal: at most 10% fewer).
Run: .venv/bin/python bench/signing.py [--rounds 7] [--seconds 3] [--connections 16]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from load import WRK_REPORT, WRK_SCRIPT, free_port, require, room_body, wait_ready, wrk


def serve(work: Path, name: str, extra: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    metrics = work / f"metrics-{name}"
    metrics.mkdir()
    env = {**os.environ, "MAUBINH_LOG_REQUESTS": "off", "PROMETHEUS_MULTIPROC_DIR": str(metrics), **extra}
    server = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return server, f"http://127.0.0.1:{port}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    require("wrk", "openssl")
    work = Path(tempfile.mkdtemp(prefix="maubinh-signing-"))
    key = work / "signing.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True, capture_output=True)
    script = work / "score.lua"
    script.write_text(WRK_SCRIPT.format(body=room_body(work)) + WRK_REPORT)
    servers = {
        "unsigned": serve(work, "unsigned", {}),
        "signed": serve(work, "signed", {"MAUBINH_SIGNING_KEY_FILE": str(key)}),
    }
    rounds: list[dict[str, dict[str, float]]] = []
    try:
        for _, base in servers.values():
            wait_ready(base)
            wrk(base + "/v1/score", script, 2, args.connections)  # warm up
        for k in range(args.rounds):
            order = ("unsigned", "signed") if k % 2 else ("signed", "unsigned")
            rounds.append(
                {name: wrk(servers[name][1] + "/v1/score", script, args.seconds, args.connections) for name in order}
            )
    finally:
        for server, _ in servers.values():
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    print(f"POST /v1/score, four players, saturated: {args.connections} connections, {args.rounds} rounds of "
          f"{args.seconds} s each way, taking turns; {os.cpu_count()} cores shared with wrk; medians")  # fmt: skip
    for name in ("unsigned", "signed"):
        rps = statistics.median(r[name]["rps"] for r in rounds)
        p99 = statistics.median(r[name]["p99_ms"] for r in rounds)
        errors = sum(r[name]["errors"] for r in rounds)
        print(f"  {name:<9}: {rps:8.0f} req/s  p99 {p99:6.2f} ms  errors {errors:.0f}")
    shares = sorted(r["signed"]["rps"] / r["unsigned"]["rps"] for r in rounds)
    fewer = 1 - statistics.median(shares)
    print(f"signed / unsigned requests/s, per round: median {statistics.median(shares):.3f} "
          f"(rounds {shares[0]:.3f}-{shares[-1]:.3f}): {100 * fewer:.1f}% fewer (goal <= 10%)")  # fmt: skip


if __name__ == "__main__":
    main()
