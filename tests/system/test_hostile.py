"""Hostile input against a real `maubinh serve` (2 gevent workers, loopback only): each repro of the
hostile-input issue, asserting the answer, each worker's peak memory and the health probes' latency.

A worker's peak RSS (VmHWM) is reset before each scenario (``/proc/PID/clear_refs``), so the rise is
what that scenario alone cost. Every loop is bounded in count and time. CPU seconds are printed and
checked only against a loose ceiling; bench/hostile.py reports them against the 1 s goal.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers import golden_cases
from loadgen import children
from server import call, start

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
FOUR = next(c["request"] for c in golden_cases() if "error" not in c["expect"] and len(c["request"]["players"]) == 4)
MB = 1024 * 1024
MOST_RISE_MB = 50
"""What one hostile request may cost a worker (the issue's bound)."""
LOOSE_CPU_SECONDS = 3.0
"""A ceiling no bounded request comes near (the worst measured is ~0.8 s): the 39 s of before fails it."""


@dataclass
class Server:
    base: str
    process: subprocess.Popen[bytes]
    port: int
    workers: list[int] = field(default_factory=list)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    base, process = start({"MAUBINH_MAX_REQUESTS": "0"})
    deadline = time.monotonic() + 15
    while len(children(process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    served = Server(base, process, int(base.rsplit(":", 1)[1]), children(process.pid))
    yield served
    process.kill()
    process.wait()


def _status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise ValueError(key)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Cost:
    peak_rise_mb: float
    cpu_seconds: float


def costing(server: Server, scenario: Callable[[], Any]) -> tuple[Any, Cost]:
    """Run ``scenario``; what it cost the workers: the largest peak-RSS rise of one, and CPU in all."""
    assert children(server.process.pid) == server.workers, "a worker was replaced"
    for pid in server.workers:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
    before = {pid: _status_kib(pid, "VmHWM") for pid in server.workers}
    cpu = sum(_cpu_seconds(pid) for pid in server.workers)
    outcome = scenario()
    time.sleep(0.2)
    rise = max(_status_kib(pid, "VmHWM") - before[pid] for pid in server.workers) / 1024
    cost = Cost(round(rise, 1), round(sum(_cpu_seconds(pid) for pid in server.workers) - cpu, 2))
    print(f"cost: {cost}")
    return outcome, cost


def post(server: Server, path: str, body: bytes | Iterator[bytes], timeout: float = 30) -> tuple[int, bytes]:
    """One POST on a kept-alive connection (an iterator of bytes is sent chunked): the server drains
    what it did not read, where closing with unread bytes could reset the connection under the answer."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        chunked = not isinstance(body, bytes)
        headers = {"Content-Type": "application/json", **({"Transfer-Encoding": "chunked"} if chunked else {})}
        connection.request("POST", path, body=body, headers=headers, encode_chunked=chunked)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


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
                    ok = _read_all(sock).startswith(b"HTTP/1.1 200")
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


def test_refused_patches_keep_no_memory(server: Server) -> None:
    """Before: 60 such requests took the workers from 109 to 544 MB (each refusal cached with its faults)."""
    bodies = [json.dumps(variant({"title": f"t{k}", **{f"k{j}": 1 for j in range(5000)}})).encode() for k in range(60)]
    statuses, cost = costing(server, lambda: [post(server, "/v1/score", body)[0] for body in bodies])
    assert statuses == [422] * 60
    assert cost.peak_rise_mb < 10
    assert cost.cpu_seconds < LOOSE_CPU_SECONDS


def _batch(rooms: list[dict[str, Any]]) -> bytes:
    return json.dumps({"rooms": rooms}).encode()


def _filled(prefix: bytes, unit: bytes, suffix: bytes, size: int = 4 * MB) -> bytes:
    return prefix + unit * ((size - len(prefix) - len(suffix)) // len(unit)) + suffix


HOSTILE_BATCHES: dict[str, tuple[Callable[[], bytes], int]] = {
    "a 100,000-row instant-win table": (
        lambda: _batch(
            [variant({"instant_wins": {"table": [{"pattern": "dragon", "units": 5000, "strength": 1}] * 70_000}})]
        ),
        413,
    ),
    "4 MiB of empty objects": (lambda: _filled(b'{"rooms": [{"round_id": [', b"{},", b"{}]}]}"), 413),
    "one 4 MiB string with an emoji": (
        lambda: _filled(b'{"rooms": [{"round_id": "', b"a", "😀".encode() + b'"}]}'),
        200,
    ),
    "500 rooms, each a new refused patch": (
        lambda: _batch(
            [
                variant(
                    {
                        "title": f"t{k}",
                        "instant_wins": {"table": [{"pattern": "nope", "units": 5000, "strength": 0}] * 12},
                        "bonuses": {p: {"pair": 0, "flush": 0, "straight": 0} for p in ("back", "middle", "front")},
                    },
                    FOUR,
                )
                for k in range(500)
            ]
        ),
        200,
    ),
    "500 rooms, each a new house rule": (
        lambda: _batch([variant({"title": f"t{k}", "scoop": {"multiplier": 2}}, FOUR) for k in range(500)]),
        200,
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE_BATCHES))
def test_a_hostile_batch_costs_a_worker_at_most_50_mb(server: Server, name: str) -> None:
    """Before: a 4 MB batch room added 420 MB to a worker; a 5.6 MB one ran 39 s and added 860 MB."""
    make, expected = HOSTILE_BATCHES[name]
    body = make()
    assert len(body) <= 4 * MB
    (status, _), cost = costing(server, lambda: post(server, "/v1/score/batch", body))
    assert status == expected
    assert cost.peak_rise_mb < MOST_RISE_MB
    assert cost.cpu_seconds < LOOSE_CPU_SECONDS


def test_hostile_batches_in_parallel_keep_every_health_probe_under_1_s(server: Server) -> None:
    """Before: four 5.6 MB batches in parallel pushed /healthz to 2 s."""
    body = HOSTILE_BATCHES["500 rooms, each a new refused patch"][0]()
    with Probes(server.port) as probes, ThreadPoolExecutor(4) as pool:
        statuses = list(pool.map(lambda _: post(server, "/v1/score/batch", body)[0], range(4)))
    assert statuses == [200] * 4
    assert probes.latencies and probes.late == 0, probes.latencies


@pytest.mark.parametrize("clients", [8, 50])
def test_slow_clients_do_not_starve_health_probes(server: Server, clients: int) -> None:
    """Before: 8 connections sending a header line every 2 s failed a third of the probes, 50 all of them."""
    sockets = [socket.create_connection(("127.0.0.1", server.port), timeout=1) for _ in range(clients)]
    try:
        for sock in sockets:
            sock.sendall(b"POST /v1/score HTTP/1.1\r\nHost: x\r\n")
        with Probes(server.port) as probes:
            for _ in range(4):
                time.sleep(2)
                for sock in sockets:
                    with contextlib.suppress(OSError):  # dropped: no headers within keepalive seconds
                        sock.sendall(b"X-Slow: 1\r\n")
    finally:
        for sock in sockets:
            sock.close()
    assert len(probes.latencies) >= 30
    assert probes.late == 0, probes.latencies


def test_metrics_do_not_grow_with_callers_ids(server: Server) -> None:
    """Before: 400 ids in one batch added 27 KB to /metrics; 55,000 made it 4.6 MB."""
    before = len(call(server.base, "/metrics")[1])
    for start_at in (0, 400):
        rooms = [variant({"id": f"x{k}", "title": "t"}) for k in range(start_at, start_at + 400)]
        assert post(server, "/v1/score/batch", _batch(rooms))[0] == 200
    text = call(server.base, "/metrics")[1].decode()
    assert len(text) - before < 2000
    assert 'ruleset="maubinh-2020~custom"' in text
    assert 'ruleset="x1"' not in text


def test_a_4301_digit_difference_is_a_422_not_a_500(server: Server) -> None:
    huge = "9" * 4300
    body = json.dumps(E1)[:-1] + f', "claimed": {{"amounts": {{"P": {huge}, "Q": -{huge}}}}}}}'
    status, answer = post(server, "/v1/verify", body.encode())
    assert status == 422
    assert {e["code"] for e in json.loads(answer)["errors"]} == {"amount_out_of_range"}


def test_a_chunked_body_past_the_limit_is_413(server: Server) -> None:
    """Before: a valid 65,536-byte document and garbage after it, sent chunked, was cut and scored."""
    document = json.dumps(E1).encode()
    body = document + b" " * (65536 - len(document))
    assert post(server, "/v1/score", iter([body]))[0] == 200
    assert post(server, "/v1/score", iter([body[:40000], body[40000:], b"garbage"]))[0] == 413


def test_an_id_with_a_trailing_newline_is_no_id(server: Server) -> None:
    status, answer = post(server, "/v1/score", json.dumps(variant({"id": "maubinh-2020\n"})).encode())
    assert status == 422
    assert [e["pointer"] for e in json.loads(answer)["errors"]] == ["/ruleset/patch/id"]


def test_a_fifo_among_operator_files_stops_the_start_at_once(tmp_path: Path) -> None:
    """Before: the start hung with an empty log."""
    os.mkfifo(tmp_path / "x.json")
    started = time.monotonic()
    done = subprocess.run(
        [str(Path(os.sys.executable).with_name("maubinh")), "serve", "--port", "1"],
        env={**os.environ, "MAUBINH_RULESETS_DIR": str(tmp_path)},
        capture_output=True,
        timeout=20,
        check=False,
    )
    assert done.returncode == 2
    assert "x.json" in done.stderr.decode() and "not a regular file" in done.stderr.decode()
    assert time.monotonic() - started < 10
