"""How each pair of a room is settled, decided once (docs/rules.md §4, §5, §11.1, §12.1): by an instant
win, not at all, by a fixed foul payment, or chi by chi with the value of each chi won; and beside it,
its array form for many rooms of one ruleset and size at once (the bulk engine's)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, get_args

from service.game.hands import POSITIONS, Position
from service.rulesets import Ruleset
from service.scoring.results import PlayerResult, SettledBy

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Mask = NDArray[np.bool_]
    Ints = NDArray[np.int64]


@dataclass(unsafe_hash=True)
class Pair:
    """How one pair (i < j) is settled, decided once: who won each chi and what that chi is worth.

    ``winners``, ``values`` and ``bonus_keys`` run over POSITIONS; a tie has winner None, value 0.
    ``won`` and ``totals`` are per side (i, j): chi won, and total(A, B) of docs/rules.md §6.
    ``knobs``: the ruleset fields (§12.1) that made this pair be settled so, for its lines to name.
    """

    i: int
    j: int
    settled_by: SettledBy
    winners: tuple[int | None, ...] = ()
    values: tuple[int, ...] = ()
    bonus_keys: tuple[str | None, ...] = ()
    won: tuple[int, int] = (0, 0)
    totals: tuple[int, int] = (0, 0)
    knobs: tuple[str, ...] = ()

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(
        self,
        i: int,
        j: int,
        settled_by: SettledBy,
        winners: tuple[int | None, ...] = (),
        values: tuple[int, ...] = (),
        bonus_keys: tuple[str | None, ...] = (),
        won: tuple[int, int] = (0, 0),
        totals: tuple[int, int] = (0, 0),
        knobs: tuple[str, ...] = (),
    ) -> None:
        self.i = i
        self.j = j
        self.settled_by = settled_by
        self.winners = winners
        self.values = values
        self.bonus_keys = bonus_keys
        self.won = won
        self.totals = totals
        self.knobs = knobs

    @property
    def both_fouled_compared(self) -> bool:
        return "fouls.both_fouled" in self.knobs

    def chi_won(self, player: int) -> int:
        return self.won[0] if player == self.i else self.won[1]

    def total(self, player: int) -> int:
        """What the other player paid ``player`` in chi and bonus lines."""
        return self.totals[0] if player == self.i else self.totals[1]


def pair_indices(n: int) -> Iterator[tuple[int, int]]:
    for i in range(n):
        for j in range(i + 1, n):
            yield i, j


def chi_value(ruleset: Ruleset, position: Position, bonus_keys: tuple[str, ...]) -> tuple[int, str | None]:
    """A won chi's value (§5, §11.1 bonuses.mode) and the bonus-table key that set it: the most specific
    entry, instead of 1 (``replace``) or on top of it (``add``); 1 where no entry matches."""
    table = ruleset.bonuses[position]
    for key in bonus_keys:
        if key in table:
            return (table[key] + 1 if ruleset.bonus_mode == "add" else table[key]), key
    return 1, None


def compare(i: int, j: int, a: PlayerResult, b: PlayerResult, ruleset: Ruleset, knobs: tuple[str, ...]) -> Pair:
    """§5 for one pair: chi by chi, or every chi to the side that did not foul; two fouled players
    exchange nothing, or (§12.1 fouls.both_fouled) compare as if neither had fouled."""
    if a.fouled and b.fouled:
        if ruleset.both_fouled != "compare" or a.hands is None or b.hands is None:
            return Pair(i, j, "both_fouled", knobs=knobs)
        knobs = (*knobs, "fouls.both_fouled")
    compared = a.fouled == b.fouled
    winners: list[int | None] = []
    values: list[int] = []
    keys: list[str | None] = []
    won_i = won_j = total_i = total_j = 0
    for position in POSITIONS:
        if not compared:
            winner: int | None = j if a.fouled else i
        else:
            assert a.hands is not None and b.hands is not None
            strength_a, strength_b = a.hands[position].strength, b.hands[position].strength
            winner = None if strength_a == strength_b else i if strength_a > strength_b else j
        value, key = 0, None
        if winner is not None:
            hands = (a if winner == i else b).hands
            assert hands is not None
            value, key = chi_value(ruleset, position, hands[position].info.bonus_keys)
            if winner == i:
                won_i, total_i = won_i + 1, total_i + value
            else:
                won_j, total_j = won_j + 1, total_j + value
        winners.append(winner)
        values.append(value)
        keys.append(key)
    settled_by: SettledBy = "comparison" if compared else "foul"
    return Pair(i, j, settled_by, tuple(winners), tuple(values), tuple(keys), (won_i, won_j), (total_i, total_j), knobs)


def settle_pairs(players: list[PlayerResult], ruleset: Ruleset) -> tuple[Pair, ...]:
    """How each pair is settled: by an instant win (§4; or, where it does not settle the pair, §12.1,
    the pair is then settled as if no one held one), not at all (``ends_round``), by a fixed foul
    payment (§11.1), or chi by chi (§5)."""
    anyone_instant = any(p.instant_win is not None for p in players)
    pairs = []
    for i, j in pair_indices(len(players)):
        a, b = players[i], players[j]
        holds = a.instant_win is not None or b.instant_win is not None
        knobs = ("instant_wins.settles_pair",) if holds else ()
        if holds and ruleset.settles_pair:
            pairs.append(Pair(i, j, "instant_win"))
        elif ruleset.ends_round and anyone_instant:
            pairs.append(Pair(i, j, "round_ended"))
        elif ruleset.fixed_foul_units is not None and a.fouled != b.fouled:
            pairs.append(Pair(i, j, "fixed_foul", knobs=knobs))
        else:
            pairs.append(compare(i, j, a, b, ruleset, knobs))
    return tuple(pairs)


# The array form: each function mirrors the scalar one named in its docstring; tests/unit/test_bulk_engine.py
# holds the two equal over every knob.

SETTLED_BY: Final[tuple[SettledBy, ...]] = get_args(SettledBy)
INSTANT_WIN, COMPARISON, FOUL, FIXED_FOUL, BOTH_FOULED, ROUND_ENDED = (
    SETTLED_BY.index(s) for s in ("instant_win", "comparison", "foul", "fixed_foul", "both_fouled", "round_ended")
)


class PairMany:
    """The array form of :class:`Pair`: how pair (i, j) is settled in each room (``settled_by``: its
    place in SETTLED_BY), chi won and totals per side, each chi won and its value per side and position
    (``won_at[side][k]``, 1 or 0; ``worth_at``, its value or 0), and where two fouled players were
    compared. (Plain classes here: compiled, a dataclass would read its numpy annotations when the module
    loads.)"""

    def __init__(
        self,
        i: int,
        j: int,
        settled_by: NDArray[np.int8],
        won_at: tuple[list[Ints], list[Ints]],
        worth_at: tuple[list[Ints], list[Ints]],
        both_fouled_compared: Mask,
    ) -> None:
        self.i = i
        self.j = j
        self.settled_by = settled_by
        self.won_at = won_at
        self.worth_at = worth_at
        self.won = (sum(won_at[0]), sum(won_at[1]))
        self.totals = (sum(worth_at[0]), sum(worth_at[1]))
        self.both_fouled_compared = both_fouled_compared


def chi_values(ruleset: Ruleset) -> Ints:
    """(position, hand id) → a won chi's value, by :func:`chi_value` for each hand id's bonus keys."""
    import numpy as np

    keys = ruleset.hand_table.bonus_keys_by_id()
    return np.array([[chi_value(ruleset, p, k)[0] for k in keys] for p in POSITIONS], dtype=np.int64)


def settle_pairs_many(
    ruleset: Ruleset, strengths: Ints, hand_ids: NDArray[np.int8], fouled: Mask, holds: Mask
) -> tuple[PairMany, ...]:
    """The array form of :func:`settle_pairs` and :func:`compare`."""
    import numpy as np

    values = chi_values(ruleset)
    anyone = np.logical_or.reduce(holds, axis=-1)
    pairs = []
    for i, j in pair_indices(fouled.shape[1]):
        fa, fb = fouled[:, i], fouled[:, j]
        settled = np.where(fa != fb, FOUL, COMPARISON).astype(np.int8)
        both = fa & fb
        compared_both = both if ruleset.both_fouled == "compare" else np.zeros_like(both)
        settled[both & ~compared_both] = BOTH_FOULED
        if ruleset.fixed_foul_units is not None:
            settled[fa != fb] = FIXED_FOUL
        if ruleset.ends_round:
            settled[anyone] = ROUND_ENDED
        either = holds[:, i] | holds[:, j]
        if ruleset.settles_pair:
            settled[either] = INSTANT_WIN
        compared, by_foul = settled == COMPARISON, settled == FOUL
        won_at: tuple[list[Ints], list[Ints]] = ([], [])
        worth_at: tuple[list[Ints], list[Ints]] = ([], [])
        for k in range(len(POSITIONS)):
            sa, sb = strengths[:, i, k], strengths[:, j, k]
            for side, (me, mine, theirs, they_fouled) in enumerate(((i, sa, sb, fb), (j, sb, sa, fa))):
                wins = (compared & (mine > theirs)) | (by_foul & they_fouled)
                won_at[side].append(wins.astype(np.int64))
                worth_at[side].append(np.where(wins, values[k][hand_ids[:, me, k]], 0))
        pairs.append(PairMany(i, j, settled, won_at, worth_at, compared_both & compared))
    return tuple(pairs)
