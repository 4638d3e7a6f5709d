"""A room evaluated once, for the stages to read: each player's hands, foul and instant win, and how
each pair is settled chi by chi (docs/rules.md §2.3–§5), with the value of each chi won."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, get_args

from service.cards import ACE, Card
from service.contract import STATUSES, Fault, PlayerEntry, Room, RoomRejected, Rooms
from service.hands import CATEGORY_UNIT, POSITIONS, HandValue, Position
from service.patterns import (
    CardStats,
    Split,
    arrangement_pattern_masks,
    arrangement_patterns,
    card_pattern_masks,
    card_patterns,
    card_stats,
    tally,
)
from service.rulesets import Ruleset
from service.scoring.results import InstantWin, PlayerResult, SettledBy
from service.texts import Text

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Mask = NDArray[np.bool_]
    Ints = NDArray[np.int64]


def arrangement_foul(hands: Mapping[Position, HandValue]) -> str | None:
    """Why an arrangement fouls (§2.3), or None: equal hands are legal."""
    if hands["front"].strength > hands["middle"].strength:
        return "front_beats_middle"
    if hands["middle"].strength > hands["back"].strength:
        return "middle_beats_back"
    return None


def _evaluate_player(entry: PlayerEntry, ruleset: Ruleset, stats: CardStats) -> PlayerResult:
    table = ruleset.hand_table
    hands: dict[Position, HandValue] | None = None
    if entry.arrangement is not None:
        hands = table.describe_all(entry.arrangement)
    reason = None
    if entry.status == "left":
        reason = "left"
    elif entry.status == "timed_out" and ruleset.timeout == "foul":
        reason = "timed_out"
    elif hands is not None:
        reason = arrangement_foul(hands)
    aces = stats.rank_counts[ACE]
    return PlayerResult(
        id=entry.id,
        status=entry.status,
        hands=hands,
        fouled=reason is not None,
        foul_reason=reason,
        aces=aces,
        instant_win=None,
        declared=entry.declare,
    )


def qualifying_patterns(
    cards: tuple[Card, ...],
    hands: Mapping[Position, HandValue] | None,
    fouled: bool,
    ruleset: Ruleset,
    stats: CardStats | None = None,
) -> dict[str, Split | None]:
    """Every pattern of the ruleset's table these cards (and arrangement) qualify for."""
    found = card_patterns(cards, ruleset.hand_table, ruleset.card_patterns, stats)
    if hands is not None and not fouled:
        found |= dict.fromkeys(ruleset_arrangement_patterns(hands, ruleset))
    return found


def ruleset_arrangement_patterns(hands: Mapping[Position, HandValue], ruleset: Ruleset) -> list[str]:
    """The patterns of the ruleset's table that this (non-fouled) arrangement holds (maubinh-bao's BÁO
    on a chi). The advisor asks the same."""
    if not ruleset.arrangement_patterns:
        return []
    return [p for p in arrangement_patterns(hands) if p in ruleset.arrangement_patterns]


def _strongest(found: Mapping[str, Split | None], ruleset: Ruleset) -> InstantWin | None:
    row = ruleset.strongest(found)
    return InstantWin(row.pattern, row.units, row.strength, found[row.pattern]) if row else None


def _instant_wins(room: Room, players: list[PlayerResult], stats: list[CardStats]) -> None:
    ruleset = room.ruleset
    faults = []
    for index, (entry, player) in enumerate(zip(room.players, players, strict=True)):
        if entry.status == "left":
            continue
        if ruleset.instant_mode == "declared" and not entry.declare:
            continue
        found = qualifying_patterns(entry.cards, player.hands, player.fouled, ruleset, stats[index])
        player.instant_win = _strongest(found, ruleset)
        if entry.declare and player.instant_win is None:
            faults.append(
                Fault(
                    f"/players/{index}/declare",
                    Text(
                        "fault.false_declaration_fouled" if player.fouled else "fault.false_declaration",
                        ruleset=ruleset.id,
                    ),
                    "false_declaration",
                )
            )
    if faults:
        raise RoomRejected(faults)


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


@dataclass(unsafe_hash=True)
class EvaluatedRoom:
    """Everything the stages read: the room, its players evaluated, and how each pair is settled."""

    room: Room
    players: list[PlayerResult]
    pairs: tuple[Pair, ...]
    scoops: tuple[tuple[Pair, int, int], ...]
    """(pair, winner, loser) for every scoop (§6), in pair order."""

    # Written out: compiled, @dataclass's generated __init__ still runs interpreted (8% of a room).
    def __init__(
        self,
        room: Room,
        players: list[PlayerResult],
        pairs: tuple[Pair, ...],
        scoops: tuple[tuple[Pair, int, int], ...],
    ) -> None:
        self.room = room
        self.players = players
        self.pairs = pairs
        self.scoops = scoops

    @property
    def ruleset(self) -> Ruleset:
        return self.room.ruleset


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


