"""marshmallow's messages → faults: each at its RFC 6901 pointer, with a stable code, in request order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from service.contract import Fault, RoomRejected, escape
from service.hands import POSITIONS
from service.rulesets import Path
from service.texts import Text, phrasebook
from service.validation.fields import SELF

CODES = {
    "fault.unknown_field": "unknown_field",
    "fault.required": "required",
    "fault.claim_amount_out_of_range": "amount_out_of_range",
}
"""Refusals with a code of their own (any other is ``invalid``)."""


def _fault(pointer: str, message: str) -> Fault:
    """A refusal as a fault: a Text (our validators), a text key (marshmallow's, by the error_messages
    of fields.py and schemas.py), or anything else marshmallow says, quoted."""
    if not isinstance(message, Text):
        message = Text(message) if message in phrasebook("en") else Text("fault.other", message=message)
    return Fault(pointer, message, CODES.get(message.key, "invalid"))


def _flatten(messages: Any, pointer: str = "") -> Iterator[Fault]:
    if isinstance(messages, dict):
        for key, value in messages.items():
            if key in (SELF, "_schema"):
                yield from _flatten(value, pointer)
            else:
                yield from _flatten(value, f"{pointer}/{escape(str(key))}")
    elif isinstance(messages, list):
        for message in messages:
            yield from _flatten(message, pointer)
    else:
        yield _fault(pointer, messages if isinstance(messages, str) else str(messages))


_FIELD_ORDER = {
    name: k
    for k, name in enumerate(
        ("ruleset", "ruleset_digest", "stake", "round_id", "players", "id", "status", "declare", *POSITIONS, "cards")
    )
}


def _sort_key(fault: Fault) -> tuple[tuple[int, int, str], ...]:
    parts = fault.pointer.split("/")[1:]
    # an array index is ASCII digits; "³" is a digit to str.isdigit, but no index (and int() refuses it)
    return tuple(
        (0, int(p), "") if p.isascii() and p.isdigit() else (1, _FIELD_ORDER.get(p, len(_FIELD_ORDER)), p)
        for p in parts
    )  # other names by name: marshmallow lists unknown fields from a set, in an order that varies by process


def pointer(prefix: str, path: Path) -> str:
    return prefix + "".join(f"/{escape(str(step))}" for step in path)


def reject_if(marshmallow_errors: Any, rule_faults: list[Fault]) -> None:
    faults = list(dict.fromkeys([*_flatten(marshmallow_errors), *rule_faults]))  # each once, in order
    if faults:
        raise RoomRejected(sorted(faults, key=_sort_key))
