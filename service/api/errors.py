"""Every error is RFC 9457 problem+json, from one place."""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, g, request
from werkzeug.exceptions import HTTPException, InternalServerError

from service.api.logs import logger
from service.contract import RoomRejected
from service.documents import BadDocument, problem_for
from service.serialize import dumps, problem_json

PROBLEM = "application/problem+json"

TITLES = {
    400: "Bad JSON",
    401: "Unauthorized",
    404: "Not found",
    405: "Method not allowed",
    413: "Payload too large",
    415: "Unsupported media type",
    500: "Internal error",
}


def problem_response(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    body.setdefault("request_id", g.get("request_id"))
    response = Response(dumps(body), status=status, content_type=PROBLEM)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def _http_problem(error: HTTPException) -> Response:
    status = error.code or 500
    detail = {
        404: "No such resource here; see GET /openapi.yaml for what this service offers.",
        413: f"The body is over the limit of {request.max_content_length} bytes.",
        415: "Send the body as JSON, with Content-Type: application/json.",
        401: "This service needs an API key: send Authorization: Bearer <key>.",
    }.get(status, error.description or "")
    headers = {}
    if status == 405:
        allowed = sorted(m for m in (getattr(error, "valid_methods", None) or []) if m not in ("OPTIONS",))
        headers["Allow"] = ", ".join(allowed)
        detail = f"Use {' or '.join(allowed)} here."
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="maubinh"'
    title = TITLES.get(status, error.name)
    return problem_response(status, problem_json(status, title, detail), headers)


def register(app: Flask) -> None:
    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response:
        if isinstance(error, InternalServerError):
            return internal_error(error)
        return _http_problem(error)

    @app.errorhandler(BadDocument)
    @app.errorhandler(RoomRejected)
    def request_problem(error: Exception) -> Response:
        problem = problem_for(error)
        assert problem is not None
        return problem_response(*problem)

    @app.errorhandler(Exception)
    def internal_error(error: Exception) -> Response:
        logger(app.config["SETTINGS"].log_level).error(
            "unhandled error", exc_info=error, extra={"fields": {"request_id": g.get("request_id")}}
        )
        detail = f"Something went wrong on our side. Quote request id {g.get('request_id')} when reporting it."
        return problem_response(500, problem_json(500, "Internal error", detail))