def _compare(i: int, j: int, a: PlayerResult, b: PlayerResult, ruleset: Ruleset, knobs: tuple[str, ...]) -> Pair:
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


def _settle_pairs(players: list[PlayerResult], ruleset: Ruleset) -> tuple[Pair, ...]:
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
            pairs.append(_compare(i, j, a, b, ruleset, knobs))
    return tuple(pairs)


def _scoopable(player: PlayerResult, ruleset: Ruleset, pair: Pair) -> bool:
    """Whether losing all three chi scoops this player: a fouled one only where the ruleset says so,
    except between two fouled players compared (§12.1), settled as if neither had fouled."""
    if not player.fouled:
        return True
    if not (ruleset.foul_is_scoop or pair.both_fouled_compared):
        return False
    return player.status != "left" or ruleset.left_is_scooped


def _scoops(
    pairs: tuple[Pair, ...], players: list[PlayerResult], ruleset: Ruleset
) -> tuple[tuple[Pair, int, int], ...]:
    """Every scoop (§6): all three chi won, from a loser the ruleset lets be scooped."""
    found = []
    for pair in pairs:
        for winner, loser in ((pair.i, pair.j), (pair.j, pair.i)):
            if pair.chi_won(winner) == 3 and _scoopable(players[loser], ruleset, pair):
                found.append((pair, winner, loser))
    return tuple(found)


def evaluate_room(room: Room) -> EvaluatedRoom:
    """Hands, fouls, instant wins and pair comparisons; raises :class:`RoomRejected` for a false BÁO."""
    ruleset = room.ruleset
    stats = [card_stats(entry.cards) for entry in room.players]
    players = [_evaluate_player(entry, ruleset, s) for entry, s in zip(room.players, stats, strict=True)]
    _instant_wins(room, players, stats)
    pairs = _settle_pairs(players, ruleset)
    return EvaluatedRoom(room, players, pairs, _scoops(pairs, players, ruleset))


# The array form: the same rules for many rooms of one ruleset and size at once, amounts only (the bulk
# engine's). Each function mirrors the scalar one named in its docstring; tests/unit/test_bulk_engine.py
# holds the two equal over every knob.

ARRANGED, TIMED_OUT, LEFT = (STATUSES.index(s) for s in ("arranged", "timed_out", "left"))
SETTLED_BY: Final[tuple[SettledBy, ...]] = get_args(SettledBy)
INSTANT_WIN, COMPARISON, FOUL, FIXED_FOUL, BOTH_FOULED, ROUND_ENDED = (
    SETTLED_BY.index(s) for s in ("instant_win", "comparison", "foul", "fixed_foul", "both_fouled", "round_ended")
)


class PairMany:
    """The array form of :class:`Pair`: how pair (i, j) is settled in each room (``settled_by``: its
    place in SETTLED_BY), chi won and totals per side, and where two fouled players were compared.
    (Plain classes here: compiled, a dataclass would read its numpy annotations when the module loads.)"""

    def __init__(
        self,
        i: int,
        j: int,
        settled_by: NDArray[np.int8],
        won: tuple[Ints, Ints],
        totals: tuple[Ints, Ints],
        both_fouled_compared: Mask,
    ) -> None:
        self.i = i
        self.j = j
        self.settled_by = settled_by
        self.won = won
        self.totals = totals
        self.both_fouled_compared = both_fouled_compared


class EvaluatedMany:
    """The array form of :class:`EvaluatedRoom`, over (rooms, players) unless said: each chi's hand id
    (its place in HAND_IDS), fouled, aces; each instant win's units (0 where none) and strength (−1
    where none); the rooms a false declaration refuses (rooms,); the pairs; and where each (winner,
    loser) scoops (§6), (rooms,)."""

    def __init__(
        self,
        rooms: Rooms,
        hand_ids: NDArray[np.int8],
        fouled: Mask,
        aces: Ints,
        instant_units: Ints,
        instant_strength: Ints,
        refused: Mask,
        pairs: tuple[PairMany, ...],
        scooped: dict[tuple[int, int], Mask],
    ) -> None:
        self.rooms = rooms
        self.hand_ids = hand_ids
        self.fouled = fouled
        self.aces = aces
        self.instant_units = instant_units
        self.instant_strength = instant_strength
        self.refused = refused
        self.pairs = pairs
        self.scooped = scooped

    @property
    def ruleset(self) -> Ruleset:
        return self.rooms.ruleset

    @property
    def holds_instant_win(self) -> Mask:
        return self.instant_strength >= 0


