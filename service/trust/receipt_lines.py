"""Receipts by the line: each receipt of a month checked in full, its verdict as a small record.

``maubinh receipts verify`` over many files (and the Spark job) checks each receipt as
:func:`service.trust.receipts.check` does, every check in order, and names the first that failed by a
code, one per kind (docs/receipts.md). What a run keeps of a receipt is this record and its rooms'
``(round_id, digest)``, from which the bulk side finds rounds ruled on two different rooms; never the
receipt itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from service.contract import MAX_EXACT_AMOUNT
from service.rulesets.catalogue import Catalogue
from service.support.strict_json import BadDocument
from service.texts import Language, Text
from service.trust.answer_signatures import AnswerKeys
from service.trust.receipt_reading import read_body, read_receipt
from service.trust.receipts import Checked, ReceiptFault, check
from service.trust.rescoring import rescorer, rooms_ruled, verified_room
from service.trust.ruling_log import LogIndex, in_log
from service.trust.rulings_in_bulk import Rulings
from service.trust.signing import room_digest_if_any
from service.validation.limits import ROUND_ID_MOST, recorded_round

CODES: Final = {
    "shape": "unreadable",
    "content_digest": "content_digest_mismatch",
    "signature": "bad_signature",
    "room_digest": "room_digest_mismatch",
    "rescore": "ruling_differs",
}
"""The code of the first check a receipt fails; a key nobody published is ``unknown_key``."""
UNKNOWN_KEY: Final = "unknown_key"
UNREADABLE: Final = CODES["shape"]

Rooms = tuple[tuple[str, str], ...]
"""A receipt's rooms that name a round: ``(round_id, digest of the room as scored)`` each."""


def _money(answer: Any) -> int | None:
    """What an answer moves: the sum of what its players win, over every room it rules on; None past any
    amount the service writes (2^53 − 1), as an answer not signed for may claim."""
    results = answer.get("results") if isinstance(answer, dict) else None
    rooms = (
        results if isinstance(results, list) else [answer.get("result", answer) if isinstance(answer, dict) else None]
    )
    total = 0
    for room in rooms:
        players = room.get("players") if isinstance(room, dict) else None
        for player in players if isinstance(players, list) else ():
            amount = player.get("amount") if isinstance(player, dict) else None
            if type(amount) is int and amount > 0:
                total += amount
    return total if total <= MAX_EXACT_AMOUNT else None


def shown_round(round_id: Any) -> Any:
    """A receipt's round id as its record shows it: a string (its first ROUND_ID_MOST characters, where
    the service takes no more), a batch's list of them, else None. Never a number or a nesting that JSON
    lines could not carry, read from a request no signature vouches for."""
    if isinstance(round_id, str):
        return round_id if len(round_id) <= ROUND_ID_MOST else round_id[:ROUND_ID_MOST] + "…"
    if isinstance(round_id, list):
        return [shown_round(item) if isinstance(item, str) else None for item in round_id]
    return None


def _ruled(result: Any) -> bool:
    """Whether a result settled its room: a room refused (for its content, or for its round) was not
    scored, so sending it again corrected is no re-roll (as rounds once online does not record it)."""
    return isinstance(result, dict) and "ledger" in result


def _rooms(path: str, request: Any, answer: Any) -> tuple[Any, Rooms]:
    """The receipt's round id (a list of them for a batch) and its rooms that name a round and were
    settled. A verify receipt's room is its request less the claim: the room a score of the same round
    would digest."""
    if path == "/v1/score/batch":
        rooms = request.get("rooms") if isinstance(request, dict) else None
        results = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(rooms, list) or not isinstance(results, list) or len(rooms) != len(results):
            return None, ()
        ids = [room.get("round_id") if isinstance(room, dict) else None for room in rooms]
        named: Rooms = tuple(
            (recorded, result["room_digest"])
            for recorded, result in zip(map(recorded_round, ids), results, strict=True)
            if recorded is not None and _ruled(result) and isinstance(result.get("room_digest"), str)
        )
        return ids, named
    round_id = request.get("round_id") if isinstance(request, dict) else None
    round_id = round_id if isinstance(round_id, str) else None  # a room's, never a list
    recorded = recorded_round(round_id)  # as rounds scored once records it: an empty id names no round
    if recorded is None or not _ruled(answer.get("result", answer) if isinstance(answer, dict) else None):
        return round_id, ()
    if path == "/v1/verify" and isinstance(request, dict):
        digest = room_digest_if_any(verified_room(request))
        return round_id, ((recorded, digest),) if digest is not None else ()  # none: its digest check fails
    stated = answer.get("room_digest") if isinstance(answer, dict) else None
    return round_id, ((recorded, stated),) if isinstance(stated, str) else ()


