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
from collections.abc import Iterable
from typing import TypeVar

Where = TypeVar("Where")


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
