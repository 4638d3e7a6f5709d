"""What hostile requests cost a real `maubinh serve`: each worker's peak memory, CPU, health probes.

    .venv/bin/python bench/hostile.py [--rounds 3]

Starts `maubinh serve` (2 workers) on a free loopback port and sends each hostile request of the
hostile-input issue in turn, several rounds; prints, per scenario, the answer, the largest rise of
one worker's peak RSS (VmHWM, reset before each request through /proc/PID/clear_refs, so root or
the server's own user), the workers' CPU seconds (median of the rounds) and, for the parallel and
slow-client scenarios, the health probes later than 1 s. The goals: ≤ 50 MB and ≤ 1 s of CPU per
request, no late probe. tests/system/test_hostile.py asserts the same scenarios with this kit.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from load import free_port, wait_ready
from rooms import four_player_rooms

from service.rulesets.catalogue import builtin_catalogue

MB = 1024 * 1024
GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden" / "public.jsonl"
E1 = next(case["request"] for case in map(json.loads, GOLDEN.open()) if case["name"] == "worked-example/E1")
"""docs/rules.md §10 E1: P pays Q 9,000 in all."""
FOUR = four_player_rooms(1, seed=7, rulesets=("maubinh-2020",))[0]


@dataclass(frozen=True)
class Served:
    """A running `maubinh serve`: its master's pid, its workers' pids and its port."""

    master: int
    workers: tuple[int, ...]
    port: int


def workers_of(master: int) -> tuple[int, ...]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == master:
                    found.append(int(entry.name))
    return tuple(sorted(found))


def _status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise ValueError(key)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Cost:
    peak_rise_mb: float
    """The largest rise of one worker's peak RSS."""
    cpu_seconds: float
    """All workers' CPU."""


def costing(served: Served, scenario: Callable[[], Any]) -> tuple[Any, Cost]:
    """Run ``scenario``; what it cost the workers."""
    assert workers_of(served.master) == served.workers, "a worker was replaced"
    for pid in served.workers:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
    before = {pid: _status_kib(pid, "VmHWM") for pid in served.workers}
    cpu = sum(_cpu_seconds(pid) for pid in served.workers)
    outcome = scenario()
    time.sleep(0.2)  # a worker may still be freeing what the answer held
    rise = max(_status_kib(pid, "VmHWM") - before[pid] for pid in served.workers) / 1024
    return outcome, Cost(round(rise, 1), round(sum(_cpu_seconds(pid) for pid in served.workers) - cpu, 2))


