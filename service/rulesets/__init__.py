"""Rulesets as data (RULES §9): one JSON file each, checked against a schema.

The pipeline reads only the fields of :class:`Ruleset`; nothing branches on an
id. A ruleset's digest is the SHA-256 of its canonical JSON (sorted keys, no
white space, UTF-8), so a result names exactly the rules that produced it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Literal

import jsonschema

from service.hands import POSITIONS, HandTable, Wheel, hand_table
from service.patterns import ARRANGEMENT_PATTERNS, CARD_PATTERNS


class RulesetError(ValueError):
    """A ruleset file that breaks the schema or its own invariants."""


@dataclass(frozen=True)
class InstantWinRow:
    pattern: str
    units: int
    strength: int


@dataclass(frozen=True)
class AceRule:
    room_size: int
    no_ace_pays: int
    collector_min_aces: int
    four_aces_receives: int


@dataclass(frozen=True, eq=False)
class Ruleset:
    """One ruleset, loaded once per process; compared and hashed by identity."""

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
    instant_wins: tuple[InstantWinRow, ...]
    bonuses: MappingProxyType[str, MappingProxyType[str, int]]
    scoop_flat: int | None
    scoop_table: MappingProxyType[tuple[int, int], int]
    foul_is_scoop: bool
    foul_multiplier: int
    left_is_scooped: bool
    aces: AceRule | None
    data: MappingProxyType[str, Any]
    card_patterns: frozenset[str]
    """The 13-card patterns of the instant-win table."""
    arrangement_patterns: frozenset[str]
    """The patterns of the table that need a non-fouled arrangement."""

    @property
    def hands(self) -> HandTable:
        return hand_table(self.wheel)

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

    def scoop_multiplier(self, room_size: int, scoopers: int) -> tuple[int, str]:
        """The multiplier m and the ruleset field it came from."""
        if self.scoop_flat is not None:
            return self.scoop_flat, "scoop.multiplier"
        return (
            self.scoop_table[(room_size, scoopers)],
            f"scoop.table[room_size={room_size}].by_scoopers[{scoopers}]",
        )

    def summary(self) -> dict[str, str]:
        return {"id": self.id, "title": self.title, "version": self.version, "digest": self.digest}


def canonical_json(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(resources.files(__package__).joinpath("schema.json").read_text("utf-8"))
    return loaded


def build_ruleset(data: dict[str, Any]) -> Ruleset:
    """Check ``data`` against the schema and its invariants, then freeze it."""
    try:
        jsonschema.validate(data, _schema())
    except jsonschema.ValidationError as error:
        path = "/".join(str(p) for p in error.absolute_path)
        raise RulesetError(f"ruleset {data.get('id')!r} at /{path}: {error.message}") from error
    players = data["players"]
    if players["min"] > players["max"]:
        raise RulesetError(f"ruleset {data['id']!r}: players.min > players.max")
    patterns = [row["pattern"] for row in data["instant_wins"]["table"]]
    if len(set(patterns)) != len(patterns):
        raise RulesetError(f"ruleset {data['id']!r}: an instant-win pattern is listed twice")
    scoop_table: dict[tuple[int, int], int] = {}
    for row in data["scoop"].get("table", []):
        for scoopers, multiplier in enumerate(row["by_scoopers"], start=1):
            scoop_table[(row["room_size"], scoopers)] = multiplier
    if "table" in data["scoop"]:
        for n in range(players["min"], players["max"] + 1):
            for k in range(1, n):
                if (n, k) not in scoop_table:
                    raise RulesetError(f"ruleset {data['id']!r}: no scoop multiplier for room_size {n}, {k} scoopers")
    aces = AceRule(**data["aces"]) if data["aces"] else None
    return Ruleset(
        id=data["id"],
        title=data["title"],
        version=data["version"],
        digest="sha256:" + hashlib.sha256(canonical_json(data)).hexdigest(),
        min_players=players["min"],
        max_players=players["max"],
        wheel=data["wheel"],
        labels=MappingProxyType(dict(data["labels"])),
        timeout=data["timeout"],
        instant_mode=data["instant_wins"]["mode"],
        ends_round=data["instant_wins"]["ends_round"],
        instant_wins=tuple(InstantWinRow(**row) for row in data["instant_wins"]["table"]),
        bonuses=MappingProxyType({p: MappingProxyType(dict(data["bonuses"][p])) for p in POSITIONS}),
        scoop_flat=data["scoop"].get("multiplier"),
        scoop_table=MappingProxyType(scoop_table),
        foul_is_scoop=data["fouls"]["foul_is_scoop"],
        foul_multiplier=data["fouls"]["foul_multiplier"],
        left_is_scooped=data["fouls"]["left_is_scooped"],
        aces=aces,
        data=MappingProxyType(data),
        card_patterns=frozenset(patterns) & frozenset(CARD_PATTERNS),
        arrangement_patterns=frozenset(patterns) & frozenset(ARRANGEMENT_PATTERNS),
    )


@cache
def all_rulesets() -> MappingProxyType[str, Ruleset]:
    """Every ruleset shipped in this package, by id, loaded once."""
    found: dict[str, Ruleset] = {}
    for entry in sorted(resources.files(__package__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json") and entry.name != "schema.json":
            ruleset = build_ruleset(json.loads(entry.read_text("utf-8")))
            if entry.name != f"{ruleset.id}.json":
                raise RulesetError(f"{entry.name} holds ruleset {ruleset.id!r}")
            found[ruleset.id] = ruleset
    return MappingProxyType(found)


def get_ruleset(ruleset_id: str) -> Ruleset | None:
    return all_rulesets().get(ruleset_id)
