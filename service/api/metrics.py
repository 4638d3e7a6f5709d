"""Prometheus metrics; aggregated across gunicorn workers in multiprocess mode.

Labels are bounded: routes are URL rules (not paths), rulesets and patterns come
from the data files. No player or room ids.
"""

from __future__ import annotations

import os
import platform
import time
from importlib import metadata
from typing import Any

from flask import Flask, Response, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

REQUESTS = Counter("maubinh_http_requests_total", "HTTP requests answered", ["route", "method", "status"])
LATENCY = Histogram(
    "maubinh_http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["route", "method", "status"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
ROOMS = Counter("maubinh_rooms_scored_total", "Rooms scored", ["ruleset", "players"])
FOULS = Counter("maubinh_fouls_total", "Fouled players in scored rooms", ["ruleset"])
INSTANT_WINS = Counter("maubinh_instant_wins_total", "Instant wins in scored rooms", ["ruleset", "pattern"])
REJECTED = Counter(
    "maubinh_rejected_total", "Requests rejected with 422, and rooms of a batch refused, by endpoint", ["route"]
)
BUILD = Gauge("maubinh_build_info", "Version of the running service", ["version", "python"], multiprocess_mode="max")


def version() -> str:
    try:
        return metadata.version("maubinh")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


def start() -> None:
    """Ready the metrics for this process: the multiprocess directory must exist before any write."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
    BUILD.labels(version=version(), python=platform.python_version()).set(1)


def exposition() -> tuple[bytes, str]:
    """The metrics text; summed over every worker when PROMETHEUS_MULTIPROC_DIR is set."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST


def register(app: Flask) -> None:
    """Count and time every answer by route, and every scored room by ruleset and size."""
    start()

    @app.after_request
    def observe(response: Response) -> Response:
        elapsed = time.perf_counter() - g.get("started", time.perf_counter())
        route = request.url_rule.rule if request.url_rule else "unmatched"
        status = str(response.status_code)
        REQUESTS.labels(route, request.method, status).inc()
        LATENCY.labels(route, request.method, status).observe(elapsed)
        outcome = g.get("outcome")
        if route == "/v1/score" and outcome is not None:
            count_room(outcome)
        elif route == "/v1/score/batch" and outcome is not None:
            for result in outcome["results"]:
                if "ledger" in result:
                    count_room(result)
                else:
                    REJECTED.labels(route).inc()
        elif response.status_code == 422:
            REJECTED.labels(route).inc()
        return response


def count_room(result: dict[str, Any]) -> None:
    ruleset = result["ruleset"]["id"]
    ROOMS.labels(ruleset, str(len(result["players"]))).inc()
    fouls = sum(1 for p in result["players"] if p["fouled"])
    if fouls:
        FOULS.labels(ruleset).inc(fouls)
    for player in result["players"]:
        if player["instant_win"]:
            INSTANT_WINS.labels(ruleset, player["instant_win"]["pattern"]).inc()
