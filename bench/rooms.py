"""Random four-player rooms for the benchmarks: legal-ish arrangements, every ruleset."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

DECK = [r + s for r in "23456789TJQKA" for s in "SCDH"]


def tidy(cards: list[str]) -> dict[str, list[str]]:
    """Groups first into the back; usually a legal arrangement."""
    counts = Counter(c[0] for c in cards)
    ordered = sorted(cards, key=lambda c: (-counts[c[0]], -"23456789TJQKA".index(c[0])))
    return {"back": ordered[:5], "middle": ordered[5:10], "front": ordered[10:]}


def four_player_rooms(
    count: int, seed: int = 1, rulesets: tuple[str, ...] = ("maubinh-2020", "maubinh-chi-at")
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rooms = []
    for k in range(count):
        deck = DECK[:]
        rng.shuffle(deck)
        players = [{"id": f"p{i}", **tidy(deck[13 * i : 13 * i + 13])} for i in range(4)]
        rooms.append(
            {"ruleset": rulesets[k % len(rulesets)], "stake": 1000, "round_id": f"bench/{k}", "players": players}
        )
    return rooms
