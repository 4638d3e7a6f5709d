"""The page each problem ``type`` resolves to (service/problem_types.py): what it means and what to
send instead, in the reader's language, in the viewer's style."""

from __future__ import annotations

import html

from service.problem_types import PROBLEM_TYPES
from service.texts import Language, Named, Text


def problem_page(slug: str, language: Language) -> bytes | None:
    """The page of one problem type, or None when there is no such type."""
    kind = PROBLEM_TYPES.get(slug)
    if kind is None:
        return None

    def said(key: str) -> str:
        return html.escape(Text(key, name=Named("HTTP error", "Lỗi HTTP")).render(language))

    status = f" ({kind.status})" if kind.status else ""
    return (
        f'<!doctype html>\n<html lang="{language}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n<link rel="icon" href="data:,">\n'
        f'<title>{said(kind.title)}</title>\n<link rel="stylesheet" href="/viewer/viewer.css">\n</head>\n'
        f'<body>\n<main class="rules">\n<h1>{said(kind.title)}{status}</h1>\n'
        f"<p><code>/problems/{slug}</code></p>\n"
        f"<h2>{said('problem.type_heading_meaning')}</h2>\n<p>{said(kind.meaning)}</p>\n"
        f"<h2>{said('problem.type_heading_instead')}</h2>\n<p>{said(kind.instead)}</p>\n"
        f'<p><a href="/openapi.yaml">{said("problem.type_contract")}</a></p>\n'
        "</main>\n</body>\n</html>\n"
    ).encode()
