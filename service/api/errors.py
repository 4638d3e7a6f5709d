"""Every error is RFC 9457 problem+json, from one place."""

from __future__ import annotations

import re
from typing import Any, Final

from flask import Flask, Response, current_app, g, request
from werkzeug.exceptions import HTTPException, InternalServerError

from service.api.connection import close_after_answer
from service.api.language import language
from service.api.logs import logger
from service.api.metrics import refusal_codes
from service.api.rounds import RoundRefused
from service.api.signatures import bind_room
from service.api.views import TooManyValues
from service.contract import RoomRejected
from service.documents import problem_for
from service.serialize import dumps, problem_json
from service.support.strict_json import BadDocument
from service.texts import Named, Text

PROBLEM = "application/problem+json"

TITLES = {
    400: Text("problem.bad_json"),
    401: Text("problem.unauthorized"),
    403: Text("problem.forbidden"),
    404: Text("problem.not_found"),
    405: Text("problem.method_not_allowed"),
    408: Text("problem.timeout"),
    413: Text("problem.too_large"),
    415: Text("problem.unsupported_media_type"),
    501: Text("problem.not_implemented"),
    500: Text("problem.internal"),
    503: Text("problem.unavailable"),
}


def problem_response(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    body.setdefault("request_id", g.get("request_id"))
    if status == 422 and "document" in g:  # a refused room, bound to its answer when answers are signed
        bind_room(body, g.document)
    if status < 500:
        g.refusal_codes = refusal_codes(body)
    response = Response(dumps(body, language()), status=status, content_type=PROBLEM)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


IDENTIFIER: Final = re.compile(r"\S*[-_@/.0-9]")
"""A first word that is a name as sent (a ruleset id, ``club_x@2``): a sentence starting with it keeps its case."""


def _capitalised(sentence: str) -> str:
    return sentence if IDENTIFIER.match(sentence) else sentence[:1].upper() + sentence[1:]


def _sentence(text: Text) -> Text:
    """A problem's detail is a sentence, capitalised in each language, though its words may be a field's
    message reused (a 422's "không có bộ luật 'x'; …" is a 404's detail too); an id it starts with stays
    as it is written (a ruleset id with its version, not capitalised)."""
    said = Named(_capitalised(text.render("en")), _capitalised(text.render("vi")))
    return Text("problem.sentence", said=said)


def _http_problem(error: HTTPException) -> Response:
    status = error.code or 500
    headers = {}
    if status == 405:
        allowed = sorted(m for m in (getattr(error, "valid_methods", None) or []) if m not in ("OPTIONS",))
        headers["Allow"] = ", ".join(allowed)
        detail = Text("problem.method_not_allowed_detail", methods=Named(" or ".join(allowed), " hoặc ".join(allowed)))
    elif status == 408:
        detail = Text("problem.timeout_detail", seconds=current_app.config["SETTINGS"].body_seconds)
        close_after_answer()  # the rest of the body may still come: never read as the next request
    elif isinstance(error, TooManyValues):
        detail = Text("problem.too_many_values_detail", most=error.most)
    elif status == 413:
        detail = Text("problem.too_large_detail", limit=request.max_content_length)
    elif isinstance(error.description, Text):
        detail = _sentence(error.description)  # a view's own words: why not ready, which ids are known
    elif status in DETAILS:
        detail = DETAILS[status]
    else:
        detail = Text("problem.other_detail", description=error.description or "")
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="maubinh"'
    if (retry_after := getattr(error, "retry_after", None)) is not None:
        headers["Retry-After"] = str(retry_after)
    title = (
        getattr(error, "title", None)
        or TITLES.get(status)
        or Text("problem.other", name=Named(error.name, f"Lỗi HTTP {status}"))
    )
    return problem_response(status, problem_json(status, title, detail), headers)


DETAILS = {
    404: Text("problem.not_found_detail"),
    415: Text("problem.unsupported_media_type_detail"),
    401: Text("problem.unauthorized_detail"),
}


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

    @app.errorhandler(RoundRefused)
    def round_refused(error: RoundRefused) -> Response:
        return problem_response(error.status, error.problem)

    @app.errorhandler(Exception)
    def internal_error(error: Exception) -> Response:
        logger(app.config["SETTINGS"].log_level).error(
            "unhandled error", exc_info=error, extra={"fields": {"request_id": g.get("request_id")}}
        )
        detail = Text("problem.internal_detail", request_id=g.get("request_id"))
        return problem_response(500, problem_json(500, TITLES[500], detail))
