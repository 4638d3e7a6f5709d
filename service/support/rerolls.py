"""Rounds ruled on twice, found offline: one ``round_id``, two different rooms.

A round re-rolled (dealt again, or its arrangement changed, and scored again) leaves two signed rulings
that each check; only set side by side do they show the fault. A run over many of them (a month of
receipts, a log's entries) notes each room that names a round as two 64-bit numbers, a hash of its round
id and of its room's digest (16 bytes a room, whatever holds it), and at the end finds the round hashes
holding more than one room digest. Those few rounds are then read exactly (their ids and digests
compared as text), so a hash collision costs a second look and never a false fault. The same room sent
again (a retry: the same digest, another ``created``) is one room, and no fault.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import Counter
from collections.abc import Iterable
from typing import Any, NamedTuple, TypeVar

Where = TypeVar("Where")
NAMED_MOST = 5
"""A re-rolled receipt's verdict names at most this many places of the round's other rooms, then how many
more: a round sent thousands of times is named in so many words a receipt, never thousands."""


def _hash64(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


class RoundIndex:
    """Every room's (round hash, room hash), in two arrays of unsigned 64-bit numbers."""

    def __init__(self) -> None:
        self.rounds = array("Q")
        self.rooms = array("Q")

    def add(self, named: Iterable[tuple[str, str]]) -> None:
        """Note each ``(round_id, room digest)``."""
        for round_id, digest in named:
            self.rounds.append(_hash64(round_id))
            self.rooms.append(_hash64(digest))

    def suspects(self) -> set[int]:
        """The round hashes holding more than one room hash: every round ruled on two rooms, and
        perhaps a collision (:func:`rerolled` reads them exactly)."""
        import numpy as np

        if not self.rounds:
            return set()
        rounds = np.frombuffer(self.rounds, dtype=np.uint64)
        rooms = np.frombuffer(self.rooms, dtype=np.uint64)
        order = np.lexsort((rooms, rounds))
        rounds, rooms = rounds[order], rooms[order]
        same_round = rounds[1:] == rounds[:-1]
        other_room = rooms[1:] != rooms[:-1]
        return {int(h) for h in rounds[1:][same_round & other_room]}

    def noted(self, suspects: set[int]) -> list[int]:
        """Where (0-based, in the order noted) each room of a suspect round was noted."""
        import numpy as np

        if not suspects or not self.rounds:
            return []
        rounds = np.frombuffer(self.rounds, dtype=np.uint64)
        found: list[int] = np.nonzero(np.isin(rounds, np.array(sorted(suspects), dtype=np.uint64)))[0].tolist()
        return found


def is_suspect(round_id: str, suspects: set[int]) -> bool:
    return bool(suspects) and _hash64(round_id) in suspects


def rerolled(rooms: Iterable[tuple[str, str, Where]]) -> dict[str, list[tuple[str, Where]]]:
    """Of ``(round_id, digest, where)`` (the suspects' rooms, ``where`` whatever places them: a file and
    line, a log's index), the rounds holding two different digests, each with every room of it:
    ``round_id → [(digest, where), …]``."""
    found: dict[str, list[tuple[str, Where]]] = {}
    for round_id, digest, where in rooms:
        found.setdefault(round_id, []).append((digest, where))
    return {round_id: held for round_id, held in found.items() if len({digest for digest, _ in held}) > 1}


class Others(NamedTuple):
    """A re-rolled round as its receipts name its other rooms, by place (a receipt; a batch's may hold
    several rooms of a round): how many places there are, how many hold each room alone, and the first
    places a receipt may name, in order: the first :data:`NAMED_MOST` holding several rooms, and the first
    :data:`NAMED_MOST` holding each of the first ``NAMED_MOST + 1`` rooms alone (the first places of the
    rooms other than any one are all among them)."""

    places: int
    alone: Counter[str]
    first: list[tuple[Any, str | None]]

    @classmethod
    def of(cls, held: list[tuple[str, Any]]) -> Others:
        """Of a round's ``(digest, where)`` (:func:`rerolled`'s), ``where`` ordered as the input is."""
        rooms_at: dict[Any, set[str]] = {}
        for digest, where in held:
            rooms_at.setdefault(where, set()).add(digest)
        alone: Counter[str] = Counter()
        first: list[tuple[Any, str | None]] = []
        several = 0
        for where in sorted(rooms_at):
            if len(rooms_at[where]) > 1:
                if several < NAMED_MOST:
                    first.append((where, None))
                several += 1
                continue
            (digest,) = rooms_at[where]
            if alone[digest] < NAMED_MOST and (digest in alone or len(alone) <= NAMED_MOST):
                first.append((where, digest))
            alone[digest] += 1
        return cls(len(rooms_at), alone, first)

    def of_room(self, digest: str) -> tuple[list[Any], int]:
        """The first places that hold a room other than ``digest``, and how many more there are."""
        places = [where for where, only in self.first if only != digest][:NAMED_MOST]
        return places, self.places - self.alone[digest] - len(places)
