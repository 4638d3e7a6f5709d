"""A receipt's text read quickly where it is written as the service's tools write it.

A receipt is mostly two JSON texts held as strings. Read strictly (:mod:`service.support.strict_json`),
a month's line costs more than its signature, and its answer, read whole, as much again: most of it is
explanations no check reads. So the envelope is first read in its one shape (msgspec), its two bodies
left raw, and written back: where that gives the line byte for byte, no key was written twice, none is
missing or extra, no number is a float and no white space or escape was written otherwise, so the
strict reader would read what orjson reads, and orjson reads it. Any other line, however slightly
different, is read strictly, which says what is wrong with it. The answer, once its signature has
checked, is read for the members the checks use (:class:`_Answer`), the rest skipped unread.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, TypedDict

import msgspec
import orjson

from service.support.json_rules import MAX_KEY_CHARS
from service.support.strict_json import BadDocument, loads, most_values
from service.texts import Text

Whole = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
"""A whole number orjson reads as one (one past 64 bits it reads as a float)."""


class _Request(msgspec.Struct, forbid_unknown_fields=True):
    method: str
    path: str
    body: msgspec.Raw


class _Response(msgspec.Struct, forbid_unknown_fields=True):
    status: Whole
    headers: dict[str, str]
    body: msgspec.Raw


class _Receipt(msgspec.Struct, forbid_unknown_fields=True):
    receipt: Whole
    request: _Request
    response: _Response


MOST_VALUES: Final = 4_000_000
"""The most JSON values a receipt, or a body of it not yet signed for, may hold to be read strictly
(:func:`most_values`, an upper bound counted in C): a receipt of 500 explained rooms holds some 750,000,
and a value read costs some 90 bytes, so that a file of tiny values (``[[],[],…]``: a line of its
64 MiB holds 20 million) is refused rather than read into gigabytes, whoever sent it."""


def read_body(text: bytes | str) -> Any:
    """A JSON text of a receipt read strictly, within :data:`MOST_VALUES`, or :class:`BadDocument`."""
    counted = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if most_values(counted) > MOST_VALUES:
        raise BadDocument(Text("bad_json.too_many_values", most=MOST_VALUES))
    return loads(text)


_ENVELOPE: Final = msgspec.json.Decoder(_Receipt)
_ENCODER: Final = msgspec.json.Encoder()


def read_receipt(text: bytes) -> Any:
    """A receipt's document, as :func:`service.support.strict_json.loads` reads it (or its
    :class:`~service.support.strict_json.BadDocument`)."""
    try:
        envelope = _ENVELOPE.decode(text)
        bodies = (envelope.request.body, envelope.response.body)
        if (
            all(bytes(memoryview(body)[:1]) == b'"' for body in bodies)  # text, as bodies are: nothing in them to check
            and _ENCODER.encode(envelope) == text
            and all(len(name) <= MAX_KEY_CHARS for name in envelope.response.headers)
        ):
            return orjson.loads(text)  # strict, as shown: read by orjson, which reads long strings fastest
    except (msgspec.DecodeError, orjson.JSONDecodeError, UnicodeDecodeError, RecursionError):
        pass  # msgspec's UnicodeDecodeError: a header not UTF-8; RecursionError: a body nested past its depth
    return read_body(text)


class _Player(TypedDict, total=False):
    id: Any
    amount: Any


class _Line(TypedDict, total=False):
    step: Any
    position: Any
    payer: Any
    payee: Any
    units: Any
    amount: Any


class _Ruling(TypedDict, total=False):
    """A room's answer, as far as the checks read it: its ruleset, digest, players' amounts, ledger lines
    (without their explanations) and, for a room refused, its errors."""

    ruleset: Any
    room_digest: Any
    players: list[_Player] | None
    ledger: list[_Line] | None
    errors: Any


class _Answer(_Ruling, total=False):
    """An answer of any signed route: a score's ruling, a verify's verdict and ruling, a batch's results."""

    agrees: Any
    result: _Ruling | None
    receipt: Any
    results: list[_Ruling] | None


_ANSWER: Final = msgspec.json.Decoder(_Answer)


def read_signed_answer(body: bytes) -> Any:
    """An answer whose signature checked, read for the members the checks use (:class:`_Answer`) where it
    has their shape, else whole by orjson; what orjson refuses goes to strict_json, for its words. The
    service's own writing never gives a key twice nor a number the strict reader refuses, so for it this
    is the strict reading, 5 times faster. An answer a published key signed but written otherwise (a key
    twice, an inexact number) is read as msgspec and orjson read it, the last of two keys, where the
    strict reader would refuse it: reading every answer strictly would cost some 48 µs a receipt more
    (docs/receipts.md, Speed)."""
    try:
        return _ANSWER.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError):
        pass
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return loads(body)
