"""Compact room builders for hand-worked tests: ``seat("P", "AS AD 7C 7D 2H | KS KH 9H 5D 3S | QH JD 4C")``."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from service.documents import score_document

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"


def seat(player_id: str, hands: str | None = None, **extra: Any) -> dict[str, Any]:
    """A player entry; ``hands`` is 'back | middle | front', or 13 cards for ``cards``."""
    entry: dict[str, Any] = {"id": player_id, **extra}
    if hands is not None:
        parts = [p.split() for p in hands.split("|")]
        if len(parts) == 3:
            entry.update(back=parts[0], middle=parts[1], front=parts[2])
        else:
            entry["cards"] = parts[0]
    return entry


def room(ruleset: str, *players: dict[str, Any], stake: int = 1, **extra: Any) -> dict[str, Any]:
    return {"ruleset": ruleset, "stake": stake, "players": list(players), **extra}


def scored(request: dict[str, Any]) -> dict[str, Any]:
    return score_document(request)


def units(result: dict[str, Any]) -> dict[str, int]:
    return {p["id"]: p["units"] for p in result["players"]}


def lines(result: dict[str, Any], step: str | None = None) -> list[tuple[str, str, str, int, str | None]]:
    """(step, payer, payee, units, position) of each ledger line, optionally of one step."""
    return [
        (line["step"], line["payer"], line["payee"], line["units"], line["position"])
        for line in result["ledger"]
        if step is None or line["step"] == step
    ]


def step_totals(result: dict[str, Any]) -> dict[str, Counter[str]]:
    totals: dict[str, Counter[str]] = {p["id"]: Counter() for p in result["players"]}
    for line in result["ledger"]:
        totals[line["payee"]][line["step"]] += line["units"]
        totals[line["payer"]][line["step"]] -= line["units"]
    return totals


CLUB = {"base": "maubinh-2020@2", "patch": {"id": "club-hanoi", "title": "CLB", "scoop": {"multiplier": 2}}}
"""An operator's ruleset file: maubinh-2020 with sập ×2, named club-hanoi."""
CLUB_E1 = room(
    "club-hanoi",
    seat("P", "AS AD 7C 7D 2H | KS KH 9H 5D 3S | QH JD 4C"),
    seat("Q", "9S 9D 9C 4S 4D | 8S 8H 6C 6D TS | AH 3D 2C"),
)
"""docs/rules.md §10 E1 under club-hanoi: 3 chi + 3 × (2 − 1) scoop, P −6."""


def ruleset_folder(directory: Path, **files: Any) -> Path:
    """An operator's folder: each keyword a file name, each value a document (or raw text)."""
    for name, document in files.items():
        text = document if isinstance(document, str) else json.dumps(document)
        (directory / f"{name}.json").write_text(text, "utf-8")
    return directory


def golden_cases(name: str = "public.jsonl") -> list[dict[str, Any]]:
    """The cases of tests/golden/<name> (see tests/golden/README.md)."""
    text = (GOLDEN_DIR / name).read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


RANKS = "23456789TJQKA"
SUITS = "SCDH"
DECK_TEXT = [r + s for r in RANKS for s in SUITS]


def non_fouling(cards: list[str], wheel: str = "second") -> str:
    """A legal 'back | middle | front' for 13 cards, found by brute force (tests only)."""
    import itertools

    from service.game.hands import hand_table, parse_hand

    table = hand_table(wheel)  # type: ignore[arg-type]
    for back in itertools.combinations(cards, 5):
        rest = [c for c in cards if c not in back]
        sb = table.evaluate(parse_hand(" ".join(back)))
        for middle in itertools.combinations(rest, 5):
            front = [c for c in rest if c not in middle]
            sm = table.evaluate(parse_hand(" ".join(middle)))
            if sb >= sm >= table.evaluate(parse_hand(" ".join(front))):
                return f"{' '.join(back)} | {' '.join(middle)} | {' '.join(front)}"
    raise AssertionError("no legal arrangement")


