"""Requests → domain objects, naming every fault with its JSON pointer.

marshmallow checks shapes and types (unknown fields are rejected); the rule
checks that need the ruleset or the whole room (forms by status, ``declare``,
player count, duplicate ids and cards) then run over the raw document, so that
one bad card does not hide a duplicate elsewhere. Used by the CLI and the API.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from marshmallow import RAISE, Schema, ValidationError, fields, missing

from service.cards import SPELLINGS, Card, CardError, parse_card
from service.contract import MAX_EXACT_AMOUNT, OPPONENTS, Fault, Opponents, PlayerEntry, Room, RoomRejected
from service.hands import POSITIONS, Position
from service.rulesets import Path, Ruleset, RulesetError
from service.rulesets.catalogue import Catalogue, builtin_catalogue
from service.scoring import STEPS
from service.texts import Text

MAX_STAKE = 10**12
MOST_CARDS = 13
"""No card list holds more than a player's 13 cards: a longer one is refused on its length alone,
so that one batch cannot make the service check (and list) millions of cards."""
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
PLAYER_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""Patterns match whole strings (``fullmatch``): ``$`` would also match before a final newline."""
STATUSES = ("arranged", "timed_out", "left")
SELF = ""  # error key for the node itself, as opposed to one of its items


class DirectValidation:
    """Runs a field's validators one by one. ``Field._validate`` builds an ``And`` of them on every
    call, validators or not: two dozen objects a room for nothing."""

    validators: list[Any]

    def _validate(self, value: Any) -> None:
        errors: list[Any] = []
        for validator in self.validators:
            try:
                if validator(value) is False:
                    raise ValidationError(Text("fault.invalid_value"))
            except ValidationError as error:
                errors.extend(error.messages if isinstance(error.messages, list) else [error.messages])
        if errors:
            raise ValidationError(errors)


class String(DirectValidation, fields.String):
    pass


# Validators whose refusal is a Text: marshmallow's own format their messages into plain English.


class Matches:
    def __init__(self, pattern: re.Pattern[str], key: str) -> None:
        self.pattern, self.key = pattern, key

    def __call__(self, value: str) -> None:
        if not self.pattern.fullmatch(value):
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


