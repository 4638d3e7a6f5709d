"""Prometheus metrics; aggregated across gunicorn workers in multiprocess mode.

Labels are bounded: routes are URL rules (not paths), patterns come from the data
files, and a ruleset is a built-in or operator id, or ``<base id>~custom`` for any
request's variant, whatever id its patch gives. No player or room ids.
"""

from __future__ import annotations

import collections
import os
import platform
from collections.abc import Iterable
from importlib import metadata
from typing import Any, NamedTuple

from flask import Flask, Response, current_app, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

from service.api import logs
from service.rulesets.catalogue import CUSTOM_SUFFIX

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Method labels: any other method a caller invents counts as ``other``."""
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
        seconds, route = logs.elapsed(), logs.route()
        method = request.method if request.method in METHODS else "other"
        status = str(response.status_code)
        REQUESTS.labels(route, method, status).inc()
        LATENCY.labels(route, method, status).observe(seconds)
        outcome = g.get("outcome")
        batch = g.get("batch_outcomes")
        if route == "/v1/score" and outcome is not None:
            count_rooms([outcome_of(outcome)], route)
        elif route == "/v1/score/batch" and batch is not None:
            count_rooms(batch, route)
        elif response.status_code == 422:
            REJECTED.labels(route).inc()
        return response


class RoomOutcome(NamedTuple):
    """What the metrics count of one scored room."""

    ruleset: str
    players: int
    fouls: int
    instant_wins: tuple[str, ...]


def ruleset_label(block: dict[str, Any]) -> str:
    """The ruleset a room counts under: its id when the service knows it (built-in or operator),
    else the variant's base with ``~custom``, so that callers cannot mint label values."""
    if block["id"] in current_app.config["CATALOGUE"].latest:
        return str(block["id"])
    return f"{block['base']['id']}{CUSTOM_SUFFIX}"


def outcome_of(result: dict[str, Any]) -> RoomOutcome | None:
    """A scored room's outcome; None for a room's problem document (a refused room of a batch)."""
    if "ledger" not in result:
        return None
    players = result["players"]
    return RoomOutcome(
        ruleset_label(result["ruleset"]),
        len(players),
        sum(1 for p in players if p["fouled"]),
        tuple(p["instant_win"]["pattern"] for p in players if p["instant_win"]),
    )


def noted(result: dict[str, Any], outcomes: list[RoomOutcome | None]) -> dict[str, Any]:
    """``result``, its outcome noted on the way: a batch's rooms are counted after the answer is
    encoded, and only their outcomes are kept until then."""
    outcomes.append(outcome_of(result))
    return result


def count_rooms(outcomes: Iterable[RoomOutcome | None], route: str) -> None:
    """Rooms scored by ruleset and size, their fouls and instant wins, and the rooms refused: one
    increment per label set, however many rooms a batch held."""
    rooms: collections.Counter[tuple[str, str]] = collections.Counter()
    fouls: collections.Counter[str] = collections.Counter()
    instant_wins: collections.Counter[tuple[str, str]] = collections.Counter()
    refused = 0
    for outcome in outcomes:
        if outcome is None:
            refused += 1
            continue
        rooms[outcome.ruleset, str(outcome.players)] += 1
        fouls[outcome.ruleset] += outcome.fouls
        instant_wins.update((outcome.ruleset, pattern) for pattern in outcome.instant_wins)
    for labels, count in rooms.items():
        ROOMS.labels(*labels).inc(count)
    for ruleset, count in fouls.items():
        if count:
            FOULS.labels(ruleset).inc(count)
    for labels, count in instant_wins.items():
        INSTANT_WINS.labels(*labels).inc(count)
    if refused:
        REJECTED.labels(route).inc(refused)
