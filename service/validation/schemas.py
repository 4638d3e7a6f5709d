"""The request bodies, one marshmallow schema each; unknown fields are refused."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from service.validation import import_marshmallow

import_marshmallow()

from marshmallow import RAISE, Schema, ValidationError, fields, missing, pre_load  # noqa: E402 - after it

from service.contract import OPPONENTS, STATUSES  # noqa: E402
from service.scoring import STEPS  # noqa: E402
from service.texts import Text  # noqa: E402
from service.validation.fields import (  # noqa: E402
    Amounts,
    CardList,
    ExactAmount,
    InRange,
    JsonBoolean,
    JsonInteger,
    List,
    Matches,
    MaxLength,
    Nested,
    OneOf,
    PlayerId,
    RulesetReference,
    String,
)
from service.validation.limits import (  # noqa: E402
    DIGEST,
    HAND_SIZES,
    MAX_STAKE,
    ROUND_ID_MOST,
    STAKE_DEFAULT,
    STAKE_LOW,
    STATUS_DEFAULT,
)


class Body(Schema):
    """Any object of a request body: unknown members refused, its messages the keys of their texts."""

    class Meta:
        unknown = RAISE

    error_messages = {"unknown": "fault.unknown_field", "type": "fault.not_object"}


class RulesetBody(Body):
    """The fields every POST body shares: the ruleset it is played under, optionally pinned by digest."""

    ruleset = RulesetReference(required=True)
    ruleset_digest = String(validate=Matches(DIGEST, "fault.digest_pattern"))


class PlayerSchema(Body):
    error_messages = {"type": "fault.player_object"}
    id = String(required=True, validate=PlayerId())
    status = String(load_default=STATUS_DEFAULT, validate=OneOf(STATUSES))
    declare = JsonBoolean()
    back = CardList(HAND_SIZES["back"])
    middle = CardList(HAND_SIZES["middle"])
    front = CardList(HAND_SIZES["front"])
    cards = CardList(HAND_SIZES["cards"])


PLAYER_SCHEMA = PlayerSchema()


class Players(fields.Field[list[dict[str, Any]]]):
    """The players, each loaded by ``PlayerSchema``'s own fields with its messages and its refusal of
    unknown fields, their faults keyed as its load keys them (index, then field): the same data and
    faults without a Schema load per player (hooks, partial loading, a closure per field). A speed
    trick, worth over 5% of bytes → bytes in bench/scoring.py (docs/benchmarks.md). ``PlayerSchema``
    has no hooks, ``data_key`` or ``validates`` methods that this would skip;
    tests/unit/test_validation.py holds the two equal."""

    default_error_messages = List.default_error_messages

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> list[dict[str, Any]]:
        if not isinstance(value, list):
            raise self.make_error("invalid")
        errors: dict[int, dict[str, Any]] = {}
        loaded = []
        for index, player in enumerate(value):
            found: dict[str, Any] = {}
            loaded.append(_load_player(player, found))
            if found:
                errors[index] = found
        if errors:
            raise ValidationError(errors, valid_data=loaded)
        return loaded


_PLAYER_FIELDS = tuple(PLAYER_SCHEMA.load_fields.items())
assert all(f.data_key is None and f.attribute is None for _, f in _PLAYER_FIELDS), "Players reads keys as named"
assert all(not f.pre_load and not f.allow_none and len(f.validators) <= 1 for _, f in _PLAYER_FIELDS), (
    "Players runs a field as its deserialize would: no pre_load, no null, at most one validator"
)
_ABSENT = {name: field.load_default for name, field in _PLAYER_FIELDS if not field.required}
"""What an optional field left out loads as (its ``load_default``, as marshmallow's load would give):
most players leave out three of the seven fields."""
assert not any(callable(default) for default in _ABSENT.values()), "defaults are values"


def _load_player(player: Any, errors: dict[str, Any]) -> dict[str, Any]:
    """One player by its fields' own ``_deserialize`` and validators, as ``Field.deserialize`` runs them
    for these fields (asserted above): a speed trick, 8% of the whole path (bench/instructions.py)."""
    if not isinstance(player, Mapping):
        errors["_schema"] = [PLAYER_SCHEMA.error_messages["type"]]
        return {}
    loaded: dict[str, Any] = {}
    for name, field in _PLAYER_FIELDS:
        given = player.get(name, missing)
        if given is missing and name in _ABSENT:
            if _ABSENT[name] is not missing:
                loaded[name] = _ABSENT[name]
            continue
        if given is missing or given is None:
            errors[name] = [field.error_messages["required" if given is missing else "null"]]
            continue
        try:
            value = field._deserialize(given, name, player)
            for validate in field.validators:
                validate(value)
        except ValidationError as error:
            errors[name] = error.messages
            value = error.valid_data or missing
        if value is not missing:
            loaded[name] = value
    for key in player:
        if key not in PLAYER_SCHEMA.load_fields:
            errors[key] = [PLAYER_SCHEMA.error_messages["unknown"]]
    return loaded


class RoomSchema(RulesetBody):
    error_messages = {"type": "fault.room_body"}
    stake = JsonInteger(load_default=STAKE_DEFAULT, validate=InRange(STAKE_LOW, MAX_STAKE))
    round_id = String(validate=MaxLength(ROUND_ID_MOST))
    players = Players(required=True)


class ArrangementSchema(RulesetBody):
    error_messages = {"type": "fault.arrangement_body"}
    back = CardList(HAND_SIZES["back"], required=True)
    middle = CardList(HAND_SIZES["middle"], required=True)
    front = CardList(HAND_SIZES["front"], required=True)


class ArrangeRequestSchema(RulesetBody):
    error_messages = {"type": "fault.arrange_body"}
    cards = CardList(HAND_SIZES["cards"], required=True)
    alternatives = JsonInteger(load_default=3, validate=InRange(0, 20))
    opponents = String(load_default="strong", validate=OneOf(OPPONENTS))


class BatchSchema(Body):
    error_messages = {"type": "fault.batch_body"}
    rooms = List(fields.Raw(allow_none=True), required=True)  # each room is checked on its own


class ClaimedLineSchema(Body):
    error_messages = {"type": "fault.claimed_line_object"}
    payer = String(required=True)
    payee = String(required=True)
    amount = JsonInteger(required=True, validate=[InRange(1), ExactAmount()])
    step = String(validate=OneOf(STEPS))


class ClaimSchema(Body):
    error_messages = {"type": "fault.claim_object"}

    amounts = Amounts(required=True)
    ledger = List(Nested(ClaimedLineSchema))  # at most 1,000 lines: BOUNDS

    @pre_load
    def _short_form(self, data: Any, **kwargs: Any) -> Any:
        """``{"P": -3000, "Q": 3000}`` (amounts by player, as a backend first writes them) is answered
        with where they go, rather than as two unknown fields and a missing one."""
        short = isinstance(data, dict) and data and not {"amounts", "ledger"} & data.keys()
        if short and all(type(v) is int for v in data.values()):
            example = json.dumps(dict(list(data.items())[:4]), ensure_ascii=False)
            raise ValidationError(Text("fault.claim_short_form", example=example[:200]))
        return data


class VerifySchema(RoomSchema):
    error_messages = {"type": "fault.verify_body"}
    claimed = Nested(ClaimSchema, required=True)


BATCH_SCHEMA = BatchSchema()
VERIFY_SCHEMA = VerifySchema()
ROOM_SCHEMA = RoomSchema()
ARRANGEMENT_SCHEMA = ArrangementSchema()
ARRANGE_SCHEMA = ArrangeRequestSchema()
"""One long-lived instance per body kind: building a schema (and its nested ones) per request was a
third of the request path. Loading keeps no state on the instance, so workers' threads share them."""

INDEX = "#"
"""An array's place in a :data:`FIELDS_AT` path: any index."""
FIELDS_AT: dict[tuple[str, ...], frozenset[str]] = {
    (): frozenset(
        name
        for schema in (ROOM_SCHEMA, VERIFY_SCHEMA, ARRANGEMENT_SCHEMA, ARRANGE_SCHEMA, BATCH_SCHEMA)
        for name in schema.load_fields
    ),
    ("players", INDEX): frozenset(PLAYER_SCHEMA.load_fields),
    ("claimed",): frozenset(ClaimSchema().load_fields),
    ("claimed", "ledger", INDEX): frozenset(ClaimedLineSchema().load_fields),
}
"""The fields each object of a request body may hold, by its path: what a misspelled one is suggested
from, so that the hint names a field that belongs where it was written."""
