"""Human-readable texts in each language: one catalogue per language, keyed, with named fields.

A :class:`Text` *is* its English rendering (a ``str``), so the pipeline builds answers once and
in one language; it also keeps its key and fields, so that :func:`localize` (or ``dumps``) can
render it again in another language at the edge. Machine fields (codes, steps, rules, pointers)
are plain strings and never change with the language.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, Literal, NamedTuple

Language = Literal["en", "vi"]
LANGUAGES: tuple[Language, ...] = ("en", "vi")
DEFAULT_LANGUAGE: Language = "en"


class Named(NamedTuple):
    """A value with a name of its own in each language (a hand, a pattern, a position)."""

    en: str
    vi: str


@cache
def catalogue(language: Language) -> dict[str, str]:
    """``service/texts/<language>.json``: key → template with ``{named}`` fields."""
    return dict(json.loads(resources.files("service.texts").joinpath(f"{language}.json").read_bytes()))


def _value(value: Any, language: Language) -> Any:
    if isinstance(value, Text):
        return value.render(language)
    if isinstance(value, Named):
        return value.vi if language == "vi" else value.en
    return value


class Text(str):
    """A message: its English text, with the key and fields that render it in any language."""

    key: str
    fields: dict[str, Any]

    def __new__(cls, key: str, /, **fields: Any) -> Text:
        made = super().__new__(cls, _render(key, fields, "en"))
        made.key = key
        made.fields = fields
        return made

    def render(self, language: Language) -> str:
        return str.__str__(self) if language == "en" else _render(self.key, self.fields, language)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.key, self.fields))


def _rebuild(key: str, fields: dict[str, Any]) -> Text:
    return Text(key, **fields)


def _render(key: str, fields: dict[str, Any], language: Language) -> str:
    template = catalogue(language)[key]
    return template.format_map({name: _value(value, language) for name, value in fields.items()})


def localize(document: Any, language: Language) -> Any:
    """``document`` with every :class:`Text` in it rendered in ``language`` (plain ``str``)."""
    if language == "en":
        return document
    if isinstance(document, Text):
        return document.render(language)
    if isinstance(document, dict):
        return {key: localize(value, language) for key, value in document.items()}
    if isinstance(document, list):
        return [localize(value, language) for value in document]
    return document
