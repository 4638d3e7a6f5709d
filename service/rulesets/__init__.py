"""Rulesets as data (docs/rules.md §9, §11, §12): JSON documents checked against one schema.

The pipeline reads only the fields of :class:`Ruleset`; nothing branches on an id. A ruleset's
digest is the SHA-256 of its canonical JSON (sorted keys, no white space, UTF-8), so a result
names exactly the rules that produced it. Built-in documents, operators' files and requests'
variants are all checked by :mod:`~service.rulesets.checks` and frozen by :mod:`~service.rulesets.build`
(:mod:`~service.rulesets.model` is what they make); :mod:`service.rulesets.catalogue` finds and
resolves them.

May import: service.game (hand tables, patterns), service.support, service.texts, service.package_files;
never the room, the settlement or anything above.
"""

from service.rulesets.build import build_ruleset, canonical_json, digest_of
from service.rulesets.checks import check_document, patch_bound_faults, schema, with_defaults
from service.rulesets.model import (
    AceBalance,
    AceCollectors,
    AceRule,
    Change,
    InstantWinRow,
    Path,
    Ruleset,
    RulesetError,
    RulesetFault,
    RulesetRef,
)

__all__ = [
    "AceBalance",
    "AceCollectors",
    "AceRule",
    "Change",
    "InstantWinRow",
    "Path",
    "Ruleset",
    "RulesetError",
    "RulesetFault",
    "RulesetRef",
    "build_ruleset",
    "canonical_json",
    "check_document",
    "digest_of",
    "patch_bound_faults",
    "schema",
    "with_defaults",
]
