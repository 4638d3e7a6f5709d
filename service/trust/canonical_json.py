"""A document's canonical JSON (RFC 8785, JCS): the bytes a room's digest is taken over, the same in
any language that implements the RFC.

JCS is JSON with members sorted by their keys' UTF-16 code units, no white space, only the escapes
JSON requires, and every number as ECMAScript writes a double (a whole number past 2**53 is the
nearest double). It is written here in one compiled walk (setup.py), which does not recurse through
Python frames: a document nested as deep as the strict reader allows costs no more than a flat one.
A test holds it equal to ``rfc8785``, the reference implementation, on random documents.
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any, Final

SAFE_INTEGER: Final = 2**53 - 1
"""I-JSON's (RFC 7493) and JCS's largest whole number: past it, a number is the nearest double."""


class NotCanonical(ValueError):
    """A document JCS cannot write: a whole number past the largest double (the strict reader takes up to
    4,300 digits), which no double approximates. No room the service scores holds one."""


def _number(value: float) -> str:
    """A double as ECMAScript's Number::toString writes it (RFC 8785 3.2.2.3): Python's shortest
    round-trip digits, placed by ECMAScript's rules."""
    if value == 0:
        return "0"
    if value < 0:
        return "-" + _number(-value)
    mantissa, _, exponent = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    written = whole + fraction
    digits = written.lstrip("0")
    point = len(whole) + int(exponent or "0") - (len(written) - len(digits))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        return digits + "0" * (point - k)
    if 0 < point <= 21:
        return digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    shown = point - 1
    sign = "+" if shown >= 0 else "-"
    return (digits if k == 1 else digits[0] + "." + digits[1:]) + "e" + sign + str(abs(shown))


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _write(document: Any, out: list[str]) -> None:
    """Append ``document``'s JCS text to ``out``."""
    if isinstance(document, str):
        out.append(encode_basestring(document))  # the escapes JCS makes: ", \\, and U+0000–U+001F
    elif isinstance(document, dict):
        out.append("{")
        keys = sorted(document)
        if not all(key.isascii() or max(key) <= "\uffff" for key in keys):
            keys.sort(key=_utf16)  # beyond U+FFFF, UTF-16 order is not code point order
        for k, key in enumerate(keys):
            if k:
                out.append(",")
            out.append(encode_basestring(key))
            out.append(":")
            _write(document[key], out)
        out.append("}")
    elif isinstance(document, list):
        out.append("[")
        for k, item in enumerate(document):
            if k:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif document is None:
        out.append("null")
    elif document is True:
        out.append("true")
    elif document is False:
        out.append("false")
    elif isinstance(document, int):
        if -SAFE_INTEGER <= document <= SAFE_INTEGER:
            out.append(str(document))
        else:
            try:
                nearest = float(document)
            except OverflowError:
                raise NotCanonical("a whole number past the largest double") from None
            out.append(_number(nearest))
    elif isinstance(document, float):
        out.append(_number(document))
    else:
        raise TypeError(f"not a JSON value: {type(document).__name__}")


def canonical(document: Any) -> bytes:
    """``document``'s RFC 8785 form, UTF-8. The document is one :func:`service.support.strict_json.loads`
    read: no NaN, no infinity, no lone surrogate."""
    out: list[str] = []
    _write(document, out)
    return "".join(out).encode()
