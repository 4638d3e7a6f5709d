"""Load on loopback: POST /v1/score (four players) against GET /healthz, same server, same run.

Starts `maubinh serve` on a free port, then:
1. saturation, closed loop (wrk, fixed duration): requests/s, p50, p99, errors — healthz, then score;
2. score at half its saturating rate, open loop (hey -q): p50 and p99, errors;
3. POST /v1/score/batch with 100 rooms a request, saturated: rooms/s against single-room calls.
Everything is bounded in time and talks to 127.0.0.1 only. Needs wrk and hey (Debian packages).
The four run in turn, round after round, and the figures are medians over the rounds: this host's
speed changes from one minute to the next, so a ratio is taken within a round. healthz and score
take turns going first, and an unmeasured second of healthz follows each batch phase (measured
right after one, healthz ran at a third of its rate for a second, which flattered score/healthz).
Run: .venv/bin/python bench/load.py [--rounds 5] [--seconds 3] [--connections 16]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from rooms import four_player_rooms

WRK_SCRIPT = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = io.open("{body}"):read("*a")
"""
WRK_REPORT = """
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
               + summary.errors.status + summary.errors.timeout
  io.write(string.format("JSON {\\"requests\\": %d, \\"seconds\\": %f, \\"errors\\": %d, \\"p50_ms\\": %f, \\"p90_ms\\": %f, \\"p99_ms\\": %f}\\n",
    summary.requests, summary.duration / 1e6, errors, latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000))
end
"""


BATCH = 100
"""Rooms per batch request."""


def require(*tools: str) -> None:
    for tool in tools:
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is needed: apt-get install {tool}")


def room_body(work: Path) -> Path:
    """The one valid four-player room the load benches post."""
    body = work / "room.json"
    body.write_text(json.dumps(four_player_rooms(1, seed=7, rulesets=("maubinh-chi-at",))[0]))
    return body


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(base: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/readyz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("server did not become ready")


def wrk(url: str, script: Path, seconds: int, connections: int) -> dict[str, float]:
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), url],
        capture_output=True,
        text=True,
        timeout=seconds + 30,
        check=True,
    ).stdout
    line = next(line for line in out.splitlines() if line.startswith("JSON "))
    figures: dict[str, float] = json.loads(line[5:])
    figures["rps"] = figures["requests"] / figures["seconds"]
    return figures


def hey_fixed_rate(url: str, body: Path, rate: float, seconds: int, workers: int = 4) -> dict[str, float]:
    """``workers`` hey workers, each closed-loop, its ticker started with the others' (so they arrive together)."""
    per_worker = max(1, round(rate / workers))
    total = int(per_worker * workers * seconds)
    out = subprocess.run(
        [
            "hey",
            "-n",
            str(total),
            "-c",
            str(workers),
            "-q",
            str(per_worker),
            "-m",
            "POST",
            "-T",
            "application/json",
            "-D",
            str(body),
            "-t",
            "10",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=seconds * 3 + 30,
        check=True,
    ).stdout
    p50 = float(re.search(r"50%+ in ([\d.]+) secs", out).group(1)) * 1000  # type: ignore[union-attr]
    p99 = float(re.search(r"99%+ in ([\d.]+) secs", out).group(1)) * 1000  # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    ok = sum(int(n) for n in re.findall(r"\[200\]\s+(\d+) responses", out))
    return {"rps": rps, "p50_ms": p50, "p99_ms": p99, "errors": total - ok, "requests": total}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=3, help="per measurement, in each round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    require("wrk", "hey")
    work = Path(tempfile.mkdtemp(prefix="maubinh-load-"))
    body = room_body(work)
    batch_body = work / "batch.json"
    batch_body.write_text(json.dumps({"rooms": four_player_rooms(BATCH, seed=7)}))
    score_lua, get_lua, batch_lua = work / "score.lua", work / "get.lua", work / "batch.lua"
    score_lua.write_text(WRK_SCRIPT.format(body=body) + WRK_REPORT)
    batch_lua.write_text(WRK_SCRIPT.format(body=batch_body) + WRK_REPORT)
    get_lua.write_text(WRK_REPORT)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "MAUBINH_LOG_REQUESTS": "off", "PROMETHEUS_MULTIPROC_DIR": str(work / "metrics")}
    server = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rounds: list[dict[str, dict[str, float]]] = []
    try:
        wait_ready(base)
        wrk(base + "/healthz", get_lua, 2, args.connections)  # warm up
        wrk(base + "/v1/score", score_lua, 2, args.connections)
        for k in range(args.rounds):  # interleaved, so that each round's figures share the host's mood
            # the first second after a batch phase runs at about a third of the rate: not measured
            wrk(base + "/healthz", get_lua, 1, args.connections)
            if k % 2:  # each of the pair goes first in every other round
                score = wrk(base + "/v1/score", score_lua, args.seconds, args.connections)
                health = wrk(base + "/healthz", get_lua, args.seconds, args.connections)
            else:
                health = wrk(base + "/healthz", get_lua, args.seconds, args.connections)
                score = wrk(base + "/v1/score", score_lua, args.seconds, args.connections)
            half = hey_fixed_rate(base + "/v1/score", body, score["rps"] / 2, args.seconds)
            batch = wrk(base + "/v1/score/batch", batch_lua, args.seconds, 4)
            rounds.append({"health": health, "score": score, "half": half, "batch": batch})
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)

    def median(kind: str, figure: str) -> float:
        return statistics.median(r[kind][figure] for r in rounds)

    def ratios(of: Callable[[dict[str, dict[str, float]]], float]) -> str:
        values = sorted(of(r) for r in rounds)
        return f"{statistics.median(values):.2f}x (rounds {values[0]:.2f}-{values[-1]:.2f})"

    print(
        f"server: maubinh serve, {os.cpu_count()} cores shared with the load generator; {args.connections} connections;"
        f" {args.rounds} interleaved rounds of {args.seconds} s each; medians"
    )
    for kind, label in (("health", "GET  /healthz  saturated "), ("score", "POST /v1/score saturated ")):
        print(
            f"{label}: {median(kind, 'rps'):8.0f} req/s  p50 {median(kind, 'p50_ms'):6.2f} ms"
            f"  p99 {median(kind, 'p99_ms'):6.2f} ms  errors {sum(r[kind]['errors'] for r in rounds):.0f}"
        )
    print(
        f"score / healthz throughput, per round: {ratios(lambda r: r['score']['rps'] / r['health']['rps'])} (goal >= 0.6)"
    )
    print(
        f"POST /v1/score at half its round's rate ({median('half', 'rps'):.0f} req/s): p50 {median('half', 'p50_ms'):6.2f} ms"
        f"  p99 {median('half', 'p99_ms'):6.2f} ms (worst round {max(r['half']['p99_ms'] for r in rounds):.2f})"
        f"  errors {sum(r['half']['errors'] for r in rounds):.0f} of {sum(r['half']['requests'] for r in rounds):.0f}"
        " (goal p99 <= 15 ms, 0 errors)"
    )
    print(
        f"POST /v1/score/batch ({BATCH} rooms): {median('batch', 'rps') * BATCH:8.0f} rooms/s  p99 {median('batch', 'p99_ms'):6.1f} ms"
        f"  errors {sum(r['batch']['errors'] for r in rounds):.0f}; rooms/s against single calls, per round:"
        f" {ratios(lambda r: r['batch']['rps'] * BATCH / r['score']['rps'])} (goal >= 3)"
    )


if __name__ == "__main__":
    main()
