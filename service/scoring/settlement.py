"""The settlement's stages, in the order of docs/rules.md: each a pure function of the evaluated room
that returns its ledger lines, every number read from a ruleset field the line names. The aces, last,
are scoring/aces.py's."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from service.game.hand_strengths import HAND_NAMES
from service.game.hand_words import decided_said, deciding_rank, said
from service.game.hands import POSITIONS, Position
from service.game.patterns import PATTERN_NAMES
from service.rulesets import Ruleset
from service.scoring.evaluation import EvaluatedMany, EvaluatedRoom
from service.scoring.pairs import FIXED_FOUL, FOUL, Pair
from service.scoring.results import InstantWin, LedgerLine, Step
from service.texts import KeyedName, Message, Named, numeral, phrasebook

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Ints = NDArray[np.int64]
    Mask = NDArray[np.bool_]
    Flows = dict[tuple[Step, Position | None], Ints]
    """(step, position) → what each player pays each other under it, (rooms, payer, payee): the ledger's
    lines of each room, summed by what names them."""

CHI_RULE: Final = "docs/rules.md §5: one unit per chi won"
"""A chi line's rule: the one rule that is a sentence, not a ruleset field; stable, as every rule is (the
phrasebook's ledger.rule_chi says it in each language, for ``rule_text``)."""
FOUL_REASONS: Final[dict[str, Named]] = {
    code: KeyedName(phrasebook("en")[key], key)
    for code, key in {"left": "foul_reason.left", "timed_out": "foul_reason.timed_out"}.items()
}
"""Each ``foul_reason`` code's words in an explanation: its English, and the key of its Vietnamese."""
ORDER_FOULS: Final[dict[str, tuple[str, str, str]]] = {
    "front_beats_middle": ("foul_reason.front_beats_middle", "front", "middle"),
    "middle_beats_back": ("foul_reason.middle_beats_back", "middle", "back"),
}
"""The arrangement fouls: each names the stronger and the weaker chi."""


@lru_cache(maxsize=256)
def foul_reasons(ruleset: Ruleset) -> dict[str, Named]:
    """Every foul reason's words under ``ruleset``: an arrangement foul names its two chi by the
    ruleset's own labels in Vietnamese, since their numbers differ (in maubinh-bao chi 1 is the front)."""
    reasons = dict(FOUL_REASONS)
    for code, (key, stronger, weaker) in ORDER_FOULS.items():
        en = phrasebook("en")[key].format(stronger=stronger, weaker=weaker)
        labels = {p: ruleset.labels[p][:1].lower() + ruleset.labels[p][1:] for p in (stronger, weaker)}
        reasons[code] = Named(en, phrasebook("vi")[key].format(stronger=labels[stronger], weaker=labels[weaker]))
    return reasons


PATTERNS_NAMED: Final[dict[str, Named]] = {
    pattern: Named(en.lower(), vi[:1].lower() + vi[1:]) for pattern, (en, vi) in PATTERN_NAMES.items()
}
"""A pattern's name inside a sentence: lower case, as the hands' names are."""
FOUL_BY_STATUS: Final = {
    "ledger.chi_foul": "ledger.chi_foul_status",
    "ledger.foul_fixed": "ledger.foul_fixed_status",
    "ledger.foul_multiplied": "ledger.foul_multiplied_status",
}
"""A player who left or timed out did not foul an arrangement: its lines say it is counted as fouled."""


@lru_cache(maxsize=1024)  # small numbers again and again: a scoop line says three
def product_said(basis: int, extra: int, units: int) -> Named:
    """What is paid on top, as a player reckons it aloud: "3 × 2 = 6", or just "3" where the factor
    is 1 (a "× 1" reads as noise, and beside "gấp 2" as a mistake)."""
    b, e, u = numeral(basis), numeral(extra), numeral(units)
    if extra == 1:
        return u
    return Named(f"{b.en} × {e.en} = {u.en}", f"{b.vi} × {e.vi} = {u.vi}")


@lru_cache(maxsize=1024)
def times_said(times: int) -> Named:
    """A multiple as players say it: "gấp đôi" for 2, "gấp 3" beyond."""
    return Named(f"× {times}", "gấp đôi" if times == 2 else f"gấp {numeral(times).vi}")


_WITH_BONUS: Final = (Named("", ""), Named("", phrasebook("vi")["ledger.with_bonus"]))


