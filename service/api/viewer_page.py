"""The viewer's page in the language asked: its first paint, and a reader without scripts, see the words
the script would set (Accept-Language, as every answer)."""

from __future__ import annotations

import html
import re
from functools import cache
from importlib import resources

from service.texts import Language, phrasebook

TEXT_NODE = re.compile(r'(<(\w+)\b[^>]*\bdata-text="(viewer\.[a-z0-9_]+)"[^>]*>)(.*?)(</\2>)', re.DOTALL)
"""An element whose words the script sets from the phrasebook (it sets ``textContent``: words only)."""


@cache
def viewer_page(language: Language) -> bytes:
    """viewer.html with its texts in ``language``: each ``data-text`` element's words, the title and
    the page's ``lang``; English as shipped."""
    page = resources.files("service").joinpath("static", "viewer.html").read_text("utf-8")
    if language == "en":
        return page.encode()
    texts = phrasebook(language)
    page = TEXT_NODE.sub(lambda m: m[1] + html.escape(texts[m[3]], quote=False) + m[5], page)
    title = html.escape(texts["viewer.title"], quote=False)
    page = re.sub(r"<title>.*?</title>", lambda _: f"<title>{title}</title>", page, count=1)
    return page.replace('<html lang="en">', f'<html lang="{language}">', 1).encode()
