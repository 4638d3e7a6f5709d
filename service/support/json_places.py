"""Where in a JSON text the strict reader (service.support.strict_json) found one of its rules
(service.support.json_rules) broken: the JSON pointer (RFC 6901) of a key written twice or too long,
NaN, a number it cannot read, a lone surrogate or a nesting too deep. Its parser says what, not
where; a text it refused is read here again, once.

The text is read again by the same parser with hooks that mark a fault rather than raise it, and the
document walked, in the text's order, to the first mark of the fault the reader raised, as far as
:data:`WALKED` values: the reader's own time again and a bounded walk, on a refusal only. A nesting
too deep, which no parser here reads, is found by walking the text itself, as far as the first
container that deep and no further than :data:`WALKED` tokens.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from json.decoder import scanstring  # type: ignore[attr-defined]  # the reader's own, in C
from json.scanner import NUMBER_RE
from typing import Any, Final

from service.support.json_rules import constant_fault, long_number_fault, member_fault, number_fault
from service.support.printable import escaped
from service.texts import Text

Path = tuple[str | int, ...]

DEEP: Final = 100
"""A nesting this deep is past any document the service reads: the first container at it is named."""
WALKED: Final = 20_000
"""The values (or the text's tokens) a search reads at most: some 40 ms, a few hundred rooms."""
SHOWN_STEPS: Final = 8
"""A deeper pointer is shown this far, then ``/…``."""
SHOWN_KEY: Final = 64
"""A longer key is shown this far, then ``…``: a key past the reader's bound is never echoed whole."""


@dataclass(frozen=True)
class _Mark:
    """A value the reader refused, in place of the value."""

    fault: Text


class _Twice(dict[str, Any]):
    """An object whose ``key`` the reader refused (written twice, or too long): its members kept, so
    that a fault among them that the reader met first is found first."""

    fault: Text
    key: str


def _members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    twice: tuple[Text, str] | None = None
    for key, value in pairs:
        if twice is None and (fault := member_fault(key, out)) is not None:
            twice = (fault, key)
        out.setdefault(key, value)
    if twice is None:
        return out
    marked = _Twice(out)
    marked.fault, marked.key = twice
    return marked


def _float(literal: str) -> Any:
    value = float(literal)
    fault = number_fault(literal, value)
    return value if fault is None else _Mark(fault)


def _int(literal: str) -> Any:
    return _Mark(long_number_fault()) if len(literal.lstrip("-")) > sys.get_int_max_str_digits() else int(literal)


_MARKING: Final = json.JSONDecoder(
    parse_constant=lambda name: _Mark(constant_fault(name)),
    parse_float=_float,
    parse_int=_int,
    object_pairs_hook=_members,
)


def _children(value: Any) -> Iterator[tuple[str | int, Any]]:
    return iter(value.items()) if isinstance(value, dict) else enumerate(value)


def _walk(document: Any) -> Iterator[tuple[list[str | int], Any]]:
    """Each value of ``document`` with its path, in the text's order; a container's members are read
    as they are reached, so a walk cut short costs what it read. The path is one list, changed as the
    walk goes (a copy for each value cost as much as the value was deep): keep a copy of it."""
    path: list[str | int] = []
    yield path, document
    stack: list[Iterator[tuple[str | int, Any]]] = [_children(document)] if isinstance(document, dict | list) else []
    while stack:
        member = next(stack[-1], None)
        if member is None:
            stack.pop()
            if path:
                path.pop()
            continue
        path.append(member[0])
        yield path, member[1]
        if isinstance(member[1], dict | list):
            stack.append(_children(member[1]))
        else:
            path.pop()


def _at(fault: Text, path: Path) -> Text:
    return Text("bad_json.at", fault=fault, pointer=pointer(path)) if path else fault


def first_fault(text: str, fault: Text) -> Text:
    """``fault``, which the reader refused ``text`` for, and where: the first place in the text's order
    with that fault, among the first :data:`WALKED` values; or ``fault`` as it was, where the text
    cannot be read again (a syntax error after it, say) or the place lies past them."""
    try:
        marked = _MARKING.decode(text)
    except (ValueError, RecursionError):
        return fault
    for path, value in islice(_walk(marked), WALKED):
        if isinstance(value, _Mark) and value.fault == fault:
            return _at(fault, tuple(path))
        if isinstance(value, _Twice) and value.fault == fault:
            return _at(fault, (*path, value.key))
    return fault


_LONE: Final = re.compile("[\ud800-\udfff]")


def lone_surrogate(document: Any) -> Text:
    """The lone surrogate's fault, at the first key or string holding one among the first :data:`WALKED`
    values."""
    fault = Text("bad_json.lone_surrogate")
    for path, value in islice(_walk(document), WALKED):
        if (path and isinstance(path[-1], str) and _LONE.search(path[-1])) or (
            isinstance(value, str) and _LONE.search(value)
        ):
            return _at(fault, tuple(path))
    return fault


_SPACE: Final = re.compile(r"[ \t\n\r]*")
_WORD: Final = re.compile(r"true|false|null|NaN|-?Infinity")


@dataclass
class _Open:
    path: Path
    is_object: bool
    index: int = 0
    key: str = ""

    def child(self) -> Path:
        return (*self.path, self.key if self.is_object else self.index)


def _skip(text: str, at: int) -> int:
    space = _SPACE.match(text, at)
    return space.end() if space is not None else at


def too_deep(text: str) -> Text:
    """The nesting's fault, at the first container :data:`DEEP` levels down, if the first
    :data:`WALKED` tokens of the text reach one."""
    fault = Text("bad_json.too_deep")
    stack: list[_Open] = []
    at, expecting = _skip(text, 0), "value"
    try:
        for _ in range(WALKED):
            if at >= len(text):
                break
            mark = text[at]
            if expecting == "key":
                key, at = scanstring(text, at + 1, False)
                stack[-1].key = key
                at = _skip(text, _skip(text, at) + 1)  # past the colon
                expecting = "value"
            elif expecting == "after":
                if not stack or mark not in ",}]":
                    break
                if mark == ",":
                    stack[-1].index += 1
                    expecting = "key" if stack[-1].is_object else "value"
                else:
                    stack.pop()
                at = _skip(text, at + 1)
            elif mark in "{[":
                if len(stack) + 1 >= DEEP:
                    return _at(fault, stack[-1].child())
                stack.append(_Open(stack[-1].child() if stack else (), mark == "{"))
                at = _skip(text, at + 1)
                closed = text[at : at + 1] in ("}", "]")
                expecting = "after" if closed else "key" if mark == "{" else "value"
                if closed:
                    stack.pop()
                    at = _skip(text, at + 1)
            else:
                if mark == '"':
                    _, at = scanstring(text, at + 1, False)
                elif found := (_WORD.match(text, at) or NUMBER_RE.match(text, at)):
                    at = found.end()
                else:
                    break
                at, expecting = _skip(text, at), "after"
    except (ValueError, IndexError):  # a string that cannot be read: the walk ends there
        pass
    return fault


def pointer(path: Path) -> str:
    """RFC 6901, shown at most :data:`SHOWN_STEPS` steps deep and :data:`SHOWN_KEY` characters a step, its
    control characters and lone surrogates escaped: a refusal stays one line, and can be written."""
    shown = [step if len(str(step)) <= SHOWN_KEY else f"{str(step)[:SHOWN_KEY]}…" for step in path[:SHOWN_STEPS]]
    steps = [escaped(str(step).replace("~", "~0").replace("/", "~1")) for step in shown]
    return "/" + "/".join(steps) + ("/…" if len(path) > SHOWN_STEPS else "")
