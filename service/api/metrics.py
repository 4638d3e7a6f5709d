"""Prometheus metrics; aggregated across gunicorn workers in multiprocess mode.

Labels are bounded: routes are URL rules (not paths), rulesets and patterns come
from the data files. No player or room ids.
"""

from __future__ import annotations

import os
import platform
from importlib import metadata

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
REJECTED = Counter("maubinh_rejected_total", "Requests rejected with 422, by endpoint", ["route"])
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
