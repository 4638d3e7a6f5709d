"""What a settlement answers: each player's result, the ledger's lines, each pair's showdown."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from service.contract import Room, Status
from service.game.hands import HandValue, Position
from service.game.patterns import Split
from service.texts import Message

Step = Literal["instant_win", "chi", "bonus", "scoop", "foul", "ace"]
STEPS: Final[tuple[Step, ...]] = ("instant_win", "chi", "bonus", "scoop", "foul", "ace")


@dataclass(unsafe_hash=True)
class InstantWin:
    pattern: str
    units: int
    strength: int
    split: Split | None = None

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(self, pattern: str, units: int, strength: int, split: Split | None = None) -> None:
        self.pattern = pattern
        self.units = units
        self.strength = strength
        self.split = split


@dataclass(slots=True)
class LedgerLine:
    step: Step
    payer: str
    payee: str
    units: int
    rule: str
    explanation: Message
    position: Position | None = None
    hands: Mapping[str, str | None] | None = None

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(
        self,
        step: Step,
        payer: str,
        payee: str,
        units: int,
        rule: str,
        explanation: Message,
        position: Position | None = None,
        hands: Mapping[str, str | None] | None = None,
    ) -> None:
        self.step = step
        self.payer = payer
        self.payee = payee
        self.units = units
        self.rule = rule
        self.explanation = explanation
        self.position = position
        self.hands = hands


@dataclass
class PlayerResult:
    id: str
    status: Status
    hands: dict[Position, HandValue] | None
    fouled: bool
    foul_reason: str | None
    aces: int
    instant_win: InstantWin | None
    declared: bool
    units: int = 0

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(
        self,
        id: str,
        status: Status,
        hands: dict[Position, HandValue] | None,
        fouled: bool,
        foul_reason: str | None,
        aces: int,
        instant_win: InstantWin | None,
        declared: bool,
        units: int = 0,
    ) -> None:
        self.id = id
        self.status = status
        self.hands = hands
        self.fouled = fouled
        self.foul_reason = foul_reason
        self.aces = aces
        self.instant_win = instant_win
        self.declared = declared
        self.units = units


SettledBy = Literal["instant_win", "comparison", "foul", "fixed_foul", "both_fouled", "round_ended"]


@dataclass(slots=True)
class ChiOutcome:
    position: Position
    winner: str | None
    units: int

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(self, position: Position, winner: str | None, units: int) -> None:
        self.position = position
        self.winner = winner
        self.units = units


@dataclass
class PairShowdown:
    """What passed between two players: for the chi-by-chi reveal and the summary table."""

    players: tuple[str, str]
    settled_by: SettledBy
    chi: list[ChiOutcome] = field(default_factory=list)
    scooped_by: str | None = None
    units: dict[str, int] = field(default_factory=dict)

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(
        self,
        players: tuple[str, str],
        settled_by: SettledBy,
        chi: list[ChiOutcome] | None = None,
        scooped_by: str | None = None,
        units: dict[str, int] | None = None,
    ) -> None:
        self.players = players
        self.settled_by = settled_by
        self.chi = [] if chi is None else chi
        self.scooped_by = scooped_by
        self.units = {} if units is None else units


@dataclass
class Result:
    room: Room
    players: list[PlayerResult]
    ledger: list[LedgerLine]
    showdown: list[PairShowdown]

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(
        self, room: Room, players: list[PlayerResult], ledger: list[LedgerLine], showdown: list[PairShowdown]
    ) -> None:
        self.room = room
        self.players = players
        self.ledger = ledger
        self.showdown = showdown
