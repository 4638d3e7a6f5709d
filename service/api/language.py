"""The language of an answer's texts: negotiated from Accept-Language by werkzeug's own parser."""

from __future__ import annotations

from flask import Flask, Response, g, request

from service.texts import DEFAULT_LANGUAGE, LANGUAGES, Language

TEXT_TYPES = ("application/json", "application/problem+json")


def language() -> Language:
    """``vi`` or ``en`` (the default), once per request."""
    chosen: Language | None = g.get("language")
    if chosen is None:
        best = request.accept_languages.best_match(LANGUAGES, default=DEFAULT_LANGUAGE)
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
