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
    """Whether a batch's answer refuses its envelope (no results: a room too many, a member not taken),
    which is then bound, and checked again, as one document."""
    return path == "/v1/score/batch" and isinstance(answer, dict) and "results" not in answer and "errors" in answer


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
    errors = answered.get("errors") if isinstance(answered, dict) and "ledger" not in answered else None
    codes = {fault.get("code") for fault in errors if isinstance(fault, dict)} if isinstance(errors, list) else set()
    return bool(codes) and codes <= ROUND_CODES


def _settled(result: Any) -> Any:
    """:func:`_ledger` of a result as :func:`service.documents.settle_room` gives it: the same lines and
    amounts its answer would state, without writing the answer."""
    stake = result.room.stake
    lines = [
        (line.step, line.payer, line.payee, line.units, line.units * stake, line.position) for line in result.ledger
    ]
    return ("scored", sorted(lines), [(p.id, p.units * stake) for p in result.players])


def rooms_ruled(path: str, request: Any, answer: Any) -> list[tuple[Any, Any]]:
    """Each room a receipt rules on and its answer (a verify receipt's room: its request less the claim)."""
    if refused_whole(path, answer) or checks_a_receipt(path, request):
        return []
    if path == "/v1/score/batch":
        return list(zip(request["rooms"], answer["results"], strict=True))
    if path == "/v1/verify":
        return [({k: v for k, v in request.items() if k != "claimed"}, answer.get("result", answer))]
    return [(request, answer)]


def rescorer(catalogue: Any) -> Callable[[str, Any, Any], bool | None]:
    """Re-scores a receipt's rooms under the rulesets its answers pin (id, version and digest) with
    ``catalogue``; None where one of them is not known here, or a room was refused for its round."""
    from service.contract import RoomRejected
    from service.documents import settle_room
    from service.validation.limits import MOST_BATCH_ROOMS
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
            rooms = request.get("rooms") if isinstance(request, dict) else None
            most = (
                MOST_BATCH_ROOMS  # the operator's limit is not in the receipt: the answer's, where it refuses past it
            )
            if isinstance(rooms, list) and _codes(answer) == {"batch_too_large"}:
                most = max(1, len(rooms) - 1)  # a limit is at least one room
            return refused_again(lambda: load_batch(request, most), answer)
        if path == "/v1/verify" and refusal(answer) and not _refused_for_its_round(answer):
            return refused_again(lambda: load_verification(request, catalogue), answer)  # the claim's faults too
        outcomes = [one(room, answered) for room, answered in rooms_ruled(path, request, answer)]
        if False in outcomes:
            return False
        return None if None in outcomes else True

    return rescore
