"""The rules that need the ruleset or the whole room, checked over the raw body so that one bad card
does not hide a duplicate elsewhere: the ruleset it names, forms by status, ``declare``, player
count, duplicate ids and cards."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from service.contract import STATUSES, Fault
from service.game.cards import SPELLINGS, Card
from service.game.hands import POSITIONS
from service.rulesets import Ruleset, RulesetError
from service.rulesets.catalogue import Catalogue
from service.texts import Text
from service.validation.faults import pointer
from service.validation.limits import DIGEST, HANDS_NAMED, MOST_CARDS, hand_named_by


def resolve_ruleset(raw: Any, catalogue: Catalogue) -> tuple[Ruleset | None, list[Fault]]:
    """The ruleset a request body names, resolved once, or the faults that stop it (§11.3)."""
    if not isinstance(raw, dict) or "ruleset" not in raw:
        return None, []
    try:
        ruleset = catalogue.resolve(raw["ruleset"])
    except RulesetError as error:
        return None, [Fault(pointer("/ruleset", f.path), f.message, f.code) for f in error.faults]
    digest = raw.get("ruleset_digest")
    if isinstance(digest, str) and DIGEST.fullmatch(digest) and digest != ruleset.digest:
        message = Text("fault.digest_mismatch", ruleset=ruleset.id, digest=ruleset.digest)
        return ruleset, [Fault("/ruleset_digest", message, "ruleset_digest_mismatch")]
    return ruleset, []


WHO: Final = {"arranged": "fault.who_arranged", "timed_out": "fault.who_timed_out", "left": "fault.who_left"}
"""The player a fault is about, by its status, in words ("an arranged player")."""
AS_ARRANGED: Final = {
    "fault.missing_hand": "fault.missing_hand_as_arranged",
    "fault.bare_cards": "fault.bare_cards_as_arranged",
}
"""What a timed-out player is told where its ruleset scores its hands as they lie."""


def _who(status: str) -> Text:
    return Text(WHO[status])


def _hands(ruleset: Ruleset | None) -> dict[str, Any]:
    """Each hand named as the ruleset labels it ("chi cuối (back)" in maubinh-bao), as a card's fault is."""
    return {p: hand_named_by(ruleset.labels if ruleset else {}, HANDS_NAMED[p]) for p in POSITIONS}


def _form_fault(key: str, status: str, ruleset: Ruleset | None) -> Text:
    """What a player of ``status`` must send; a timed-out one in a ruleset that scores its hands as they
    lie (``timeout: as_arranged``) is told why it still must."""
    if status == "timed_out" and ruleset is not None and ruleset.timeout == "as_arranged":
        return Text(AS_ARRANGED[key], ruleset=ruleset.id, **_hands(ruleset))
    return Text(key, who=_who(status), **_hands(ruleset))


def _player_form_faults(index: int, player: Mapping[str, Any], ruleset: Ruleset | None) -> Iterator[Fault]:
    status = player.get("status", "arranged")
    if status not in STATUSES:
        return
    at = f"/players/{index}"
    given = [p for p in POSITIONS if p in player]
    if given and "cards" in player:
        yield Fault(f"{at}/cards", Text("fault.both_forms"), "both_forms")
    needs_arrangement = status == "arranged" or (
        status == "timed_out" and ruleset is not None and ruleset.timeout == "as_arranged"
    )
    if needs_arrangement and "cards" in player and not given:
        yield Fault(
            f"{at}/cards",
            _form_fault("fault.bare_cards", status, ruleset),
            "missing_hand",
        )
    if needs_arrangement or (given and "cards" not in player):  # with cards too, both_forms is the one fault
        absent = [p for p in POSITIONS if p not in given]
        if absent:  # worded only when said: every player's three labels were a sixth of a room's cost
            # One who may send its 13 cards instead is told so: "must send all three" would send it the wrong way.
            missing = (
                _form_fault("fault.missing_hand", status, ruleset)
                if needs_arrangement
                else Text("fault.missing_hand_or_cards", who=_who(status), **_hands(ruleset))
            )
            for position in absent:
                yield Fault(f"{at}/{position}", missing, "missing_hand")
    elif "cards" not in player:
        yield Fault(at, Text("fault.no_cards"), "no_cards")
    if "declare" in player and ruleset is not None:
        if ruleset.instant_mode != "declared":
            yield Fault(
                f"{at}/declare",
                Text("fault.declare_automatic", ruleset=ruleset.id),
                "declare_not_allowed",
            )
        elif status != "arranged":
            yield Fault(
                f"{at}/declare",
                Text("fault.declare_status", who=_who(status)),
                "declare_not_allowed",
            )


