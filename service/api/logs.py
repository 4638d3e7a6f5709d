"""JSON log lines, one per request, carrying the request id."""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, g, request

REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""Matched whole (``fullmatch``): ``$`` would also match before a final newline."""


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def logger(level: str) -> logging.Logger:
    log = logging.getLogger("maubinh")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        log.addHandler(handler)
        log.propagate = False
    log.setLevel(level)
    return log


def route() -> str:
    """The request's URL rule (not its path, which a caller can vary without end)."""
    return request.url_rule.rule if request.url_rule else "unmatched"


def elapsed() -> float:
    """Seconds since the request began (``identify`` notes the start)."""
    started: float = g.get("started", time.perf_counter())
    return time.perf_counter() - started


def request_id(offered: str | None) -> str:
    """The caller's X-Request-ID when it is a sane token, else a fresh one."""
    if offered and REQUEST_ID.fullmatch(offered):
        return offered
    return uuid.uuid4().hex


def register(app: Flask, level: str, log_requests: bool, more_fields: Callable[[], dict[str, Any]]) -> None:
    """Every request gets an id and a start time (read by the metrics too), every answer its
    ``X-Request-ID``, and, when ``log_requests``, one JSON line, with ``more_fields()`` (what the
    metrics counted of its rooms, the trace it belongs to)."""
    log = logger(level)

    @app.before_request
    def identify() -> None:
        g.started = time.perf_counter()
        g.request_id = request_id(request.headers.get("X-Request-ID"))

    @app.after_request
    def tag_and_log(response: Response) -> Response:
        response.headers["X-Request-ID"] = g.get("request_id", "")
        if log_requests:
            fields = {
                "request_id": g.get("request_id"),
                "method": request.method,
                "route": route(),
                "path": request.path[:256],
                "status": response.status_code,
                "duration_ms": round(elapsed() * 1000, 3),
                "bytes": response.calculate_content_length(),
                **more_fields(),
            }
            log.info("request", extra={"fields": fields})
        return response
