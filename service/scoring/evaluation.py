"""A room evaluated once, for the stages to read: each player's hands, foul and instant win, and how
each pair is settled chi by chi (docs/rules.md §2.3–§5), with the value of each chi won."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from service.contract import STATUSES, Fault, PlayerEntry, Room, RoomRejected, Rooms
from service.game.cards import ACE, Card
from service.game.hand_strengths import CATEGORY_UNIT
from service.game.hands import HandValue, Position
from service.game.patterns import (
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
from service.scoring.pairs import Pair, PairMany, settle_pairs, settle_pairs_many
from service.scoring.results import InstantWin, PlayerResult
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
    pairs = settle_pairs(players, ruleset)
    return EvaluatedRoom(room, players, pairs, _scoops(pairs, players, ruleset))


# The array form: the same rules for many rooms of one ruleset and size at once, amounts only (the bulk
# engine's). Each function mirrors the scalar one named in its docstring; tests/unit/test_bulk_engine.py
# holds the two equal over every knob.

ARRANGED, TIMED_OUT, LEFT = (STATUSES.index(s) for s in ("arranged", "timed_out", "left"))


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
    pairs = settle_pairs_many(ruleset, strengths, hand_ids, fouled, strength >= 0)
    scooped = {}
    for pair in pairs:
        for side, (winner, loser) in enumerate(((pair.i, pair.j), (pair.j, pair.i))):
            scooped[winner, loser] = (pair.won[side] == 3) & _scoopable_many(rooms, fouled, pair, loser)
    aces = rank_counts[..., ACE]
    return EvaluatedMany(rooms, hand_ids, fouled, aces, units, strength, refused, pairs, scooped)
