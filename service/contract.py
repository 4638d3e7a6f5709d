"""The contract's types: a validated room as the domain receives it, and the faults that refuse one.

They sit between the request layer (service.validation), which builds them, and the pipeline
(service.scoring), which reads them; the CLI and the HTTP layer turn RoomRejected into a 422.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from service.game.cards import Card
from service.game.hands import Position
from service.rulesets import Ruleset
from service.texts import Text

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Status = Literal["arranged", "timed_out", "left"]
STATUSES: tuple[Status, ...] = get_args(Status)
Opponents = Literal["strong", "weak"]
OPPONENTS: tuple[Opponents, ...] = ("strong", "weak")
"""The advisor's fields: opponents who arrange as it does (the default), or by the lexicographic rule."""
MAX_EXACT_AMOUNT = 2**53 - 1
"""The largest integer every JSON client reads exactly: no amount in a request or an answer may pass it."""


def escape(token: str) -> str:
    """A key or index as one token of an RFC 6901 pointer."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    """The member name an RFC 6901 pointer token stands for (``escape`` undone)."""
    return token.replace("~1", "/").replace("~0", "~")


@dataclass(frozen=True)
class Fault:
    """One thing wrong with a request: where (RFC 6901 pointer), what, and a stable code."""

    pointer: str
    message: Text
    code: str
    """One of openapi.yaml's fault codes (components.schemas.Fault): what a client branches on."""


class RoomRejected(ValueError):
    """The request breaks the contract or the rules (HTTP 422)."""

    def __init__(self, faults: list[Fault], of_room: bool = True) -> None:
        super().__init__("; ".join(f"{f.pointer}: {f.message}" for f in faults))
        self.faults = faults
        self.of_room = of_room  # False for one player's cards (evaluate, arrange): no room, and the title says so


@dataclass(frozen=True)
class PlayerEntry:
    """One player as the request gave them; ``arrangement`` is None for bare ``cards``."""

    id: str
    cards: tuple[Card, ...]
    arrangement: Mapping[Position, tuple[Card, ...]] | None = None
    status: Status = "arranged"
    declare: bool = False


@dataclass(frozen=True)
class Room:
    ruleset: Ruleset
    players: tuple[PlayerEntry, ...]
    stake: int = 1
    round_id: str | None = None


@dataclass(frozen=True)
class Rooms:
    """Many validated rooms of one ruleset and one size, as arrays, for the bulk engine: each player's
    13 cards as arranged (back 5, middle 5, front 3), its status (its place in STATUSES) and declare."""

    ruleset: Ruleset
    cards: NDArray[np.int8]
    """(rooms, players, 13)"""
    status: NDArray[np.int8]
    """(rooms, players)"""
    declare: NDArray[np.bool_]
    """(rooms, players)"""
