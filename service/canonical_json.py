"""A document's canonical JSON (RFC 8785, JCS): the bytes a room's digest is taken over, the same in
any language that implements the RFC.

For the documents callers send (strings, whole numbers within ±2**53, booleans, null), JCS is JSON
with members sorted by key, no white space and only the escapes JSON requires, written here in one
walk. A document with a fraction or a whole number past 2**53 (JCS writes it as ECMAScript writes a
double), or a key beyond U+FFFF (JCS sorts keys by UTF-16 code units), goes to ``rfc8785``, the full
implementation, which costs a room about ten times as much.
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any, Final

SAFE_INTEGER: Final = 2**53 - 1
"""I-JSON's (RFC 7493) and JCS's largest whole number: past it, a number is the nearest double."""


def _write(document: Any, out: list[str]) -> bool:
    """Append ``document``'s JCS text to ``out``; False where it needs the full implementation."""
    if isinstance(document, str):
        out.append(encode_basestring(document))  # the escapes JCS makes: ", \\, and U+0000–U+001F
    elif isinstance(document, dict):
        out.append("{")
        first = True
        for key in sorted(document):
            if not (key.isascii() or max(key) <= "\uffff"):
                return False
            if not first:
                out.append(",")
            first = False
            out.append(encode_basestring(key))
            out.append(":")
            if not _write(document[key], out):
                return False
        out.append("}")
    elif isinstance(document, list):
        out.append("[")
        first = True
        for item in document:
            if not first:
                out.append(",")
            first = False
            if not _write(item, out):
                return False
        out.append("]")
    elif document is None:
        out.append("null")
    elif document is True:
        out.append("true")
    elif document is False:
        out.append("false")
    elif isinstance(document, int) and -SAFE_INTEGER <= document <= SAFE_INTEGER:
        out.append(str(document))
    else:
        return False
    return True


def _as_doubles(document: Any) -> Any:
    """The document as an ECMAScript parser reads it: a whole number past 2**53 is the nearest double."""
    if isinstance(document, dict):
        return {key: _as_doubles(value) for key, value in document.items()}
    if isinstance(document, list):
        return [_as_doubles(item) for item in document]
    if isinstance(document, int) and not isinstance(document, bool) and abs(document) > SAFE_INTEGER:
        return float(document)
    return document


def canonical(document: Any) -> bytes:
    """``document``'s RFC 8785 form, UTF-8. The document is one :func:`service.strict_json.loads`
    read: no NaN, no infinity, no lone surrogate."""
    out: list[str] = []
    if _write(document, out):
        return "".join(out).encode()
    import rfc8785

    return bytes(rfc8785.dumps(_as_doubles(document)))
