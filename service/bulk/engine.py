"""The bulk engine: claims of amounts checked many rooms at a time.

A line the engine reads is one the per-room path would accept as it stands: the common shape of a
verify request (a ruleset id, stake, round id, players with arranged hands, status and declare, and a
claim of amounts alone), every value of its type and in its bounds, no card twice, the claim naming
exactly the room's players and summing to zero. Its rooms are grouped by ruleset and size and settled
by :func:`service.scoring.settle_many`, the array form of each rule. The engine only says which lines
agree; every other line (another shape, a refusal, a disagreement) is answered by the per-room path,
which explains it in words, so an answer never depends on which path read its line.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import orjson

from service.contract import MAX_EXACT_AMOUNT, STATUSES, Rooms
from service.game.cards import SPELLINGS
from service.game.patterns import tally
from service.rulesets import Ruleset, RulesetError
from service.rulesets.catalogue import Catalogue
from service.scoring import settle_many
from service.validation.fields import LONGEST_PLAYER_ID, MAX_STAKE, PLAYER_ID_CHARACTERS

if TYPE_CHECKING:
    from numpy.typing import NDArray

LARGEST_UNITS: Final = 2**31
"""More units than any line, pair or player of a room can reach under a valid ruleset (the schema's
bounds: at most 1,000 units an entry, multipliers at most 100: a scoop line is at most 3,003 × 9,999)."""
LARGEST_STAKE: Final = min(MAX_STAKE, MAX_EXACT_AMOUNT // LARGEST_UNITS)
"""A stake up to this cannot make an amount pass 2^53 − 1, which the per-room path refuses; a room of a
larger stake is left to it."""


@dataclass
class _Group:
    """The rooms of one ruleset and size read so far: each one's line, stake and claimed amounts (in
    player order), and flat, room after room, its players' cards, status and declare."""

    ruleset: Ruleset
    size: int
    lines: list[int] = field(default_factory=list)
    stakes: list[int] = field(default_factory=list)
    claimed: list[int] = field(default_factory=list)
    cards: list[bytes] = field(default_factory=list)
    status: list[int] = field(default_factory=list)
    declare: list[bool] = field(default_factory=list)

    def agreeing(self) -> list[int]:
        """The lines whose claimed amounts are what the rules give: not a room whose cards are not all
        cards, all different (the per-room path refuses it), nor one a false declaration refuses."""
        count = len(self.lines)
        cards, readable = _cards(b"".join(self.cards), count, self.size)
        rooms = Rooms(
            self.ruleset,
            cards,
            np.array(self.status, dtype=np.int8).reshape(count, self.size),
            np.array(self.declare, dtype=bool).reshape(count, self.size),
        )
        units, refused = settle_many(rooms)
        amounts = units * np.array(self.stakes, dtype=np.int64)[:, None]
        claimed = np.array(self.claimed, dtype=np.int64).reshape(count, self.size)
        agrees = np.logical_and.reduce(amounts == claimed, axis=-1) & readable & ~refused
        return [line for line, yes in zip(self.lines, agrees.tolist(), strict=True) if yes]


def _two_letter_cards() -> NDArray[np.int8]:
    table = np.full(1 << 16, -1, dtype=np.int8)
    for text, card in SPELLINGS.items():
        if len(text) == 2 and text.isascii():
            table[ord(text[0]) << 8 | ord(text[1])] = int(card)
    return table


TWO_LETTER_CARDS: Final = _two_letter_cards()
"""Each two-letter ASCII spelling the per-room path reads (its two bytes as one number) → the card's
number; −1 for every other pair of bytes. A room spelling a card otherwise is left to the per-room path."""


def _cards(texts: bytes, count: int, size: int) -> tuple[NDArray[np.int8], NDArray[np.bool_]]:
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


