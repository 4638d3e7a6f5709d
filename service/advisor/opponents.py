"""The opponents a split is valued against: per position, one opponent's strength distribution
(a *field*), shipped as package data (scripts/build_field.py): the strong field of a ruleset, or the
weak one of a wheel."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final, cast

import numpy as np

from service.advisor.splits import Floats, Ints
from service.contract import Opponents
from service.game.hand_strengths import Wheel
from service.game.hands import POSITIONS, Position
from service.rulesets import Ruleset
from service.texts import Named, Text


@dataclass(frozen=True, eq=False)
class OpponentField:
    """One opponent's strength distribution per position; hashed by identity (one per table)."""

    strengths: dict[Position, Ints]
    probabilities: dict[Position, Floats]
    samples: int
    description: str

    @classmethod
    def from_counts(cls, counts: dict[Position, tuple[Ints, Ints]], samples: int, description: str) -> OpponentField:
        strengths = {p: counts[p][0].astype(np.int64) for p in POSITIONS}
        probabilities = {p: counts[p][1].astype(np.float64) / samples for p in POSITIONS}
        return cls(strengths, probabilities, samples, description)


FIELD_WORDS: Final = (
    (
        re.compile(
            r"hands arranged by the advisor for (?P<ruleset>\S+): fictitious play, (?P<rounds>\d+) rounds of "
            r"(?P<hands>[\d,]+) hands averaged, seed (?P<seed>\d+)"
        ),
        "advisor.field_strong",
    ),
    (
        re.compile(r"random 13-card hands arranged lexicographically \(wheel (?P<wheel>\w+)\), seed (?P<seed>\d+)"),
        "advisor.field_weak",
    ),
)
"""How each shipped table describes itself (scripts/build_field.py writes it into the table, in English),
and the phrasebook's key that says it in each language."""
WHEEL_WORDS: Final = {"lowest": Named("lowest", "nhỏ nhất"), "second": Named("second", "lớn thứ nhì")}


def field_said(description: str) -> str:
    """A table's description as a Text, said in the language of the answer; one not known, as it is."""
    for pattern, key in FIELD_WORDS:
        if found := pattern.fullmatch(description):
            fields: dict[str, Any] = found.groupdict()
            if "hands" in fields:
                fields["hands"] = int(fields["hands"].replace(",", ""))
            if "wheel" in fields:
                fields["wheel"] = WHEEL_WORDS.get(fields["wheel"], fields["wheel"])
            return Text(key, **fields)
    return description


@cache
def field_table(name: str) -> OpponentField:
    """A shipped table, ``service/data/field-<name>.npz``."""
    path = resources.files("service").joinpath("data", f"field-{name}.npz")
    with path.open("rb") as stream, np.load(stream) as data:
        counts = {p: (data[f"{p}_strengths"], data[f"{p}_counts"]) for p in POSITIONS}
        return OpponentField.from_counts(counts, int(data["samples"]), str(data["description"]))


def weak_field(wheel: Wheel) -> OpponentField:
    """The weak field: random hands arranged lexicographically."""
    return field_table(wheel)


STRONG_PREFIX = "strong-"


@cache
def strong_fields() -> dict[str, Wheel]:
    """The rulesets with a self-consistent field of their own (``field-strong-<id>.npz``), by id, and
    the wheel each was built under: found in the package data, not named in code."""
    found: dict[str, Wheel] = {}
    for entry in sorted(resources.files("service").joinpath("data").iterdir(), key=lambda e: e.name):
        name = entry.name.removeprefix("field-").removesuffix(".npz")
        if entry.name.startswith("field-") and name.startswith(STRONG_PREFIX):
            with entry.open("rb") as stream, np.load(stream) as data:
                found[name.removeprefix(STRONG_PREFIX)] = cast(Wheel, str(data["wheel"]))
    return found


def opponents_field(ruleset: Ruleset, opponents: Opponents) -> tuple[str, OpponentField]:
    """The field named by ``opponents``, and the table it is: the strong one of the ruleset itself, else
    of its base (a variant plays against its base's field), provided it was built under the same
    wheel; else the first (by id) built under that wheel."""
    if opponents == "weak":
        return ruleset.wheel, weak_field(ruleset.wheel)
    tables = strong_fields()
    same_wheel = [rid for rid, wheel in tables.items() if wheel == ruleset.wheel]
    candidates = (ruleset.id, ruleset.base.id if ruleset.base else None, *same_wheel)
    chosen = next(c for c in candidates if c is not None and tables.get(c) == ruleset.wheel)
    return f"{STRONG_PREFIX}{chosen}", field_table(f"{STRONG_PREFIX}{chosen}")