def post(
    port: int, path: str, body: bytes | Iterator[bytes], timeout: float = 30, key: str | None = None
) -> tuple[int, bytes]:
    """One POST on a kept-alive connection (an iterator of bytes is sent chunked): the server drains
    what it did not read, where closing with unread bytes could reset the connection under the answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        chunked = not isinstance(body, bytes)
        headers = {"Content-Type": "application/json", **({"Transfer-Encoding": "chunked"} if chunked else {})}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        connection.request("POST", path, body=body, headers=headers, encode_chunked=chunked)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


class Probes:
    """GET /healthz every 0.2 s on a new connection, as a kubelet does, each with a 1 s deadline."""

    def __init__(self, port: int) -> None:
        self.port, self.latencies, self._stop = port, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    ok = sock.recv(64).startswith(b"HTTP/1.1 200")
                self.latencies.append(time.monotonic() - started if ok else float("inf"))
            except OSError:
                self.latencies.append(float("inf"))
            self._stop.wait(max(0.0, 0.2 - (time.monotonic() - started)))

    def __enter__(self) -> Probes:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(5)

    @property
    def late(self) -> int:
        return sum(1 for latency in self.latencies if latency > 1.0)


def variant(patch: dict[str, Any], request: dict[str, Any] = E1) -> dict[str, Any]:
    return {**request, "ruleset": {"base": "maubinh-2020", "patch": patch}}


def batch(rooms: list[dict[str, Any]]) -> bytes:
    return json.dumps({"rooms": rooms}).encode()


def filled(prefix: bytes, unit: bytes, suffix: bytes, size: int = 4 * MB) -> bytes:
    return prefix + unit * ((size - len(prefix) - len(suffix)) // len(unit)) + suffix


def refused_patch(k: int) -> dict[str, Any]:
    """A new patch (its title) with 16 bad values and more: 12 rows of 3, 3 bonus rows of 3."""
    return {
        "title": f"t{k}",
        "instant_wins": {"table": [{"pattern": "nope", "units": 5000, "strength": 0}] * 12},
        "bonuses": {p: {"pair": 0, "flush": 0, "straight": 0} for p in ("back", "middle", "front")},
    }


def whole_patch(k: int) -> dict[str, Any]:
    """A new patch (its title) that restates every table one unit higher: the dearest valid patch."""
    base = dict(builtin_catalogue().get("maubinh-2020").data)  # type: ignore[union-attr]
    return {
        "title": f"t{k}",
        "instant_wins": {"table": [{**row, "units": row["units"] + 1} for row in base["instant_wins"]["table"]]},
        "bonuses": {
            p: {kind: units + 1 for kind, units in base["bonuses"][p].items()} for p in ("back", "middle", "front")
        },
        "labels": {"back": "a", "middle": "b", "front": "c"},
        "scoop": {"multiplier": 2},
    }


REFUSED_PATCHES = [
    json.dumps(variant({"title": f"t{k}", **{f"k{j}": 1 for j in range(5000)}})).encode() for k in range(60)
]
"""60 bodies of ~60 KB: a patch of 5,000 unknown keys, a new title each (before: 109 → 544 MB)."""
HOSTILE_BATCHES: dict[str, tuple[Callable[[], bytes], int]] = {
    "a 70,000-row instant-win table": (
        lambda: batch(
            [variant({"instant_wins": {"table": [{"pattern": "dragon", "units": 5000, "strength": 1}] * 70_000}})]
        ),
        413,
    ),
    "4 MiB of empty objects": (lambda: filled(b'{"rooms": [{"round_id": [', b"{},", b"{}]}]}"), 413),
    "one 4 MiB string with an emoji": (
        lambda: filled(b'{"rooms": [{"round_id": "', b"a", "😀".encode() + b'"}]}'),
        200,
    ),
    "500 rooms, each a new refused patch": (lambda: batch([variant(refused_patch(k), FOUR) for k in range(500)]), 200),
    "500 rooms, each a new house rule": (
        lambda: batch([variant({"title": f"t{k}", "scoop": {"multiplier": 2}}, FOUR) for k in range(500)]),
        200,
    ),
    "500 rooms, each a new whole ruleset": (lambda: batch([variant(whole_patch(k), FOUR) for k in range(500)]), 200),
}
"""Batch bodies of at most 4 MiB and the status each gets (before: 420 MB, 39 s and 860 MB)."""


def slow_clients(port: int, clients: int, seconds: float, body: bool = False) -> Probes:
    """``clients`` connections that send one header line (or, with ``body``, all their headers and
    then one byte of body) every 2 s, while the health probes run."""
    head = b"POST /v1/score HTTP/1.1\r\nHost: x\r\n"
    if body:
        head += b"Content-Type: application/json\r\nContent-Length: 65536\r\n\r\n"
    sockets = [socket.create_connection(("127.0.0.1", port), timeout=1) for _ in range(clients)]
    try:
        for sock in sockets:
            sock.sendall(head)
        with Probes(port) as probes:
            for _ in range(int(seconds // 2)):
                time.sleep(2)
                for sock in sockets:
                    with contextlib.suppress(OSError):  # dropped: a header or body past its time
                        sock.sendall(b" " if body else b"X-Slow: 1\r\n")
    finally:
        for sock in sockets:
            sock.close()
    return probes


def _stream_declared_bodies(port: int, path: str, seconds: float, connections: int) -> None:
    """``connections`` threads, each sending a request that declares a 1 GB body and then streaming
    bytes at full speed, again on a new connection whenever the service closes one."""
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n"
    chunk, stop = b"x" * MB, time.monotonic() + seconds

    def stream() -> None:
        while time.monotonic() < stop:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
                sock.sendall(head.encode())
                while time.monotonic() < stop:
                    sock.sendall(chunk)

    threads = [threading.Thread(target=stream) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


@contextlib.contextmanager
def declared_floods(port: int, path: str, seconds: float, connections: int = 4) -> Iterator[None]:
    """The flood of bodies declared 1 GB, from a process of its own (its sends hold no GIL of ours)."""
    code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import hostile; "
    code += f"hostile._stream_declared_bodies({port}, {path!r}, {seconds}, {connections})"
    process = subprocess.Popen([sys.executable, "-c", code])
    try:
        yield
    finally:
        try:
            process.wait(seconds + 10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def scoring_rate(port: int, key: str, seconds: float) -> float:
    """Rooms scored a second by one keyed client on one kept-alive connection (E1, 200s only)."""
    body, scored = json.dumps(E1).encode(), 0
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            connection.request("POST", "/v1/score", body=body, headers=headers)
            answer = connection.getresponse()
            answer.read()
            scored += answer.status == 200
        except OSError:
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.close()
    return scored / (time.monotonic() - started)


def _loop_requests(port: int, seconds: float, clients: int, key: str, oversized: bool) -> None:
    """``clients`` threads, each posting a 70,000-byte body (over the 64 KiB limit) to /v1/score with
    the key, again and again (the 413 path); or, to compare, getting /healthz as often."""
    body, stop = b"x" * 70_000, time.monotonic() + seconds

    def loop() -> None:
        while time.monotonic() < stop:
            with contextlib.suppress(OSError):
                if oversized:
                    post(port, "/v1/score", body, key=key, timeout=5)
                else:
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                    connection.request("GET", "/healthz")
                    connection.getresponse().read()
                    connection.close()

    threads = [threading.Thread(target=loop) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


@contextlib.contextmanager
def looping_clients(port: int, seconds: float, clients: int, key: str, oversized: bool) -> Iterator[None]:
    """``_loop_requests`` from a process of its own."""
    code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import hostile; "
    code += f"hostile._loop_requests({port}, {seconds}, {clients}, {key!r}, {oversized})"
    process = subprocess.Popen([sys.executable, "-c", code])
    try:
        yield
    finally:
        try:
            process.wait(seconds + 10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


FLOODED_ROUTES = {"401 (no key)": "/v1/score", "404": "/no-such-route", "405": "/healthz"}
"""The routes a flood of declared bodies goes to, by what each answers without reading the body."""


@dataclass(frozen=True)
class Flooded:
    route: str
    rate: float
    """Rooms a second the keyed client scored meanwhile."""
    probes: Probes


def floods(served: Served, key: str, seconds: float) -> tuple[float, list[Flooded]]:
    """The keyed client's scoring rate alone, then under a flood of declared 1 GB bodies to each route
    of ``FLOODED_ROUTES`` in turn, ``seconds`` each, with the health probes running."""
    baseline = scoring_rate(served.port, key, seconds / 2)
    outcomes = []
    for route, path in FLOODED_ROUTES.items():
        with Probes(served.port) as probes, declared_floods(served.port, path, seconds):
            time.sleep(0.5)  # the flood under way
            rate = scoring_rate(served.port, key, seconds - 1)
        outcomes.append(Flooded(route, rate, probes))
    return baseline, outcomes


def unread_batches(
    served: Served, connections: int, key: str | None = None, seconds: float = 10
) -> tuple[float, Probes, list[int]]:
    """``connections`` clients that post a 500-room batch each and never read the answer, held for
    ``seconds``: the largest rise of the workers' total RSS meanwhile (MB), the probes, and the
    statuses the first bytes of the answers that came give (0: none came)."""
    body = batch(four_player_rooms(500, seed=3))
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    head = f"POST /v1/score/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{auth}Content-Length: {len(body)}\r\n\r\n"

    def total() -> float:
        return sum(_status_kib(pid, "VmRSS") for pid in workers_of(served.master)) / 1024

    before, peak, sockets = total(), 0.0, []
    try:
        with Probes(served.port) as probes:
            for _ in range(connections):
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.connect(("127.0.0.1", served.port))
                sock.sendall(head.encode() + body)
                sockets.append(sock)
                peak = max(peak, total())
            started = time.monotonic()
            while time.monotonic() - started < seconds:
                time.sleep(0.25)
                peak = max(peak, total())
        statuses = []
        for sock in sockets:
            sock.settimeout(0)
            try:
                first = sock.recv(12)
            except OSError:
                first = b""
            statuses.append(int(first[9:12]) if first.startswith(b"HTTP/1.1 ") else 0)
    finally:
        for sock in sockets:
            sock.close()
    return peak - before, probes, statuses


def advices(port: int, count: int) -> list[int]:
    """``count`` advices, each under a house rule of its own (a new title): the advisor's tables for
    a ruleset are shared by every variant that pays the same chi values."""
    cards = [card for player in E1["players"] for position in ("back", "middle", "front") for card in player[position]]
    bodies = [
        json.dumps(
            {"ruleset": {"base": "maubinh-2020", "patch": {"title": f"t{k}"}}, "cards": cards[:13], "alternatives": 20}
        )
        for k in range(count)
    ]
    return sorted({post(port, "/v1/arrange", body.encode())[0] for body in bodies})


def parallel_batches(port: int, body: bytes, count: int = 4) -> tuple[list[int], Probes]:
    with Probes(port) as probes, ThreadPoolExecutor(count) as pool:
        statuses = list(pool.map(lambda _: post(port, "/v1/score/batch", body)[0], range(count)))
    return statuses, probes


@contextlib.contextmanager
def serving(extra_env: dict[str, str] | None = None) -> Iterator[Served]:
    """`maubinh serve` (2 workers, no recycling) on a free loopback port, ready."""
    port = free_port()
    env = {**os.environ, "MAUBINH_LOG_REQUESTS": "off", "MAUBINH_WORKERS": "2", "MAUBINH_MAX_REQUESTS": "0"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    env.update(extra_env or {})
    server = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", str(port)], env=env)
    try:
        wait_ready(f"http://127.0.0.1:{port}")
        while len(workers_of(server.pid)) < 2:
            time.sleep(0.05)
        yield Served(server.pid, workers_of(server.pid), port)
    finally:
        server.terminate()
        server.wait(timeout=30)


KEY = "hostile-bench-key"
"""The key of the keyed server the floods and the unread answers run against."""


def _late(probes: Probes) -> str:
    return f"probes late {probes.late}/{len(probes.latencies)}, slowest {max(probes.latencies):.3f} s"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--flood-seconds", type=float, default=8)
    args = parser.parse_args()
    with serving() as served:
        port = served.port
        scenarios: dict[str, Callable[[], Any]] = {
            "60 refused 60 KB patches": lambda: sorted({post(port, "/v1/score", b)[0] for b in REFUSED_PATCHES}),
            "200 advices, each a new house rule": lambda: advices(port, 200),
            **{
                name: (lambda make=make: post(port, "/v1/score/batch", make())[0])
                for name, (make, _) in HOSTILE_BATCHES.items()
            },
        }
        print(f"maubinh serve, 2 gevent workers; median of {args.rounds} rounds (goal: ≤ 50 MB, ≤ 1 s a request)")
        print(f"{'scenario':40} {'answer':>8} {'peak MB':>8} {'CPU s':>6}")
        for name, scenario in scenarios.items():
            runs = [costing(served, scenario) for _ in range(args.rounds)]
            rise = statistics.median(cost.peak_rise_mb for _, cost in runs)
            cpu = statistics.median(cost.cpu_seconds for _, cost in runs)
            print(f"{name:40} {runs[0][0]!s:>8} {rise:8.1f} {cpu:6.2f}")
        statuses, probes = parallel_batches(port, HOSTILE_BATCHES["500 rooms, each a new refused patch"][0]())
        print(f"4 refused-patch batches in parallel: {statuses}; {_late(probes)}")
        for clients, body in ((8, False), (50, False), (1500, True)):
            probes = slow_clients(port, clients, 12, body)
            what = "slow bodies" if body else "slow headers"
            print(f"{clients} {what} for 12 s: {_late(probes)}")
    with serving({"MAUBINH_API_KEYS": KEY}) as served:
        print(
            f"\nkeyed server; 4 connections stream bodies declared 1 GB, {args.flood_seconds:g} s a route "
            "(goal: the keyed client keeps ≥ 50% of its rate, no probe over 1 s, no worker replaced)"
        )
        for _ in range(args.rounds):
            baseline, outcomes = floods(served, KEY, args.flood_seconds)
            replaced = workers_of(served.master) != served.workers
            print(f"  scoring alone: {baseline:.0f} rooms/s; worker replaced: {'yes' if replaced else 'no'}")
            for flooded in outcomes:
                print(
                    f"  flood to a {flooded.route:12}: {flooded.rate:5.0f} rooms/s ({flooded.rate / baseline:4.0%}), {_late(flooded.probes)}"
                )
        for clients, oversized in ((4, True), (8, True), (8, False)):
            baseline = scoring_rate(served.port, KEY, args.flood_seconds / 2)
            with (
                Probes(served.port) as probes,
                looping_clients(served.port, args.flood_seconds, clients, KEY, oversized),
            ):
                time.sleep(0.5)
                rate = scoring_rate(served.port, KEY, args.flood_seconds - 1)
            what = "looping 70 KB bodies into 413s" if oversized else "looping GET /healthz, for comparison"
            print(
                f"  {clients} clients {what}: {rate:5.0f} rooms/s ({rate / baseline:4.0%} of {baseline:.0f}), {_late(probes)}"
            )
        for connections in (60, 80):
            rise, probes, statuses = unread_batches(served, connections, KEY)
            counts = {status: statuses.count(status) for status in sorted(set(statuses))}
            print(
                f"{connections} connections post 500-room batches and never read (10 s): total RSS +{rise:.0f} MB "
                f"(goal ≤ 300), answers begun {counts}, {_late(probes)}"
            )
            time.sleep(2)

    if os.geteuid() == 0:
        metrics_on_a_full_file_system(args.flood_seconds)
    else:
        print("\n(the full metrics directory needs root to mount a tmpfs: skipped)")


def metrics_on_a_full_file_system(seconds: float) -> None:
    """A server whose metrics directory (a 2 MiB tmpfs) fills up under it: scoring, probes, deaths."""
    where = Path(tempfile.mkdtemp(prefix="maubinh-bench-metrics-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], check=True)
    try:
        with serving({"MAUBINH_API_KEYS": KEY, "PROMETHEUS_MULTIPROC_DIR": str(where)}) as served:
            baseline = scoring_rate(served.port, KEY, seconds / 2)
            with contextlib.suppress(OSError), (where / "filler").open("wb") as filler:
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
            with Probes(served.port) as probes:
                rate = scoring_rate(served.port, KEY, seconds)
            replaced = workers_of(served.master) != served.workers
            print(
                f"\nmetrics directory full under the workers: {rate:.0f} rooms/s ({rate / baseline:.0%} of {baseline:.0f}), "
                f"workers replaced: {'yes' if replaced else 'no'}, {_late(probes)}"
            )
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        where.rmdir()


if __name__ == "__main__":
    main()
