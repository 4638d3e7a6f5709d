"""Human-readable texts in each language: one phrasebook per language (service/texts/<language>.json),
keyed, with named fields (a *catalogue* is the rulesets': service.rulesets.catalogue).

A :class:`Text` *is* its English rendering (a ``str``) that keeps its key and fields, so that
:func:`localize` (``dumps``) can render it again in another language at the edge: faults, problems
and verify's explanations. A ledger line's explanation, built on the hot path, is a
:class:`Message` that the serializer renders once, in the language asked. Machine fields (codes,
steps, rules, pointers) are plain strings and never change with the language.

May import: service.package_files alone: every layer says its words through it.
"""

from __future__ import annotations

import errno
import json
import string
from collections.abc import Mapping
from functools import cache, lru_cache
from typing import Any, Literal

from service import package_files

Language = Literal["en", "vi"]
LANGUAGES: tuple[Language, ...] = ("en", "vi")
DEFAULT_LANGUAGE: Language = "en"


class Named(str):
    """A value with a name of its own in each language (a hand, a pattern, a position, a foul
    reason): its English (usually its id) as a ``str``, its Vietnamese as ``vi``. Built once per
    value, so that formatting it in English costs nothing more than a string."""

    vi: str

    def __new__(cls, en: str, vi: str) -> Named:
        made = super().__new__(cls, en)
        made.vi = vi
        return made

    @property
    def en(self) -> str:
        return str.__str__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Named, (self.en, self.vi))


MINUS = "\u2212"
"""The minus sign of a number said in words: "−9,000", not the hyphen of "-9000"."""


_SMALL_NUMERALS: tuple[Named, ...] = tuple(Named(str(n), str(n)) for n in range(1000))
"""0–999, unsigned, as both languages write them (no separator yet): a line's numbers are mostly these."""


@lru_cache(maxsize=4096)  # a room's amounts repeat across rooms (a few units times a few stakes)
def numeral(n: int, signed: bool = False) -> Named:
    """A whole number as each language writes it: 9,000 in English, 9.000 in Vietnamese (the thousands
    separator a Vietnamese reader takes for one; a comma there reads as a decimal point), the minus
    sign a real one, and with ``signed`` a "+" before a positive number.

    >>> n = numeral(-1_000_000_000_000)
    >>> (n.en, n.vi)
    ('−1,000,000,000,000', '−1.000.000.000.000')
    >>> numeral(6000, signed=True).vi
    '+6.000'
    """
    if 0 <= n < len(_SMALL_NUMERALS) and not (signed and n):
        return _SMALL_NUMERALS[n]
    grouped = f"{abs(n):,}"
    sign = MINUS if n < 0 else "+" if signed and n > 0 else ""
    return Named(sign + grouped, sign + grouped.replace(",", "."))


def listed(items: list[Any]) -> Named:
    """Items as one list, in each language's words: "2, 3 and 4", "2, 3 và 4".

    >>> listed([2, 4]).vi
    '2 và 4'
    """
    words = [str(item) for item in items]
    if len(words) < 2:
        return Named("".join(words), "".join(words))
    head = ", ".join(words[:-1])
    return Named(f"{head} and {words[-1]}", f"{head} và {words[-1]}")


OS_ERRORS = {
    errno.ENOENT: "oserror.ENOENT",
    errno.EACCES: "oserror.EACCES",
    errno.EPERM: "oserror.EPERM",
    errno.EISDIR: "oserror.EISDIR",
    errno.ENOTDIR: "oserror.ENOTDIR",
    errno.ENOSPC: "oserror.ENOSPC",
    errno.EROFS: "oserror.EROFS",
    errno.EEXIST: "oserror.EEXIST",
    errno.ENAMETOOLONG: "oserror.ENAMETOOLONG",
    errno.ELOOP: "oserror.ELOOP",
    errno.EMFILE: "oserror.EMFILE",
    errno.EIO: "oserror.EIO",
    errno.ESTALE: "oserror.ESTALE",
    errno.ENODEV: "oserror.ENODEV",
    errno.EPIPE: "oserror.EPIPE",
    errno.EBADF: "oserror.EBADF",
}
"""The system's errors a file of the command line or of an operator's folder meets, in the phrasebook."""


