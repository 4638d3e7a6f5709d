"""JSON text → document, strictly: the one parser for request bodies and operators' ruleset files.

Python's parser takes ``NaN`` and ``Infinity``, keeps the last of two equal keys and recurses
without bound; this one refuses each, saying why in the service's words.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import orjson

from service.support.json_rules import (
    MAX_KEY_CHARS,
    constant_fault,
    long_number_fault,
    member_fault,
    number_fault,
)
from service.texts import Named, Text


class BadDocument(ValueError):
    """The body is not a JSON document this service reads (HTTP 400)."""


def _no_constants(name: str) -> Any:
    raise BadDocument(constant_fault(name))


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if (fault := member_fault(key, out)) is not None:
            raise BadDocument(fault)
        out[key] = value
    return out


def _exact_float(literal: str) -> float:
    value = float(literal)
    if (fault := number_fault(literal, value)) is not None:
        raise BadDocument(fault)
    return value


_DECODER: Final = json.JSONDecoder(
    parse_constant=_no_constants, parse_float=_exact_float, object_pairs_hook=_no_duplicates
)
"""One decoder for every document: ``json.loads`` with hooks builds a decoder and its scanner per call."""

JSON_ERRORS = {
    "Expecting value": Named("Expecting value", "thiếu một giá trị, hoặc nội dung bị cắt ngang"),
    "Expecting ',' delimiter": Named("Expecting ',' delimiter", "thiếu dấu ','"),
    "Expecting ':' delimiter": Named("Expecting ':' delimiter", "thiếu dấu ':'"),
    "Expecting property name enclosed in double quotes": Named(
        "Expecting property name enclosed in double quotes",
        "thiếu tên khóa (tên khóa phải đặt trong dấu ngoặc kép), hoặc nội dung bị cắt ngang",
    ),
    "Unterminated string starting at": Named("Unterminated string starting", 'chuỗi chưa có dấu " đóng, bắt đầu'),
    "Invalid control character at": Named("Invalid control character", "ký tự điều khiển không hợp lệ"),
    "Extra data": Named("Extra data", "thừa dữ liệu sau văn bản JSON"),
    "Invalid \\escape": Named("Invalid \\escape", "mã thoát \\ không hợp lệ"),
}
"""Python's JSON parser says what is wrong in English; these are the messages it gives most (without
a trailing "at", which the position says)."""
BYTE_ORDER_MARK = "\ufeff"
"""RFC 8259 §8.1: a parser may ignore one before a JSON text, as editors on Windows write it."""
JSON_WHITESPACE = " \t\r\n"
"""RFC 8259 §2's insignificant white space, all a text without a value may hold."""


def most_values(body: bytes) -> int:
    """An upper bound on the values and keys a JSON text holds, counted in C without parsing it: every
    value but a container's first follows a comma, a member's value a colon, and a first one its
    container's bracket. What a parsed document costs in memory is about proportional to it."""
    return body.count(b",") + body.count(b":") + body.count(b"[") + body.count(b"{") + 1


SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A ``\\uD800``–``\\uDFFF`` escape: half of a pair, or a lone surrogate, which is no character."""


def _lone_surrogate(document: Any) -> bool:
    try:
        json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


FAST_DEPTH: Final = 32
"""The deepest document the fast path reads; a deeper one goes to the strict reader."""


def _plain(value: Any, depth: int) -> bool:
    """No float, no key longer than :data:`MAX_KEY_CHARS`, no deeper than :data:`FAST_DEPTH`."""
    if isinstance(value, dict):
        return depth <= FAST_DEPTH and all(
            len(key) <= MAX_KEY_CHARS and _plain(member, depth + 1) for key, member in value.items()
        )
    if isinstance(value, list):
        return depth <= FAST_DEPTH and all(_plain(item, depth + 1) for item in value)
    return not isinstance(value, float)


JSON_WHITESPACE_BYTES: Final = b" \t\r\n"


def _compact(body: bytes) -> Any:
    """``body`` read by orjson when it is exactly orjson's own compact writing of what it read, but for
    white space between tokens: a key written twice (orjson keeps one), a number or an escape it writes
    otherwise, all fail that test, and a float, a long key or deep nesting are left to the strict reader
    too, so a document taken here is one the strict reader takes, the same; else None. White space is
    dropped before the comparison only where no string holds a space (the compact writing then has
    none, and a tab or line break in a string is always escaped), so every byte dropped lay between
    tokens. A month of receipt lines reads 3 times faster (bench/receipts.py --stages), a spaced room
    twice as fast (bench/cli.py)."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not _plain(document, 0):  # first: orjson writes 254 levels at most
        return None
    written = orjson.dumps(document)
    if written == body or (b" " not in written and body.translate(None, JSON_WHITESPACE_BYTES) == written):
        return document
    return None


def loads(body: bytes | str) -> Any:
    """Parse a request body or an operator's file, or raise :class:`BadDocument` saying why. A lone
    surrogate (``"\\ud800"``) is refused: no text holding one can be written as UTF-8."""
    compact = body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass")  # orjson refuses a lone one
    if compact[:1] in (b"{", b"[") and (document := _compact(compact)) is not None:
        return document
    return strictly(body)


def _places() -> Any:
    """service.support.json_places, which says where a refusal broke: imported by a refusal only."""
    from service.support import json_places

    return json_places


def strictly(body: bytes | str) -> Any:
    """:func:`loads` without the fast path: what the fast path must agree with."""

    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
    except UnicodeDecodeError as error:
        raise BadDocument(Text("bad_json.not_utf8", byte=error.start)) from error
    text = text.removeprefix(BYTE_ORDER_MARK)
    try:
        document = _DECODER.decode(text)
    except json.JSONDecodeError as error:
        if not text.strip(JSON_WHITESPACE):
            raise BadDocument(Text("bad_json.empty")) from error
        what = JSON_ERRORS.get(error.msg, Named(error.msg, error.msg))
        raise BadDocument(Text("bad_json.syntax", error=what, line=error.lineno, column=error.colno)) from error
    except RecursionError as error:
        raise BadDocument(_places().too_deep(text)) from error
    except BadDocument as error:  # a rule of this reader's own: said again with where, read again to find it
        raise BadDocument(_places().first_fault(text, error.args[0])) from None
    except ValueError as error:
        if str(error).startswith("Exceeds the limit"):
            raise BadDocument(_places().first_fault(text, long_number_fault())) from error
        raise BadDocument(Text("bad_json.unreadable", error=str(error)[:120])) from error
    if "\\u" in text and SURROGATE_ESCAPE.search(text) and _lone_surrogate(document):  # the walk only after an escape
        raise BadDocument(_places().lone_surrogate(document))
    return document
