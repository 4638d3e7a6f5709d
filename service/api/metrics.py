"""Prometheus metrics; aggregated across gunicorn workers in multiprocess mode.

Labels are bounded: routes are URL rules (not paths), patterns come from the data
files, and a ruleset is a built-in or operator id, or ``<base id>~custom`` for any
request's variant, whatever id its patch gives. No player or room ids.
"""

from __future__ import annotations

import os
import platform
import resource
import time
from collections.abc import Iterable
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
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from service import version
from service.api import logs
from service.api.auth import caller_name
from service.rulesets.catalogue import CUSTOM_SUFFIX, builtin_catalogue
from service.scoring.claims import AMOUNTS_ONLY
from service.support import metrics_store

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Method labels: any other method a caller invents counts as ``other``."""
REQUESTS = Counter(
    "maubinh_http_requests_total", "HTTP requests answered, by caller", ["route", "method", "status", "caller"]
)
LATENCY = Histogram(
    "maubinh_http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["route", "method", "status"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
IN_FLIGHT = Gauge("maubinh_http_requests_in_flight", "HTTP requests being answered", multiprocess_mode="livesum")
ROOMS = Counter("maubinh_rooms_scored_total", "Rooms scored, by caller", ["ruleset", "players", "caller"])
FOULS = Counter("maubinh_fouls_total", "Fouled players in scored rooms", ["ruleset"])
INSTANT_WINS = Counter("maubinh_instant_wins_total", "Instant wins in scored rooms", ["ruleset", "pattern"])
REJECTED = Counter(
    "maubinh_rejected_total", "Requests rejected with 422, and rooms of a batch refused, by endpoint", ["route"]
)
REFUSALS = Counter(
    "maubinh_refusals_total",
    "Refused requests (4xx) and refused rooms of a batch, by route and code: each distinct fault code of "
    "a 422 once, else the problem's own (bad_json, too_large, timeout, ...), by caller",
    ["route", "code", "caller"],
)
CALLERS_FAILED = Gauge(
    "maubinh_callers_file_failed",
    "1 while the callers file (MAUBINH_CALLERS_FILE) last read did not load: the last good callers stay in force",
    multiprocess_mode="livemax",
)
QUOTA_STORE_ERRORS = Counter(
    "maubinh_quota_store_errors_total",
    "Times the quota store (MAUBINH_QUOTA_REDIS_URL) did not answer: the requests then went on without quotas",
)
ROUNDS_UNCHECKED = Counter(
    "maubinh_rounds_unchecked_total",
    "Requests whose rounds could not be checked, the rounds' store (MAUBINH_ROUNDS_REDIS_URL) not answering, by "
    "what was done: refused (503, MAUBINH_ROUNDS_UNREACHABLE=closed) or scored unchecked (open)",
    ["outcome"],
)
BATCH_ROOMS = Histogram(
    "maubinh_batch_rooms", "Rooms per answered batch", buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
)
VERIFICATIONS = Counter(
    "maubinh_verifications_total", "Claims verified, by ruleset and outcome", ["ruleset", "outcome"]
)
DISAGREEMENTS = Counter(
    "maubinh_verify_disagreements_total",
    "Steps in which a verified claim disagreed (each step once a claim; amounts: a claim without ledger lines)",
    ["ruleset", "step"],
)
RULESETS = Gauge("maubinh_rulesets_loaded", "Rulesets served, by kind", ["kind"], multiprocess_mode="max")
RULESETS_FAILED = Gauge(
    "maubinh_operator_rulesets_failed",
    "1 while the operator's ruleset folder failed to load: the instance is unready and scores nothing",
    multiprocess_mode="max",
)
WORKER_STARTS = Counter(
    "maubinh_worker_starts_total", "Workers forked by the master (at boot, after a recycle, after a crash)"
)
WORKER_STOPS = Counter(
    "maubinh_worker_stops_total",
    "Workers that left, by reason: recycled (max_requests), stopped (a shutdown), timed_out (aborted by the "
    "master after MAUBINH_TIMEOUT) or crashed (left untold); a worker killed (out of memory) is a start "
    "without a stop",
    ["reason"],
)
WORKER_CPU = Gauge("maubinh_worker_cpu_seconds", "CPU time a live worker has used, by pid", multiprocess_mode="liveall")
WORKER_MEMORY = Gauge(
    "maubinh_worker_resident_memory_bytes", "Resident memory of a live worker, by pid", multiprocess_mode="liveall"
)
BUILD = Gauge("maubinh_build_info", "Version of the running service", ["version", "python"], multiprocess_mode="max")


class _Unkept:
    """A series the store has no room for: written to nowhere (service/support/metrics_store.py)."""

    def inc(self, amount: float = 1) -> None: ...

    def dec(self, amount: float = 1) -> None: ...

    def set(self, value: float) -> None: ...

    def observe(self, value: float) -> None: ...


UNKEPT = _Unkept()


def _series(metric: Any, *labels: str) -> Any:
    """``metric``'s series for ``labels`` (or ``metric`` itself, without labels), or a stand-in that
    keeps nothing when the metrics store has no room for a series this worker has not written yet."""
    series = (id(metric), labels)
    if not metrics_store.may_write(series):
        return UNKEPT
    try:
        return metric.labels(*labels) if labels else metric  # a new label set may open a new file
    except OSError as error:
        metrics_store.unusable(error)
        return UNKEPT


def adopt_store() -> None:
    """A new worker opens its own files in the store at once (prometheus-client does so on the first
    write after a fork, for every series the master made), so that a store it cannot write is found
    here, not inside a request."""
    try:
        _series(IN_FLIGHT).inc(0)
    except OSError as error:
        metrics_store.unusable(error)


class _Degraded(Collector):
    """``maubinh_metrics_degraded``: this process's own word, never summed through the store."""

    def collect(self) -> Iterable[GaugeMetricFamily]:
        yield GaugeMetricFamily(
            "maubinh_metrics_degraded",
            "1 while the worker that answers cannot keep every series with the others' (PROMETHEUS_MULTIPROC_DIR "
            "full, unwritable or missing): the numbers here are partial, and the log says why",
            value=metrics_store.degraded() is not None,
        )


