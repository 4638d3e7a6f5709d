"""The JSON values of a request body, as marshmallow fields and validators: strict integers and
booleans, whole-string patterns, card lists, claimed amounts. Each refusal is a Text, in the
service's words (marshmallow's own validators format theirs into plain English)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any, cast

from service.validation import import_marshmallow

import_marshmallow()

from marshmallow import ValidationError, fields, types  # noqa: E402 - after import_marshmallow

from service.contract import MAX_EXACT_AMOUNT  # noqa: E402
from service.game.cards import SPELLINGS, Card, CardError, parse_card  # noqa: E402
from service.texts import Text  # noqa: E402
from service.validation.limits import LONGEST_PLAYER_ID, MOST_CARDS, PLAYER_ID, SELF, hand_named  # noqa: E402

FIELD_MESSAGES: types.ErrorMessages = {"required": "fault.required", "null": "fault.null"}
"""marshmallow's messages by their stable keys (``error_messages``), each set to the key of the text
that says it (service/texts): faults.py renders the key, in any language, never reading English."""


class String(fields.String):
    default_error_messages: types.ErrorMessages = {
        **FIELD_MESSAGES,
        "invalid": "fault.not_string",
        "invalid_utf8": "fault.not_utf8",
    }


class List(fields.List[Any]):
    default_error_messages: types.ErrorMessages = {**FIELD_MESSAGES, "invalid": "fault.not_list"}


class Nested(fields.Nested):
    default_error_messages: types.ErrorMessages = {**FIELD_MESSAGES, "type": "fault.not_object"}


# Validators whose refusal is a Text: marshmallow's own format their messages into plain English.


class Matches:
    def __init__(self, pattern: re.Pattern[str], key: str) -> None:
        self.pattern, self.key = pattern, key

    def __call__(self, value: str) -> None:
        if not self.pattern.fullmatch(value):
            raise ValidationError(Text(self.key))


class PlayerId(Matches):
    """A player id: PLAYER_ID's characters only, as the bulk engines and the tables read them. A name
    as players write it ("Bình", "Anh Tú") is refused saying so, with the id it could be instead: ids
    are codes, and a name with diacritics has two spellings (composed or not) that look the same."""

    def __init__(self) -> None:
        super().__init__(PLAYER_ID, "fault.player_id_pattern")

    def __call__(self, value: str) -> None:
        if self.pattern.fullmatch(value):
            return
        plain = unicodedata.normalize("NFKD", value.replace("đ", "d").replace("Đ", "D"))
        suggestion = "_".join("".join(c for c in plain if c.isascii() and not unicodedata.combining(c)).split())
        if suggestion and self.pattern.fullmatch(suggestion) and len(value) <= LONGEST_PLAYER_ID:
            raise ValidationError(Text("fault.player_id_diacritics", given=value, suggestion=suggestion))
        raise ValidationError(Text(self.key))


class OneOf:
    def __init__(self, choices: tuple[str, ...]) -> None:
        self.choices = choices

    def __call__(self, value: str) -> None:
        if value not in self.choices:
            raise ValidationError(Text("fault.one_of", choices=", ".join(self.choices)))


class InRange:
    def __init__(self, low: int, high: int | None = None) -> None:
        self.low, self.high = low, high

    def __call__(self, value: int) -> None:
        if value < self.low or (self.high is not None and value > self.high):
            key = "fault.at_least" if self.high is None else "fault.between"
            raise ValidationError(Text(key, low=self.low, high=self.high))


class ExactAmount:
    """An amount every JSON client reads exactly, checked before any arithmetic on it."""

    def __call__(self, value: int) -> None:
        if not -MAX_EXACT_AMOUNT <= value <= MAX_EXACT_AMOUNT:
            raise ValidationError(Text("fault.claim_amount_out_of_range", low=-MAX_EXACT_AMOUNT, high=MAX_EXACT_AMOUNT))


class MaxLength:
    def __init__(self, most: int) -> None:
        self.most = most

    def __call__(self, value: str | list[Any]) -> None:
        if len(value) > self.most:
            raise ValidationError(Text("fault.too_long", most=self.most))


class JsonInteger(fields.Field[int]):
    """An integer as JSON Schema means it: ``1000`` and ``1000.0``, never ``"1000"``, ``1.5`` or ``true``."""

    default_error_messages: types.ErrorMessages = FIELD_MESSAGES

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError(Text("fault.not_integer"))
        if isinstance(value, float):
            if not value.is_integer():
                raise ValidationError(Text("fault.fraction"))
            return int(value)
        return value


class JsonBoolean(fields.Field[bool]):
    """``true`` or ``false`` only (marshmallow's Boolean would take ``"yes"`` and ``1``)."""

    default_error_messages: types.ErrorMessages = FIELD_MESSAGES

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise ValidationError(Text("fault.not_boolean"))
        return value


class CardList(fields.Field[tuple[Card, ...]]):
    """An array of exactly ``size`` card texts; reports its size and each bad card."""

    default_error_messages: types.ErrorMessages = FIELD_MESSAGES

    def __init__(self, size: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.size = size

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> tuple[Card, ...]:
        if not isinstance(value, list):
            raise ValidationError(Text("fault.not_card_list", size=self.size))
        if len(value) == self.size:
            try:
                found = tuple(map(SPELLINGS.get, value))  # a non-text is no spelling: None, or unhashable
            except TypeError:
                found = (None,)
            if None not in found:
                return found  # type: ignore[return-value]  # every one a Card: the common case, one lookup each
        if len(value) > MOST_CARDS:
            raise ValidationError(
                Text("fault.card_count_unchecked", field=hand_named(attr), size=self.size, count=len(value))
            )
        errors: dict[str | int, list[str]] = {}
        if len(value) != self.size:
            errors[SELF] = [Text("fault.card_count", field=hand_named(attr), size=self.size, count=len(value))]
        cards = []
        for index, text in enumerate(value):
            try:
                cards.append(parse_card(text))
            except CardError as error:
                errors[index] = [error.message]
        if errors:
            raise ValidationError(errors)
        return tuple(cards)


class RulesetReference(fields.Raw):
    """An id, a pinned id or ``{"base", "patch"}``: resolved (and every fault named) by the catalogue."""

    default_error_messages: types.ErrorMessages = FIELD_MESSAGES


class Amounts(fields.Field[dict[str, int]]):
    """Each player's claimed amount, by id; a fault at ``/claimed/amounts/<id>`` itself (marshmallow's
    ``Dict`` would key it one level deeper, under ``value``)."""

    default_error_messages: types.ErrorMessages = FIELD_MESSAGES

    amount = JsonInteger(validate=ExactAmount())

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> dict[str, int]:
        if not isinstance(value, dict):
            raise ValidationError(Text("fault.not_mapping"))
        amounts: dict[str, int] = {}
        errors: dict[str, Any] = {}
        for who, amount in value.items():
            try:
                amounts[who] = cast(int, self.amount.deserialize(amount))  # null is refused, never returned
            except ValidationError as error:
                errors[who] = error.messages
        if errors:
            raise ValidationError(errors)
        return amounts
