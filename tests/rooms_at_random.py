"""Random valid rulesets (every knob of §9, §11 and §12) and random rooms under them, for the differential
test of the bulk engine against the per-room path (tests/unit/test_bulk_engine.py, bench/bulk.py).

Rooms are dealt so that what is rare at a real table comes often: a planted instant-win pattern, fouls,
leavers and time-outs, declarations true and false, four aces in one hand.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from service.contract import PlayerEntry, Room, Status
from service.game.cards import DECK
from service.game.hand_strengths import HAND_IDS
from service.game.hands import POSITIONS
from service.game.patterns import Pattern
from service.rulesets import Ruleset, RulesetError
from service.rulesets.catalogue import Catalogue

BASES = ("maubinh-2020", "maubinh-chi-at", "maubinh-bao")


def _maybe(rng: random.Random, value: Any, p: float = 0.5) -> dict[str, Any]:
    return value if rng.random() < p else {}


def ruleset_patch(rng: random.Random) -> dict[str, Any]:
    """A patch that sets each knob at random, or leaves it to its base."""
    units = lambda: rng.choice((1, 2, 3, 5, 10, 26))  # noqa: E731
    patterns = list(Pattern)
    rng.shuffle(patterns)
    table = [{"pattern": p, "units": units(), "strength": rng.randint(1, 9)} for p in patterns[: rng.randint(1, 12)]]
    patch: dict[str, Any] = {
        "wheel": rng.choice(("second", "lowest")),
        "timeout": rng.choice(("foul", "as_arranged")),
        "instant_wins": {
            "mode": rng.choice(("automatic", "declared")),
            "ends_round": rng.random() < 0.3,
            "collision": rng.choice(("stronger", "difference")),
            "settles_pair": rng.random() < 0.7,
            **_maybe(rng, {"table": table}, 0.7),
        },
        "bonuses": {
            "mode": rng.choice(("replace", "add")),
            **{
                p: {k: rng.randint(1, 20) for k in rng.sample(HAND_IDS, rng.randint(0, 4))}
                for p in POSITIONS
                if rng.random() < 0.6
            },
        },
        "fouls": {
            "foul_is_scoop": rng.random() < 0.5,
            "foul_multiplier": rng.choice((1, 1, 2, 3)),
            "left_is_scooped": rng.random() < 0.5,
            "fixed_units": rng.choice((None, None, 3, 6)),
            "both_fouled": rng.choice(("nothing", "compare")),
        },
    }
    scoop: dict[str, Any] = {"basis": rng.choice(("total", "chi", "fixed"))}
    if scoop["basis"] == "fixed":
        scoop["fixed_units"] = rng.randint(1, 12)
    if rng.random() < 0.5:
        scoop |= {"multiplier": rng.randint(1, 4), "table": None}
    else:
        scoop |= {"multiplier": None, "table": [
            {"room_size": n, "by_scoopers": [rng.randint(1, 5) for _ in range(n - 1)]} for n in (2, 3, 4)
        ]}  # fmt: skip
    scoop["sweep_multiplier"] = rng.choice(
        (
            1,
            2,
            3,
            [{"room_size": 3, "multiplier": rng.randint(1, 3)}, {"room_size": 4, "multiplier": rng.randint(1, 4)}],
        )
    )
    scoop["sweep_pays"] = rng.choice(("scoop", "total"))
    patch["scoop"] = scoop
    if rng.random() < 0.2:
        patch["aces"] = None
    elif rng.random() < 0.5:
        patch["aces"] = {"room_size": 4, "mode": "balance", "units_per_ace": rng.randint(1, 5),
                         "no_ace_pays": None, "collector_min_aces": None, "four_aces_receives": None,
                         "skip_when_instant_win": rng.random() < 0.5}  # fmt: skip
    else:
        patch["aces"] = {"room_size": 4, "mode": "collectors", "units_per_ace": None,
                         "no_ace_pays": rng.randint(0, 7), "collector_min_aces": rng.randint(1, 4),
                         "four_aces_receives": rng.randint(0, 20), "skip_when_instant_win": rng.random() < 0.5}  # fmt: skip
    low = rng.randint(2, 4)
    patch["players"] = {"min": low, "max": rng.randint(low, 4)}
    return patch


def random_rulesets(rng: random.Random, catalogue: Catalogue, count: int) -> Iterator[tuple[Any, Ruleset]]:
    """``count`` valid random variants (a patch the rules refuse is drawn again), with their reference."""
    made = 0
    while made < count:
        reference = {"base": rng.choice(BASES), "patch": ruleset_patch(rng)}
        try:
            ruleset = catalogue.resolve(reference)
        except RulesetError:
            continue
        made += 1
        yield reference, ruleset


_RANKS = [[c for c in DECK if c >> 2 == r] for r in range(13)]
_SUITS = [[c for c in DECK if c & 3 == s] for s in range(4)]


def _planted(rng: random.Random) -> list[int]:
    """13 cards that hold (or nearly hold) an instant-win pattern."""
    kind = rng.randrange(7)
    if kind == 0:  # a dragon, now and then of one suit
        suit = rng.randrange(4)
        return [rng.choice(cards) if rng.random() < 0.7 else cards[suit] for cards in _RANKS]
    if kind == 1:  # six pairs, or five and trips, or with quads
        ranks = rng.sample(range(13), 7)
        cards = [c for r in ranks[:6] for c in rng.sample(_RANKS[r], 2)]
        return [*cards, rng.choice([c for c in _RANKS[ranks[rng.randrange(7)]] if c not in cards])]
    if kind == 2:  # three flushes (or of one colour)
        suits = rng.sample(range(4), 3)
        return rng.sample(_SUITS[suits[0]], 5) + rng.sample(_SUITS[suits[1]], 5) + rng.sample(_SUITS[suits[2]], 3)
    if kind == 3:  # three straights
        lows = [rng.randrange(9), rng.randrange(9), rng.randrange(11)]
        want = [r % 13 for r in range(lows[0] - 1, lows[0] + 4)] + [r % 13 for r in range(lows[1] - 1, lows[1] + 4)]
        want += [r % 13 for r in range(lows[2] - 1, lows[2] + 2)]
        cards: list[int] = []
        for r in want:
            free = [c for c in _RANKS[r] if c not in cards]
            if not free:
                return _planted(rng)
            cards.append(rng.choice(free))
        return cards
    if kind == 4:  # twelve or thirteen of one colour
        suits = rng.choice(((0, 1), (2, 3)))  # black or red
        colour = [c for c in DECK if c & 3 in suits]
        if rng.random() < 0.5:
            return rng.sample(colour, 13)
        return rng.sample(colour, 12) + rng.sample([c for c in DECK if c not in colour], 1)
    if kind == 5:  # four aces, or four of another rank
        return list(_RANKS[12 if rng.random() < 0.5 else rng.randrange(12)]) + rng.sample(DECK[:48], 9)
    return rng.sample(range(52), 13)


def _deal(rng: random.Random, size: int, deck: list[int]) -> list[list[int]]:
    """``size`` hands of 13, now and then one planted, the rest dealt from what is left of ``deck``
    (shuffled)."""
    hands: list[list[int]] = []
    used: set[int] = set()
    if rng.random() < 0.2 * size:
        planted = list(dict.fromkeys(int(c) for c in _planted(rng)))
        if len(planted) == 13:
            hands.append(planted)
            used.update(planted)
    rest = [c for c in deck if c not in used] if used else deck
    while len(hands) < size:
        hands.append(rest[13 * len(hands) - len(used) : 13 * len(hands) - len(used) + 13])
    rng.shuffle(hands)
    return hands


def _arranged(rng: random.Random, cards: list[int]) -> list[int]:
    """Groups first into the back, as a player would (mostly legal); or shuffled (mostly fouled)."""
    if rng.random() < 0.25:
        cards = list(cards)
        rng.shuffle(cards)
        return cards
    if rng.random() < 0.3:  # a flush or straight kept together sometimes comes out of a sort by suit
        return sorted(cards, key=lambda c: (c & 3, c >> 2), reverse=True)
    counts = [0] * 13
    for c in cards:
        counts[c >> 2] += 1
    return [c & 63 for c in sorted((counts[c >> 2] << 6 | c for c in cards), reverse=True)]


@dataclass
class RandomRoom:
    """A random room: its ruleset's reference, its stake, and each player's id, cards as arranged (back,
    middle, front: numbers of DECK), status and declaration."""

    reference: Any
    stake: int
    players: list[tuple[str, list[int], Status, bool]]

    def request(self) -> dict[str, Any]:
        """The room as a request body."""
        players = []
        for who, cards, status, declare in self.players:
            texts = [TEXTS[c] for c in cards]
            player: dict[str, Any] = {"id": who, "back": texts[:5], "middle": texts[5:10], "front": texts[10:]}
            if status != "arranged":
                player["status"] = status
            if declare:
                player["declare"] = True
            players.append(player)
        return {"ruleset": self.reference, "stake": self.stake, "players": players}

    def room(self, ruleset: Ruleset) -> Room:
        """The room as the domain's Room, without the request layer (its rooms are valid)."""
        entries = []
        for who, cards, status, declare in self.players:
            dealt = tuple(DECK[c] for c in cards)
            arrangement = {"back": dealt[:5], "middle": dealt[5:10], "front": dealt[10:]}
            entries.append(PlayerEntry(who, dealt, arrangement, status, declare))
        return Room(ruleset, tuple(entries), self.stake)


