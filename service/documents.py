"""One place that turns a JSON document into a JSON answer, for the CLI and the API.

Each operation takes the parsed request (:func:`service.support.strict_json.loads`: no ``NaN``, no
duplicate keys, no runaway nesting) and returns the response body, or raises
:class:`~service.contract.RoomRejected` (422).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from service.contract import MAX_EXACT_AMOUNT, Fault, Room, RoomRejected
from service.rulesets.catalogue import Catalogue
from service.scoring import Result, arrangement_foul, qualifying_patterns, score
from service.serialize import (
    arrange_json,
    evaluation_said,
    hands_json,
    pattern_json,
    problem_json,
    rejected_json,
    result_json,
    ruleset_block,
)
from service.support.strict_json import BadDocument, loads
from service.support.traced_stages import stage
from service.texts import Language, Text
from service.validation import load_arrange_request, load_arrangement, load_batch, load_room, load_verification
from service.validation.limits import MOST_BATCH_ROOMS


def _check_amounts(result: Result) -> None:
    """Refuse a room whose largest amount (a player's, a pair's or a line's) no JSON client reads exactly."""
    largest = max(
        [abs(p.units) for p in result.players]
        + [line.units for line in result.ledger]
        + [abs(units) for pair in result.showdown for units in pair.units.values()]
    )
    if largest * result.room.stake > MAX_EXACT_AMOUNT:
        message = Text(
            "fault.amount_out_of_range", units=largest, stake=result.room.stake, amount=largest * result.room.stake
        )
        raise RoomRejected([Fault("/stake", message, "amount_out_of_range")])


def _settle(room: Room, language: Language) -> tuple[Result, dict[str, Any]]:
    """Score a room and check its amounts: the answer of /v1/score, and the heart of /v1/verify's."""
    with stage("settle"):
        result = score(room)
        _check_amounts(result)
        return result, result_json(result, language)


def settle_room(raw: Any, catalogue: Catalogue | None = None) -> Result:
    """A request's room scored to its result, and nothing written: what re-scoring a receipt compares
    with the answer it holds (the ledger's lines and the amounts), a room refused as ``score_document``
    refuses it. The answer's words and hands are not made: a month of receipts is checked faster."""
    with stage("validate"):
        room = load_room(raw, catalogue)
    with stage("settle"):
        result = score(room)
        _check_amounts(result)
        return result


def score_document(raw: Any, catalogue: Catalogue | None = None, language: Language = "en") -> dict[str, Any]:
    with stage("validate"):
        room = load_room(raw, catalogue)
    return _settle(room, language)[1]


def score_batch_results(
    raw: Any,
    catalogue: Catalogue | None = None,
    max_rooms: int = MOST_BATCH_ROOMS,
    language: Language = "en",
    answered: Mapping[int, dict[str, Any]] | None = None,
) -> Iterator[dict[str, Any]]:
    """Many rooms in one request: each result is exactly what ``POST /v1/score`` answers for that
    room, or that room's problem document (with its own status); one bad room never fails the rest.
    The envelope is checked now; the rooms are scored one at a time, as the results are taken, so
    that a caller encoding each as it comes never holds a whole batch of result trees. A room whose
    index ``answered`` holds (read as the results are taken: a room refused for its round over HTTP)
    is given that answer, unscored."""
    rooms = load_batch(raw, max_rooms)

    def results() -> Iterator[dict[str, Any]]:
        for index, room in enumerate(rooms):
            if answered and index in answered:
                yield answered[index]
                continue
            with stage("room", index=index):  # closed before the yield: a stage never spans a caller's code
                try:
                    result = score_document(room, catalogue, language)
                except RoomRejected as rejected:
                    result = rejected_json(rejected.faults)
            yield result

    return results()


def verify_document(raw: Any, catalogue: Catalogue | None = None, language: Language = "en") -> dict[str, Any]:
    """Score a room and compare a backend's settlement with it: per player, per ledger line, per step."""
    from service.scoring.claims import compare  # here: scoring needs none of it (bench/cli.py)

    with stage("validate"):
        room, claim = load_verification(raw, catalogue)
    result, body = _settle(room, language)
    return {**compare(result, claim, room.stake), "result": body}


def evaluate_document(raw: Any, catalogue: Catalogue | None = None, language: Language = "en") -> dict[str, Any]:
    """Name the hands of one arrangement, say whether it fouls, list its patterns."""
    try:
        ruleset, arrangement = load_arrangement(raw, catalogue)
    except RoomRejected as rejected:
        raise RoomRejected(rejected.faults, of_room=False) from None
    table = ruleset.hand_table
    hands = table.describe_all(arrangement)
    reason = arrangement_foul(hands)
    cards = arrangement["back"] + arrangement["middle"] + arrangement["front"]
    found = qualifying_patterns(cards, hands, reason is not None, ruleset)
    patterns = [
        pattern_json(row.pattern, row.units, row.strength, found[row.pattern], ruleset)
        for row in ruleset.instant_wins
        if row.pattern in found
    ]
    return {
        "ruleset": ruleset_block(ruleset),
        "hands": hands_json(hands, ruleset),
        "fouled": reason is not None,
        "foul_reason": reason,
        "explanation": evaluation_said(ruleset, reason, [p["pattern"] for p in patterns]),
        "instant_wins": patterns,
    }


def arrange_document(raw: Any, catalogue: Catalogue | None = None, language: Language = "en") -> dict[str, Any]:
    """Suggest an arrangement of 13 cards (gợi ý) and say what it is expected to win."""
    from service.advisor import advise  # numpy and the field tables: only for the advisor

    try:
        request = load_arrange_request(raw, catalogue)
    except RoomRejected as rejected:
        raise RoomRejected(rejected.faults, of_room=False) from None
    advice = advise(request.cards, request.ruleset, request.alternatives, request.opponents)
    return arrange_json(advice, request.ruleset, request.alternatives)


def prepare(name: str) -> None:
    """Start-up for a batch of one operation: import what it loads on first use and build its tables
    (the advisor's numpy, splits and fields), so that forked workers inherit them and the batch's
    clock times its requests."""
    if name == "arrange":
        from service.advisor import build_tables

        build_tables()


Operation = Callable[[Any, Catalogue | None, Language], dict[str, Any]]
"""(request, catalogue, language of the explanations that are built once, in it: the ledger's)."""
OPERATIONS: dict[str, Operation] = {
    "verify": verify_document,
    "score": score_document,
    "evaluate": evaluate_document,
    "arrange": arrange_document,
}


def problem_for(error: Exception) -> tuple[int, dict[str, Any]] | None:
    """The status and problem document for an error of a request's own making, the same for the
    CLI and the HTTP API: 400 for a body that is not JSON, 422 for one that breaks the contract."""
    if isinstance(error, BadDocument):
        return 400, problem_json(400, Text("problem.bad_json"), error.args[0])
    if isinstance(error, RoomRejected):
        return 422, rejected_json(error.faults, error.of_room)
    return None


def answer(
    operation: Operation,
    body: bytes,
    catalogue: Catalogue | None = None,
    defaults: dict[str, Any] | None = None,
    language: Language = "en",
) -> tuple[int, dict[str, Any]]:
    """(HTTP-like status, body) for one request document: the CLI's whole request path. ``defaults``
    fill the fields a request object leaves out (the CLI's ``--opponents``)."""
    try:
        raw = loads(body)
        if defaults and isinstance(raw, dict):
            raw = {**defaults, **raw}
        return 200, operation(raw, catalogue, language)
    except (BadDocument, RoomRejected) as error:
        problem = problem_for(error)
        assert problem is not None
        return problem
