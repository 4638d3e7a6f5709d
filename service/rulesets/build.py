"""A checked document frozen into a :class:`Ruleset`, named by its digest: the SHA-256 of its
canonical JSON (sorted keys, no white space, UTF-8), so that a result names exactly the rules
that produced it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from service.game.hands import POSITIONS
from service.game.patterns import ARRANGEMENT_PATTERNS, CARD_PATTERNS
from service.rulesets.checks import check_document, with_defaults
from service.rulesets.model import (
    AceBalance,
    AceCollectors,
    AceRule,
    Change,
    InstantWinRow,
    Ruleset,
    RulesetError,
    RulesetRef,
)


def canonical_json(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest_of(document: Mapping[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(document)).hexdigest()


def _sweep_multipliers(declared: int | list[dict[str, int]]) -> dict[int, int]:
    if isinstance(declared, int):
        return {3: declared, 4: declared}
    return {row["room_size"]: row["multiplier"] for row in declared}


def _ace_rule(declared: dict[str, Any] | None) -> AceRule | None:
    if declared is None:
        return None
    if declared["mode"] == "balance":
        return AceBalance(declared["room_size"], declared["units_per_ace"], declared["skip_when_instant_win"])
    return AceCollectors(
        declared["room_size"],
        declared["no_ace_pays"],
        declared["collector_min_aces"],
        declared["four_aces_receives"],
        declared["skip_when_instant_win"],
    )


def build_ruleset(
    document: Mapping[str, Any],
    *,
    digest: str | None = None,
    base: RulesetRef | None = None,
    changes: tuple[Change, ...] = (),
    checked: bool = False,
    merged_from: Mapping[str, Any] | None = None,
) -> Ruleset:
    """Check ``document`` and freeze it; the digest is of the document as given unless stated.
    ``checked``: a document shipped in this package, which the tests check; not checked again.
    ``merged_from``: the checked (defaults-filled) document a variant was merged from."""
    data = with_defaults(document)
    faults = [] if checked else check_document(data, merged_from)
    if faults:
        raise RulesetError(faults)
    players, scoop, fouls = data["players"], data["scoop"], data["fouls"]
    scoop_table: dict[tuple[int, int], int] = {}
    for row in scoop.get("table", []):
        for scoopers, multiplier in enumerate(row["by_scoopers"], start=1):
            scoop_table[(row["room_size"], scoopers)] = multiplier
    patterns = [row["pattern"] for row in data["instant_wins"]["table"]]
    return Ruleset(
        id=data["id"],
        title=data["title"],
        version=data["version"],
        digest=digest or digest_of(document),
        min_players=players["min"],
        max_players=players["max"],
        wheel=data["wheel"],
        labels=MappingProxyType(dict(data["labels"])),
        timeout=data["timeout"],
        instant_mode=data["instant_wins"]["mode"],
        ends_round=data["instant_wins"]["ends_round"],
        collision=data["instant_wins"]["collision"],
        settles_pair=data["instant_wins"]["settles_pair"],
        instant_wins=tuple(InstantWinRow(**row) for row in data["instant_wins"]["table"]),
        bonus_mode=data["bonuses"]["mode"],
        bonuses=MappingProxyType({p: MappingProxyType(dict(data["bonuses"][p])) for p in POSITIONS}),
        scoop_flat=scoop.get("multiplier"),
        scoop_table=MappingProxyType(scoop_table),
        scoop_basis=scoop["basis"],
        scoop_fixed_units=scoop.get("fixed_units"),
        sweep_multipliers=MappingProxyType(_sweep_multipliers(scoop["sweep_multiplier"])),
        sweep_is_table=isinstance(scoop["sweep_multiplier"], list),
        sweep_pays=scoop["sweep_pays"],
        foul_is_scoop=fouls["foul_is_scoop"],
        foul_multiplier=fouls["foul_multiplier"],
        left_is_scooped=fouls["left_is_scooped"],
        fixed_foul_units=fouls["fixed_units"],
        both_fouled=fouls["both_fouled"],
        aces=_ace_rule(data["aces"]),
        data=MappingProxyType(dict(document)),
        card_patterns=frozenset(patterns) & frozenset(CARD_PATTERNS),
        arrangement_patterns=frozenset(patterns) & frozenset(ARRANGEMENT_PATTERNS),
        base=base,
        changes=changes,
    )