DEGRADED = CollectorRegistry()
DEGRADED.register(_Degraded())


def start() -> None:
    """Say which version runs."""
    _series(BUILD, version(), platform.python_version()).set(1)


def exposition() -> tuple[bytes, str]:
    """The metrics text; summed over every worker when the store is shared (PROMETHEUS_MULTIPROC_DIR),
    else, or when the store cannot be read, this worker's own; and whether they are degraded."""
    text = b""
    if metrics_store.shared():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        try:
            text = generate_latest(registry)
        except OSError as error:
            metrics_store.say_once("read", f"the store cannot be read ({error.strerror or error}): this worker's own")
    return (text or generate_latest()) + generate_latest(DEGRADED), CONTENT_TYPE_LATEST


def register(app: Flask) -> None:
    """Count and time every answer by route, every scored room by ruleset and size, every refusal by
    code, every verified claim by outcome; note the rulesets served and each worker's CPU and memory."""
    start()
    builtin = builtin_catalogue().latest
    _series(RULESETS, "builtin").set(len(builtin))
    _series(RULESETS, "operator").set(len(app.config["CATALOGUE"].latest.keys() - builtin.keys()))
    _series(RULESETS_FAILED).set(app.config["RULESETS_FAULT"] is not None)
    for outcome in ("refused", "scored"):  # exported at 0, so that an alert reads them before any fault
        _series(ROUNDS_UNCHECKED, outcome).inc(0)

    @app.before_request
    def arrive() -> None:
        _series(IN_FLIGHT).inc()
        g.in_flight = True

    @app.teardown_request
    def leave(error: BaseException | None) -> None:
        if g.pop("in_flight", False):
            _series(IN_FLIGHT).dec()

    @app.after_request
    def observe(response: Response) -> Response:
        seconds, route = logs.elapsed(), logs.route()
        method = request.method if request.method in METHODS else "other"
        status = str(response.status_code)
        caller = caller_name()
        _series(REQUESTS, route, method, status, caller).inc()
        _series(LATENCY, route, method, status).observe(seconds)
        outcome = g.get("outcome")
        batch = g.get("batch_outcomes")
        if route == "/v1/score" and outcome is not None:
            batch = [outcome_of(outcome)]
            count_rooms(batch, route, caller)
        elif route == "/v1/score/batch" and batch is not None:
            count_rooms(batch, route, caller)
            _series(BATCH_ROOMS).observe(len(batch))
        elif route == "/v1/verify" and outcome is not None:
            batch = [count_verification(outcome)]
        refused = g.get("refusal_codes")
        if refused is not None:
            count_refusal(refused, route, caller)
            if response.status_code == 422:
                _series(REJECTED, route).inc()
        g.rooms_counted = batch
        sample_worker()
        return response


