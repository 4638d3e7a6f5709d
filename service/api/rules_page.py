"""docs/rules.md as a web page, so that the viewer and a ledger's citations can link to a section;
in Vietnamese, the built-in rulesets said in Vietnamese first (rules_words.py), then the full text,
marked as the English it is.

Numbered headings get an id from their number (``## 9. The built-in rulesets`` → ``#s9``,
``### 9.4 Settled details`` → ``#s9.4``): a citation "docs/rules.md §9.4" becomes
``/docs/rules#s9.4``. Raw HTML in the source is not passed through.
"""

from __future__ import annotations

import html
import re
from functools import cache
from importlib import resources

from markdown_it import MarkdownIt

from service.api.rules_words import rulesets_said
from service.texts import Language, phrasebook

SECTION = re.compile(r"^(\d+(?:\.\d+)?)\.?\s")


def section_id(number: str) -> str:
    return f"s{number}"


@cache
def rules_page(language: Language = "en") -> bytes:
    source = resources.files("service").joinpath("rules.md").read_text("utf-8")
    markdown = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = markdown.parse(source)
    for k, token in enumerate(tokens):
        if token.type == "heading_open" and (found := SECTION.match(tokens[k + 1].content)):
            token.attrSet("id", section_id(found.group(1)))
    body = markdown.renderer.render(tokens, markdown.options, {})
    if language != "en":  # the rulesets in the reader's words, then the full text as the English it is
        body = (
            rulesets_said(language)
            + f"<h2>{html.escape(phrasebook(language)['page.rules_full_text'])}</h2>\n"
            + f'<section lang="en">\n{body}</section>\n'
        )
    title = html.escape(phrasebook(language)["page.rules_title"])
    return (
        f'<!doctype html>\n<html lang="{language}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n<link rel="icon" href="data:,">\n'
        f'<title>{title}</title>\n<link rel="stylesheet" href="/viewer/viewer.css">\n</head>\n'
        f'<body>\n<main class="rules">\n{body}</main>\n</body>\n</html>\n'
    ).encode()
