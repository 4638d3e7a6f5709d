"""How high the score/healthz throughput ratio can go: one `maubinh serve` with the defaults, its score
route's stages replaced, one more each time, by their results for the posted room worked out in advance.

Each row frees one more stage of ``POST /v1/score`` (the same valid 4-player room that bench/load.py
posts) and keeps the rest as shipped: the settlement (a ``Result`` made once), then building the
answer's tree (the tree made once), then encoding it (its bytes made once), then marshmallow's load
(the JSON parse only). Every server first answers byte for byte what the shipped one does. A round
starts one server per row, in turns, and measures score, healthz, score again at 16 connections
(wrk, closed loop), so that drift on this shared host cancels; figures are medians over the rounds.
A score request's cost is given in healthz requests (healthz rate / score rate), so a row's
difference to the one before is what that stage costs a request, in the same unit.
Run: .venv/bin/python bench/ratio_bound.py [--rounds 3] [--seconds 5]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from load import WRK_REPORT, WRK_SCRIPT, free_port, require, room_body, wait_ready, wrk

GOAL = 0.6
ROWS = {
    "as shipped": "",
    "settlement free": "settle",
    "and the answer's tree free": "tree",
    "and its encoding free": "bytes",
    "and marshmallow's load free": "load",
}
CONFIG = """import json, os
from pathlib import Path

from flask import Response, g

from service.server.gunicorn_config import *  # noqa: F403
import service.api.views as views
from service.documents import score_document
from service.scoring import score
from service.serialize import dumps, result_json
from service.validation import load_room

FREE = os.environ["MAUBINH_BENCH_FREE"]
ROOM = json.loads(Path(os.environ["MAUBINH_BENCH_ROOM"]).read_text())
RESULT = score(load_room(ROOM, None))
TREE = score_document(ROOM, None, "en")
BYTES = dumps(TREE, "en")


def settled_in_advance(raw, catalogue=None, language="en"):
    load_room(raw, catalogue)
    return result_json(RESULT, language)


def tree_in_advance(raw, catalogue=None, language="en"):
    load_room(raw, catalogue)
    return TREE


def parsed_only(raw, catalogue=None, language="en"):
    return TREE


def bytes_in_advance(operation):  # views._answer, its tree's bytes made once (healthz keeps views._ok)
    g.outcome = operation(views._json_body(), views._catalogue(), views.language())
    return Response(BYTES, status=200, content_type="application/json")


if FREE == "settle":
    views.score_document = settled_in_advance
elif FREE == "tree":
    views.score_document = tree_in_advance
elif FREE in ("bytes", "load"):
    views.score_document = tree_in_advance if FREE == "bytes" else parsed_only
    views._answer = bytes_in_advance
"""


class Server:
    def __init__(self, work: Path, free: str, room: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "MAUBINH_LOG_REQUESTS": "off", "MAUBINH_GUNICORN_CONFIG": str(work / "config.py")}
        env |= {"MAUBINH_BENCH_FREE": free, "MAUBINH_BENCH_ROOM": str(room)}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        env.pop("MAUBINH_WORKERS", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=work,
        )  # fmt: skip
        wait_ready(self.base)

    def answer(self, room: Path) -> bytes:
        request = urllib.request.Request(
            self.base + "/v1/score", data=room.read_bytes(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return bytes(response.read())

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    require("wrk")
    work = Path(tempfile.mkdtemp(prefix="maubinh-ratio-"))
    (work / "config.py").write_text(CONFIG)
    room = room_body(work)
    score_lua, health_lua = work / "score.lua", work / "health.lua"
    score_lua.write_text(WRK_SCRIPT.format(body=room) + WRK_REPORT)
    health_lua.write_text(WRK_REPORT)
    figures: dict[str, dict[str, list[float]]] = {row: {"score": [], "healthz": [], "ratio": []} for row in ROWS}
    shipped: bytes | None = None
    for round_ in range(args.rounds):
        for row in list(ROWS)[:: 1 if round_ % 2 == 0 else -1]:
            server = Server(work, ROWS[row], room)
            try:
                answer = server.answer(room)
                shipped = shipped or (answer if row == "as shipped" else None)
                if shipped is not None and answer != shipped:
                    raise SystemExit(f"{row}: the answer differs from the shipped server's")
                wrk(server.base + "/v1/score", score_lua, 1, 16)  # warm up
                before = wrk(server.base + "/v1/score", score_lua, args.seconds, 16)
                healthz = wrk(server.base + "/healthz", health_lua, args.seconds, 16)
                after = wrk(server.base + "/v1/score", score_lua, args.seconds, 16)
            finally:
                server.stop()
            if before["errors"] or healthz["errors"] or after["errors"]:
                raise SystemExit(f"{row}: errors under load")
            score_rps = (before["rps"] + after["rps"]) / 2
            figures[row]["score"].append(score_rps)
            figures[row]["healthz"].append(healthz["rps"])
            figures[row]["ratio"].append(score_rps / healthz["rps"])
            print(f"round {round_ + 1}: {row}: score {score_rps:.0f}/s, healthz {healthz['rps']:.0f}/s", flush=True)
    print(f"score/healthz throughput at 16 connections, medians of {args.rounds} rounds of {args.seconds} s")
    print("| POST /v1/score | score req/s | healthz req/s | ratio | a score request, in healthz requests | what the stage costs |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    cost: dict[str, float] = {}
    previous = None
    for row in ROWS:
        ratio = statistics.median(figures[row]["ratio"])
        cost[row] = 1 / ratio
        stage = "" if previous is None else f"{cost[previous] - cost[row]:.2f}"
        score_rps, health_rps = (statistics.median(figures[row][kind]) for kind in ("score", "healthz"))
        print(f"| {row} | {score_rps:.0f} | {health_rps:.0f} | {ratio:.2f} | {cost[row]:.2f} | {stage} |")
        previous = row
    allowed = 1 / GOAL
    kept = cost["and its encoding free"]
    print(
        f"At {GOAL}, a score request may cost {allowed:.2f} healthz requests. With marshmallow's load and the"
        f" rest of the route alone it costs {kept:.2f}: the settlement, the answer's tree and its encoding may"
        f" take {allowed - kept:.2f} together, against {cost['as shipped'] - kept:.2f} today"
        f" ({(allowed - kept) / (cost['as shipped'] - kept):.0%} of their cost)."
    )


if __name__ == "__main__":
    main()
