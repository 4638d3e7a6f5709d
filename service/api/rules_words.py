"""The built-in rulesets said in a reader's language, for the rules page: the steps of a settlement,
then each ruleset's chi, tables, fields and choices (each choice's Vietnamese is kept beside its
English: service/texts/choices.vi.json), from the rulesets' own data."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from service.game.hand_strengths import HAND_NAMES
from service.rulesets import Ruleset
from service.rulesets.catalogue import builtin_catalogue
from service.scoring.rule_words import FIELD_WORDS
from service.scoring.settlement import pattern_names
from service.texts import Language, Named, choice_in_vietnamese, phrasebook

STEPS = (
    "page.rules_step_instant_win",
    "page.rules_step_chi",
    "page.rules_step_bonus",
    "page.rules_step_scoop",
    "page.rules_step_foul",
    "page.rules_step_ace",
)
"""A settlement's steps, in their order."""
FIELDS = ("scoop", "fouls", "aces")
"""The fields a ruleset's scoops, fouls and aces are read from, shown as the codes they are, each with
what it decides where a text says it (a ledger line's rule words, or the viewer's for a house-rule knob)."""
KNOB_WORDS = {
    "scoop.basis": "viewer.knob_scoop_basis",
    "scoop.fixed_units": "viewer.knob_scoop_fixed_units",
    "scoop.sweep_multiplier": "viewer.knob_sweep_multiplier",
    "scoop.sweep_pays": "viewer.knob_sweep_pays",
    "fouls.fixed_units": "viewer.knob_fixed_foul",
    "fouls.both_fouled": "viewer.knob_both_fouled",
    "aces.mode": "viewer.knob_aces_mode",
    "aces.units_per_ace": "viewer.knob_units_per_ace",
    "aces.skip_when_instant_win": "viewer.knob_aces_skip",
    "scoop.table": "page.rules_field_scoop_table",
    "fouls.foul_is_scoop": "page.rules_field_foul_is_scoop",
    "fouls.left_is_scooped": "page.rules_field_left_is_scooped",
    "aces.collector_min_aces": "page.rules_field_collector_min_aces",
    "aces.room_size": "page.rules_field_aces_room_size",
}
"""A knob whose every value a text explains; before a rule's words, which say the value a line cited."""


def _said(named: Named, language: Language) -> str:
    return named.vi if language == "vi" else named.en


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    head = "".join(f"<th>{escape(str(cell))}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in row) + "</tr>\n" for row in rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>\n"


def _ruleset(ruleset: Ruleset, language: Language) -> str:
    words, data = phrasebook(language), ruleset.data
    heading = words["page.rules_ruleset"].format(title=ruleset.title, ruleset=f"{ruleset.id}@{ruleset.version}")
    said = {f"{position}_said": label[:1].lower() + label[1:] for position, label in ruleset.labels.items()}
    positions = words["page.rules_positions"].format(**ruleset.labels, **said)
    out = [f"<h3>{escape(heading)}</h3>\n", f"<p>{escape(positions)}</p>\n"]
    named = pattern_names(ruleset)
    patterns = [(_said(named[row.pattern], language), row.units, row.strength) for row in ruleset.instant_wins]
    header = (words["page.rules_pattern"], words["page.rules_units"], words["page.rules_strength"])
    out += [f"<p>{escape(words['viewer.rule_instant_win'])}</p>\n", _table(header, patterns)]
    bonuses = [
        (ruleset.labels[position], _said(HAND_NAMES[hand], language), value)
        for position in ("back", "middle", "front")
        for hand, value in data["bonuses"].get(position, {}).items()
    ]
    header = (words["page.rules_position"], words["page.rules_hand"], words["page.rules_units"])
    out += [f"<p>{escape(words['viewer.rule_bonus'])}</p>\n", _table(header, bonuses)]
    fields = [(f"{part}.{key}", json.dumps(value, ensure_ascii=False))
              for part in FIELDS if isinstance(data.get(part), dict) for key, value in data[part].items()]  # fmt: skip
    out.append(f"<p>{escape(words['page.rules_fields'])}</p>\n<ul>\n")
    for field, value in fields:
        known = KNOB_WORDS.get(field) or FIELD_WORDS.get(field)  # what the field decides, where a text says it
        meaning = f": {escape(words[known])}" if known else ""
        out.append(f"<li><code>{escape(field)} = {escape(value)}</code>{meaning}</li>\n")
    out.append(f"</ul>\n<p>{escape(words['page.rules_choices'])}</p>\n<ul>\n")
    labels = ruleset.labels
    for choice in data.get("choices", []):
        decision, reason = (
            (choice_in_vietnamese(choice[m], labels) if language == "vi" else None) or choice[m]
            for m in ("decision", "reason")
        )
        out.append(f"<li>{escape(decision)} {escape(reason)}</li>\n")
    out.append("</ul>\n")
    return "".join(out)


def rulesets_said(language: Language) -> str:
    """The heading, the steps of a settlement and each built-in ruleset's latest version, as HTML."""
    words = phrasebook(language)
    out = [f"<h1>{escape(words['page.rules_heading'])}</h1>\n<p>{escape(words['page.rules_lead'])}</p>\n"]
    out.append(f"<h2>{escape(words['page.rules_steps'])}</h2>\n<ol>\n")
    out += [f"<li>{escape(words[step])}</li>\n" for step in STEPS]
    out.append("</ol>\n")
    out += [_ruleset(ruleset, language) for ruleset in builtin_catalogue().latest.values()]
    return "".join(out)
