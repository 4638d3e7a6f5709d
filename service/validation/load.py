"""Request bodies → domain objects (the entry points): the cheap bounds, then marshmallow and the
room's rules, every fault named with its pointer. Used by the CLI and the API."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from service.contract import Fault, Opponents, PlayerEntry, Room, RoomRejected
from service.game.cards import Card
from service.game.hands import POSITIONS, Position
from service.rulesets import Ruleset
from service.rulesets.catalogue import Catalogue, builtin_catalogue
from service.texts import Text
from service.validation.bounds import MOST_MEMBERS, oversized
from service.validation.faults import reject_if
from service.validation.plain_rooms import plain_room
from service.validation.room_rules import duplicate_faults, resolve_ruleset, room_duplicates, room_rule_faults

if TYPE_CHECKING:
    from service.scoring.claims import Claim


SchemaName = Literal["ROOM_SCHEMA", "VERIFY_SCHEMA", "ARRANGEMENT_SCHEMA", "ARRANGE_SCHEMA", "BATCH_SCHEMA"]
"""A body's schema in ``schemas``, imported (with marshmallow) at the first body that needs one: the
common room body loads without it (``plain_rooms``)."""


def _load(schema: SchemaName, raw: Any) -> tuple[dict[str, Any], Any]:
    from service.validation import schemas

    body_schema = getattr(schemas, schema)  # schemas imported marshmallow, as import_marshmallow does
    from marshmallow import ValidationError

    try:
        return body_schema.load(raw), {}
    except ValidationError as error:
        return {}, error.messages


def load_room(raw: Any, catalogue: Catalogue | None = None) -> Room:
    """Validate a ``POST /v1/score`` body and build the :class:`Room`."""
    return _load_room(raw, catalogue, "ROOM_SCHEMA", lambda data: [])[0]


def _load_room(
    raw: Any, catalogue: Catalogue | None, schema: SchemaName, more_faults: Callable[[dict[str, Any]], list[Fault]]
) -> tuple[Room, dict[str, Any]]:
    """A room body through ``schema``, with every fault of the room and ``more_faults`` of what it loaded."""
    if too_large := list(oversized(raw)):
        raise RoomRejected(too_large)
    ruleset, ruleset_faults = resolve_ruleset(raw, catalogue or builtin_catalogue())
    plain = plain_room(raw) if schema == "ROOM_SCHEMA" else None
    data, errors = (plain, {}) if plain is not None else _load(schema, raw)
    faults = ruleset_faults + room_rule_faults(raw, ruleset) + room_duplicates(data, raw)
    reject_if(errors, faults + (more_faults(data) if data else []), ruleset.labels if ruleset else None)
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
    schema: SchemaName, raw: Any, keys: tuple[str, ...], catalogue: Catalogue | None
) -> tuple[Ruleset, dict[str, Any]]:
    if too_large := list(oversized(raw)):
        raise RoomRejected(too_large)
    ruleset, faults = resolve_ruleset(raw, catalogue or builtin_catalogue())
    data, errors = _load(schema, raw)
    if data or isinstance(raw, dict):
        faults += duplicate_faults([("", data or raw)], keys)
    reject_if(errors, faults, ruleset.labels if ruleset else None)
    assert ruleset is not None
    return ruleset, data


def load_arrangement(raw: Any, catalogue: Catalogue | None = None) -> tuple[Ruleset, dict[Position, tuple[Card, ...]]]:
    """Validate a ``POST /v1/evaluate`` body: a ruleset and one arrangement."""
    ruleset, data = _load_single_hand("ARRANGEMENT_SCHEMA", raw, POSITIONS, catalogue)
    return ruleset, {p: data[p] for p in POSITIONS}


@dataclass(frozen=True)
class ArrangeRequest:
    ruleset: Ruleset
    cards: tuple[Card, ...]
    alternatives: int
    opponents: Opponents


def load_arrange_request(raw: Any, catalogue: Catalogue | None = None) -> ArrangeRequest:
    """Validate a ``POST /v1/arrange`` body: a ruleset, 13 cards, how many alternatives, which field."""
    ruleset, data = _load_single_hand("ARRANGE_SCHEMA", raw, ("cards",), catalogue)
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
    data, errors = _load("BATCH_SCHEMA", raw)
    count = len(data["rooms"]) if data else 0
    too_many = [Fault("/rooms", Text("fault.batch_too_large", most=max_rooms, count=count), "batch_too_large")]
    reject_if(errors, too_many if count > max_rooms else [])
    rooms: list[Any] = data["rooms"]
    return rooms


def load_verification(raw: Any, catalogue: Catalogue | None = None) -> tuple[Room, Claim]:
    """Validate a ``POST /v1/verify`` body: a room (as for /v1/score) and what was claimed for it."""
    from service.scoring.claims import Claim, ClaimedLine, claim_faults  # here: scoring needs none of it (bench/cli.py)

    room, data = _load_room(raw, catalogue, "VERIFY_SCHEMA", claim_faults)
    claimed = data["claimed"]
    ledger = claimed.get("ledger")
    lines = None
    if ledger is not None:
        lines = tuple(ClaimedLine(each["payer"], each["payee"], each["amount"], each.get("step")) for each in ledger)
    return room, Claim(dict(claimed["amounts"]), lines)
