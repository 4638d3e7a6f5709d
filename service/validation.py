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
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate

from service.cards import SPELLINGS, Card, CardError, parse_card
from service.contract import Fault, PlayerEntry, Room, RoomRejected
from service.hands import POSITIONS, Position
from service.rulesets import Path, Ruleset, RulesetError
from service.rulesets.catalogue import Catalogue, builtin_catalogue
from service.scoring import STEPS

MAX_STAKE = 10**12
MOST_CARDS = 13
"""No card list holds more than a player's 13 cards: a longer one is refused on its length alone,
so that one 8 MiB batch cannot make the service check (and list) millions of cards."""
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
PLAYER_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
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
                    raise ValidationError("Invalid value.")
            except ValidationError as error:
                errors.extend(error.messages if isinstance(error.messages, list) else [error.messages])
        if errors:
            raise ValidationError(errors)


class String(DirectValidation, fields.String):
    pass


class JsonInteger(DirectValidation, fields.Field[int]):
    """An integer as JSON Schema means it: ``1000`` and ``1000.0``, never ``"1000"``, ``1.5`` or ``true``."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError("must be an integer")
        if isinstance(value, float):
            if not value.is_integer():
                raise ValidationError("must be an integer, not a fraction")
            return int(value)
        return value


class JsonBoolean(DirectValidation, fields.Field[bool]):
    """``true`` or ``false`` only (marshmallow's Boolean would take ``"yes"`` and ``1``)."""

    def _deserialize(self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise ValidationError("must be true or false")
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
            raise ValidationError(f"must be an array of {self.size} cards")
        if len(value) == self.size:
            found = tuple(SPELLINGS.get(text) if type(text) is str else None for text in value)
            if None not in found:
                return found  # type: ignore[return-value]  # every one a Card: the common case, one lookup each
        if len(value) > MOST_CARDS:
            raise ValidationError(f"{attr} holds {self.size} cards, not {len(value)}; they were not checked one by one")
        errors: dict[str | int, list[str]] = {}
        if len(value) != self.size:
            errors[SELF] = [f"{attr} holds {self.size} cards, not {len(value)}"]
        cards = []
        for index, text in enumerate(value):
            try:
                cards.append(parse_card(text))
            except CardError as error:
                errors[index] = [str(error)]
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
    ruleset_digest = String(validate=validate.Regexp(DIGEST, error="must be sha256: and 64 hex digits"))


class PlayerSchema(Schema):
    class Meta:
        unknown = RAISE

    id = String(
        required=True, validate=validate.Regexp(PLAYER_ID, error="must be 1-64 characters of A-Z a-z 0-9 _ . -")
    )
    status = String(load_default="arranged", validate=validate.OneOf(STATUSES))
    declare = JsonBoolean()
    back = CardList(5)
    middle = CardList(5)
    front = CardList(3)
    cards = CardList(13)


class RoomSchema(RulesetBody):
    stake = JsonInteger(load_default=1, validate=validate.Range(min=1, max=MAX_STAKE))
    round_id = String(validate=validate.Length(max=128))
    players = fields.List(fields.Nested(PlayerSchema), required=True)


class ArrangementSchema(RulesetBody):
    back = CardList(5, required=True)
    middle = CardList(5, required=True)
    front = CardList(3, required=True)


class ArrangeRequestSchema(RulesetBody):
    cards = CardList(13, required=True)
    alternatives = JsonInteger(load_default=3, validate=validate.Range(min=0, max=20))


class BatchSchema(Schema):
    class Meta:
        unknown = RAISE

    rooms = fields.List(fields.Raw(allow_none=True), required=True)  # each room is checked on its own


class ClaimedLineSchema(Schema):
    class Meta:
        unknown = RAISE

    payer = String(required=True)
    payee = String(required=True)
    amount = JsonInteger(required=True, validate=validate.Range(min=1))
    step = String(validate=validate.OneOf(STEPS))


class ClaimSchema(Schema):
    class Meta:
        unknown = RAISE

    amounts = fields.Dict(keys=fields.String(), values=JsonInteger(), required=True)
    ledger = fields.List(fields.Nested(ClaimedLineSchema), validate=validate.Length(max=1000))


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


_MARSHMALLOW_CODES = {"Unknown field.": "unknown_field", "Missing data for required field.": "required"}


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
        text = str(messages)
        yield Fault(pointer, text, _MARSHMALLOW_CODES.get(text, "invalid"))


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
    if isinstance(digest, str) and DIGEST.match(digest) and digest != ruleset.digest:
        message = f"the ruleset resolves to {ruleset.id} with digest {ruleset.digest}, not this one; nothing was scored"
        return ruleset, [Fault("/ruleset_digest", message, "ruleset_digest_mismatch")]
    return ruleset, []


def _who(status: str, ruleset: Ruleset | None) -> str:
    where = f" in {ruleset.id} (timeout: as_arranged)" if status == "timed_out" and ruleset else ""
    return f"a player with status {status!r}{where}"


def _player_form_faults(index: int, player: Mapping[str, Any], ruleset: Ruleset | None) -> Iterator[Fault]:
    status = player.get("status", "arranged")
    if status not in STATUSES:
        return
    at = f"/players/{index}"
    given = [p for p in POSITIONS if p in player]
    if given and "cards" in player:
        yield Fault(f"{at}/cards", "send either back, middle and front, or cards, never both", "both_forms")
    needs_arrangement = status == "arranged" or (
        status == "timed_out" and ruleset is not None and ruleset.timeout == "as_arranged"
    )
    if needs_arrangement and "cards" in player and not given:
        yield Fault(
            f"{at}/cards",
            f"{_who(status, ruleset)} gives an arrangement (back, middle, front), not bare cards",
            "missing_hand",
        )
    if needs_arrangement or given:
        for position in POSITIONS:
            if position not in given:
                yield Fault(
                    f"{at}/{position}",
                    f"required: {_who(status, ruleset)} gives back, middle and front",
                    "missing_hand",
                )
    elif "cards" not in player:
        yield Fault(at, "give the arrangement (back, middle, front) or the 13 cards", "no_cards")
    if "declare" in player and ruleset is not None:
        if ruleset.instant_mode != "declared":
            yield Fault(
                f"{at}/declare",
                f"not allowed: {ruleset.id} finds instant wins itself (automatic), nobody declares",
                "declare_not_allowed",
            )
        elif status != "arranged":
            yield Fault(
                f"{at}/declare",
                f"only an arranged player can declare (BÁO), not one with status {status!r}",
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
                    message = f"{card} appears twice in the room (first at {first_at})"
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
        where = f"{ruleset.id} seats" if ruleset else "a room seats"
        faults.append(Fault("/players", f"{where} {low} to {high} players, not {len(players)}", "player_count"))
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
                        f"duplicate player id {player_id[:64]!r} (first at /players/{seen_ids[player_id]})",
                        "duplicate_player_id",
                    )
                )
            else:
                seen_ids[player_id] = index
        faults.extend(_player_form_faults(index, player, ruleset))
    return faults


def _room_duplicates(loaded: dict[str, Any], raw: Any) -> list[Fault]:
    """Duplicate cards over the loaded players when marshmallow loaded them, else over the raw ones."""
    players = loaded.get("players") if loaded else raw.get("players") if isinstance(raw, dict) else None
    if not isinstance(players, list):
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


MAX_PLAYERS_CHECKED = 8
"""Twice the largest room: a longer ``players`` array is refused on its length alone, so that
one 60 KB request cannot make the service check thousands of players."""


def _oversized_room(raw: Any) -> Fault | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("players"), list):
        return None
    count = len(raw["players"])
    if count <= MAX_PLAYERS_CHECKED:
        return None
    message = f"a room seats 2 to 4 players, not {count}; the players were not checked one by one"
    return Fault("/players", message, "player_count")


