"""service/validation/plain_rooms.py loads a common room without marshmallow: wherever it answers, it
answers what ROOM_SCHEMA.load does, and it answers for the rooms backends send."""

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from marshmallow import ValidationError
from rooms_at_random import random_room, random_rulesets

from service.rulesets.catalogue import builtin_catalogue
from service.validation import limits
from service.validation.fields import CardList
from service.validation.plain_rooms import plain_room
from service.validation.schemas import PLAYER_SCHEMA, ROOM_SCHEMA

GOLDEN = Path(__file__).parents[1] / "golden"


def _schema_load(raw: Any) -> Any:
    try:
        return ROOM_SCHEMA.load(raw)
    except ValidationError:
        return None


def _rooms() -> list[dict[str, Any]]:
    rng, catalogue = random.Random(5), builtin_catalogue()
    rooms = [json.loads(line)["request"] for f in sorted(GOLDEN.glob("*.jsonl")) for line in f.open()]
    for reference, ruleset in random_rulesets(rng, catalogue, 20):
        rooms.extend(random_room(rng, ruleset, reference).request() for _ in range(5))
    return rooms


ROOMS = _rooms()


def test_the_limits_it_reads_are_the_schemas() -> None:
    """plain_rooms reads the fields and their limits from service/validation/limits.py, which the schemas
    are built from too, but for the field names, which the schemas' classes declare: held equal here."""
    assert frozenset(ROOM_SCHEMA.load_fields) == limits.ROOM_FIELDS
    assert frozenset(PLAYER_SCHEMA.load_fields) == limits.PLAYER_FIELDS
    sizes = {name: f.size for name, f in PLAYER_SCHEMA.load_fields.items() if isinstance(f, CardList)}
    assert sizes == limits.HAND_SIZES
    assert ROOM_SCHEMA.load({"ruleset": "maubinh-2020", "players": []})["stake"] == limits.STAKE_DEFAULT
    assert PLAYER_SCHEMA.load({"id": "p"})["status"] == limits.STATUS_DEFAULT


def test_the_schemas_have_no_hooks_it_would_skip() -> None:
    assert not any(ROOM_SCHEMA._hooks.values()) and not any(PLAYER_SCHEMA._hooks.values())


def test_it_loads_every_valid_room_as_the_schema_does() -> None:
    loaded = [(plain_room(raw), _schema_load(raw)) for raw in ROOMS]
    assert all(fast == slow for fast, slow in loaded)
    answered = sum(fast is not None for fast, _ in loaded)
    assert answered >= 0.95 * sum(slow is not None for _, slow in loaded)  # the speed it is for


def _mutations() -> list[tuple[str, Any]]:
    """(where, value) changes, each of one field, to valid, invalid and converted values."""
    cards = ["AS", "KS", "QS", "JS", "TS"]
    return [
        ("extra", 1),
        ("stake", 0),
        ("stake", -5),
        ("stake", 10**12),
        ("stake", 10**12 + 1),
        ("stake", 1000.0),
        ("stake", 2.5),
        ("stake", True),
        ("stake", "1000"),
        ("stake", None),
        ("round_id", "r" * 128),
        ("round_id", "r" * 129),
        ("round_id", 7),
        ("round_id", None),
        ("ruleset_digest", "sha256:" + "a" * 64),
        ("ruleset_digest", "sha256:" + "A" * 64),
        ("ruleset_digest", "sha256:" + "a" * 64 + "\n"),
        ("ruleset", None),
        ("ruleset", {"base": "maubinh-2020", "patch": {}}),
        ("ruleset", 5),
        ("players", None),
        ("players", {}),
        ("players", []),
        ("players.0", None),
        ("players.0", "P"),
        ("players.0.extra", 1),
        ("players.0.id", "Bình"),
        ("players.0.id", ""),
        ("players.0.id", "p" * 64),
        ("players.0.id", "p" * 65),
        ("players.0.id", "a\n"),
        ("players.0.id", 3),
        ("players.0.status", "left"),
        ("players.0.status", "timed_out"),
        ("players.0.status", "gone"),
        ("players.0.status", None),
        ("players.0.declare", True),
        ("players.0.declare", 1),
        ("players.0.declare", None),
        ("players.0.back", cards[:4]),
        ("players.0.back", ["as", "ks", "qs", "js", "ts"]),
        ("players.0.back", ["A♠", "K♠", "Q♠", "J♠", "10♠"]),
        ("players.0.back", ["1S", *cards[1:]]),
        ("players.0.back", [14, *cards[1:]]),
        ("players.0.back", [["AS"], *cards[1:]]),
        ("players.0.back", "AS KS QS JS TS"),
        ("players.0.back", None),
        ("players.0.front", cards[:3]),
        ("players.0.cards", cards * 2 + cards[:3]),
        ("players.0.cards", cards),
    ]


def _changed(raw: dict[str, Any], where: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(raw)
    *path, last = where.split(".")
    place: Any = changed
    for step in path:
        place = place[int(step)] if isinstance(place, list) else place[step]
    if isinstance(place, list):
        place[int(last)] = value
    else:
        place[last] = value
    return changed


@pytest.mark.parametrize(("where", "value"), _mutations(), ids=lambda v: str(v)[:24])
def test_wherever_it_answers_it_answers_as_the_schema_does(where: str, value: Any) -> None:
    for raw in ROOMS[:: len(ROOMS) // 40]:
        changed = _changed(raw, where, value)
        fast = plain_room(changed)
        assert fast is None or fast == _schema_load(changed), changed


def test_a_left_out_field_loads_as_its_default() -> None:
    raw = {"ruleset": "maubinh-2020", "players": [{"id": "a", "cards": ["AS"] * 13}]}
    assert plain_room(raw) == _schema_load(raw) == {**raw, "stake": 1, "players": [_schema_load(raw)["players"][0]]}
    assert plain_room(raw)["players"][0]["status"] == "arranged"  # type: ignore[index]