def with_bonus(total: int) -> Named:
    """Said after the chi a player lost where they are worth more than the 3 chi themselves: "cả 3
    chi" and then "6 chi đã thua" read as a contradiction unless the bonus is named."""
    return _WITH_BONUS[total > 3]


def _foul_key(key: str, reason: str | None) -> str:
    return key if reason in ORDER_FOULS else FOUL_BY_STATUS[key]


@lru_cache(maxsize=256)
def position_names(ruleset: Ruleset) -> dict[str, Named]:
    """Positions as a text says them: the id in English, the ruleset's label (Chi 1, Chi cuối…) in Vietnamese."""
    return {p: Named(p, _with_size(ruleset.labels[p], p)) for p in POSITIONS}


HAND_SIZES: Final = {"back": 5, "middle": 5, "front": 3}


def _with_size(label: str, position: str) -> str:
    """A label says how many cards its chi holds, in every ruleset alike ("Chi 1 (5 lá)", "Chi cuối (5 lá)"):
    players read "chi cuối" as the 3-card hand, maubinh-bao's source as the 5-card one, and one
    ruleset's lines saying the size while another's did not read as two conventions (sixth read)."""
    return f"{label} ({HAND_SIZES[position]} lá)"


@lru_cache(maxsize=256)
def pattern_names(ruleset: Ruleset) -> dict[str, Named]:
    """Patterns as a line names them under ``ruleset``: trips in the 3-card hand by that hand's own
    label ("sám chi đầu (chi 3 lá)" in maubinh-bao), so that a ruleset has one name for it."""
    front = ruleset.labels["front"]
    vi = "sám " + front[:1].lower() + front[1:] + ("" if any(c.isdigit() for c in front) else " (chi 3 lá)")
    return {**PATTERNS_NAMED, "trips_front": Named(PATTERNS_NAMED["trips_front"].en, vi)}


def ledger_line(
    room: EvaluatedRoom,
    step: Step,
    payer: int,
    payee: int,
    units: int,
    rule: str,
    explanation: Message,
    position: Position | None = None,
    hands: Mapping[str, str | None] | None = None,
) -> LedgerLine:
    return LedgerLine(step, room.players[payer].id, room.players[payee].id, units, rule, explanation, position, hands)


# The stages: each reads the evaluated room and returns its ledger lines.


def with_knobs(rule: str, pair: Pair) -> str:
    """A line's rule, and the §12.1 knobs that made its pair be settled as it was."""
    return ", ".join((rule, *pair.knobs)) if pair.knobs else rule


def _collision(a: InstantWin, b: InstantWin, ruleset: Ruleset) -> tuple[int, str] | None:
    """Two instant wins in one pair: which side (0: a, 1: b) is paid, or None. ``stronger`` (§4): by
    strength; ``difference`` (§12.1): the larger units, by the difference."""
    if ruleset.collision == "difference":
        return None if a.units == b.units else ((0 if a.units > b.units else 1), "instant_wins.collision")
    return None if a.strength == b.strength else ((0 if a.strength > b.strength else 1), "")


INSTANT_WIN_TEXTS: Final = {
    ("ledger.instant_win", True, False): "ledger.instant_win",
    ("ledger.instant_win", False, False): "ledger.instant_win_played",
    ("ledger.instant_win", True, True): "ledger.instant_win_declared",
    ("ledger.instant_win", False, True): "ledger.instant_win_declared_played",
    ("ledger.instant_win_difference", True, False): "ledger.instant_win_difference",
    ("ledger.instant_win_difference", False, False): "ledger.instant_win_difference_played",
    ("ledger.instant_win_difference", True, True): "ledger.instant_win_difference_declared",
    ("ledger.instant_win_difference", False, True): "ledger.instant_win_difference_declared_played",
    ("ledger.instant_win_over", True, False): "ledger.instant_win_over",
    ("ledger.instant_win_over", False, False): "ledger.instant_win_over_played",
    ("ledger.instant_win_over", True, True): "ledger.instant_win_over_declared",
    ("ledger.instant_win_over", False, True): "ledger.instant_win_over_declared_played",
}
"""An instant-win line's text, by whether the pair is then also played out (§12.1 settles_pair) and
whether the win was declared (BÁO): where it must be, the win exists only because the holder did."""


