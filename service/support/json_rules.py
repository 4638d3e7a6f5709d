"""The strict reader's rules (service.support.strict_json): what it refuses in a key, a number or a word,
said once, for the reader that raises them and for the search of where a text broke one
(service.support.json_places)."""

from __future__ import annotations

import math
import re
import sys
from typing import Any, Final

from service.texts import Text

MAX_KEY_CHARS = 256
"""No key a request or an operator's file may hold is longer (field names, player ids): a longer one is
refused as it is read, before a fault could echo it."""


def member_fault(key: str, before: dict[str, Any]) -> Text | None:
    """Why ``key`` may not follow the members ``before`` it in one object, or None."""
    if len(key) > MAX_KEY_CHARS:
        return Text("bad_json.long_key", most=MAX_KEY_CHARS, key=key[:32])
    if key in before:
        return Text("bad_json.duplicate_key", key=key[:64])
    return None


def constant_fault(name: str) -> Text:
    return Text("bad_json.constant", name=name)


def number_fault(literal: str, value: float) -> Text | None:
    """Why a number written with a fraction or an exponent is refused, or None: when reading it would
    lose a fraction and leave a whole number (``10.000000000000000001`` would pass for the integer 10; a
    whole number past 2**53 may read as another whole number: every integer field's range refuses it),
    or when it is too large for any float (``1e400``): it would read as infinity, which JSON has no word
    for (and no canonical form, RFC 8785, to bind in a signed answer)."""
    if math.isinf(value):
        return Text("bad_json.huge_number", number=literal[:40])
    if value.is_integer() and not whole(literal):
        return Text("bad_json.inexact_number", number=literal[:40], rounded=int(value))
    return None


_NUMBER: Final = re.compile(r"-?(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?")


def whole(literal: str) -> bool:
    """Whether ``literal`` (JSON's grammar) writes a whole number, exactly: read from its digits, not by
    decimal arithmetic, which fails past its context's exponents (``1.5e-99999999999999999999999``
    raised, a 500). Its digits ``m`` times ten to ``exponent − len(fraction)`` is whole when ``m`` is
    zero, or when the exponent makes up for the fraction's digits that are not trailing zeros."""
    found = _NUMBER.fullmatch(literal)
    if found is None:
        return True  # not JSON's: the reader refused it already
    whole, fraction, exponent = found.group(1), found.group(2) or "", found.group(3) or "0"
    digits = whole + fraction
    if not digits.strip("0"):
        return True
    needed = len(fraction) - (len(digits) - len(digits.rstrip("0")))
    if len(exponent.lstrip("+-")) > 18:  # past any fraction a text this long holds
        return not exponent.startswith("-")
    return int(exponent) >= needed


def long_number_fault() -> Text:
    """Python reads no integer of more than 4,300 digits (``sys.get_int_max_str_digits``)."""
    return Text("bad_json.long_number", most=sys.get_int_max_str_digits())
