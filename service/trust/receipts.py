"""Receipts: one JSON file that settles a dispute offline, months later.

A receipt holds the request as sent and the answer as received, its status and signature headers::

    {"receipt": 1,
     "request": {"method": "POST", "path": "/v1/score", "body": "<the request body as sent>"},
     "response": {"status": 200,
                  "headers": {"content-digest": "…", "signature-input": "…", "signature": "…"},
                  "body": "<the answer body as received>"}}

:func:`check` runs every check in order and stops at the first that fails, naming it; a missing
header, key or member is a failure, never a skipped check.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from service.texts import Language, Text
from service.trust.rescoring import checks_a_receipt, envelope_taken, refusal, refused_whole, rescorer
from service.trust.signing import (
    KEY_SET_MAX_AGE,
    KeySet,
    SigningKeyError,
    Unverified,
    Verified,
    publishing,
    room_digest_if_any,
    verify,
)

SIGNED_PATHS: Final = ("/v1/score", "/v1/score/batch", "/v1/verify")
CHECK_NAMES: Final = {
    "shape": "receipts.check_shape",
    "content_digest": "receipts.check_content_digest",
    "signature": "receipts.check_signature",
    "room_digest": "receipts.check_room_digest",
    "rescore": "receipts.check_rescore",
}
"""The checks, in the order they run, and the text that names each."""
CHECKS: Final = tuple(CHECK_NAMES)
PASSED: Final = {
    "content_digest": "receipts.passed_content_digest",
    "signature": "receipts.passed_signature",
    "room_digest": "receipts.passed_room_digest",
    "rescore": "receipts.passed_rescore",
}
"""What each check showed, when it passed."""


class ReceiptFault(Exception):
    """The first check a receipt fails: ``check`` (one of :data:`CHECKS`), ``why`` (a :class:`Text`),
    and for the shape, ``pointer`` (RFC 6901) to the member at fault."""

    def __init__(self, check: str, why: Text, pointer: str = "", code: str = "wrong_type") -> None:
        super().__init__(check, why)
        self.check, self.why, self.pointer, self.code = check, why, pointer, code

    def says(self) -> Text:
        return Text("receipts.fault", check=Text(CHECK_NAMES[self.check]), why=self.why)


@dataclass(frozen=True)
class Checked:
    """What a receipt showed: the key that signed it, whether the rules were re-applied, and whether
    the signature covers the route the receipt names."""

    key_id: str
    rescored: bool
    """False where the answer's ruleset is not one this installation knows (an operator's own)."""
    path: str = "/v1/score"
    route_bound: bool = True
    """False for an answer signed before signatures covered the route: that it answers ``path`` then
    rests on its shape (:func:`_answer_fits_route`), which tells a score from a verify answer, but not
    one route's refusal of a room from another's."""
    no_room: bool = False
    """True for the answer to a receipt sent to /v1/verify: it checked a receipt, and holds no room to
    score again."""

    def verdict(self) -> Text:
        if self.no_room:
            said = Text("receipts.ok_receipt_check", key_id=self.key_id)
        else:
            said = Text("receipts.ok_rescored" if self.rescored else "receipts.ok_unknown_rules", key_id=self.key_id)
        return said if self.route_bound else Text("receipts.ok_unbound", verdict=said, path=self.path)


def _member(document: Any, *path: str) -> Any:
    value = document
    for depth, name in enumerate(path):
        if not isinstance(value, dict) or name not in value:
            pointer = "/" + "/".join(path[: depth + 1])
            raise ReceiptFault("shape", Text("receipts.why_missing_member", member=".".join(path)), pointer, "required")
        value = value[name]
    return value


def _digest_matches(headers: Mapping[str, str], body: bytes) -> None:
    field = headers.get("content-digest")
    if field is None:
        raise ReceiptFault("content_digest", Text("receipts.why_no_header", header="content-digest"))
    wanted = ":" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
    found = dict(part.strip().split("=", 1) for part in field.split(",") if "=" in part)
    if found.get("sha-256") != wanted:
        raise ReceiptFault("content_digest", Text("receipts.why_digest_differs"))


def _answer_fits_route(path: str, status: int, answer: Any) -> None:
    """An answer of 200 has its route's shape: a score answer's ledger, a verify answer's verdict (or
    its receipt's checks), a batch's results. The signature covers the route too, except on answers
    signed before it did, for which this is what keeps a receipt from naming another route."""
    if status != 200:
        return
    members = set(answer) if isinstance(answer, dict) else set()
    fits = {
        "/v1/score": "ledger" in members and "agrees" not in members,
        "/v1/verify": {"agrees", "result"} <= members or "receipt" in members,
        "/v1/score/batch": "results" in members,
    }
    if not fits.get(path, False):
        raise ReceiptFault("room_digest", Text("receipts.why_answer_not_of_route", path=path))


def _rooms_bound(path: str, request: Any, answer: Any) -> None:
    if path == "/v1/score/batch" and not refused_whole(path, answer):
        rooms = request.get("rooms") if isinstance(request, dict) else None
        results = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(rooms, list) or not isinstance(results, list) or len(rooms) != len(results):
            raise ReceiptFault("room_digest", Text("receipts.why_batch_shape"))
        pairs = list(zip(rooms, results, strict=True))
    else:
        pairs = [(request, answer)]
    for k, (room, result) in enumerate(pairs):
        stated = result.get("room_digest") if isinstance(result, dict) else None
        digest = room_digest_if_any(room)  # None for a room past canonical JSON, which the service refuses unbound
        if stated is None and (digest is not None or not (refusal(result) or checks_a_receipt(path, request))):
            raise ReceiptFault("room_digest", Text("receipts.why_no_room_digest", result=k))
        if stated != digest:
            raise ReceiptFault("room_digest", Text("receipts.why_room_digest_differs", result=k))


def read_shape(
    receipt: Any, paths: tuple[str, ...] = SIGNED_PATHS, why: str = "receipts.why_not_signed_route"
) -> tuple[str, str, str, int, dict[str, str]]:
    """A receipt's path, request body, answer body, status and headers (names in lower case), or the
    shape fault, pointing at its member; ``why`` says what ``paths`` are, for a path outside them."""
    version = _member(receipt, "receipt")
    if type(version) is not int or version != 1:
        raise ReceiptFault("shape", Text("receipts.why_not_version_1"), "/receipt", "not_one_of")
    path = _member(receipt, "request", "path")
    if path not in paths:
        shown = path[:80] if isinstance(path, str) else json.dumps(path)[:80]
        raise ReceiptFault("shape", Text(why, path=shown, routes=", ".join(paths)), "/request/path", "not_one_of")
    request_body, answer_body = _member(receipt, "request", "body"), _member(receipt, "response", "body")
    status, headers = _member(receipt, "response", "status"), _member(receipt, "response", "headers")
    for pointer, value, wanted in (
        ("/request/body", request_body, str),
        ("/response/body", answer_body, str),
        ("/response/headers", headers, dict),
    ):
        if not isinstance(value, wanted):
            raise ReceiptFault("shape", Text("receipts.why_bodies_as_text"), pointer)
    if type(status) is not int:
        raise ReceiptFault("shape", Text("receipts.why_status_number"), "/response/status")
    for name, value in headers.items():
        if not isinstance(value, str):
            raise ReceiptFault(
                "shape", Text("receipts.why_header_text", header=name[:64]), f"/response/headers/{name[:64]}"
            )
    if receipt["request"].get("method", "POST") != "POST":  # left out: a POST, as the contract allows
        raise ReceiptFault("shape", Text("receipts.why_not_post"), "/request/method", "not_one_of")
    lowered = {str(name).lower(): str(value) for name, value in headers.items()}
    return path, request_body, answer_body, status, lowered


def publish(jwks: Any, key_path: str) -> tuple[str, list[Text]]:
    """``maubinh receipts publish``: the JWK Set to publish before signing with the key in ``key_path``
    (``jwks``'s usable keys, then the new one's public half), as JSON; and what to say on stderr (each
    key left out, then the set and the wait before signing). :class:`SigningKeyError` says why not."""
    try:
        document, kid, read = publishing(jwks, key_path)
    except Unverified as error:
        raise SigningKeyError(error.args[0]) from None
    said = Text("receipts.published", kid=kid, keys=len(document["keys"]), seconds=KEY_SET_MAX_AGE)
    return json.dumps(document, indent=1) + "\n", [*read.skipped, said]


def skipped_keys(jwks: Any) -> tuple[Text, ...]:
    """A warning for each key of ``jwks`` a receipt is not checked with (not Ed25519, malformed, or a
    ``kid`` that is not its thumbprint): the others are used all the same."""
    try:
        return KeySet.read(jwks).skipped
    except Unverified:
        return ()


def check(
    receipt: Any,
    jwks: Mapping[str, Any],
    rescore: Callable[[str, Any, Any], bool | None],
    paths: tuple[str, ...] = SIGNED_PATHS,
    verifier: Callable[[int, Mapping[str, str], bytes, Mapping[str, Any], str], Verified] = verify,
    read: Callable[[str, Any, Any], None] | None = None,
) -> Checked:
    """Every check, in order: the shape, the content digest, the signature with a published key, the
    rooms' digests, and re-scoring under the pinned ruleset (``rescore(path, request, answer)``: True
    when it gives the same ledger, False when not, None when the ruleset is not known here).
    ``verifier`` checks the signature (:func:`signing.verify`'s verdict); ``read(path, request, answer)``
    is shown the bodies once they are read, whatever comes after (a run of receipts keeps its rounds)."""
    why = "receipts.why_not_signed_route" if paths == SIGNED_PATHS else "receipts.why_one_room"
    path, request_body, answer_body, status, headers = read_shape(receipt, paths, why)
    body = answer_body.encode("utf-8", "surrogatepass")
    _digest_matches(headers, body)
    try:
        verified = verifier(status, headers, body, jwks, path)
    except Unverified as failed:
        raise ReceiptFault("signature", failed.args[0]) from None
    from service.support.strict_json import BadDocument
    from service.trust.receipt_reading import read_body, read_signed_answer

    try:
        request = read_body(request_body)
    except BadDocument as error:
        raise ReceiptFault("room_digest", Text("receipts.why_request_not_json", why=error.args[0])) from None
    try:
        answer = read_signed_answer(body)
    except BadDocument as error:
        raise ReceiptFault("room_digest", Text("receipts.why_answer_not_json", why=error.args[0])) from None
    if read is not None:
        read(path, request, answer)
    _answer_fits_route(path, status, answer)
    _rooms_bound(path, request, answer)
    if checks_a_receipt(path, request):
        return Checked(verified.key_id, False, path, verified.route_bound, no_room=True)
    if not envelope_taken(path, request, answer):
        raise ReceiptFault("rescore", Text("receipts.why_envelope_refused"))
    same = rescore(path, request, answer)
    if same is False:
        raise ReceiptFault("rescore", Text("receipts.why_ledger_differs"))
    return Checked(verified.key_id, same is True, path, verified.route_bound)


ONE_ROOM_PATHS: Final = ("/v1/score", "/v1/verify")
"""The receipts POST /v1/verify checks: one room each, so that checking one costs what verifying a room does."""


def receipt_document(
    raw: Any, catalogue: Any, language: Language, jwks: Mapping[str, Any], limited: bool = False
) -> dict[str, Any]:
    """POST /v1/verify's answer to a receipt: each check passed, failed, not run (after the first
    failure) or, for re-scoring, not possible here (the ruleset is not known; with ``limited``, the
    caller's key may use only some operator rulesets, which the words say). A receipt of the wrong
    shape is refused (422), its fault pointing at the member."""
    from service.contract import Fault, RoomRejected

    try:
        checked: Checked | None = check(raw, jwks, rescorer(catalogue), ONE_ROOM_PATHS)
        failed: ReceiptFault | None = None
    except ReceiptFault as fault:
        if fault.check == "shape":
            raise RoomRejected([Fault(fault.pointer, fault.why, fault.code)]) from None
        checked, failed = None, fault
    rows = []
    for name in CHECKS[1:]:
        if failed is not None and name == failed.check:
            outcome, said = "failed", failed.why
        elif failed is not None and CHECKS.index(name) > CHECKS.index(failed.check):
            outcome, said = "not_run", Text("receipts.why_not_run")
        elif name == "rescore" and checked is not None and not checked.rescored:
            why = "receipts.why_ruleset_not_granted" if limited else "receipts.why_ruleset_not_known"
            why = "receipts.why_receipt_check" if checked.no_room else why
            outcome, said = "not_known", Text(why)
        else:
            outcome, said = "passed", Text(PASSED[name])
        rows.append({"check": name, "outcome": outcome, "message": said.render(language)})
    if checked is not None:
        summary = checked.verdict()
    else:
        assert failed is not None
        summary = failed.says()
    return {
        "receipt": {
            "verified": checked is not None,
            "key_id": checked.key_id if checked is not None else None,
            "rescored": checked is not None and checked.rescored,
            "route_bound": checked is not None and checked.route_bound,
            "checks": rows,
            "message": summary.render(language),
        }
    }


def from_exchange(method: str, path: str, request_body: bytes, saved_answer: bytes) -> dict[str, Any]:
    """A receipt from a stored request body and an answer as ``curl -i`` saves it (status line,
    header lines, a blank line, the body)."""
    head, separator, body = saved_answer.replace(b"\r\n", b"\n").partition(b"\n\n")
    if not separator:
        raise ReceiptFault("shape", Text("receipts.why_no_blank_line"))
    lines = head.decode("latin-1").split("\n")
    while lines and lines[0].startswith("HTTP/") and " 100 " in lines[0]:  # an interim 100 Continue
        lines = lines[lines.index("") + 1 :] if "" in lines else lines[1:]
    status_line, *header_lines = lines
    parts = status_line.split(" ")
    if not status_line.startswith("HTTP/") or len(parts) < 2 or not parts[1].isdigit():
        raise ReceiptFault("shape", Text("receipts.why_no_status_line", line=status_line[:40]))
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        if name.strip().lower() in ("content-digest", "signature-input", "signature", "content-type"):
            headers[name.strip().lower()] = value.strip()
    if "signature" not in headers:  # a 401's body would make a receipt that proves nothing
        status = int(parts[1])
        why = "receipts.why_unauthorized" if status in (401, 403) else "receipts.why_unsigned"
        raise ReceiptFault("shape", Text(why, status=str(status)))
    return {
        "receipt": 1,
        "request": {"method": method, "path": path, "body": request_body.decode("utf-8")},
        "response": {"status": int(parts[1]), "headers": headers, "body": body.decode("utf-8")},
    }