class Reader:
    """Reads verify requests into groups by ruleset and size; a request of any other shape is not read."""

    def __init__(self, resolve: Callable[[str], Ruleset]) -> None:
        self._resolve = resolve
        self._rulesets: dict[str, Ruleset | None] = {}
        self.groups: dict[tuple[int, int], _Group] = {}

    def ruleset_of(self, reference: str) -> Ruleset | None:
        if reference not in self._rulesets:
            try:
                self._rulesets[reference] = self._resolve(reference)
            except RulesetError:
                self._rulesets[reference] = None
        return self._rulesets[reference]

    def read(self, number: int, document: Any, colons: int) -> bool:
        """Add one verify request to its group; False where the engine does not read its shape.
        ``colons``: how many its text holds, one a key unless inside the ruleset or round id (a key
        given twice, which orjson reads as the last, leaves one more than the keys read)."""
        if type(document) is not dict or len(document) != 3 + ("stake" in document) + ("round_id" in document):
            return False  # its fields are these five (ruleset, players and claimed are read below), or fewer
        reference, stake = document.get("ruleset"), document.get("stake", 1)
        if type(reference) is not str or type(stake) is not int or not 1 <= stake <= LARGEST_STAKE:
            return False
        round_id = document.get("round_id", "")
        if type(round_id) is not str or len(round_id) > 128:
            return False
        ruleset = self.ruleset_of(reference)
        players, claim = document.get("players"), document.get("claimed")
        if ruleset is None or type(players) is not list or type(claim) is not dict or len(claim) != 1:
            return False
        size = len(players)
        if not ruleset.min_players <= size <= ruleset.max_players:
            return False
        room = read_players(players, ruleset)
        amounts = claim.get("amounts")
        if room is None or type(amounts) is not dict or len(amounts) != size:
            return False
        keys = len(document) + room.keys + 1 + size
        if colons != keys + reference.count(":") + round_id.count(":"):
            return False
        try:
            claimed = [amounts[who] for who in room.ids]  # the players' ids, all different: the claim's keys
        except KeyError:
            return False
        if any(type(a) is not int or abs(a) > MAX_EXACT_AMOUNT for a in claimed) or sum(claimed) != 0:
            return False
        group = self.groups.get((id(ruleset), size))
        if group is None:
            group = self.groups[id(ruleset), size] = _Group(ruleset, size)
        group.lines.append(number)
        group.stakes.append(stake)
        group.claimed += claimed
        group.cards.append(room.cards)
        group.status += room.status
        group.declare += room.declare
        return True

    def agreeing(self) -> set[int]:
        """The lines read whose claims agree. A group the engine fails on is left to the per-room path
        whole (which answers each line, or its 500), rather than failing the run; the failure is
        printed, as the per-room path prints its own, since the answers alone would not show it."""
        found: set[int] = set()
        for group in self.groups.values():
            try:
                found.update(group.agreeing())
            except Exception:
                traceback.print_exc(file=sys.stderr)
        return found


@dataclass
class _Players:
    ids: dict[str, None]
    cards: bytes
    """Each card's two letters and a comma (read by :func:`_cards`)."""
    status: list[int]
    declare: list[bool]
    keys: int
    """How many keys the players' objects hold."""


def read_players(players: list[Any], ruleset: Ruleset) -> _Players | None:
    """The players as the engine reads them, or None for anything the per-room path would refuse or
    read otherwise (bare cards, a declaration its ruleset does not allow)."""
    read = _Players({}, b"", [], [], 0)
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


def agreeing_lines(
    lines: Sequence[bytes], first: int, catalogue: Catalogue, defaults: dict[str, Any] | None = None
) -> set[int]:
    """The numbers (from ``first``) of the verify lines whose claims the engine finds agree.

    A line is read by orjson where orjson reads it as strict_json does: it starts an object and holds
    no escape (an escaped character is left to the per-room path), and its colons count its keys."""
    reader = Reader(catalogue.resolve)
    for number, line in enumerate(lines, start=first):
        if not line.startswith(b"{") or b"\\" in line:
            continue
        try:
            document = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        colons = line.count(b":")
        if defaults and type(document) is dict:
            colons += len(defaults.keys() - document.keys())  # keys the line leaves to the defaults
            document = {**defaults, **document}
        reader.read(number, document, colons)
    return reader.agreeing()
