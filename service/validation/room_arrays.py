"""Rooms read straight into arrays, for the rules' array form (:func:`service.scoring.settle_many`):
only a room the per-room path accepts as it stands, read without it. Anything else (bare cards, a
suit's symbol, a declaration its ruleset does not allow, a field out of its bounds) is not read, and
is left to the per-room path, which answers it in words. The bulk engine (claims of amounts) and
receipts checked in bulk (their rulings) read their rooms here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from service.contract import MAX_EXACT_AMOUNT, STATUSES, Rooms
from service.game.cards import SPELLINGS
from service.game.patterns import tally
from service.rulesets import Ruleset
from service.validation.limits import (
    LONGEST_PLAYER_ID,
    MAX_STAKE,
    PLAYER_ID_CHARACTERS,
    ROUND_ID_MOST,
    STAKE_DEFAULT,
    STAKE_LOW,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

LARGEST_UNITS: Final = 2**31
"""More units than any line, pair or player of a room can reach under a valid ruleset (the schema's
bounds: at most 1,000 units an entry, multipliers at most 100: a scoop line is at most 3,003 × 9,999)."""
LARGEST_STAKE: Final = min(MAX_STAKE, MAX_EXACT_AMOUNT // LARGEST_UNITS)
"""A stake up to this cannot make an amount pass 2^53 − 1, which the per-room path refuses; a room of a
larger stake is left to it."""


def _two_letter_cards() -> NDArray[np.int8]:
    table = np.full(1 << 16, -1, dtype=np.int8)
    for text, card in SPELLINGS.items():
        if len(text) == 2 and text.isascii():
            table[ord(text[0]) << 8 | ord(text[1])] = int(card)
    return table


TWO_LETTER_CARDS: Final = _two_letter_cards()
"""Each two-letter ASCII spelling the per-room path reads (its two bytes as one number) → the card's
number; −1 for every other pair of bytes. A room spelling a card otherwise is left to the per-room path."""


def read_cards(texts: bytes, count: int, size: int) -> tuple[NDArray[np.int8], NDArray[np.bool_]]:
    """Rooms' cards from their texts (each card's two letters and a comma, room after room), and which
    rooms hold only cards, each once: a misplaced comma, an unknown spelling or a card twice is not."""
    letters = np.frombuffer(texts, dtype=np.uint8).reshape(count, size * 13, 3)
    cards = TWO_LETTER_CARDS[letters[..., 0].astype(np.uint16) << 8 | letters[..., 1]]
    readable = np.logical_and.reduce(letters[..., 2] == ord(","), axis=-1) & all_cards_once(cards)
    return cards.reshape(count, size, 13), readable


def all_cards_once(cards: NDArray[np.int8]) -> NDArray[np.bool_]:
    """Which rooms (their cards along the last axis, −1 or ≥ 52 for what is not a card) hold only
    cards, each once."""
    known = (cards >= 0) & (cards < 52)
    once: NDArray[np.bool_] = np.logical_and.reduce(known, axis=-1) & np.logical_and.reduce(
        tally(np.where(known, cards, 0), 52) <= 1, axis=-1
    )
    return once


@dataclass
class Players:
    ids: dict[str, None]
    cards: bytes
    """Each card's two letters and a comma (read by :func:`read_cards`)."""
    status: list[int]
    declare: list[bool]
    keys: int
    """How many keys the players' objects hold."""


def read_players(players: list[Any], ruleset: Ruleset) -> Players | None:
    """The players as the engine reads them, or None for anything the per-room path would refuse or
    read otherwise (bare cards, a declaration its ruleset does not allow)."""
    read = Players({}, b"", [], [], 0)
    texts: list[Any] = []
    declared = ruleset.instant_mode == "declared"
    for player in players:
        if type(player) is not dict or len(player) != 4 + ("status" in player) + ("declare" in player):
            return None  # its fields are these six (id and the three hands are read below), or fewer
        who, status, declare = player.get("id"), player.get("status", "arranged"), player.get("declare", False)
        if type(who) is not str or who in read.ids or status not in STATUSES:
            return None
        if not 0 < len(who) <= LONGEST_PLAYER_ID or who.strip(PLAYER_ID_CHARACTERS):  # PLAYER_ID's characters only
            return None
        if "declare" in player and (type(declare) is not bool or not declared or status != "arranged"):
            return None
        back, middle, front = player.get("back"), player.get("middle"), player.get("front")
        if type(back) is not list or type(middle) is not list or type(front) is not list:
            return None
        if len(back) != 5 or len(middle) != 5 or len(front) != 3:
            return None
        texts += back
        texts += middle
        texts += front
        read.ids[who] = None
        read.status.append(STATUSES.index(status))
        read.declare.append(declare)
        read.keys += len(player)
    try:
        joined = ",".join(texts) + ","
        if len(joined) != 3 * len(texts) or joined.count(",") != len(texts):  # not all two letters
            return None
        read.cards = joined.encode("ascii")
    except (TypeError, UnicodeEncodeError):  # not all text, or a suit's symbol: the per-room path reads it
        return None
    return read


def read_room(
    document: Any, ruleset_of: Callable[[str], Ruleset | None], others: int
) -> tuple[Ruleset, int, Players] | None:
    """A room's ruleset, stake and players as the arrays read them, or None. Its fields are ``ruleset``,
    ``players``, ``stake`` and ``round_id`` (the last two may be left out) and ``others`` more, which
    its caller reads."""
    if type(document) is not dict or len(document) != 2 + others + ("stake" in document) + ("round_id" in document):
        return None
    reference, stake = document.get("ruleset"), document.get("stake", STAKE_DEFAULT)
    if type(reference) is not str or type(stake) is not int or not STAKE_LOW <= stake <= LARGEST_STAKE:
        return None
    round_id = document.get("round_id", "")
    if type(round_id) is not str or len(round_id) > ROUND_ID_MOST:
        return None
    ruleset = ruleset_of(reference)
    players = document.get("players")
    if ruleset is None or type(players) is not list or not ruleset.min_players <= len(players) <= ruleset.max_players:
        return None
    read = read_players(players, ruleset)
    return None if read is None else (ruleset, stake, read)


@dataclass
class Seated:
    """The rooms of one ruleset and size read so far: each one's stake and, flat, room after room, its
    players' cards, status and declare."""

    ruleset: Ruleset
    size: int
    stakes: list[int] = field(default_factory=list)
    cards: list[bytes] = field(default_factory=list)
    status: list[int] = field(default_factory=list)
    declare: list[bool] = field(default_factory=list)

    def add(self, stake: int, players: Players) -> None:
        self.stakes.append(stake)
        self.cards.append(players.cards)
        self.status += players.status
        self.declare += players.declare

    def rooms(self) -> tuple[Rooms, NDArray[np.bool_], NDArray[np.int64]]:
        """The rooms as :func:`service.scoring.settle_many` reads them, which of them hold only cards,
        all different (the per-room path refuses the others), and their stakes."""
        count = len(self.stakes)
        cards, readable = read_cards(b"".join(self.cards), count, self.size)
        rooms = Rooms(
            self.ruleset,
            cards,
            np.array(self.status, dtype=np.int8).reshape(count, self.size),
            np.array(self.declare, dtype=bool).reshape(count, self.size),
        )
        return rooms, readable, np.array(self.stakes, dtype=np.int64)