def load_room(raw: Any, catalogue: Catalogue | None = None) -> Room:
    """Validate a ``POST /v1/score`` body and build the :class:`Room`."""
    return _load_room(raw, catalogue, ROOM_SCHEMA, lambda data: [])[0]


def _load_room(
    raw: Any, catalogue: Catalogue | None, schema: Schema, more_faults: Callable[[dict[str, Any]], list[Fault]]
) -> tuple[Room, dict[str, Any]]:
    """A room body through ``schema``, with every fault of the room and ``more_faults`` of what it loaded."""
    ruleset, ruleset_faults = resolve_ruleset(raw, catalogue or builtin_catalogue())
    if oversized := _oversized_room(raw):
        raise RoomRejected([*ruleset_faults, oversized])
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


def load_arrange_request(raw: Any, catalogue: Catalogue | None = None) -> tuple[Ruleset, tuple[Card, ...], int]:
    """Validate a ``POST /v1/arrange`` body: a ruleset, 13 cards, how many alternatives."""
    ruleset, data = _load_single_hand(ARRANGE_SCHEMA, raw, ("cards",), catalogue)
    return ruleset, data["cards"], data["alternatives"]


def load_batch(raw: Any, max_rooms: int) -> list[Any]:
    """Validate a ``POST /v1/score/batch`` envelope; its rooms are checked one by one, later."""
    data, errors = _load(BATCH_SCHEMA, raw)
    count = len(data["rooms"]) if data else 0
    too_many = [Fault("/rooms", f"a batch holds at most {max_rooms} rooms, not {count}", "batch_too_large")]
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
        Fault(f"/claimed/amounts/{_escape(who)}", f"{who[:64]!r} is not a player of this room", "claim_unknown_player")
        for who in amounts
        if who not in players
    ]
    faults += [
        Fault("/claimed/amounts", f"no amount claimed for player {who!r}", "claim_missing_player")
        for who in players
        if who not in amounts
    ]
    if sum(amounts.values()) != 0:
        total = sum(amounts.values())
        faults.append(Fault("/claimed/amounts", f"the claimed amounts sum to {total}, not 0", "claim_not_zero_sum"))
    for k, line in enumerate(data["claimed"].get("ledger", [])):
        faults += [
            Fault(
                f"/claimed/ledger/{k}/{side}",
                f"{line[side][:64]!r} is not a player of this room",
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