def log_fields() -> dict[str, Any]:
    """What the request's log line says of its rooms (as ``observe`` counted them): the rulesets, how
    many rooms, and the fault codes of a refusal or of a batch's refused rooms."""
    rooms: list[RoomOutcome | RoomRefused] | None = g.get("rooms_counted")
    codes = list(g.get("refusal_codes") or ())
    fields: dict[str, Any] = {}
    if rooms is not None:
        fields["rulesets"] = sorted({r.ruleset for r in rooms if isinstance(r, RoomOutcome)})
        fields["rooms"] = len(rooms)
        codes += [code for r in rooms if isinstance(r, RoomRefused) for code in r.codes]
    if codes:
        fields["codes"] = sorted(set(codes))
    return fields


class RoomOutcome(NamedTuple):
    """What the metrics count of one scored room."""

    ruleset: str
    players: int
    fouls: int
    instant_wins: tuple[str, ...]


class RoomRefused(NamedTuple):
    """A refused room of a batch: its faults' codes."""

    codes: tuple[str, ...]


def ruleset_label(block: dict[str, Any]) -> str:
    """The ruleset a room counts under: its id when the service knows it (built-in or operator),
    else the variant's base with ``~custom``, so that callers cannot mint label values."""
    if block["id"] in current_app.config["CATALOGUE"].latest:
        return str(block["id"])
    return f"{block['base']['id']}{CUSTOM_SUFFIX}"


def refusal_codes(problem: dict[str, Any]) -> tuple[str, ...]:
    """A problem document's codes, each once: its faults' (a 422), else the problem's own, from its
    type (``…/problems/bad-json`` → ``bad_json``). Both come from the service's own texts: bounded."""
    if "errors" in problem:
        return tuple(dict.fromkeys(fault["code"] for fault in problem["errors"]))
    return (str(problem.get("type", "")).rsplit("/", 1)[-1].replace("-", "_") or "other",)


def outcome_of(result: dict[str, Any]) -> RoomOutcome | RoomRefused:
    """A scored room's outcome, or a refused room's codes (its problem document, in a batch)."""
    if "ledger" not in result:
        return RoomRefused(refusal_codes(result))
    players = result["players"]
    return RoomOutcome(
        ruleset_label(result["ruleset"]),
        len(players),
        sum(1 for p in players if p["fouled"]),
        tuple(p["instant_win"]["pattern"] for p in players if p["instant_win"]),
    )


def noted(result: dict[str, Any], outcomes: list[RoomOutcome | RoomRefused]) -> dict[str, Any]:
    """``result``, its outcome noted on the way: a batch's rooms are counted after the answer is
    encoded, and only their outcomes are kept until then."""
    outcomes.append(outcome_of(result))
    return result


def callers_file_failed(failed: bool) -> None:
    _series(CALLERS_FAILED).set(failed)


def quota_store_failed() -> None:
    _series(QUOTA_STORE_ERRORS).inc()


