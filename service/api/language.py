"""The language of an answer's texts: negotiated from Accept-Language by werkzeug's own parser."""

from __future__ import annotations

from flask import Flask, Response, g, request
from werkzeug.datastructures import LanguageAccept
from werkzeug.http import parse_accept_header

from service.texts import DEFAULT_LANGUAGE, LANGUAGES, Language

TEXT_TYPES = ("application/json", "application/problem+json")
READ_CHARS = 256
"""What of a negotiation header is read: its first choices. 100 headers of 8 KB each would otherwise
be parsed on every answer, health checks included (1.5 s and 60 MB)."""


def first_choices(header: str) -> str:
    """The header's leading choices, cut at the last comma within READ_CHARS."""
    if len(header) <= READ_CHARS:
        return header
    return header[:READ_CHARS].rpartition(",")[0]


def language() -> Language:
    """``vi`` or ``en`` (the default), once per request."""
    chosen: Language | None = g.get("language")
    if chosen is None:
        offered = parse_accept_header(first_choices(request.headers.get("Accept-Language", "")), LanguageAccept)
        best = offered.best_match(LANGUAGES, default=DEFAULT_LANGUAGE)
        chosen = "vi" if best == "vi" else DEFAULT_LANGUAGE
        g.language = chosen
    return chosen


def register(app: Flask) -> None:
    @app.after_request
    def content_language(response: Response) -> Response:
        """Say which language the texts are in, and that caches must key on Accept-Language."""
        if response.mimetype in TEXT_TYPES:
            response.headers["Content-Language"] = language()
            response.vary.add("Accept-Language")
        return response
