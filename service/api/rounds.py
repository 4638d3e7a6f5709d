"""Rounds scored once, over HTTP (``MAUBINH_ROUNDS_REDIS_URL``): a caller's ``round_id`` is scored with one
room only, as draft-ietf-httpapi-idempotency-key-header has a key used with one payload, the round id
the key and the room's digest (service/trust/signing.py ``room_digest``: its cards, ruleset and stake as
sent) the payload's fingerprint.

- the same round with the same room is scored again, and answers the same;
- with another room, it is refused: 409 ``/problems/round-in-flight`` while the first is still being
  scored, else 422 ``round_already_scored``; both name the first room's digest (``first_room_digest``);
- a room refused for its content (422) records nothing; a room without ``round_id`` is not recorded;
  ``POST /v1/verify`` records nothing (it audits a settlement, it does not make one);
- in a batch, each room is claimed and refused in its own slot, the others scored.

When the store does not answer, MAUBINH_ROUNDS_UNREACHABLE says what to do: ``closed`` (the default)
answers 503 with Retry-After and scores nothing it cannot record; ``open`` scores unchecked. Both are
logged and counted (``maubinh_rounds_unchecked_total``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from flask import Flask, current_app
from werkzeug.exceptions import ServiceUnavailable

from service.api.auth import caller_name
from service.api.round_store import Found, RoundStore, Settled, StoreDown, digest_bytes, round_key
from service.contract import Fault
from service.serialize import problem_json, rejected_json
from service.texts import Text
from service.trust.signing import room_digest_if_any
from service.validation.limits import recorded_round


class RoundRefused(Exception):
    """A room refused for its round (409 or 422): its status and problem document."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(status)
        self.status, self.problem = status, problem


class RoundsUnchecked(ServiceUnavailable):
    """The store does not answer and the operator chose to fail closed (503, ``Retry-After``)."""

    def __init__(self, seconds: float) -> None:
        seconds = max(1, math.ceil(seconds))
        super().__init__(Text("problem.rounds_unchecked_detail", seconds=seconds))
        self.retry_after = seconds


def refusal(found: Found, round_id: str, pointer: str = "/round_id") -> tuple[int, dict[str, Any]]:
    """The problem a room gets when its round is another room's."""
    said = {"round_id": round_id, "first": found.first}
    if found.outcome == "scored":
        fault = Fault(pointer, Text("fault.round_already_scored", **said), "round_already_scored")
        return 422, {**rejected_json([fault]), "first_room_digest": found.first}
    fault = Fault(pointer, Text("fault.round_in_flight", **said), "round_in_flight")
    detail = Text("problem.round_in_flight_detail", **said)
    return 409, problem_json(409, Text("problem.round_in_flight"), detail, [fault], first_room_digest=found.first)


class Slot(NamedTuple):
    """A room whose round this request holds: its place in the request, round, key, digest, and what
    its claim found (``new`` or ``again``)."""

    slot: int
    round_id: str
    key: str
    digest: bytes
    found: Found


@dataclass
class Claim:
    """A request's claims: the rounds it holds, and the rooms refused for theirs (by slot)."""

    held: list[Slot] = field(default_factory=list)
    refused: dict[int, tuple[int, dict[str, Any]]] = field(default_factory=dict)


