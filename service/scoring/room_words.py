"""A room's answer where its ledger is empty, said: an empty list is no answer to a player who asks why
nothing passed. Each reason is said once, for the whole room where it holds for all of it."""

from __future__ import annotations

from typing import Final

from service.scoring.results import PairShowdown, Result
from service.texts import Named, Text

PAIR_PAID_NOTHING: Final = {
    "comparison": "answer.pair_tied",
    "instant_win": "answer.pair_instant_wins_tied",
    "both_fouled": "answer.pair_both_fouled",
    "round_ended": "answer.pair_round_ended",
}
"""Why a pair paid nothing, by how it was settled; any other way by the fallback."""


def nothing_paid(result: Result) -> Text:
    """Why nothing passed. Two equal instant wins pay nothing with no chi compared, so "every chi tied"
    is said only where it is true; three or more equal instant wins are one clause, not one a pair."""
    ruleset = result.room.ruleset
    if all(player.fouled for player in result.players) and all(p.settled_by == "both_fouled" for p in result.showdown):
        key = "answer.nothing_paid_fouled_house" if ruleset.changes else "answer.nothing_paid_fouled"
        return Text(key, count=len(result.players), ruleset=ruleset.id)  # a variant's id is no name to a player
    if all(pair.settled_by == "comparison" for pair in result.showdown):
        return Text("answer.nothing_paid")
    tied = _tied_winners(result)
    clauses = [Text("answer.instant_wins_tied", count=len(tied), players=", ".join(tied))] if tied else []
    clauses += [pair_paid_nothing(pair) for pair in result.showdown if not (set(pair.players) <= set(tied))]
    said = Named("; ".join(clauses), "; ".join(clause.render("vi") for clause in clauses))
    return Text("answer.nothing_paid_pairs", pairs=said)


def _tied_winners(result: Result) -> list[str]:
    """The three or more players, in the room's order, whose every pair is two equal instant wins."""
    tied: list[PairShowdown] = [pair for pair in result.showdown if pair.settled_by == "instant_win"]
    ids = {player for pair in tied for player in pair.players}
    if len(ids) < 3 or len(tied) != len(ids) * (len(ids) - 1) // 2:
        return []
    return [player.id for player in result.players if player.id in ids]


def pair_paid_nothing(pair: PairShowdown) -> Text:
    """Why two players paid each other nothing, by how their pair was settled."""
    first, second = pair.players
    return Text(PAIR_PAID_NOTHING.get(pair.settled_by, "answer.pair_no_chi"), first=first, second=second)