def instant_win_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§4: a pair where one player holds an instant win pays it; two holders pay by the ruleset's
    collision rule (the stronger, or the difference of the units). Paid whether or not the
    instant win also settles the pair (§12.1 settles_pair)."""
    lines: list[LedgerLine] = []
    if all(player.instant_win is None for player in room.players):
        return lines
    for pair in room.pairs:
        wins = (room.players[pair.i].instant_win, room.players[pair.j].instant_win)
        a, b = wins
        if a is None and b is None:
            continue
        knob = ""
        if a is not None and b is not None:
            decided = _collision(a, b, room.ruleset)
            if decided is None:
                continue
            side, knob = decided
        else:
            side = 0 if a is not None else 1
        winner, loser = (pair.i, pair.j) if side == 0 else (pair.j, pair.i)
        win, other = wins[side], wins[1 - side]
        assert win is not None
        rule = f"instant_wins.table[{win.pattern}].units"
        key = "ledger.instant_win"
        named = pattern_names(room.ruleset)
        values: dict[str, Any] = {"winner": room.players[winner].id, "pattern": named[win.pattern]}
        units = win.units
        if not knob and other is not None:  # the stronger of two: the loser's own instant win named
            key = "ledger.instant_win_over"
            values |= {"loser": room.players[loser].id, "other": named[other.pattern]}
        if knob and other is not None:
            units -= other.units
            rule += f" − instant_wins.table[{other.pattern}].units, {knob}"
            key = "ledger.instant_win_difference"
            values |= {"loser": room.players[loser].id, "other": named[other.pattern]}
            values |= {"units_won": win.units, "units_lost": other.units}
        key = INSTANT_WIN_TEXTS[key, room.ruleset.settles_pair, room.ruleset.instant_mode == "declared"]
        values["units"] = units
        lines.append(ledger_line(room, "instant_win", loser, winner, units, rule, (key, values)))
    return lines


def chi_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§5: a ``chi`` line of 1 per chi won and, where the chi value v > 1, a ``bonus`` line of v − 1."""
    lines: list[LedgerLine] = []
    bonuses: list[LedgerLine] = []
    ruleset = room.ruleset
    names, wheel, reasons = position_names(ruleset), ruleset.wheel, foul_reasons(ruleset)
    bonus_text = "ledger.bonus_added" if ruleset.bonus_mode == "add" else "ledger.bonus"
    for pair in room.pairs:
        for k, winner in enumerate(pair.winners):
            if winner is None:
                continue
            position, value, key = POSITIONS[k], pair.values[k], pair.bonus_keys[k]
            loser = pair.j if winner == pair.i else pair.i
            win, lose = room.players[winner], room.players[loser]
            assert win.hands is not None
            won = win.hands[position]
            lost = None if pair.settled_by == "foul" or lose.hands is None else lose.hands[position]
            hands = {"payee": won.info.id, "payer": None if lost is None else lost.info.id}
            where = names[position]
            if lost is None:
                reason = reasons[lose.foul_reason or "left"]
                how = (
                    _foul_key("ledger.chi_foul", lose.foul_reason),
                    {"position": where, "loser": lose.id, "reason": reason},
                )
            else:
                decided = deciding_rank(won.strength, lost.strength)
                how = (
                    "ledger.chi",
                    {
                        "position": where,
                        "winner_hand": said(won.strength, wheel, decided),
                        "loser_hand": said(lost.strength, wheel, decided),
                        "decided": decided_said(won.strength, decided),
                    },
                )
            lines.append(
                ledger_line(
                    room,
                    "chi",
                    loser,
                    winner,
                    1,
                    with_knobs(CHI_RULE, pair),
                    how,
                    position,
                    hands,
                )
            )
            if value > 1:
                assert key is not None  # a chi worth more than 1 has a bonus entry
                bonuses.append(
                    ledger_line(
                        room,
                        "bonus",
                        loser,
                        winner,
                        value - 1,
                        with_knobs(f"bonuses.{position}.{key}", pair),
                        (
                            bonus_text,
                            {"position": where, "hand": HAND_NAMES[key], "value": value, "bonus": value - 1},
                        ),
                        position,
                        hands,
                    )
                )
    return lines + bonuses