def duplicate_faults(holders: list[tuple[str, Any]], card_keys: tuple[str, ...]) -> Iterator[Fault]:
    """Each card seen again, at its pointer, in request order. ``holders`` are (pointer, object) pairs
    whose card lists hold parsed cards (a loaded body: each card was parsed once, by marshmallow) or
    texts (a refused body, read by lookup so that a bad card elsewhere does not hide a duplicate)."""
    first_seen: list[tuple[str, str, int] | None] = [None] * 52  # card id → where it was first seen
    for at, player in holders:
        if not isinstance(player, Mapping):
            continue
        for key in card_keys:
            cards = player.get(key)
            if not isinstance(cards, list | tuple) or len(cards) > MOST_CARDS:
                continue
            for k, item in enumerate(cards):
                card = item if isinstance(item, Card) else SPELLINGS.get(item) if isinstance(item, str) else None
                if card is None:
                    continue
                first = first_seen[card]
                if first is None:
                    first_seen[card] = (at, key, k)
                else:
                    first_at = "{}/{}/{}".format(*first)
                    said = "fault.duplicate_card" if first[0] else "fault.duplicate_card_one_hand"  # arrange, evaluate
                    message = Text(said, card=str(card), first=first_at)
                    yield Fault(f"{at}/{key}/{k}", message, "duplicate_card")


def room_rule_faults(raw: Any, ruleset: Ruleset | None) -> list[Fault]:
    if not isinstance(raw, dict):
        return []
    faults: list[Fault] = []
    players = raw.get("players")
    if not isinstance(players, list):
        return faults
    low, high = (ruleset.min_players, ruleset.max_players) if ruleset else (2, 4)
    if not low <= len(players) <= high:
        message = (
            Text("fault.player_count_ruleset", ruleset=ruleset.id, low=low, high=high, count=len(players))
            if ruleset
            else Text("fault.player_count", low=low, high=high, count=len(players))
        )
        faults.append(Fault("/players", message, "player_count"))
    seen_ids: dict[str, int] = {}
    for index, player in enumerate(players):
        if not isinstance(player, dict):
            continue
        player_id = player.get("id")
        if isinstance(player_id, str):
            if player_id in seen_ids:
                faults.append(
                    Fault(
                        f"/players/{index}/id",
                        Text("fault.duplicate_player_id", id=player_id[:64], first=seen_ids[player_id]),
                        "duplicate_player_id",
                    )
                )
            else:
                seen_ids[player_id] = index
        faults.extend(_player_form_faults(index, player, ruleset))
    return faults


def room_duplicates(loaded: dict[str, Any], raw: Any) -> list[Fault]:
    """Duplicate cards over the loaded players when marshmallow loaded them, else over the raw ones.
    A loaded room whose card ids are all different, the common case, is cleared by one set."""
    players = loaded.get("players") if loaded else raw.get("players") if isinstance(raw, dict) else None
    if not isinstance(players, list):
        return []
    if loaded:
        every = [card for player in players for key in (*POSITIONS, "cards") for card in player.get(key, ())]
        if len(set(every)) == len(every):
            return []
    return list(duplicate_faults([(f"/players/{k}", p) for k, p in enumerate(players)], (*POSITIONS, "cards")))