class JsonInteger(DirectValidation, fields.Field[int]):
    """An integer as JSON Schema means it: ``1000`` and ``1000.0``, never ``"1000"``, ``1.5`` or ``true``."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError(Text("fault.not_integer"))
        if isinstance(value, float):
            if not value.is_integer():
                raise ValidationError(Text("fault.fraction"))
            return int(value)
        return value


class JsonBoolean(DirectValidation, fields.Field[bool]):
    """``true`` or ``false`` only (marshmallow's Boolean would take ``"yes"`` and ``1``)."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise ValidationError(Text("fault.not_boolean"))
        return value


class CardList(DirectValidation, fields.Field[tuple[Card, ...]]):
    """An array of exactly ``size`` card texts; reports its size and each bad card."""

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
            raise ValidationError(Text("fault.card_count_unchecked", field=attr, size=self.size, count=len(value)))
        errors: dict[str | int, list[str]] = {}
        if len(value) != self.size:
            errors[SELF] = [Text("fault.card_count", field=attr, size=self.size, count=len(value))]
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


class RulesetBody(Schema):
    """The fields every POST body shares: the ruleset it is played under, optionally pinned by digest."""

    class Meta:
        unknown = RAISE

    ruleset = RulesetReference(required=True)
    ruleset_digest = String(validate=Matches(DIGEST, "fault.digest_pattern"))


class PlayerSchema(Schema):
    class Meta:
        unknown = RAISE

    id = String(required=True, validate=Matches(PLAYER_ID, "fault.player_id_pattern"))
    status = String(load_default="arranged", validate=OneOf(STATUSES))
    declare = JsonBoolean()
    back = CardList(5)
    middle = CardList(5)
    front = CardList(3)
    cards = CardList(13)


PLAYER_SCHEMA = PlayerSchema()


class Players(fields.Field[list[dict[str, Any]]]):
    """The players, each loaded by ``PlayerSchema``'s own fields with its messages and its refusal of
    unknown fields, their faults keyed as its load keys them (index, then field): the same data and
    faults without a Schema load per player, which was half a player's cost (~10 µs each: hooks,
    partial loading, a closure per field). ``PlayerSchema`` has no hooks, ``data_key`` or
    ``validates`` methods that this would skip; tests/unit/test_validation.py holds the two equal."""

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


def _load_player(player: Any, errors: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(player, Mapping):
        errors["_schema"] = [PLAYER_SCHEMA.error_messages["type"]]
        return {}
    loaded: dict[str, Any] = {}
    for name, field in _PLAYER_FIELDS:
        try:
            value = field.deserialize(player.get(name, missing), name, player)
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
    stake = JsonInteger(load_default=1, validate=InRange(1, MAX_STAKE))
    round_id = String(validate=MaxLength(128))
    players = Players(required=True, error_messages={"invalid": fields.List.default_error_messages["invalid"]})


class ArrangementSchema(RulesetBody):
    back = CardList(5, required=True)
    middle = CardList(5, required=True)
    front = CardList(3, required=True)


class ArrangeRequestSchema(RulesetBody):
    cards = CardList(13, required=True)
    alternatives = JsonInteger(load_default=3, validate=InRange(0, 20))
    opponents = String(load_default="strong", validate=OneOf(OPPONENTS))


class BatchSchema(Schema):
    class Meta:
        unknown = RAISE

    rooms = fields.List(fields.Raw(allow_none=True), required=True)  # each room is checked on its own


class ClaimedLineSchema(Schema):
    class Meta:
        unknown = RAISE

    payer = String(required=True)
    payee = String(required=True)
    amount = JsonInteger(required=True, validate=[InRange(1), ExactAmount()])
    step = String(validate=OneOf(STEPS))


class Amounts(fields.Field[dict[str, int]]):
    """Each player's claimed amount, by id; a fault at ``/claimed/amounts/<id>`` itself (marshmallow's
    ``Dict`` would key it one level deeper, under ``value``)."""

    amount = JsonInteger(validate=ExactAmount())

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> dict[str, int]:
        if not isinstance(value, dict):
            raise ValidationError(Text("fault.not_mapping", message=fields.Dict.default_error_messages["invalid"]))
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


class ClaimSchema(Schema):
    class Meta:
        unknown = RAISE

    amounts = Amounts(required=True)
    ledger = fields.List(fields.Nested(ClaimedLineSchema))  # at most 1,000 lines: BOUNDS


class VerifySchema(RoomSchema):
    claimed = fields.Nested(ClaimSchema, required=True)


BATCH_SCHEMA = BatchSchema()
VERIFY_SCHEMA = VerifySchema()
ROOM_SCHEMA = RoomSchema()
ARRANGEMENT_SCHEMA = ArrangementSchema()
ARRANGE_SCHEMA = ArrangeRequestSchema()
"""One long-lived instance per body kind: building a schema (and its nested ones) per request was a
third of the request path. Loading keeps no state on the instance, so workers' threads share them."""


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


_MARSHMALLOW_TEXTS = {
    "Unknown field.": ("fault.unknown_field", "unknown_field"),
    "Missing data for required field.": ("fault.required", "required"),
    "Field may not be null.": ("fault.null", "invalid"),
    "Not a valid string.": ("fault.not_string", "invalid"),
    "Not a valid utf-8 string.": ("fault.not_utf8", "invalid"),
    "Not a valid list.": ("fault.not_list", "invalid"),
    "Not a valid mapping type.": ("fault.not_mapping", "invalid"),
    "Invalid input type.": ("fault.not_object", "invalid"),
}
"""marshmallow's own messages (its fields' defaults) → the text that says them, and the fault code."""


TEXT_CODES = {"fault.claim_amount_out_of_range": "amount_out_of_range"}
"""Validator refusals with a code of their own (any other is ``invalid``)."""


def _fault(pointer: str, message: str) -> Fault:
    if isinstance(message, Text):
        return Fault(pointer, message, TEXT_CODES.get(message.key, "invalid"))
    key, code = _MARSHMALLOW_TEXTS.get(message, ("fault.other", "invalid"))
    return Fault(pointer, Text(key, message=message), code)


def _flatten(messages: Any, pointer: str = "") -> Iterator[Fault]:
    if isinstance(messages, dict):
        for key, value in messages.items():
            if key in (SELF, "_schema"):
                yield from _flatten(value, pointer)
            else:
                yield from _flatten(value, f"{pointer}/{_escape(str(key))}")
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


def _sort_key(fault: Fault) -> tuple[tuple[int, int | str], ...]:
    parts = fault.pointer.split("/")[1:]
    # an array index is ASCII digits; "³" is a digit to str.isdigit, but no index (and int() refuses it)
    return tuple(
        (0, int(p)) if p.isascii() and p.isdigit() else (1, _FIELD_ORDER.get(p, len(_FIELD_ORDER))) for p in parts
    )


def _pointer(prefix: str, path: Path) -> str:
    return prefix + "".join(f"/{_escape(str(step))}" for step in path)


def resolve_ruleset(raw: Any, catalogue: Catalogue) -> tuple[Ruleset | None, list[Fault]]:
    """The ruleset a request body names, resolved once, or the faults that stop it (§11.3)."""
    if not isinstance(raw, dict) or "ruleset" not in raw:
        return None, []
    try:
        ruleset = catalogue.resolve(raw["ruleset"])
    except RulesetError as error:
        return None, [Fault(_pointer("/ruleset", f.path), f.message, f.code) for f in error.faults]
    digest = raw.get("ruleset_digest")
    if isinstance(digest, str) and DIGEST.fullmatch(digest) and digest != ruleset.digest:
        message = Text("fault.digest_mismatch", ruleset=ruleset.id, digest=ruleset.digest)
        return ruleset, [Fault("/ruleset_digest", message, "ruleset_digest_mismatch")]
    return ruleset, []


def _who(status: str, ruleset: Ruleset | None) -> Text:
    if status == "timed_out" and ruleset:
        return Text("fault.who_timed_out", status=status, ruleset=ruleset.id)
    return Text("fault.who", status=status)


def _player_form_faults(index: int, player: Mapping[str, Any], ruleset: Ruleset | None) -> Iterator[Fault]:
    status = player.get("status", "arranged")
    if status not in STATUSES:
        return
    at = f"/players/{index}"
    given = [p for p in POSITIONS if p in player]
    if given and "cards" in player:
        yield Fault(f"{at}/cards", Text("fault.both_forms"), "both_forms")
    needs_arrangement = status == "arranged" or (
        status == "timed_out" and ruleset is not None and ruleset.timeout == "as_arranged"
    )
    if needs_arrangement and "cards" in player and not given:
        yield Fault(
            f"{at}/cards",
            Text("fault.bare_cards", who=_who(status, ruleset)),
            "missing_hand",
        )
    if needs_arrangement or given:
        for position in POSITIONS:
            if position not in given:
                yield Fault(
                    f"{at}/{position}",
                    Text("fault.missing_hand", who=_who(status, ruleset)),
                    "missing_hand",
                )
    elif "cards" not in player:
        yield Fault(at, Text("fault.no_cards"), "no_cards")
    if "declare" in player and ruleset is not None:
        if ruleset.instant_mode != "declared":
            yield Fault(
                f"{at}/declare",
                Text("fault.declare_automatic", ruleset=ruleset.id),
                "declare_not_allowed",
            )
        elif status != "arranged":
            yield Fault(
                f"{at}/declare",
                Text("fault.declare_status", status=status),
                "declare_not_allowed",
            )


def _duplicate_faults(holders: list[tuple[str, Any]], card_keys: tuple[str, ...]) -> Iterator[Fault]:
    """Each card seen again, at its pointer, in request order. ``holders`` are (pointer, object) pairs
    whose card lists hold parsed cards (a loaded body: each card was parsed once, by marshmallow) or
    texts (a refused body, read by lookup so that a bad card elsewhere does not hide a duplicate)."""
    first_seen: list[tuple[str, str, int] | None] = [None] * 52  # card id → where it was first seen
    for at, player in holders:
        if not isinstance(player, Mapping):
            continue
        for key in card_keys:
            cards = player.get(key)
            if not isinstance(cards, list | tuple) or len(cards) > MOST_CARDS:
                continue
            for k, item in enumerate(cards):
                card = item if isinstance(item, Card) else SPELLINGS.get(item) if isinstance(item, str) else None
                if card is None:
                    continue
                first = first_seen[card]
                if first is None:
                    first_seen[card] = (at, key, k)
                else:
                    first_at = "{}/{}/{}".format(*first)
                    message = Text("fault.duplicate_card", card=str(card), first=first_at)
                    yield Fault(f"{at}/{key}/{k}", message, "duplicate_card")


def _room_rule_faults(raw: Any, ruleset: Ruleset | None) -> list[Fault]:
    if not isinstance(raw, dict):
        return []
    faults: list[Fault] = []
    players = raw.get("players")
    if not isinstance(players, list):
        return faults
    low, high = (ruleset.min_players, ruleset.max_players) if ruleset else (2, 4)
    if not low <= len(players) <= high:
        message = (
            Text("fault.player_count_ruleset", ruleset=ruleset.id, low=low, high=high, count=len(players))
            if ruleset
            else Text("fault.player_count", low=low, high=high, count=len(players))
        )
        faults.append(Fault("/players", message, "player_count"))
    seen_ids: dict[str, int] = {}
    for index, player in enumerate(players):
        if not isinstance(player, dict):
            continue
        player_id = player.get("id")
        if isinstance(player_id, str):
            if player_id in seen_ids:
                faults.append(
                    Fault(
                        f"/players/{index}/id",
                        Text("fault.duplicate_player_id", id=player_id[:64], first=seen_ids[player_id]),
                        "duplicate_player_id",
                    )
                )
            else:
                seen_ids[player_id] = index
        faults.extend(_player_form_faults(index, player, ruleset))
    return faults


def _room_duplicates(loaded: dict[str, Any], raw: Any) -> list[Fault]:
    """Duplicate cards over the loaded players when marshmallow loaded them, else over the raw ones.
    A loaded room whose card ids are all different, the common case, is cleared by one set."""
    players = loaded.get("players") if loaded else raw.get("players") if isinstance(raw, dict) else None
    if not isinstance(players, list):
        return []
    if loaded:
        every = [card for player in players for key in (*POSITIONS, "cards") for card in player.get(key, ())]
        if len(set(every)) == len(every):
            return []
    return list(_duplicate_faults([(f"/players/{k}", p) for k, p in enumerate(players)], (*POSITIONS, "cards")))


def _reject_if(marshmallow_errors: Any, rule_faults: list[Fault]) -> None:
    faults = list(dict.fromkeys([*_flatten(marshmallow_errors), *rule_faults]))  # each once, in order
    if faults:
        raise RoomRejected(sorted(faults, key=_sort_key))


def _load(schema: Schema, raw: Any) -> tuple[dict[str, Any], Any]:
    try:
        return schema.load(raw), {}
    except ValidationError as error:
        return {}, error.messages


MOST_MEMBERS = 32
"""No object of a request holds more members than this (the largest has seven fields)."""


class Bound(NamedTuple):
    most: int
    text: str = "fault.too_many_members"
    code: str = "too_many"


EVERY = "*"
"""Any index of an array, in a place of BOUNDS."""
BOUNDS: dict[tuple[str, ...], Bound] = {
    (): Bound(MOST_MEMBERS),
    ("players",): Bound(8, "fault.player_count_unchecked", "player_count"),
    ("players", EVERY): Bound(MOST_MEMBERS),
    ("claimed",): Bound(MOST_MEMBERS),
    ("claimed", "amounts"): Bound(MOST_MEMBERS),
    ("claimed", "ledger"): Bound(1000, "fault.too_many_items"),
    ("claimed", "ledger", EVERY): Bound(MOST_MEMBERS),
}
"""The most members (of an object) or items (of an array) at each place of a request body (twice the
largest room's players, for one). Checked before marshmallow loads anything, and a place past its
bound is refused on its size alone: otherwise one batch room could make the service check, and
list, a million unknown fields."""


def _oversized(raw: Any, path: tuple[str, ...] = ()) -> Iterator[Fault]:
    """The places of ``raw`` past their bound; the walk goes only where BOUNDS has a place below, and
    only into containers within their bound, so it costs no more than the bounds allow."""
    place = tuple(EVERY if step.isdigit() else step for step in path)
    bound = BOUNDS.get(place)
    if bound and isinstance(raw, dict | list) and len(raw) > bound.most:
        message = Text(bound.text, most=bound.most, count=len(raw))
        yield Fault("".join(f"/{_escape(step)}" for step in path), message, bound.code)
        return
    below = {other[len(place)] for other in BOUNDS if len(other) > len(place) and other[: len(place)] == place}
    if isinstance(raw, dict):
        for key in sorted(below & raw.keys()):
            yield from _oversized(raw[key], (*path, key))
    elif isinstance(raw, list) and EVERY in below:
        for index, item in enumerate(raw):
            yield from _oversized(item, (*path, str(index)))


def load_room(raw: Any, catalogue: Catalogue | None = None) -> Room:
    """Validate a ``POST /v1/score`` body and build the :class:`Room`."""
    return _load_room(raw, catalogue, ROOM_SCHEMA, lambda data: [])[0]


def _load_room(
    raw: Any, catalogue: Catalogue | None, schema: Schema, more_faults: Callable[[dict[str, Any]], list[Fault]]
) -> tuple[Room, dict[str, Any]]:
    """A room body through ``schema``, with every fault of the room and ``more_faults`` of what it loaded."""
    if oversized := list(_oversized(raw)):
        raise RoomRejected(oversized)
    ruleset, ruleset_faults = resolve_ruleset(raw, catalogue or builtin_catalogue())
    data, errors = _load(schema, raw)
    faults = ruleset_faults + _room_rule_faults(raw, ruleset) + _room_duplicates(data, raw)
    _reject_if(errors, faults + (more_faults(data) if data else []))
    assert ruleset is not None
    entries = []
    for player in data["players"]:
        arrangement: dict[Position, tuple[Card, ...]] | None = None
        if "back" in player:
            arrangement = {p: player[p] for p in POSITIONS}
            cards = arrangement["back"] + arrangement["middle"] + arrangement["front"]
        else:
            cards = player["cards"]
        entries.append(
            PlayerEntry(
                id=player["id"],
                cards=cards,
                arrangement=arrangement,
                status=player["status"],
                declare=player.get("declare", False),
            )
        )
    return Room(ruleset=ruleset, players=tuple(entries), stake=data["stake"], round_id=data.get("round_id")), data


def _load_single_hand(
    schema: Schema, raw: Any, keys: tuple[str, ...], catalogue: Catalogue | None
) -> tuple[Ruleset, dict[str, Any]]:
    if oversized := list(_oversized(raw)):
        raise RoomRejected(oversized)
    ruleset, faults = resolve_ruleset(raw, catalogue or builtin_catalogue())
    data, errors = _load(schema, raw)
    if data or isinstance(raw, dict):
        faults += _duplicate_faults([("", data or raw)], keys)
    _reject_if(errors, faults)
    assert ruleset is not None
    return ruleset, data


def load_arrangement(raw: Any, catalogue: Catalogue | None = None) -> tuple[Ruleset, dict[Position, tuple[Card, ...]]]:
    """Validate a ``POST /v1/evaluate`` body: a ruleset and one arrangement."""
    ruleset, data = _load_single_hand(ARRANGEMENT_SCHEMA, raw, POSITIONS, catalogue)
    return ruleset, {p: data[p] for p in POSITIONS}


@dataclass(frozen=True)
class ArrangeRequest:
    ruleset: Ruleset
    cards: tuple[Card, ...]
    alternatives: int
    opponents: Opponents


def load_arrange_request(raw: Any, catalogue: Catalogue | None = None) -> ArrangeRequest:
    """Validate a ``POST /v1/arrange`` body: a ruleset, 13 cards, how many alternatives, which field."""
    ruleset, data = _load_single_hand(ARRANGE_SCHEMA, raw, ("cards",), catalogue)
    return ArrangeRequest(ruleset, data["cards"], data["alternatives"], data["opponents"])


def load_batch(raw: Any, max_rooms: int) -> list[Any]:
    """Validate a ``POST /v1/score/batch`` envelope; its rooms are checked one by one, later."""
    if isinstance(raw, dict) and len(raw) > MOST_MEMBERS:
        raise RoomRejected([Fault("", Text("fault.too_many_members", most=MOST_MEMBERS, count=len(raw)), "too_many")])
    if isinstance(raw, dict) and isinstance(raw.get("rooms"), list) and len(raw["rooms"]) > max_rooms:
        count = len(raw["rooms"])
        raise RoomRejected(
            [Fault("/rooms", Text("fault.batch_too_large", most=max_rooms, count=count), "batch_too_large")]
        )
    data, errors = _load(BATCH_SCHEMA, raw)
    count = len(data["rooms"]) if data else 0
    too_many = [Fault("/rooms", Text("fault.batch_too_large", most=max_rooms, count=count), "batch_too_large")]
    _reject_if(errors, too_many if count > max_rooms else [])
    rooms: list[Any] = data["rooms"]
    return rooms


@dataclass(frozen=True)
class ClaimedLine:
    payer: str
    payee: str
    amount: int
    step: str | None


@dataclass(frozen=True)
class Claim:
    """What a game backend says it settled: each player's amount and, optionally, its ledger."""

    amounts: dict[str, int]
    ledger: tuple[ClaimedLine, ...] | None


def _claim_faults(data: dict[str, Any]) -> list[Fault]:
    """A claim must name exactly the room's players, sum to zero, and pay only between them."""
    players = [p["id"] for p in data["players"]]
    amounts = data["claimed"]["amounts"]
    faults = [
        Fault(
            f"/claimed/amounts/{_escape(who)}", Text("fault.claim_unknown_player", id=who[:64]), "claim_unknown_player"
        )
        for who in amounts
        if who not in players
    ]
    faults += [
        Fault("/claimed/amounts", Text("fault.claim_missing_player", id=who), "claim_missing_player")
        for who in players
        if who not in amounts
    ]
    if sum(amounts.values()) != 0:
        total = sum(amounts.values())
        faults.append(Fault("/claimed/amounts", Text("fault.claim_not_zero_sum", total=total), "claim_not_zero_sum"))
    moved = sum(line["amount"] for line in data["claimed"].get("ledger", []))
    if moved > MAX_EXACT_AMOUNT:
        message = Text("fault.claim_ledger_out_of_range", total=moved, high=MAX_EXACT_AMOUNT)
        faults.append(Fault("/claimed/ledger", message, "amount_out_of_range"))
    for k, line in enumerate(data["claimed"].get("ledger", [])):
        faults += [
            Fault(
                f"/claimed/ledger/{k}/{side}",
                Text("fault.claim_unknown_player", id=line[side][:64]),
                "claim_unknown_player",
            )
            for side in ("payer", "payee")
            if line[side] not in players
        ]
    return faults


def load_verification(raw: Any, catalogue: Catalogue | None = None) -> tuple[Room, Claim]:
    """Validate a ``POST /v1/verify`` body: a room (as for /v1/score) and what was claimed for it."""
    room, data = _load_room(raw, catalogue, VERIFY_SCHEMA, _claim_faults)
    claimed = data["claimed"]
    ledger = claimed.get("ledger")
    lines = None
    if ledger is not None:
        lines = tuple(ClaimedLine(each["payer"], each["payee"], each["amount"], each.get("step")) for each in ledger)
    return room, Claim(dict(claimed["amounts"]), lines)
