"""A resolved ruleset as the pipeline reads it, and the faults that refuse one."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal

from service.game.hand_strengths import Wheel
from service.game.hands import HandTable, hand_table
from service.texts import Text

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class RulesetFault:
    """One thing wrong with a ruleset: where in the document (or the reference), what, and a code."""

    path: Path
    message: Text
    code: str = "invalid_ruleset"


class RulesetError(ValueError):
    """A ruleset (or a reference to one) that cannot be used; carries every fault found."""

    def __init__(self, faults: list[RulesetFault]) -> None:
        super().__init__("; ".join(f"/{'/'.join(map(str, f.path))}: {f.message}" for f in faults))
        self.faults = faults


@dataclass(frozen=True)
class InstantWinRow:
    pattern: str
    units: int
    strength: int


@dataclass(frozen=True)
class AceCollectors:
    """§7 and §11.1: players with no ace pay those holding ``collector_min_aces`` or more."""

    room_size: int
    no_ace_pays: int
    collector_min_aces: int
    four_aces_receives: int
    skip_when_instant_win: bool = False
    mode: Literal["collectors"] = "collectors"


@dataclass(frozen=True)
class AceBalance:
    """§12.1: each player's balance is (aces − 1) × ``units_per_ace``."""

    room_size: int
    units_per_ace: int
    skip_when_instant_win: bool = False
    mode: Literal["balance"] = "balance"


AceRule = AceCollectors | AceBalance


@dataclass(frozen=True)
class RulesetRef:
    """What a result names: a ruleset's id, version and digest."""

    id: str
    version: str
    digest: str


@dataclass(frozen=True)
class Change:
    """One value a variant changed from its base (``None`` for a key absent on that side)."""

    field: str
    base: Any
    value: Any


@dataclass(frozen=True, eq=False)
class Ruleset:
    """One resolved ruleset; compared and hashed by identity (the catalogue keeps one per document)."""

    id: str
    title: str
    version: str
    digest: str
    min_players: int
    max_players: int
    wheel: Wheel
    labels: MappingProxyType[str, str]
    timeout: Literal["foul", "as_arranged"]
    instant_mode: Literal["automatic", "declared"]
    ends_round: bool
    collision: Literal["stronger", "difference"]
    settles_pair: bool
    instant_wins: tuple[InstantWinRow, ...]
    bonus_mode: Literal["replace", "add"]
    bonuses: MappingProxyType[str, MappingProxyType[str, int]]
    scoop_flat: int | None
    scoop_table: MappingProxyType[tuple[int, int], int]
    scoop_basis: Literal["total", "chi", "fixed"]
    scoop_fixed_units: int | None
    sweep_multipliers: MappingProxyType[int, int]
    """s by room size (3 and 4); one integer in the document stands for every size."""
    sweep_is_table: bool
    sweep_pays: Literal["scoop", "total"]
    foul_is_scoop: bool
    foul_multiplier: int
    left_is_scooped: bool
    fixed_foul_units: int | None
    both_fouled: Literal["nothing", "compare"]
    aces: AceRule | None
    data: MappingProxyType[str, Any]
    """The document as served (``GET /v1/rulesets/{id}``) and digested."""
    card_patterns: frozenset[str]
    """The 13-card patterns of the instant-win table."""
    arrangement_patterns: frozenset[str]
    """The patterns of the table that need a non-fouled arrangement."""
    base: RulesetRef | None = None
    """For a variant (a request's patch or an operator's file): the ruleset it patched."""
    changes: tuple[Change, ...] = ()
    """For a variant: every value that differs from its base, in document order."""

    @cached_property
    def hand_table(self) -> HandTable:
        """Kept on the ruleset after its first use: every hand of a room asks for it."""
        return hand_table(self.wheel)

    @property
    def ref(self) -> RulesetRef:
        return RulesetRef(self.id, self.version, self.digest)

    def instant_win_row(self, pattern: str) -> InstantWinRow:
        return next(row for row in self.instant_wins if row.pattern == pattern)

    def strongest(self, patterns: Iterable[str]) -> InstantWinRow | None:
        """The strongest of these patterns by the table; of equal strengths the first listed (§9.4 item 1)."""
        present = set(patterns)
        best = None
        for row in self.instant_wins:
            if row.pattern in present and (best is None or row.strength > best.strength):
                best = row
        return best

    def sweep_multiplier(self, room_size: int) -> tuple[int, str]:
        """The sweep multiplier s of a room of this size (1 for a room never swept), and its field."""
        s = self.sweep_multipliers.get(room_size, 1)
        return s, (
            f"scoop.sweep_multiplier[room_size={room_size}]" if self.sweep_is_table else "scoop.sweep_multiplier"
        )

    def scoop_multiplier(self, room_size: int, scoopers: int) -> tuple[int, str]:
        """The multiplier m and the ruleset field it came from."""
        if self.scoop_flat is not None:
            return self.scoop_flat, "scoop.multiplier"
        return (
            self.scoop_table[(room_size, scoopers)],
            f"scoop.table[room_size={room_size}].by_scoopers[{scoopers}]",
        )