STAKES = (1, 100, 1000, 2500)


def random_room(rng: random.Random, ruleset: Ruleset, reference: Any, deck: list[int] | None = None) -> RandomRoom:
    """One room under ``ruleset`` (named by ``reference``), valid but for false declarations; dealt from
    ``deck`` where given shuffled (many at once are shuffled faster with numpy)."""
    low, high = ruleset.min_players, ruleset.max_players
    size = low + int(rng.random() * (high - low + 1))
    if deck is None:
        deck = list(range(52))
        rng.shuffle(deck)
    declared = ruleset.instant_mode == "declared"
    players = []
    hands = _deal(rng, size, deck)
    names = seat_names([cards[0] for cards in hands])
    for k, cards in enumerate(hands):
        draw = rng.random()
        status: Status = "arranged" if draw < 0.9 else "timed_out" if draw < 0.95 else "left"
        declare = status == "arranged" and declared and rng.random() < 0.1
        players.append((names[k], _arranged(rng, cards), status, declare))
    return RandomRoom(reference, STAKES[int(rng.random() * 4)], players)


def seat_names(keys: list[int]) -> list[str]:
    """The players' ids, seat by seat, never in sorted order (code that reads a room by sorted ids, not
    seats, must meet a room where the two differ): ``p<rank>``, each seat ranked by its key (a card
    dealt to it, so that no draw is taken from the room's generator), reversed where that is sorted."""
    ranks = [sorted(keys).index(key) for key in keys]
    if ranks == sorted(ranks):
        ranks.reverse()
    return [f"p{rank}" for rank in ranks]


TEXTS = [str(c) for c in DECK]
