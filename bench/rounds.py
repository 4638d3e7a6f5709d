"""What rounds scored once cost (MAUBINH_ROUNDS_REDIS_URL): bytes a round in Redis, time a request.

    .venv/bin/python bench/rounds.py [--rounds 100000] [--requests 2000]

Starts redis-server (no disk) on a free port, then prints (1) `MEMORY USAGE` of one scored round's key,
for round ids of 8, 36 (a UUID) and 128 characters, and the memory Redis holds for `--rounds` scored rounds
(`INFO memory`'s used_memory before and after, over the count: the key, its value, its expiry and the
tables' share); (2) in process, the median time of `POST /v1/score` of one room with a round id, and of a
batch of 100 rooms, rounds off and on (one app each, requests alternating, each room new), and the
difference. docs/receipts.md (Rounds scored once) quotes the figures.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from helpers import golden_cases
from load import free_port

from service.api import create_app
from service.api.round_store import SCORED, digest_bytes, round_key
from service.trust.signing import room_digest

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
RETENTION = 7 * 86_400


def redis(port: int) -> Any:
    from redis import Redis

    return Redis(port=port)


def memory(port: int, rounds: int) -> None:
    client = redis(port)
    digest = digest_bytes(room_digest(E1))
    for chars in (8, 36, 128):
        key = round_key("club-alpha", "r" * chars)
        client.set(key, SCORED + digest, ex=RETENTION)
        print(f"MEMORY USAGE, a round id of {chars:3} characters: {client.memory_usage(key, samples=0)} bytes")
    client.flushall()
    before = client.info("memory")["used_memory"]
    pipe = client.pipeline(transaction=False)
    for n in range(rounds):
        pipe.set(round_key("club-alpha", f"{n:08x}-0000-4000-8000-000000000000"), SCORED + digest, ex=RETENTION)
        if n % 10_000 == 9_999:
            pipe.execute()
    pipe.execute()
    after = client.info("memory")["used_memory"]
    print(f"{rounds:,} rounds of 36-character ids: {(after - before) / rounds:.0f} bytes a round in used_memory")
    client.flushall()


def timed(client: Any, path: str, body: Any) -> float:
    began = time.perf_counter()
    answer = client.post(path, json=body)
    took = time.perf_counter() - began
    assert answer.status_code == 200, answer.get_json()
    return took


def latency(port: int, requests: int) -> None:
    apps = {
        "off": create_app({"log_requests": False}).test_client(),
        "on": create_app({"log_requests": False, "rounds_redis_url": f"redis://127.0.0.1:{port}/0"}).test_client(),
    }
    for what, path, rooms, count in (
        ("one room", "/v1/score", 1, requests),
        ("batch of 100", "/v1/score/batch", 100, 40),
    ):
        took: dict[str, list[float]] = {"off": [], "on": []}
        for n in range(count + 5):
            for name, client in apps.items():
                body = [{**E1, "round_id": f"{name}-{path}-{n}-{k}"} for k in range(rooms)]
                seconds = timed(client, path, body[0] if rooms == 1 else {"rooms": body})
                if n >= 5:  # warmed up
                    took[name].append(seconds)
        off, on = (statistics.median(took[name]) * 1000 for name in ("off", "on"))
        print(f"{what}: median {off:.3f} ms off, {on:.3f} ms on, +{on - off:.3f} ms ({(on - off) / off:+.1%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=2000)
    arguments = parser.parse_args()
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("no redis-server: apt-get install redis-server")
    port = free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        print(f"redis-server {redis(port).info('server')['redis_version']}, retention {RETENTION // 86_400} days")
        memory(port, arguments.rounds)
        latency(port, arguments.requests)
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
