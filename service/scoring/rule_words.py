"""A ledger line's rule as a reader of another language reads it (``rule_text``): each ruleset field
the rule names said in words, its path kept in brackets after them ("hệ số sập (scoop.multiplier)"),
since the path is the stable reference and the same in every language. English reads the rule as it is.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from service.game.hand_strengths import HAND_NAMES
from service.rulesets import Ruleset
from service.scoring.settlement import CHI_RULE, pattern_names
from service.texts import Language, phrasebook

FIELD_WORDS: Final = {
    "scoop.multiplier": "rule.scoop_multiplier",
    "scoop.sweep_multiplier": "rule.sweep_multiplier",
    "scoop.basis": "rule.scoop_basis",
    "scoop.fixed_units": "rule.scoop_fixed_units",
    "scoop.sweep_pays": "rule.sweep_pays",
    "fouls.foul_multiplier": "rule.foul_multiplier",
    "fouls.fixed_units": "rule.foul_fixed_units",
    "fouls.both_fouled": "rule.both_fouled",
    "aces.no_ace_pays": "rule.no_ace_pays",
    "aces.four_aces_receives": "rule.four_aces_receives",
    "aces.units_per_ace": "rule.units_per_ace",
    "instant_wins.collision": "rule.collision",
    "instant_wins.settles_pair": "rule.settles_pair",
}
"""Each ruleset field a rule names as it is, → the phrasebook's words for it."""
SCOOP_TABLE: Final = re.compile(r"scoop\.table\[room_size=(\d+)\]\.by_scoopers\[(\d+)\]")
SWEEP_TABLE: Final = re.compile(r"scoop\.sweep_multiplier\[room_size=(\d+)\]")
INSTANT_WIN_ROW: Final = re.compile(r"instant_wins\.table\[(\w+)\]\.units")
BONUS_ENTRY: Final = re.compile(r"bonuses\.(back|middle|front)\.(\w+)")
DIFFERENCE: Final = re.compile(
    r"(instant_wins\.table\[(\w+)\]\.units) − (instant_wins\.table\[(\w+)\]\.units), (instant_wins\.collision)"
)
"""Two instant wins paid by their difference: said as one difference, not a minus between two labels."""
FIELD: Final = re.compile(r"[a-z_]+(?:\.[a-z_]+|\[[^\]]*\])+")
"""A field path inside a rule: the rule joins them with ", ", " × " and " − "."""


@lru_cache(maxsize=1024)
def rule_said(rule: str, ruleset: Ruleset, language: Language) -> str:
    """``rule`` in ``language``'s words: a chi line's citation translated, every field named by its words
    and then its path. A few distinct rules per ruleset, so each is said once."""
    if language == "en":
        return rule
    words = phrasebook(language)
    head = ""
    if rule.startswith(CHI_RULE):
        head, rule = words["ledger.rule_chi"], rule[len(CHI_RULE) :]
    if found := DIFFERENCE.fullmatch(rule):
        named = pattern_names(ruleset)
        pattern, other = (named[p].vi.split(" (")[0] if p in named else p for p in (found[2], found[4]))
        said = words["rule.instant_win_difference"].format(pattern=pattern, other=other)
        return f"{said} ({found[1]} − {found[3]}; {found[5]})"
    return head + FIELD.sub(lambda found: f"{_field_words(found[0], ruleset, language)} ({found[0]})", rule)


def _field_words(path: str, ruleset: Ruleset, language: Language) -> str:
    words = phrasebook(language)
    if path in FIELD_WORDS:
        return words[FIELD_WORDS[path]]
    if found := SCOOP_TABLE.fullmatch(path):
        return words["rule.scoop_table"].format(room_size=found[1], scoopers=found[2])
    if found := SWEEP_TABLE.fullmatch(path):
        return words["rule.sweep_table"].format(room_size=found[1])
    if found := INSTANT_WIN_ROW.fullmatch(path):
        pattern = pattern_names(ruleset).get(found[1])  # "sám chi đầu (chi 3 lá)": the path says which chi
        return words["rule.instant_win_row"].format(pattern=pattern.vi.split(" (")[0] if pattern else found[1])
    if (found := BONUS_ENTRY.fullmatch(path)) and found[2] in HAND_NAMES:
        label = ruleset.labels[found[1]]  # its size unsaid: the brackets that follow name the position
        hand = HAND_NAMES[found[2]].vi
        return words["rule.bonus_entry"].format(position=label[:1].lower() + label[1:], hand=hand)
    return words["rule.field"]