class Rounds:
    """The store and the operator's choice when it does not answer (``fail_open``)."""

    def __init__(self, store: RoundStore, fail_open: bool, unchecked: Callable[[str], None]) -> None:
        self.store, self.fail_open, self._unchecked = store, fail_open, unchecked

    def claim(self, rooms: Sequence[Any], caller: str) -> Claim:
        """Claim the round of each room holding a round id; the rooms refused for theirs."""
        wanted = [
            (slot, round_id, digested)
            for slot, room in enumerate(rooms)
            if (round_id := round_of(room)) and (digested := room_digest_if_any(room)) is not None
        ]  # a room without a digest holds a number past every double: its loading refuses it, unclaimed
        if not wanted:
            return Claim()
        keys = [(round_key(caller, round_id), digest_bytes(digested)) for _, round_id, digested in wanted]
        try:
            found = self.store.claim(keys)
        except StoreDown as down:
            self._down(down)
            return Claim()
        claim = Claim()
        for (slot, round_id, _), (key, digest), outcome in zip(wanted, keys, found, strict=True):
            if outcome.outcome in ("new", "again"):
                claim.held.append(Slot(slot, round_id, key, digest, outcome))
            else:
                claim.refused[slot] = refusal(outcome, round_id)
        return claim

    def settle(self, claim: Claim, scored: Callable[[int], bool], pointer: Callable[[int], str]) -> None:
        """Record the scored rooms' rounds, release the others: :class:`RoundRefused` when one of them is
        now another room's (its claim had expired, or was released and taken), and then none is recorded."""
        marked = [(h, scored(h.slot)) for h in claim.held]
        marked = [(h, room_scored) for h, room_scored in marked if room_scored or h.found.outcome == "new"]
        if not marked:
            return
        try:  # a room refused that found its round claimed by the same room before: that claim is not its own
            conflicts = self.store.settle([Settled(h.key, h.digest, s, h.found.outcome == "new") for h, s in marked])
        except StoreDown as down:
            self._down(down)
            return
        for (held, _), conflict in zip(marked, conflicts, strict=True):
            if conflict is not None:
                raise RoundRefused(*refusal(conflict, held.round_id, pointer(held.slot)))

    def release(self, claim: Claim) -> None:
        """A request that failed: its new claims released, quietly (else they expire)."""
        with suppress(StoreDown):
            self.store.settle([Settled(h.key, h.digest, False, True) for h in claim.held if h.found.outcome == "new"])

    def _down(self, down: StoreDown) -> None:
        """Fail closed (503) or open (scored unchecked), as the operator chose; counted either way."""
        self._unchecked("scored" if self.fail_open else "refused")
        if not self.fail_open:
            raise RoundsUnchecked(down.seconds)


def round_of(room: Any) -> str | None:
    """The round id a room states, when it is one the room may state; else None (not recorded)."""
    return recorded_round(room.get("round_id") if isinstance(room, dict) else None)


def rounds() -> Rounds | None:
    found: Rounds | None = current_app.extensions.get("maubinh.rounds")
    return found


@contextmanager
def _claimed(rooms: Sequence[Any], pointer: Callable[[int], str]) -> Iterator[tuple[Claim, list[bool]]]:
    """Rooms claimed before the block, settled after it by what it says was scored (a bool a room),
    released if it fails."""
    kept = rounds()
    if kept is None:
        yield Claim(), []
        return
    claim, scored = kept.claim(rooms, caller_name()), list[bool]()
    try:
        yield claim, scored
    except BaseException:
        kept.release(claim)
        raise
    kept.settle(claim, scored.__getitem__, pointer)


@contextmanager
def scored_once(document: Any) -> Iterator[None]:
    """One room scored in the block, its round claimed before (refused: :class:`RoundRefused`) and
    recorded after, or released when the room is refused (the block raises)."""
    with _claimed([document], lambda slot: "/round_id") as (claim, scored):
        if 0 in claim.refused:
            raise RoundRefused(*claim.refused[0])
        yield
        scored.append(True)


@contextmanager
def each_scored_once(rooms: Sequence[Any]) -> Iterator[tuple[dict[int, dict[str, Any]], list[bool]]]:
    """A batch's rooms: the problems of those refused for their round, by slot (given in their place,
    unscored), and a list the block fills with whether each room was scored, recorded after it."""
    with _claimed(rooms, lambda slot: f"/rooms/{slot}/round_id") as (claim, scored):
        yield {slot: problem for slot, (_, problem) in claim.refused.items()}, scored


def register(app: Flask, kept: Rounds | None) -> None:
    if kept is not None:
        app.extensions["maubinh.rounds"] = kept