class ReceiptLines:
    """Checks receipts one at a time with one key set and one catalogue, read once: each gives its
    record (``round_id``, ``verified``, ``code``, ``message`` in ``language``, ``money``, ``key_id``)
    and, when every check passed, its rooms (:data:`Rooms`)."""

    def __init__(
        self, jwks: Mapping[str, Any], catalogue: Catalogue, language: Language, log: tuple[Any, Any] | None = None
    ) -> None:
        """``log``: the transparency log's index (:class:`LogIndex`, or None) and verifier key, when each
        receipt's rulings are to be found in it (or in the proofs it carries)."""
        self.keys = AnswerKeys(jwks)
        self.catalogue = catalogue
        self.rescore = rescorer(catalogue)
        self.language = language
        self.log = log
        self.in_arrays = 0
        """How many rulings :meth:`many` found agreeing in the arrays (the rest were checked room by room)."""
        self.verdicts: dict[Checked, str] = {}
        """Each verdict's words, as said once: a run's verified receipts say a few things, a million times."""

    def record(
        self, code: str | None, said: Text | str, round_id: Any = None, money: int | None = None
    ) -> dict[str, Any]:
        """``said``: what the message says, or its words in :attr:`language` already."""
        return {
            "round_id": shown_round(round_id),
            "verified": code is None,
            "code": code,
            "message": said.render(self.language) if isinstance(said, Text) else said,
            "money": money,
            "key_id": None,
        }

    def too_long(self, length: int, limit: int, setting: str | None) -> tuple[dict[str, Any], Rooms]:
        """A line (or a receipt file) past its cap, never read: unreadable, saying the cap and what sets it."""
        if setting is None:
            said = Text("receipts.why_file_too_long", length=length, limit=limit)
        else:
            said = Text("receipts.why_line_too_long", length=length, limit=limit, setting=setting)
        return self.record(UNREADABLE, Text("receipts.fault", check=Text("receipts.check_shape"), why=said)), ()

    def __call__(self, text: bytes) -> tuple[dict[str, Any], Rooms]:
        """One receipt's JSON text (a line, or a whole file): its record and rooms."""
        return self._check(text, self.rescore)

    def many(self, texts: list[bytes]) -> list[tuple[dict[str, Any], Rooms]]:
        """Each receipt's record and rooms, as one at a time would give them, their rulings checked
        together (:class:`Rulings`, several times faster a room): a receipt whose rooms the arrays do not
        all take, or do not all find agreeing, is checked again on its own, by the per-room path."""
        rulings = Rulings(self.catalogue)
        tickets: dict[int, list[int | None]] = {}

        def later(number: int) -> Callable[[str, Any, Any], bool | None]:
            def rescore(path: str, request: Any, answer: Any) -> bool | None:
                taken = [rulings.take(room, answered) for room, answered in rooms_ruled(path, request, answer)]
                if not taken or None in taken:
                    return self.rescore(path, request, answer)
                tickets[number] = taken
                return True

            return rescore

        checked = [self._check(text, later(number)) for number, text in enumerate(texts)]
        agreeing = rulings.agreeing()
        self.in_arrays += len(agreeing)
        for number, taken in tickets.items():
            if not agreeing.issuperset(taken):
                checked[number] = self(texts[number])
        return checked

    def _check(self, text: bytes, rescore: Callable[[str, Any, Any], bool | None]) -> tuple[dict[str, Any], Rooms]:
        try:
            receipt = read_receipt(text)
        except BadDocument as error:
            why = error.args[0]
            return self.record(UNREADABLE, Text("receipts.fault", check=Text("receipts.check_shape"), why=why)), ()
        seen: dict[str, Any] = {}

        def read(path: str, request: Any, answer: Any) -> None:
            seen["round_id"], seen["rooms"] = _rooms(path, request, answer)
            seen["money"], seen["request"] = _money(answer), request

        try:
            checked = check(receipt, self.keys.jwks, rescore, verifier=self.keys.verify, read=read)
        except ReceiptFault as fault:
            code = CODES[fault.check]
            if fault.why.key == "receipts.why_unknown_key":
                code = UNKNOWN_KEY
            if not seen:  # it failed before its bodies were read: read them as well as they can be
                seen["round_id"], seen["money"] = _round_id_of(receipt), _money_of(receipt)
            record = self.record(code, fault.says(), seen["round_id"], seen["money"])
            return record, ()
        said = self.verdicts.get(checked)
        if said is None:  # a run's verdicts are a few: one a key, route and way of checking
            said = self.verdicts[checked] = checked.verdict().render(self.language)
        record = self.record(None, said, seen["round_id"], seen["money"])
        record["key_id"] = checked.key_id
        if self.log is not None:
            index: LogIndex | None = self.log[0]
            logged = in_log(receipt, seen["request"], index, self.log[1])
            if logged.code is not None and logged.said is not None:
                return self.record(logged.code, logged.said, seen["round_id"], seen["money"]), seen["rooms"]
            if logged.said is not None:
                record["message"] += logged.said.render(self.language)
        return record, seen["rooms"]


def _round_id_of(receipt: Any) -> Any:
    """The round a receipt names, read as well as it can be when the receipt fails before its bodies
    are read (a bad digest or signature): the request body's ``round_id``, or None."""
    request = receipt.get("request") if isinstance(receipt, dict) else None
    body = request.get("body") if isinstance(request, dict) else None
    if not isinstance(body, str):
        return None
    try:
        document = read_body(body)
    except BadDocument:
        return None
    if isinstance(document, dict) and isinstance(document.get("rooms"), list):
        return [room.get("round_id") if isinstance(room, dict) else None for room in document["rooms"]]
    round_id = document.get("round_id") if isinstance(document, dict) else None
    return round_id if isinstance(round_id, str) else None


def _money_of(receipt: Any) -> int | None:
    """What a receipt's answer moves (:func:`_money`), where its body can be read; else None."""
    response = receipt.get("response") if isinstance(receipt, dict) else None
    body = response.get("body") if isinstance(response, dict) else None
    if not isinstance(body, str):
        return None
    try:
        return _money(read_body(body))  # not yet signed for: bounded as the receipt is
    except BadDocument:
        return None
