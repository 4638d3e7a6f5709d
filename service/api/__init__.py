"""The HTTP API: an application factory; views only translate between HTTP and the domain."""

from __future__ import annotations

import hmac
import time
from collections.abc import Mapping
from typing import Any

from flask import Flask, Response, g, request
from werkzeug.exceptions import Unauthorized

from service.api import errors, metrics
from service.api.config import Settings
from service.api.logs import logger, request_id
from service.api.views import api
from service.hands import hand_table
from service.rulesets.catalogue import Catalogue, builtin_catalogue

OPEN_PATHS = ("/healthz", "/readyz", "/metrics", "/openapi.yaml")
"""Always open, like the viewer's page and assets (its calls to /v1/* carry the key the user gives)."""


def _authorized(header: str | None, keys: tuple[str, ...]) -> bool:
    """Constant time per key, and every key is compared whatever matched."""
    offered = (header or "").removeprefix("Bearer ").encode()
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(offered, key.encode())
    return matched and bool(header and header.startswith("Bearer "))


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app; ``config`` overrides the environment's settings (field names of Settings)."""
    settings = Settings.from_env().merged(config)
    app = Flask(__name__)
    app.config["SETTINGS"] = settings
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    log = logger(settings.log_level)
    app.config["CATALOGUE"] = catalogue(settings)
    metrics.start()
    for ruleset in app.config["CATALOGUE"].latest.values():
        hand_table(ruleset.wheel)  # build the tables before the first request, not during it

    @app.before_request
    def begin() -> None:
        g.started = time.perf_counter()
        g.request_id = request_id(request.headers.get("X-Request-ID"))
        g.max_body_bytes = settings.max_body_bytes
        needs_key = settings.api_keys and request.path not in OPEN_PATHS and not request.path.startswith("/viewer")
        if needs_key and not _authorized(request.headers.get("Authorization"), settings.api_keys):
            raise Unauthorized

    @app.after_request
    def finish(response: Response) -> Response:
        elapsed = time.perf_counter() - g.get("started", time.perf_counter())
        route = request.url_rule.rule if request.url_rule else "unmatched"
        status = str(response.status_code)
        metrics.REQUESTS.labels(route, request.method, status).inc()
        metrics.LATENCY.labels(route, request.method, status).observe(elapsed)
        outcome = g.get("outcome")
        if route == "/v1/score" and outcome is not None:
            _count_room(outcome)
        elif response.status_code == 422:
            metrics.REJECTED.labels(route).inc()
        response.headers["X-Request-ID"] = g.get("request_id", "")
        if settings.log_requests:
            fields = {
                "request_id": g.get("request_id"),
                "method": request.method,
                "route": route,
                "path": request.path[:256],
                "status": response.status_code,
                "duration_ms": round(elapsed * 1000, 3),
                "bytes": response.calculate_content_length(),
            }
            log.info("request", extra={"fields": fields})
        return response

    errors.register(app)
    app.register_blueprint(api)
    return app


def catalogue(settings: Settings) -> Catalogue:
    """The built-in rulesets plus the operator's folder; a bad file raises OperatorFileError, naming
    the file, pointer and fault, so that the service never starts (and never becomes ready) with it."""
    if settings.rulesets_dir is None:
        return builtin_catalogue()
    return builtin_catalogue().with_operator_files(settings.rulesets_dir)


def _count_room(result: dict[str, Any]) -> None:
    ruleset = result["ruleset"]["id"]
    metrics.ROOMS.labels(ruleset, str(len(result["players"]))).inc()
    fouls = sum(1 for p in result["players"] if p["fouled"])
    if fouls:
        metrics.FOULS.labels(ruleset).inc(fouls)
    for player in result["players"]:
        if player["instant_win"]:
            metrics.INSTANT_WINS.labels(ruleset, player["instant_win"]["pattern"]).inc()