def os_error(error: OSError) -> Named:
    """Why a file could not be opened or written, in each language (the system says it in English only);
    an error the phrasebook does not know, by the system's words and its number."""
    key = OS_ERRORS.get(error.errno or 0)
    if key is None:
        english = error.strerror or str(error)
        return Named(english, f"{english} (lỗi hệ điều hành {error.errno})")
    return Named(phrasebook("en")[key], phrasebook("vi")[key])


class KeyedName(Named):
    """A value named by a phrasebook key in Vietnamese (a foul reason): the pipeline carries the key,
    and the phrasebook is read only when a text is rendered in Vietnamese, at the edge."""

    key: str

    def __new__(cls, en: str, key: str) -> KeyedName:
        made = str.__new__(cls, en)
        made.key = key
        return made

    @property
    def vi(self) -> str:  # type: ignore[override]  # read at the edge, never written
        return phrasebook("vi")[self.key]

    def __reduce__(self) -> tuple[Any, ...]:
        return (KeyedName, (self.en, self.key))


Message = tuple[str, dict[str, Any]]
"""A ledger line's explanation before it is words: a key and its fields (ids, numbers, Named). A
plain tuple, because the settlement builds one per line; the serializer renders it with
:func:`ledger_templates` (and :func:`in_language` for a language other than English)."""


def in_language(fields: dict[str, Any], language: Language) -> dict[str, Any]:
    """A message's fields as ``language`` says them (a Named by its name there)."""
    return {name: _value(value, language) for name, value in fields.items()}


Template = tuple[tuple[str, str | None], ...]
"""A ledger template read once: each literal text and the field that follows it (None at the end)."""


@cache
def ledger_templates(language: Language) -> dict[str, Template]:
    """The ledger's templates (plain ``{name}`` fields only), parsed once: the settlement fills one
    per ledger line, and joining the pieces (compiled, in service.serialize) costs a fraction of
    ``str.format_map`` or ``%``."""
    templates = {}
    for key, template in phrasebook(language).items():
        if key.startswith("ledger."):
            parts = list(string.Formatter().parse(template))
            assert all(not spec and not conversion for _, _, spec, conversion in parts), key
            templates[key] = tuple((text, name or None) for text, name, _, _ in parts)
    return templates


@cache
def choices_in_vietnamese() -> dict[str, str]:
    """The built-in rulesets' choices (each ``decision`` and ``reason``, English in the ruleset's own
    document, which its digest covers), English sentence → Vietnamese: served beside them, never instead."""
    return dict(json.loads(package_files.read_bytes(__name__, "choices.vi.json")))


def choice_in_vietnamese(english: str, labels: Mapping[str, str]) -> str | None:
    """A built-in choice's Vietnamese, its hands named as the ruleset labels them: a ``{front}``,
    ``{middle}`` or ``{back}`` in it is that label in lower case ("chi 3", or "chi đầu" in a ruleset
    counting from the 3-card hand), never the English field name in a Vietnamese sentence."""
    said = choices_in_vietnamese().get(english)
    if said is None:
        return None
    for position, label in labels.items():
        said = said.replace("{" + position + "}", label[:1].lower() + label[1:])
    return said


@cache
def ledger_fields(key: str) -> frozenset[str]:
    """The fields a ledger text names in any language: a line need not reckon the words of one it never says."""
    return frozenset(name for language in LANGUAGES for _, name in ledger_templates(language)[key] if name)


@cache
def phrasebook(language: Language) -> dict[str, str]:
    """``service/texts/<language>.json``: key → template with ``{named}`` fields."""
    return dict(json.loads(package_files.read_bytes(__name__, f"{language}.json")))


def _value(value: Any, language: Language) -> Any:
    """A field as ``language`` says it: a Text or Named in its words, a whole number as it writes them."""
    if isinstance(value, Text):
        return value.render(language)
    if isinstance(value, Named):
        return value.vi if language == "vi" else value.en
    if type(value) is int:
        named = numeral(value)
        return named.vi if language == "vi" else named.en
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
    template = phrasebook(language)[key]
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
