"""The common room body loaded without marshmallow: what ``ROOM_SCHEMA.load`` gives, for a body with
nothing to refuse and nothing to convert; anything else is left to marshmallow, which says why.

A speed trick: marshmallow's load was 15% of an explained room (bench/cli.py, docs/benchmarks.md), and
its import a fifth of the command line's start-up. Every limit is the schema's own, from ``limits``;
tests/unit/test_plain_rooms.py holds this equal to the schema's load wherever it answers, over valid
rooms and each kind of fault, and the field sets equal to the schema's.
"""

from __future__ import annotations

from typing import Any

from service.contract import STATUSES
from service.game.cards import SPELLINGS
from service.validation.limits import (
    DIGEST,
    HAND_SIZES,
    MAX_STAKE,
    PLAYER_FIELDS,
    PLAYER_ID,
    ROOM_FIELDS,
    ROUND_ID_MOST,
    STAKE_DEFAULT,
    STAKE_LOW,
    STATUS_DEFAULT,
)


def _player(raw: Any) -> dict[str, Any] | None:
    if type(raw) is not dict or not raw.keys() <= PLAYER_FIELDS:
        return None
    player_id = raw.get("id")
    if type(player_id) is not str or not PLAYER_ID.fullmatch(player_id):
        return None
    status = raw.get("status", STATUS_DEFAULT)
    if type(status) is not str or status not in STATUSES:
        return None
    loaded: dict[str, Any] = {"id": player_id, "status": status}
    if "declare" in raw:
        if type(raw["declare"]) is not bool:
            return None
        loaded["declare"] = raw["declare"]
    for name, size in HAND_SIZES.items():
        if name in raw:
            texts = raw[name]
            if type(texts) is not list or len(texts) != size:
                return None
            cards = []
            for text in texts:
                card = SPELLINGS.get(text) if type(text) is str else None
                if card is None:
                    return None
                cards.append(card)
            loaded[name] = tuple(cards)
    return loaded


def plain_room(raw: Any) -> dict[str, Any] | None:
    """``ROOM_SCHEMA.load(raw)`` where ``raw`` holds only fields of the schema, each of its JSON type
    and within its limits (a whole-number stake written as such, a ruleset named by id or object);
    else None."""
    if type(raw) is not dict or not raw.keys() <= ROOM_FIELDS:
        return None
    ruleset = raw.get("ruleset")
    if ruleset is None:
        return None
    loaded: dict[str, Any] = {"ruleset": ruleset}
    if "ruleset_digest" in raw:
        digest = raw["ruleset_digest"]
        if type(digest) is not str or not DIGEST.fullmatch(digest):
            return None
        loaded["ruleset_digest"] = digest
    stake = raw.get("stake", STAKE_DEFAULT)
    if type(stake) is not int or not STAKE_LOW <= stake <= MAX_STAKE:
        return None
    loaded["stake"] = stake
    if "round_id" in raw:
        round_id = raw["round_id"]
        if type(round_id) is not str or len(round_id) > ROUND_ID_MOST:
            return None
        loaded["round_id"] = round_id
    players = raw.get("players")
    if type(players) is not list:
        return None
    loaded_players = []
    for each in players:
        player = _player(each)
        if player is None:
            return None
        loaded_players.append(player)
    loaded["players"] = loaded_players
    return loaded