def rounds_unchecked(outcome: str) -> None:
    _series(ROUNDS_UNCHECKED, outcome).inc()


def count_rooms(outcomes: Iterable[RoomOutcome | RoomRefused], route: str, caller: str) -> None:
    """Rooms scored by ruleset and size, their fouls and instant wins, and the rooms refused by code:
    one increment per label set, however many rooms a batch held."""
    rooms: dict[tuple[str, str], int] = {}
    fouls: dict[str, int] = {}
    instant_wins: dict[tuple[str, str], int] = {}
    codes: dict[str, int] = {}
    refused = 0
    for outcome in outcomes:
        if isinstance(outcome, RoomRefused):
            refused += 1
            for code in outcome.codes:
                codes[code] = codes.get(code, 0) + 1
            continue
        key = (outcome.ruleset, str(outcome.players))
        rooms[key] = rooms.get(key, 0) + 1
        if outcome.fouls:
            fouls[outcome.ruleset] = fouls.get(outcome.ruleset, 0) + outcome.fouls
        for pattern in outcome.instant_wins:
            instant_wins[outcome.ruleset, pattern] = instant_wins.get((outcome.ruleset, pattern), 0) + 1
    for labels, count in rooms.items():
        _series(ROOMS, *labels, caller).inc(count)
    for ruleset, count in fouls.items():
        _series(FOULS, ruleset).inc(count)
    for labels, count in instant_wins.items():
        _series(INSTANT_WINS, *labels).inc(count)
    if refused:
        _series(REJECTED, route).inc(refused)
    for code, count in codes.items():
        _series(REFUSALS, route, code, caller).inc(count)


def count_refusal(codes: tuple[str, ...], route: str, caller: str) -> None:
    """A refused request, once for each of its codes."""
    for code in codes:
        _series(REFUSALS, route, code, caller).inc()


def count_verification(answer: dict[str, Any]) -> RoomOutcome:
    """A verified claim by outcome; a disagreeing one once for each step it disagrees in. The room
    itself is the verify's, not counted as scored."""
    room = outcome_of(answer["result"])
    assert isinstance(room, RoomOutcome)
    _series(VERIFICATIONS, room.ruleset, "agree" if answer["agrees"] else "disagree").inc()
    if not answer["agrees"]:
        ledger = answer["ledger"] or {}
        steps = {line["step"] or "unstated" for lines in ledger.values() for line in lines} or {AMOUNTS_ONLY}
        for step in steps:
            _series(DISAGREEMENTS, room.ruleset, step).inc()
    return room


SAMPLE_SECONDS = 1.0
"""How often a worker notes its CPU time and memory: at most once a second, after an answer."""
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
_sampled = [0.0]


def sample_worker() -> None:
    """This worker's CPU seconds and resident memory, at most every SAMPLE_SECONDS: prometheus-client's
    process collector cannot see the workers in multiprocess mode."""
    now = time.monotonic()
    if now - _sampled[0] < SAMPLE_SECONDS:
        return
    _sampled[0] = now
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _series(WORKER_CPU).set(usage.ru_utime + usage.ru_stime)
    try:
        with open("/proc/self/statm", "rb") as statm:
            _series(WORKER_MEMORY).set(int(statm.read().split()[1]) * PAGE_BYTES)
    except OSError:  # no /proc: the peak instead
        _series(WORKER_MEMORY).set(usage.ru_maxrss * 1024)


def worker_forked() -> None:
    """One more worker, counted by the master as it forks (gunicorn's pre_fork): a worker that dies
    before it could count itself still counts, so that a crash loop shows."""
    _series(WORKER_STARTS).inc()


def worker_started() -> None:
    """A worker ready to serve (gunicorn's post_worker_init): its CPU and memory noted at once."""
    _sampled[0] = 0.0
    sample_worker()


def worker_stopped(reason: str) -> None:
    """A worker leaving (gunicorn's worker_exit), and why (service/server/gunicorn_config.py, ``stop_reason``)."""
    _series(WORKER_STOPS, reason).inc()
