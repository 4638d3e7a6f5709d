"""Properties over random rooms of every ruleset, size and status (hypothesis)."""

import copy
import json
from collections import Counter
from typing import Any

from helpers import DECK_TEXT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.documents import score_document
from service.game.cards import parse_card
from service.rulesets.catalogue import builtin_catalogue
from service.scoring import qualifying_patterns
from service.serialize import dumps

RULESETS = sorted(builtin_catalogue().latest)
# Relabellings that keep colours as classes (colour patterns depend on them; ranks and hands never on suits).
RELABELLINGS = [
    dict(zip("SCDH", p, strict=True)) for p in ("SCDH", "CSDH", "SCHD", "CSHD", "DHSC", "HDSC", "DHCS", "HDCS")
]


def _tidy(cards: list[str]) -> dict[str, list[str]]:
    """Groups first into the back: usually legal, sometimes not (the mix is the point)."""
    counts = Counter(c[0] for c in cards)
    ordered = sorted(cards, key=lambda c: (-counts[c[0]], -"23456789TJQKA".index(c[0])))
    return {"back": ordered[:5], "middle": ordered[5:10], "front": ordered[10:]}


@st.composite
def rooms(draw: st.DrawFn) -> dict[str, Any]:
    ruleset_id = draw(st.sampled_from(RULESETS))
    ruleset = builtin_catalogue().latest[ruleset_id]
    n = draw(st.integers(2, 4))
    deck = draw(st.permutations(DECK_TEXT))
    players = []
    for k in range(n):
        cards = list(deck[13 * k : 13 * k + 13])
        status = draw(st.sampled_from(["arranged", "arranged", "arranged", "timed_out", "left"]))
        player: dict[str, Any] = {"id": f"p{k}", "status": status}
        bare_allowed = status == "left" or (status == "timed_out" and ruleset.timeout == "foul")
        if bare_allowed and draw(st.booleans()):
            player["cards"] = cards
        else:
            player.update(
                _tidy(cards) if draw(st.booleans()) else {"back": cards[:5], "middle": cards[5:10], "front": cards[10:]}
            )
        if status == "arranged" and ruleset.instant_mode == "declared":
            table = ruleset.hand_table
            hands = {p: table.describe([parse_card(c) for c in player[p]]) for p in ("back", "middle", "front")}
            fouled = hands["front"] > hands["middle"] or hands["middle"] > hands["back"]
            if qualifying_patterns(tuple(parse_card(c) for c in cards), hands, fouled, ruleset) and draw(st.booleans()):
                player["declare"] = True
        players.append(player)
    return {"ruleset": ruleset_id, "stake": draw(st.integers(1, 10**12)), "players": players}


def _per_player(result: dict[str, Any]) -> dict[str, Any]:
    return {p["id"]: p for p in result["players"]}


def _ledger(result: dict[str, Any]) -> Counter[str]:
    return Counter(
        json.dumps({k: v for k, v in line.items() if k != "seq"}, sort_keys=True) for line in result["ledger"]
    )


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(rooms())
def test_the_ledger_is_positive_payments_in_step_order_that_make_each_player_s_units(request: dict[str, Any]) -> None:
    """Over random rooms of every ruleset: no crash, every line a positive payment between two players,
    the steps in order, and each player's units its lines' sum (so zero-sum by construction; zero-sum
    against an independent reckoning is tests/unit/test_golden.py's)."""
    result = score_document(request)
    assert sum(p["units"] for p in result["players"]) == 0
    net: Counter[str] = Counter()
    for line in result["ledger"]:
        assert line["units"] > 0 and line["payer"] != line["payee"]
        assert line["amount"] == line["units"] * request["stake"]
        net[line["payee"]] += line["units"]
        net[line["payer"]] -= line["units"]
    for player in result["players"]:
        assert player["units"] == net[player["id"]]
        assert player["amount"] == player["units"] * request["stake"]
    steps = [line["step"] for line in result["ledger"]]
    order = ["instant_win", "chi", "bonus", "scoop", "foul", "ace"]
    assert steps == sorted(steps, key=order.index)
    for pair in result["showdown"]:
        assert sum(pair["units"].values()) == 0


@SETTINGS
@given(rooms(), st.randoms(use_true_random=False))
def test_reordering_players_changes_no_players_result(request: dict[str, Any], rng: Any) -> None:
    shuffled = copy.deepcopy(request)
    rng.shuffle(shuffled["players"])
    first, second = score_document(request), score_document(shuffled)
    assert _per_player(first) == _per_player(second)
    assert _ledger(first) == _ledger(second)


@SETTINGS
@given(rooms(), st.sampled_from(RELABELLINGS))
def test_relabelling_suits_consistently_changes_no_result(request: dict[str, Any], relabel: dict[str, str]) -> None:
    relabelled = copy.deepcopy(request)
    for player in relabelled["players"]:
        for key in ("back", "middle", "front", "cards"):
            if key in player:
                player[key] = [c[0] + relabel[c[1]] for c in player[key]]
    first, second = score_document(request), score_document(relabelled)
    for a, b in zip(first["players"], second["players"], strict=True):
        assert (a["units"], a["fouled"], a["aces"]) == (b["units"], b["fouled"], b["aces"])
        assert (a["instant_win"] or {}).get("pattern") == (b["instant_win"] or {}).get("pattern")


NOTATIONS = {
    "lower": lambda c: c.lower(),
    "ten": lambda c: c.replace("T", "10"),
    "symbols": lambda c: c[0] + "♠♣♦♥"["SCDH".index(c[1])],
    "mixed": lambda c: c[0].lower() + c[1] if c[0] in "AKQJ" else c,
}


@SETTINGS
@given(rooms(), st.sampled_from(sorted(NOTATIONS)))
def test_every_accepted_notation_gives_the_same_bytes(request: dict[str, Any], notation: str) -> None:
    written = copy.deepcopy(request)
    for player in written["players"]:
        for key in ("back", "middle", "front", "cards"):
            if key in player:
                player[key] = [NOTATIONS[notation](c) for c in player[key]]
    assert dumps(score_document(request)) == dumps(score_document(written))


@SETTINGS
@given(rooms())
def test_determinism(request: dict[str, Any]) -> None:
    assert dumps(score_document(copy.deepcopy(request))) == dumps(score_document(copy.deepcopy(request)))
