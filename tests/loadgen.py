"""A small closed-loop HTTP load generator for the reliability tests (loopback only, bounded).

Each thread keeps one connection (or opens one per request with ``fresh_connections``) and
sends requests back to back until the deadline or the stop event; every request is recorded.
"""

from __future__ import annotations

import http.client
import itertools
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Outcome:
    started: float
    sent: float
    finished: float
    status: int | None
    error: str | None
    problem_json: bool = False
    fresh: bool = True
    """Sent on a connection opened for it, not on one the server had already answered on."""
    connected: bool = True
    """False when the connection itself failed (refused, no route, timed out connecting): nothing was sent."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: bytes | None = None
    content_type: str = "application/json"


def post_json(path: str, document: Any) -> Request:
    return Request("POST", path, json.dumps(document).encode())


def send(connection: http.client.HTTPConnection, request: Request, close: bool = False) -> tuple[Outcome, bool]:
    """One request; the outcome, and whether the connection can be used again."""
    headers = {"Content-Type": request.content_type}
    if close:
        headers["Connection"] = "close"
    started = sent = time.monotonic()
    try:
        connection.request(request.method, request.path, body=request.body, headers=headers)
        sent = time.monotonic()
        response = connection.getresponse()
        response.read()
    except (OSError, http.client.HTTPException) as error:
        failed = Outcome(
            started, sent, time.monotonic(), None, type(error).__name__, connected=connection.sock is not None
        )
        return failed, False
    problem = response.getheader("Content-Type", "") == "application/problem+json"
    keep = not close and response.getheader("Connection", "").lower() != "close"
    return Outcome(started, sent, time.monotonic(), response.status, None, problem), keep


def send_one(port: int, request: Request) -> Outcome:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        return send(connection, request, close=True)[0]
    finally:
        connection.close()


def load(
    port: int,
    requests: Sequence[Request],
    threads: int,
    seconds: float,
    stop: threading.Event | None = None,
    fresh_connections: bool = False,
) -> list[Outcome]:
    """Send ``requests`` round-robin from ``threads`` threads for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    stop = stop or threading.Event()
    results: list[list[Outcome]] = [[] for _ in range(threads)]

    def worker(slot: int) -> None:
        connection: http.client.HTTPConnection | None = None
        for request in itertools.islice(itertools.cycle(requests), slot, None):
            if time.monotonic() >= deadline or stop.is_set():
                break
            fresh = connection is None
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
            outcome, keep = send(connection, request, fresh_connections)
            results[slot].append(outcome if fresh else replace(outcome, fresh=False))
            if not keep:
                connection.close()
                connection = None
        if connection is not None:
            connection.close()

    pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(seconds + 30)
    return [o for per_thread in results for o in per_thread]


def children(pid: int) -> list[int]:
    """The gunicorn master's worker processes."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return sorted(found)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ValueError(f"no VmRSS for {pid}")


def record(name: str, figures: dict[str, Any]) -> None:
    """Keep each test's figures in artifacts/reliability.json for the record."""
    path = Path(__file__).resolve().parents[1] / "artifacts" / "reliability.json"
    path.parent.mkdir(exist_ok=True)
    existing = json.loads(path.read_text()) if path.exists() else {}
    existing[name] = figures
    path.write_text(json.dumps(existing, indent=1, sort_keys=True))
