"""The transparency log's integration rate against the service's scoring rate, on this host, side by side.

Starts `maubinh log serve` (the folder store) and a signing `maubinh serve` that posts every ruling to it
(MAUBINH_LOG_URL), then, round after round (the figures are medians over the rounds, a ratio taken
within a round: this host's speed changes from one minute to the next):

1. the service saturated, closed loop (wrk): `POST /v1/score` of one four-player room, rooms/s; then the
   same in batches of 100 rooms a request. Meanwhile /healthz of the log is polled every 20 ms: the
   delay from an entry's sequencing (acknowledged, durable) to a checkpoint holding it, its p99 and most;
2. the log saturated (wrk): `POST /add` of bundles of 500 statements as the service posts them, then the
   seconds until the checkpoint holds all of them: entries integrated a second, from the first POST to
   that checkpoint.

Everything talks to 127.0.0.1 only and is bounded in time. Needs wrk.
Run: .venv/bin/python bench/log.py [--rounds 3] [--seconds 4] [--connections 16]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from load import BATCH, WRK_REPORT, WRK_SCRIPT, free_port, require, room_body, wait_ready, wrk

from service.transparency.tiles import bundle
from service.trust.ruling_log import statement

MAUBINH = str(Path(sys.executable).with_name("maubinh"))
STATEMENTS_A_POST = 500


def health(base: str) -> dict[str, int]:
    with urllib.request.urlopen(base + "/healthz", timeout=5) as answer:
        found: dict[str, int] = json.loads(answer.read())
        return found


def delays(base: str, stop: threading.Event, out: list[float]) -> None:
    """Seconds from a poll that saw ``sequenced`` reach n to the first poll whose ``size`` reached n."""
    waiting: list[tuple[int, float]] = []
    while not stop.is_set() or waiting:
        now, seen = time.monotonic(), health(base)
        if not waiting or seen["sequenced"] > waiting[-1][0]:
            waiting.append((seen["sequenced"], now))
        while waiting and seen["size"] >= waiting[0][0]:
            out.append(now - waiting.pop(0)[1])
        if stop.is_set() and time.monotonic() > now + 5:
            return
        time.sleep(0.02)


def until_integrated(base: str, seconds: float = 60) -> tuple[int, float]:
    deadline = time.monotonic() + seconds
    while True:
        seen = health(base)
        if seen["size"] >= seen["sequenced"] or time.monotonic() > deadline:
            return seen["size"], time.monotonic()
        time.sleep(0.01)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    require("wrk")
    work = Path(tempfile.mkdtemp(prefix="maubinh-bench-log-"))
    for name in ("log", "signing"):
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(work / f"{name}.pem")], check=True)
    log_port, port = free_port(), free_port()
    log_base, base = f"http://127.0.0.1:{log_port}", f"http://127.0.0.1:{port}"
    env = {**os.environ, "MAUBINH_LOG_KEY_FILE": str(work / "log.pem"), "MAUBINH_LOG_REQUESTS": "off"}
    log = subprocess.Popen([MAUBINH, "log", "serve", "--dir", str(work / "log"), "--port", str(log_port)], env=env)
    env |= {"MAUBINH_SIGNING_KEY_FILE": str(work / "signing.pem"), "MAUBINH_LOG_URL": log_base}
    service = subprocess.Popen([MAUBINH, "serve", "--host", "127.0.0.1", "--port", str(port)], env=env)
    room = room_body(work)
    (work / "batch.json").write_text(json.dumps({"rooms": [json.loads(room.read_text())] * BATCH}))
    statements = [statement(f"bench-{k}", "sha256:" + "0" * 64, "sha-256=:x:", "key", 1796083200 + k, "/v1/score")
                  for k in range(STATEMENTS_A_POST)]  # fmt: skip
    (work / "add.bin").write_bytes(bundle(statements))
    scripts = {}
    for name, body in (("score", room), ("batch", work / "batch.json"), ("add", work / "add.bin")):
        scripts[name] = work / f"{name}.lua"
        scripts[name].write_text(WRK_SCRIPT.format(body=body) + WRK_REPORT)
    rows: dict[str, list[float]] = {k: [] for k in ("score", "batch", "log", "ratio", "ratio_batch", "p99", "most")}
    try:
        wait_ready(base)
        health(log_base)
        wrk(base + "/v1/score", scripts["score"], 2, args.connections)  # warm up
        for n in range(args.rounds):
            seen: list[float] = []
            stop = threading.Event()
            poller = threading.Thread(target=delays, args=(log_base, stop, seen))
            poller.start()
            score = wrk(base + "/v1/score", scripts["score"], args.seconds, args.connections)
            batch = wrk(base + "/v1/score/batch", scripts["batch"], args.seconds, args.connections)
            stop.set()
            poller.join(30)
            until_integrated(log_base)
            before, started = health(log_base)["size"], time.monotonic()
            wrk(log_base + "/add", scripts["add"], args.seconds, args.connections)
            size, integrated = until_integrated(log_base)
            rate = (size - before) / (integrated - started)
            rows["score"].append(score["rps"])
            rows["batch"].append(batch["rps"] * BATCH)
            rows["log"].append(rate)
            rows["ratio"].append(rate / score["rps"])
            rows["ratio_batch"].append(rate / (batch["rps"] * BATCH))
            ordered = sorted(seen) or [0.0]
            rows["p99"].append(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))])
            rows["most"].append(ordered[-1])
            print(f"round {n + 1}: score {score['rps']:.0f} rooms/s (p99 {score['p99_ms']:.1f} ms), batches "
                  f"{batch['rps'] * BATCH:.0f} rooms/s, log {rate:.0f} entries/s integrated; sequenced → "
                  f"checkpoint p99 {rows['p99'][-1]:.2f} s, most {rows['most'][-1]:.2f} s", flush=True)  # fmt: skip
    finally:
        for process in (service, log):
            process.send_signal(signal.SIGTERM)
            process.wait(30)
    median = {k: statistics.median(v) for k, v in rows.items()}
    print(f"medians of {args.rounds} rounds: service {median['score']:.0f} rooms/s single, {median['batch']:.0f} in "
          f"batches of {BATCH}; log {median['log']:.0f} entries/s integrated = {median['ratio']:.1f}× single, "
          f"{median['ratio_batch']:.1f}× batches; sequenced → checkpoint p99 {median['p99']:.2f} s, "
          f"most {median['most']:.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
