"""marshmallow's messages → faults: each at its RFC 6901 pointer, with a stable code, in request order."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from service.contract import Fault, RoomRejected, escape, unescape
from service.game.hands import POSITIONS
from service.rulesets import Path
from service.support.suggest import near
from service.texts import Named, Text, phrasebook
from service.validation.limits import SELF, hand_named_by

WRONG_TYPE = (
    "fault.not_string", "fault.not_list", "fault.not_object", "fault.not_mapping", "fault.not_boolean",
    "fault.not_card_list", "fault.player_object", "fault.room_body", "fault.verify_body", "fault.batch_body",
    "fault.arrangement_body", "fault.arrange_body", "fault.claim_object", "fault.claimed_line_object", "card.not_text",
)  # fmt: skip
CODES = {
    **dict.fromkeys(WRONG_TYPE, "wrong_type"),
    "fault.unknown_field": "unknown_field",
    "fault.unknown_field_near": "unknown_field",
    "fault.required": "required",
    "fault.null": "null",
    "fault.not_integer": "not_integer",
    "fault.fraction": "not_integer",
    "fault.not_utf8": "not_utf8",
    "fault.player_id_pattern": "pattern_mismatch",
    "fault.player_id_diacritics": "pattern_mismatch",
    "fault.digest_pattern": "pattern_mismatch",
    "fault.one_of": "not_one_of",
    "fault.at_least": "out_of_range",
    "fault.between": "out_of_range",
    "fault.too_long": "too_long",
    "fault.card_count": "card_count",
    "fault.card_count_unchecked": "card_count",
    "card.empty": "not_a_card",
    "card.too_long": "not_a_card",
    "card.too_short": "not_a_card",
    "card.unknown_rank": "unknown_rank",
    "card.unknown_suit": "unknown_suit",
    "fault.claim_short_form": "claim_short_form",
    "fault.claim_amount_out_of_range": "amount_out_of_range",
}
"""Each refusal of a field's value by its code (openapi.yaml lists every code and what it means)."""
UNEXPECTED = "unexpected"
"""The code of a message marshmallow words itself, which no field of ours should leave it to."""


def _fault(pointer: str, message: str, labels: Mapping[str, str]) -> Fault:
    """A refusal as a fault: a Text (our validators), a text key (marshmallow's, by the error_messages
    of fields.py and schemas.py), or anything else marshmallow says, quoted. An unknown field one or
    two edits from a known one (``midle``) says which; a hand, by the ruleset's ``labels``."""
    if not isinstance(message, Text):
        message = Text(message) if message in phrasebook("en") else Text("fault.other", message=message)
    if labels and isinstance(field := message.fields.get("field"), Named):
        message = Text(message.key, **{**message.fields, "field": hand_named_by(labels, field)})
    if message.key == "fault.unknown_field" and (meant := _meant(pointer)):
        message = Text("fault.unknown_field_near", near=meant)
    return Fault(pointer, message, CODES.get(message.key, UNEXPECTED))


def _meant(pointer: str) -> str | None:
    """The field of the same object an unknown one is one or two edits from."""
    from service.validation.schemas import FIELDS_AT, INDEX  # here: a body that loads without a schema needs neither

    parent, _, name = pointer.rpartition("/")
    path = tuple(INDEX if step.isascii() and step.isdigit() else unescape(step) for step in parent.split("/")[1:])
    return near(unescape(name), FIELDS_AT.get(path, ()))


def _flatten(messages: Any, labels: Mapping[str, str], pointer: str = "") -> Iterator[Fault]:
    if isinstance(messages, dict):
        for key, value in messages.items():
            if key in (SELF, "_schema"):
                yield from _flatten(value, labels, pointer)
            else:
                yield from _flatten(value, labels, f"{pointer}/{escape(str(key))}")
    elif isinstance(messages, list):
        for message in messages:
            yield from _flatten(message, labels, pointer)
    else:
        yield _fault(pointer, messages if isinstance(messages, str) else str(messages), labels)


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


def reject_if(marshmallow_errors: Any, rule_faults: list[Fault], labels: Mapping[str, str] | None = None) -> None:
    """Refuse the body if anything is wrong; a hand named by ``labels``, the ruleset's, when it is known."""
    faults = list(dict.fromkeys([*_flatten(marshmallow_errors, labels or {}), *rule_faults]))  # each once, in order
    if faults:
        raise RoomRejected(sorted(faults, key=_sort_key))
