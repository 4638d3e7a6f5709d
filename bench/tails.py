"""Latency tails under load: one `maubinh serve` with the defaults (2 workers, loopback), before and
after the fair-turns, frozen-heap and staggered-recycling hooks (service/server/gunicorn_config.py's
``pre_request``, ``pre_fork`` and ``post_fork``), in one run.

"before" is the same server with those hooks replaced by no-ops and workers recycled every 20,000
requests, as before 2026-12-02 (a config file written here), so the two differ by these alone. Each
round measures both, taking turns going first:
- POST /v1/score (one valid 4-player room), closed loop (wrk) at 4 and 16 connections: p50/p90/p99, errors;
- GET /healthz, closed loop at 16 connections, and the score/healthz throughput ratio at 16;
- POST /v1/score rate-limited (hey, 8 connections) at half the closed-loop rate at 16: p50/p99;
- 50 slow-header clients (bench/hostile.py's) while a probe runs every 0.2 s: probes later than 1 s.
Figures are medians over the rounds (this host's speed drifts); errors are summed.
Run: .venv/bin/python bench/tails.py [--rounds 3] [--seconds 5]
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
from hostile import slow_clients
from load import WRK_REPORT, WRK_SCRIPT, free_port, hey_fixed_rate, require, room_body, wait_ready, wrk

BEFORE_CONFIG = """from service.server.gunicorn_config import *  # noqa: F403

max_requests, max_requests_jitter = 20000, 2000  # before: recycled every 20,000 requests


def pre_request(worker, request):  # before: no fair turns
    pass


def pre_fork(server, worker):  # before: no frozen heap
    pass


def post_fork(server, worker):  # before: workers recycle together
    pass
"""


class Server:
    def __init__(self, work: Path, config: Path | None) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "MAUBINH_LOG_REQUESTS": "off"}
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        env.pop("MAUBINH_WORKERS", None)
        if config is not None:
            env["MAUBINH_GUNICORN_CONFIG"] = str(config)
            env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=work,
        )  # fmt: skip
        wait_ready(self.base)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)


def measure(server: Server, score: Path, health: Path, body: Path, seconds: int) -> dict[str, dict[str, float]]:
    wrk(server.base + "/v1/score", score, 1, 4)  # warm up
    at4 = wrk(server.base + "/v1/score", score, seconds, 4)
    at16 = wrk(server.base + "/v1/score", score, seconds, 16)
    healthz = wrk(server.base + "/healthz", health, seconds, 16)
    half = hey_fixed_rate(server.base + "/v1/score", body, at16["rps"] / 2, seconds, workers=8)
    probes = slow_clients(server.port, 50, 6)
    return {"at4": at4, "at16": at16, "healthz": healthz, "half": half, "slow": {"late": probes.late}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    require("wrk", "hey")
    work = Path(tempfile.mkdtemp(prefix="maubinh-tails-"))
    body = room_body(work)
    score, health = work / "score.lua", work / "health.lua"
    score.write_text(WRK_SCRIPT.format(body=body) + WRK_REPORT)
    health.write_text(WRK_REPORT)
    before = work / "before_config.py"
    before.write_text(BEFORE_CONFIG)
    results: dict[str, list[dict[str, dict[str, float]]]] = {"before": [], "after": []}
    try:
        for k in range(args.rounds):
            for name in ("before", "after") if k % 2 == 0 else ("after", "before"):
                server = Server(work, before if name == "before" else None)
                try:
                    results[name].append(measure(server, score, health, body, args.seconds))
                finally:
                    server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def median(name: str, kind: str, figure: str) -> float:
        return statistics.median(r[kind][figure] for r in results[name])

    def errors(name: str, kind: str) -> int:
        return int(sum(r[kind]["errors"] for r in results[name]))

    print(
        f"maubinh serve, defaults (2 workers), {os.cpu_count()} cores shared with the load; medians of {args.rounds} rounds of {args.seconds} s"
    )
    print("| server | load | p50 | p90 | p99 | req/s | errors |")
    print("|---|---|---|---|---|---|---|")
    for name in ("before", "after"):
        for kind, label in (
            ("at4", "score, 4 connections"),
            ("at16", "score, 16 connections"),
            ("healthz", "healthz, 16 connections"),
        ):
            print(
                f"| {name} | {label} | {median(name, kind, 'p50_ms'):.2f} ms | {median(name, kind, 'p90_ms'):.2f} ms"
                f" | {median(name, kind, 'p99_ms'):.2f} ms | {median(name, kind, 'rps'):.0f} | {errors(name, kind)} |"
            )
        print(
            f"| {name} | score at half rate, 8 connections ({median(name, 'half', 'rps'):.0f}/s) | {median(name, 'half', 'p50_ms'):.2f} ms"
            f" | | {median(name, 'half', 'p99_ms'):.2f} ms | | {errors(name, 'half')} |"
        )
    for name in ("before", "after"):
        ratios = sorted(r["at16"]["rps"] / r["healthz"]["rps"] for r in results[name])
        late = sum(int(r["slow"]["late"]) for r in results[name])
        print(
            f"{name}: score/healthz throughput at 16 connections {statistics.median(ratios):.2f}"
            f" (rounds {ratios[0]:.2f}-{ratios[-1]:.2f}; goal >= 0.6); probes later than 1 s among 50 slow clients: {late}"
        )
    print("goals: p99 <= 60 ms at 4 and 16 connections with 0 errors; p99 <= 15 ms at half rate; healthz p99 <= 60 ms")


if __name__ == "__main__":
    main()
