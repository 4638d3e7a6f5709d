"""The advisor's decision for 13 cards: the best split to play, the next best, and whether an
instant win is worth more (or, in a declared ruleset, worth declaring)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from service.advisor.expectation import SplitValues
from service.advisor.opponents import (
    STRONG_PREFIX,
    OpponentField,
    field_table,
    opponents_field,
    strong_fields,
    weak_field,
)
from service.advisor.search import Suggestion, best_distinct, pattern_holders
from service.advisor.splits import evaluate_subsets, lookup, split_grid
from service.contract import Opponents
from service.game.cards import Card
from service.game.hand_strengths import Wheel
from service.game.patterns import Split, card_patterns
from service.rulesets import Ruleset
from service.scoring import ruleset_arrangement_patterns


@dataclass(frozen=True)
class Advice:
    """What the advisor decided for 13 cards, before any JSON."""

    chosen: Suggestion
    play: Suggestion
    """The best split to play out; ``chosen`` differs only when a pattern is worth more."""
    ranked: list[Suggestion]
    patterns: list[tuple[str, Split | None]]
    """Every qualifying pattern, in table order, with the service's split for three flushes/straights."""
    strongest: str | None
    declare: bool
    """In a declared ruleset: press BÁO (the strongest pattern pays more than playing out)."""
    instant_win: str | None
    """What scoring would award for ``chosen`` (automatic), or what to declare (declared)."""
    legal_splits: int
    opponents: Opponents
    field_table: str
    """The shipped table the field was read from (``service/data/field-<name>.npz``)."""
    field: OpponentField
    instant_win_worth: float | None
    """What taking (or declaring) the strongest pattern is worth; None without one."""


def advise(cards: tuple[Card, ...], ruleset: Ruleset, alternatives: int = 0, opponents: Opponents = "strong") -> Advice:
    """Decide for 13 cards; ties go to the lower split of the cards in canonical order."""
    cards = tuple(sorted(cards))
    table = ruleset.hand_table
    subsets = evaluate_subsets(cards, ruleset.wheel)
    field_table, field = opponents_field(ruleset, opponents)
    values = SplitValues(subsets, ruleset, field)
    ranked = best_distinct(values, alternatives + 1)
    play = ranked[0]
    found: dict[str, Split | None] = dict(card_patterns(cards, table, ruleset.card_patterns))
    holders = pattern_holders(values, ruleset.arrangement_patterns)
    found |= {p: None for p, holder in holders.items() if holder is not None}
    patterns = [(row.pattern, found[row.pattern]) for row in ruleset.instant_wins if row.pattern in found]
    strongest_row = ruleset.strongest(p for p, _ in patterns)
    strongest = strongest_row.pattern if strongest_row else None
    holder = holders.get(strongest) if strongest is not None else None
    worth = None if strongest is None else instant_win_worth(ruleset, strongest, holder or play)
    take = worth is not None and worth > play.expected_units
    chosen = holder if take and holder is not None else play
    model = (values.legal_count, opponents, field_table, field, worth)
    if ruleset.instant_mode == "declared":
        return Advice(chosen, play, ranked, patterns, strongest, take, strongest if take else None, *model)
    realised = set(card_patterns(cards, table, ruleset.card_patterns))
    realised |= set(ruleset_arrangement_patterns(table.describe_all(chosen.arrangement), ruleset))
    realised_row = ruleset.strongest(realised)
    instant_win = realised_row.pattern if realised_row else None
    return Advice(chosen, play, ranked, patterns, strongest, False, instant_win, *model)


def instant_win_worth(ruleset: Ruleset, pattern: str, taken: Suggestion) -> float:
    """What an instant win is worth played as ``taken`` (the best split holding it, or the best play
    for a 13-card pattern): its units instead of the pair's play (§4), or on top of it where it does
    not settle the pair (§12.1 settles_pair false)."""
    return ruleset.instant_win_row(pattern).units + (0 if ruleset.settles_pair else taken.expected_units)


def build_tables() -> None:
    """Everything the advisor builds once per process, built now: the split grid, each wheel's
    lookup and the shipped fields."""
    split_grid()
    for wheel in get_args(Wheel):
        lookup(wheel)
        weak_field(wheel)
    for ruleset_id in strong_fields():
        field_table(f"{STRONG_PREFIX}{ruleset_id}")
