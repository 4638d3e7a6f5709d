"""What a request's values may be, written once for marshmallow's schemas (``schemas``, ``fields``) and
for the readers that do without marshmallow (``plain_rooms``, ``room_arrays``, ``room_rules``), so that
a command scoring valid rooms never imports it (its import is a fifth of the command line's start-up:
bench/cli.py, docs/benchmarks.md). tests/unit/test_plain_rooms.py holds the field sets equal to the
schemas'."""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Mapping
from typing import Any, Final

from service.texts import Named

MAX_STAKE: Final = 10**12
STAKE_LOW: Final = 1
STAKE_DEFAULT: Final = 1
ROUND_ID_MOST: Final = 128
MOST_BATCH_ROOMS: Final = 500
"""A batch's rooms unless the operator sets MAUBINH_MAX_BATCH_ROOMS."""
STATUS_DEFAULT: Final = "arranged"
MOST_CARDS: Final = 13
"""No card list holds more than a player's 13 cards: a longer one is refused on its length alone,
so that one batch cannot make the service check (and list) millions of cards."""
HAND_SIZES: Final = {"back": 5, "middle": 5, "front": 3, "cards": MOST_CARDS}
"""Each card list a player may send, and its size: back, middle and front, or the 13 cards."""
ROOM_FIELDS: Final = frozenset({"ruleset", "ruleset_digest", "stake", "round_id", "players"})
PLAYER_FIELDS: Final = frozenset({"id", "status", "declare", *HAND_SIZES})
DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")
PLAYER_ID_CHARACTERS: Final = string.ascii_letters + string.digits + "_.-"
LONGEST_PLAYER_ID: Final = 64
PLAYER_ID: Final = re.compile(f"[{re.escape(PLAYER_ID_CHARACTERS)}]{{1,{LONGEST_PLAYER_ID}}}")
"""Patterns match whole strings (``fullmatch``): ``$`` would also match before a final newline."""
SELF: Final = -1  # error key for the node itself, as opposed to one of its items: no index, and no caller's key

HANDS_NAMED: Final = {
    "back": Named("back", "chi 1 (back)"),
    "middle": Named("middle", "chi 2 (middle)"),
    "front": Named("front", "chi 3 (front)"),
    "cards": Named("cards", "bài chưa xếp (cards)"),
}
"""A hand's field as a Vietnamese message names it: the chi players count (or the 13 bare cards), then the
field it is sent in; never a bare field name opening the sentence."""


def hand_named(attr: str | None) -> str | None:
    return HANDS_NAMED.get(attr or "", attr)


def hand_named_by(labels: Mapping[str, str], named: Named) -> Named:
    """A hand named as the room's ruleset labels it ("chi cuối (back)" where the 3-card hand is "Chi
    đầu"): a card's fault is found before the ruleset is known, and named again once it is."""
    if named is not HANDS_NAMED.get(named.en) or named.en not in labels:
        return named
    label = labels[named.en]
    return Named(named.en, f"{label[:1].lower()}{label[1:]} ({named.en})")


def recorded_round(round_id: Any) -> str | None:
    """A round id that names a round, as rounds scored once records it online and a run finds it offline:
    a string of 1 to ROUND_ID_MOST characters; anything else (none, empty) names none. Recorded in NFC:
    "Bàn 1" with its "à" as one character or as "a" and a combining grave is shown alike, so it is one
    round, and a re-roll cannot hide behind the other spelling of the same id."""
    if not isinstance(round_id, str) or not 0 < len(round_id) <= ROUND_ID_MOST:
        return None
    return unicodedata.normalize("NFC", round_id)