def deal(seed: int, fixed: list[list[str] | None]) -> list[list[str]]:
    """13 cards per seat: ``fixed`` seats keep theirs, the others are dealt from the rest of the
    deck, re-dealing until no dealt seat qualifies for any 13-card instant win."""
    import random

    from service.game.hands import hand_table, parse_hand
    from service.game.patterns import CARD_PATTERNS, card_patterns

    taken = {c for hand in fixed if hand for c in hand}
    rng = random.Random(seed)
    while True:
        rest = [c for c in DECK_TEXT if c not in taken]
        rng.shuffle(rest)
        seats = []
        for hand in fixed:
            if hand is None:
                seats.append(rest[:13])
                rest = rest[13:]
            else:
                seats.append(hand)
        dealt = [s for s, f in zip(seats, fixed, strict=True) if f is None]
        if not any(
            card_patterns(parse_hand(" ".join(h)), hand_table("second"), frozenset(CARD_PATTERNS)) for h in dealt
        ):
            return seats


def with_aces(seed: int, counts: list[int]) -> list[list[str]]:
    """A 4-seat deal (no instant wins) in which seat k holds exactly counts[k] aces."""
    import random

    rng = random.Random(seed)
    aces = ["AS", "AC", "AD", "AH"]
    others = [c for c in DECK_TEXT if c[0] != "A"]
    while True:
        rng.shuffle(others)
        seats, pool, at = [], list(aces), 0
        for count in counts:
            hand = pool[:count] + others[at : at + 13 - count]
            pool, at = pool[count:], at + 13 - count
            seats.append(hand)
        from service.game.hands import hand_table, parse_hand
        from service.game.patterns import CARD_PATTERNS, card_patterns

        if not any(
            card_patterns(parse_hand(" ".join(h)), hand_table("second"), frozenset(CARD_PATTERNS)) for h in seats
        ):
            return seats


# The house-rule rooms (tests/unit/test_house_rules.py's docstring works out what each pays).

Q = "9S 9D 9C 9H 4D | 8S 8H 8C 6C 6D | AH 3D 2C"
P = "AS AD 7C 7D 2H | KS KH 5H 5D 3S | QH JD 4C"
P_FOULED = "KS KH 5H 5D 3S | AS AD 7C 7D 2H | QH JD 4C"  # middle beats back
P_CARDS = "AS AD 7C 7D 2H KS KH 5H 5D 3S QH JD 4C"
C = "TS TC TD 2S 2D | JS JC 4S 4H 5S | QS 6S 3C"
C_FOULED = "JS JC 4S 4H 5S | TS TC TD 2S 2D | QS 6S 3C"
SIX_PAIRS = "7S 7H 6S 6H 2S | 5S 5C 4S 4H 3C | TS 3H 2D"
SAP_LANG = [{"room_size": 2, "by_scoopers": [2]}, {"room_size": 3, "by_scoopers": [2, 3]},
            {"room_size": 4, "by_scoopers": [2, 2, 4]}]  # fmt: skip


def variant(patch: dict[str, Any], base: str = "maubinh-2020") -> dict[str, Any]:
    return {"base": base, "patch": patch}


def heads_up(ruleset: Any, p: str = P, **p_extra: Any) -> dict[str, Any]:
    p_seat = seat("P", p, **p_extra)
    return scored(room(ruleset, p_seat, seat("Q", Q)))


def three(ruleset: Any, c: str = C, **c_extra: Any) -> dict[str, Any]:
    return scored(room(ruleset, seat("A", Q), seat("B", P), seat("C", c, **c_extra)))


def shell_lines(text: str) -> list[str]:
    """The shell lines of a page's 4-space code blocks, continuations joined, comments and the answers
    shown (JSON) dropped: what a reader types."""
    found, pending = [], ""
    for raw in text.splitlines():
        if not raw.startswith("    ") or (raw.startswith("     ") and not pending):
            continue
        line = re.sub(r"\s+#.*$", "", raw.strip())
        if not pending and line.startswith(("{", "[", '"')):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        found.append(pending + line)
        pending = ""
    return found
