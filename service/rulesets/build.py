"""A checked document frozen into a :class:`Ruleset`, named by its digest: the SHA-256 of its
canonical JSON (sorted keys, no white space, UTF-8), so that a result names exactly the rules
that produced it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from service.hands import POSITIONS
from service.patterns import ARRANGEMENT_PATTERNS, CARD_PATTERNS
from service.rulesets.checks import check_document, with_defaults
from service.rulesets.model import AceRule, Change, InstantWinRow, Ruleset, RulesetError, RulesetRef


def canonical_json(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest_of(document: Mapping[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(document)).hexdigest()


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
        instant_wins=tuple(InstantWinRow(**row) for row in data["instant_wins"]["table"]),
        bonus_mode=data["bonuses"]["mode"],
        bonuses=MappingProxyType({p: MappingProxyType(dict(data["bonuses"][p])) for p in POSITIONS}),
        scoop_flat=scoop.get("multiplier"),
        scoop_table=MappingProxyType(scoop_table),
        scoop_basis=scoop["basis"],
        sweep_multiplier=scoop["sweep_multiplier"],
        foul_is_scoop=fouls["foul_is_scoop"],
        foul_multiplier=fouls["foul_multiplier"],
        left_is_scooped=fouls["left_is_scooped"],
        fixed_foul_units=fouls["fixed_units"],
        aces=AceRule(**data["aces"]) if data["aces"] else None,
        data=MappingProxyType(dict(document)),
        card_patterns=frozenset(patterns) & frozenset(CARD_PATTERNS),
        arrangement_patterns=frozenset(patterns) & frozenset(ARRANGEMENT_PATTERNS),
        base=base,
        changes=changes,
    )
