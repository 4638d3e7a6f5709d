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
        chosen = _negotiated(request.headers.get("Accept-Language", ""))
        g.language = chosen
    return chosen


def _negotiated(header: str) -> Language:
    """The first range, by quality, whose primary tag is one of ours (RFC 4647's lookup: ``en-GB``
    falls back to ``en``). werkzeug's ``best_match`` prefers an exact tag at any quality, so
    ``en-GB,vi;q=0.9`` chose Vietnamese."""
    offered = parse_accept_header(first_choices(header), LanguageAccept)
    for tag, quality in sorted(offered, key=lambda choice: -choice[1]):  # werkzeug puts ``*`` last at any quality
        primary = tag.lower().replace("_", "-").partition("-")[0]  # vi_VN, as some Java and Android clients send it
        if quality > 0 and primary in LANGUAGES:
            return "vi" if primary == "vi" else "en"
        if quality > 0 and primary == "*":
            return DEFAULT_LANGUAGE
    return DEFAULT_LANGUAGE


def register(app: Flask) -> None:
    @app.after_request
    def content_language(response: Response) -> Response:
        """Say which language the texts are in, and that caches must key on Accept-Language."""
        if response.mimetype in TEXT_TYPES:
            response.headers["Content-Language"] = language()
            response.vary.add("Accept-Language")
        return response