def _instant_wins_many(
    rooms: Rooms, fouled: Mask, categories: Ints, rank_counts: Ints, rank_keys: Ints
) -> tuple[Ints, Ints, Mask]:
    """The array form of :func:`_instant_wins` and :func:`_strongest`: each player's instant win (units,
    strength) and the rooms a false declaration refuses."""
    import numpy as np

    ruleset, cards = rooms.ruleset, rooms.cards
    found = card_pattern_masks(rank_counts, tally(cards & 3, 4), rank_keys)
    if ruleset.arrangement_patterns:
        found |= {p: held & ~fouled for p, held in arrangement_pattern_masks(categories).items()}
    eligible = rooms.status != LEFT
    if ruleset.instant_mode == "declared":
        eligible &= rooms.declare
    units: Ints = np.zeros(fouled.shape, dtype=np.int64)
    strength: Ints = np.zeros(fouled.shape, dtype=np.int64) - 1
    for row in ruleset.instant_wins:
        better = found[row.pattern] & eligible & (row.strength > strength)
        units[better], strength[better] = row.units, row.strength
    refused: Mask = np.logical_or.reduce(rooms.declare & (strength < 0), axis=-1)
    return units, strength, refused


def _chi_values(ruleset: Ruleset) -> Ints:
    """(position, hand id) → a won chi's value, by :func:`chi_value` for each hand id's bonus keys."""
    import numpy as np

    keys = ruleset.hand_table.bonus_keys_by_id()
    return np.array([[chi_value(ruleset, p, k)[0] for k in keys] for p in POSITIONS], dtype=np.int64)


def _settle_pairs_many(
    ruleset: Ruleset, strengths: Ints, hand_ids: NDArray[np.int8], fouled: Mask, holds: Mask
) -> tuple[PairMany, ...]:
    """The array form of :func:`_settle_pairs` and :func:`_compare`."""
    import numpy as np

    values = _chi_values(ruleset)
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
        won = [np.zeros(len(fa), dtype=np.int64), np.zeros(len(fa), dtype=np.int64)]
        totals = [np.zeros(len(fa), dtype=np.int64), np.zeros(len(fa), dtype=np.int64)]
        for k in range(len(POSITIONS)):
            sa, sb = strengths[:, i, k], strengths[:, j, k]
            for side, (me, mine, theirs, they_fouled) in enumerate(((i, sa, sb, fb), (j, sb, sa, fa))):
                wins = (compared & (mine > theirs)) | (by_foul & they_fouled)
                won[side] += wins
                totals[side] += np.where(wins, values[k][hand_ids[:, me, k]], 0)
        pairs.append(PairMany(i, j, settled, (won[0], won[1]), (totals[0], totals[1]), compared_both & compared))
    return tuple(pairs)


def _scoopable_many(rooms: Rooms, fouled: Mask, pair: PairMany, loser: int) -> Mask:
    """The array form of :func:`_scoopable`."""
    ruleset = rooms.ruleset
    allowed = pair.both_fouled_compared | ruleset.foul_is_scoop
    if not ruleset.left_is_scooped:
        allowed = allowed & (rooms.status[:, loser] != LEFT)
    return ~fouled[:, loser] | allowed


def evaluate_many(rooms: Rooms) -> EvaluatedMany:
    """The array form of :func:`evaluate_room`, for the amounts alone."""
    import numpy as np

    ruleset, cards = rooms.ruleset, rooms.cards
    count, size = cards.shape[:2]
    table = ruleset.hand_table
    fives, five_ids, five_keys = table.evaluate_many(cards[..., :10].reshape(count, size, 2, 5))
    threes, three_ids, three_keys = table.evaluate_many(cards[..., 10:])
    strengths = np.concatenate([fives, threes[..., None]], axis=-1)
    hand_ids = np.concatenate([five_ids, three_ids[..., None]], axis=-1)
    arrangement_fouls = (strengths[..., 2] > strengths[..., 1]) | (strengths[..., 1] > strengths[..., 0])
    fouled = (rooms.status == LEFT) | arrangement_fouls
    if ruleset.timeout == "foul":
        fouled |= rooms.status == TIMED_OUT
    rank_counts = tally(cards >> 2, 13)
    rank_keys = five_keys[..., 0] + five_keys[..., 1] + three_keys  # a rank key is a sum over the cards
    units, strength, refused = _instant_wins_many(rooms, fouled, strengths // CATEGORY_UNIT, rank_counts, rank_keys)
    pairs = _settle_pairs_many(ruleset, strengths, hand_ids, fouled, strength >= 0)
    scooped = {}
    for pair in pairs:
        for side, (winner, loser) in enumerate(((pair.i, pair.j), (pair.j, pair.i))):
            scooped[winner, loser] = (pair.won[side] == 3) & _scoopable_many(rooms, fouled, pair, loser)
    aces = rank_counts[..., ACE]
    return EvaluatedMany(rooms, hand_ids, fouled, aces, units, strength, refused, pairs, scooped)
