"""The rules applied again to a receipt's rooms: what ``receipts verify`` compares a signed answer's ledger
with, room by room (:func:`rescorer`), and what it reads as a room's ruling (a ledger, or a refusal).

A refusal of the whole request (a verify's claim, a batch's envelope) is checked again as a refusal, by
the route's own reading; a refusal for a room's round rests on the service's record of rounds, which no
re-scoring repeats; an answer to a receipt sent to /v1/verify holds no room.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final


def refused_whole(path: str, answer: Any) -> bool:
    """Whether an answer refuses its whole request, which is then bound, and checked again, as one
    document: a batch's envelope (no results: a room too many, a member not taken), or a verify (its
    room and claim are one request, whichever is at fault)."""
    if path == "/v1/score/batch":
        return isinstance(answer, dict) and "results" not in answer and "errors" in answer
    return path == "/v1/verify" and refusal(answer)


def checks_a_receipt(path: str, request: Any) -> bool:
    """Whether a request sent a receipt to /v1/verify to be checked, rather than a room and its claim."""
    return path == "/v1/verify" and isinstance(request, dict) and "receipt" in request


def _ledger(result: Any) -> Any:
    if not isinstance(result, dict) or "ledger" not in result:
        return (
            "refused",
            sorted((e.get("pointer"), e.get("code")) for e in result.get("errors", []))
            if isinstance(result, dict)
            else None,
        )
    lines = [
        (line["step"], line["payer"], line["payee"], line["units"], line["amount"], line.get("position"))
        for line in result["ledger"]
    ]
    return ("scored", sorted(lines), [(p["id"], p["amount"]) for p in result["players"]])


def _codes(answered: Any) -> set[Any]:
    return {fault.get("code") for fault in answered.get("errors", []) if isinstance(fault, dict)}


ROUND_CODES: Final = frozenset({"round_already_scored", "round_in_flight"})
"""Refusals for a room's round (service/api/rounds.py): they rest on the service's record of which room each
round was scored with, not on the rules, and no re-scoring can repeat them."""


def refusal(answered: Any) -> bool:
    """Whether a room's answer (or a whole request's) is a refusal: faults, no ledger."""
    return isinstance(answered, dict) and "ledger" not in answered and isinstance(answered.get("errors"), list)


def _refused_for_its_round(answered: Any) -> bool:
    if not refusal(answered):
        return False
    codes = _codes(answered)
    return bool(codes) and codes <= ROUND_CODES


def _settled(result: Any) -> Any:
    """:func:`_ledger` of a result as :func:`service.documents.settle_room` gives it: the same lines and
    amounts its answer would state, without writing the answer."""
    stake = result.room.stake
    lines = [
        (line.step, line.payer, line.payee, line.units, line.units * stake, line.position) for line in result.ledger
    ]
    return ("scored", sorted(lines), [(p.id, p.units * stake) for p in result.players])


def verified_room(request: Any) -> Any:
    """A verify's room: its request less the claim, the room a score of it would send (and digest)."""
    return {k: v for k, v in request.items() if k != "claimed"} if isinstance(request, dict) else request


BATCH_MEMBERS: Final = frozenset({"rooms"})
"""What a batch's envelope holds beside nothing (``schemas.BatchSchema``'s fields; a test holds them equal)."""


def envelope_taken(path: str, request: Any, answer: Any) -> bool:
    """Whether a batch whose rooms were ruled on was sent as the service takes one: its envelope is bound
    by no digest (each room is), and an envelope with a member more is refused whole, never answered room
    by room, so such a receipt's answer is not that request's."""
    if path != "/v1/score/batch" or refused_whole(path, answer):
        return True
    return isinstance(request, dict) and request.keys() == BATCH_MEMBERS


def rooms_ruled(path: str, request: Any, answer: Any) -> list[tuple[Any, Any]]:
    """Each room a receipt rules on and its answer (a verify receipt's room: its request less the claim)."""
    if refused_whole(path, answer) or checks_a_receipt(path, request):
        return []
    if path == "/v1/score/batch":
        return list(zip(request["rooms"], answer["results"], strict=True))
    if path == "/v1/verify":
        return [(verified_room(request), answer.get("result", answer) if isinstance(answer, dict) else answer)]
    return [(request, answer)]


def _batch_limit(request: Any, answer: Any) -> int:
    """The operator's MAUBINH_MAX_BATCH_ROOMS, which the receipt does not state, as the answer shows it: below
    the batch's rooms where it refused them as too many (a limit is at least one room), else not below them."""
    from service.validation.limits import MOST_BATCH_ROOMS

    rooms = request.get("rooms") if isinstance(request, dict) else None
    if not isinstance(rooms, list):
        return MOST_BATCH_ROOMS
    return max(1, len(rooms) - 1) if _codes(answer) == {"batch_too_large"} else len(rooms)


def rescorer(catalogue: Any) -> Callable[[str, Any, Any], bool | None]:
    """Re-scores a receipt's rooms under the rulesets its answers pin (id, version and digest) with
    ``catalogue``; None where one of them is not known here, or a room was refused for its round."""
    from service.contract import RoomRejected
    from service.documents import settle_room
    from service.validation.load import load_batch, load_verification

    def one(room: Any, answered: Any) -> bool | None:
        if _refused_for_its_round(answered):
            return None
        pinned = answered.get("ruleset") if isinstance(answered, dict) else None
        request = dict(room) if isinstance(room, dict) else room
        if isinstance(pinned, dict) and isinstance(request, dict) and isinstance(request.get("ruleset"), str):
            known = catalogue.get(f"{pinned['id']}@{pinned['version']}")
            if known is None or known.digest != pinned.get("digest"):
                return None
            request["ruleset"] = f"{pinned['id']}@{pinned['version']}"
        try:
            again = settle_room(request, catalogue)
        except RoomRejected as rejected:
            codes = sorted((f.pointer, f.code) for f in rejected.faults)
            return bool(_ledger(answered) == ("refused", codes))
        if isinstance(pinned, dict) and again.room.ruleset.ref.digest != pinned.get("digest"):
            return None
        return bool(_ledger(answered) == _settled(again))

    def refused_again(load: Callable[[], object], answered: Any) -> bool:
        """A refusal of the whole request (a batch's envelope, a verify's claim): the same faults again."""
        try:
            load()
        except RoomRejected as rejected:
            return bool(_ledger(answered) == ("refused", sorted((f.pointer, f.code) for f in rejected.faults)))
        return False

    def rescore(path: str, request: Any, answer: Any) -> bool | None:
        if refused_whole(path, answer):
            if _refused_for_its_round(answer):  # a batch refused whole for one room's round
                return None
            if path == "/v1/verify":
                return refused_again(lambda: load_verification(request, catalogue), answer)  # the claim's faults too
            return refused_again(lambda: load_batch(request, _batch_limit(request, answer)), answer)
        outcomes = [one(room, answered) for room, answered in rooms_ruled(path, request, answer)]
        if False in outcomes:
            return False
        return None if None in outcomes else True

    return rescore
