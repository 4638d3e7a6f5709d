"""Where in a JSON text the strict reader's rule broke (service.support.strict_json): the JSON pointer
(RFC 6901) of a key written twice or too long, NaN, a number it cannot read, a lone surrogate or a
nesting too deep. Its parser says what, not where; a text it refused is read here again, once.

The text is read again by the same parser with hooks that mark a fault rather than raise it, and the
first mark found by halving the document (:func:`_place`): a few times the reader's own time, on a
refusal only. A nesting too deep, which no parser here reads, is found by walking the text itself, as
far as the first container that deep and no further than :data:`WALKED` tokens.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]  # the reader's own, in C
from json.scanner import NUMBER_RE
from typing import Any, Final

from service.support.strict_json import constant_fault, long_number_fault, member_fault, number_fault
from service.texts import Text

Path = tuple[str | int, ...]

DEEP: Final = 100
"""A nesting this deep is past any document the service reads: the first container at it is named."""
WALKED: Final = 20_000
"""The tokens a walk of the text reads at most, looking for that container (some 40 ms)."""
SHOWN_STEPS: Final = 8
"""A deeper pointer is shown this far, then ``/…``."""
SHOWN_KEY: Final = 64
"""A longer key is shown this far, then ``…``: a key past the reader's bound is never echoed whole."""


@dataclass(frozen=True)
class _Mark:
    """Where a value would have been refused: its fault and, for a member's, the key."""

    fault: Text
    key: str | None = None


def _members(pairs: list[tuple[str, Any]]) -> Any:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if (fault := member_fault(key, out)) is not None:
            return _Mark(fault, key)
        out[key] = value
    return out


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


def _marked(value: Any) -> bool:
    try:
        json.dumps(value)
    except TypeError:  # a mark is no JSON
        return True
    return False


def _unwritable(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate is no UTF-8
        return True
    return False


def _place(document: Any, found: Callable[[Any], bool]) -> tuple[Path, Any]:
    """The path to the first value of ``document`` (or key: then the value is None) in which ``found``
    finds what it looks for, and that value. Each level is halved and its halves written by the C
    encoder, so the search costs about what writing the document twice does (a walk in Python of 100,000
    members took 0.45 s)."""
    path: list[str | int] = []
    value = document
    while isinstance(value, dict | list) and value:
        items = list(value.items()) if isinstance(value, dict) else value
        low, high = 0, len(items)
        while high - low > 1:
            middle = (low + high) // 2
            half = items[low:middle]
            if found(dict(half) if isinstance(value, dict) else half):
                high = middle
            else:
                low = middle
        if isinstance(value, dict):
            key, value = items[low]
            path.append(key)
            if found({key: None}):
                return tuple(path), None
        else:
            path.append(low)
            value = items[low]
    return tuple(path), value


def _at(fault: Text, path: Path) -> Text:
    return Text("bad_json.at", fault=fault, pointer=pointer(path)) if path else fault


def first_fault(text: str, fault: Text) -> Text:
    """The first fault of the reader's own in ``text``, which it refused for ``fault``, and where; or
    ``fault`` as it was, where the text cannot be read again (a syntax error after it, say)."""
    try:
        marked = _MARKING.decode(text)
    except (ValueError, RecursionError):
        return fault
    path, mark = _place(marked, _marked)
    if not isinstance(mark, _Mark):
        return fault
    return _at(mark.fault, (*path, mark.key) if mark.key is not None else path)


def lone_surrogate(document: Any) -> Text:
    """The lone surrogate's fault, at the first key or string holding one."""
    return _at(Text("bad_json.lone_surrogate"), _place(document, _unwritable)[0])


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


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _escaped(surrogate: re.Match[str]) -> str:
    """A lone surrogate as JSON escapes it: a message holding one could not be written as UTF-8."""
    return f"\\u{ord(surrogate.group()):04x}"


def pointer(path: Path) -> str:
    """RFC 6901, shown at most :data:`SHOWN_STEPS` steps deep and :data:`SHOWN_KEY` characters a step."""
    shown = [step if len(str(step)) <= SHOWN_KEY else f"{str(step)[:SHOWN_KEY]}…" for step in path[:SHOWN_STEPS]]
    steps = [_SURROGATE.sub(_escaped, str(step).replace("~", "~0").replace("/", "~1")) for step in shown]
    return "/" + "/".join(steps) + ("/…" if len(path) > SHOWN_STEPS else "")