def foul_lines(room: EvaluatedRoom) -> list[LedgerLine]:
    """§6 and §11.1: a fouled player pays a non-fouled opponent the fixed foul payment, where the
    ruleset has one; else, where foul_multiplier f > 1, total × (f − 1) on top of the chi it lost."""
    ruleset = room.ruleset
    f = ruleset.foul_multiplier
    reasons = foul_reasons(ruleset)
    lines: list[LedgerLine] = []
    for pair in room.pairs:
        if pair.settled_by not in ("foul", "fixed_foul"):
            continue
        loser = pair.i if room.players[pair.i].fouled else pair.j
        winner = pair.j if loser == pair.i else pair.i
        code = room.players[loser].foul_reason
        who = {"loser": room.players[loser].id, "winner": room.players[winner].id, "reason": reasons[code or "left"]}
        if pair.settled_by == "fixed_foul" and ruleset.fixed_foul_units is not None:
            fixed = ruleset.fixed_foul_units
            explanation = (_foul_key("ledger.foul_fixed", code), {**who, "fixed": fixed})
            lines.append(
                ledger_line(room, "foul", loser, winner, fixed, with_knobs("fouls.fixed_units", pair), explanation)
            )
        elif f > 1:
            total = pair.total(winner)
            lines.append(
                ledger_line(
                    room,
                    "foul",
                    loser,
                    winner,
                    total * (f - 1),
                    with_knobs("fouls.foul_multiplier", pair),
                    (
                        _foul_key("ledger.foul_multiplied", code),
                        {
                            **who,
                            **{"total": total, "multiplier": f, "extra": f - 1, "units": total * (f - 1)},
                            **{"gap": times_said(f), "pays": product_said(total, f - 1, total * (f - 1))},
                            "with_bonus": with_bonus(total),
                        },
                    ),
                )
            )
    return lines


# The array form of each stage, for many rooms of one ruleset and size (the bulk engine, and receipts
# checked in bulk): what each player pays each other, over (rooms, payer, payee), under each step and
# position a ledger line names (:data:`Flows`). Each mirrors the stage named in its docstring.


def pay(flows: Ints, payer: int, payee: int, amount: Ints) -> None:
    flows[:, payer, payee] += amount


def no_flows(room: EvaluatedMany) -> Ints:
    import numpy as np

    rooms, size = room.fouled.shape
    return np.zeros((rooms, size, size), dtype=np.int64)


def instant_win_flows(room: EvaluatedMany) -> Flows:
    """The array form of :func:`instant_win_lines`."""
    import numpy as np

    flows = no_flows(room)
    held, paid, strength = room.holds_instant_win, room.instant_units, room.instant_strength
    difference = room.ruleset.collision == "difference"
    for pair in room.pairs:
        i, j = pair.i, pair.j
        both = held[:, i] & held[:, j]
        for winner, loser in ((i, j), (j, i)):
            alone = held[:, winner] & ~held[:, loser]
            if difference:
                stronger = both & (paid[:, winner] > paid[:, loser])
                amount = np.where(alone, paid[:, winner], np.where(stronger, paid[:, winner] - paid[:, loser], 0))
            else:
                stronger = both & (strength[:, winner] > strength[:, loser])
                amount = np.where(alone | stronger, paid[:, winner], 0)
            pay(flows, loser, winner, amount)
    return {("instant_win", None): flows}


def chi_flows(room: EvaluatedMany) -> Flows:
    """The array form of :func:`chi_lines`: at each position, a chi won pays 1, and its value − 1 as a bonus."""
    flows: Flows = {}
    for k, position in enumerate(POSITIONS):
        chi = flows["chi", position] = no_flows(room)
        bonus = flows["bonus", position] = no_flows(room)
        for pair in room.pairs:
            for side, (winner, loser) in enumerate(((pair.i, pair.j), (pair.j, pair.i))):
                pay(chi, loser, winner, pair.won_at[side][k])
                pay(bonus, loser, winner, pair.worth_at[side][k] - pair.won_at[side][k])
    return flows


def foul_flows(room: EvaluatedMany) -> Flows:
    """The array form of :func:`foul_lines`."""
    import numpy as np

    ruleset, flows = room.ruleset, no_flows(room)
    extra, fixed = max(ruleset.foul_multiplier - 1, 0), ruleset.fixed_foul_units
    for pair in room.pairs:
        for side, (winner, loser) in enumerate(((pair.i, pair.j), (pair.j, pair.i))):
            lost = room.fouled[:, loser]
            amount = np.where((pair.settled_by == FOUL) & lost, pair.totals[side] * extra, 0)
            if fixed is not None:
                amount = np.where((pair.settled_by == FIXED_FOUL) & lost, fixed, amount)
            pay(flows, loser, winner, amount)
    return {("foul", None): flows}
