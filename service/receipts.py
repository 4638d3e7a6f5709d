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

from service.signing import Unverified, room_digest, verify

SIGNED_PATHS: Final = ("/v1/score", "/v1/score/batch", "/v1/verify")


class ReceiptFault(Exception):
    """The first check a receipt fails: ``args[0]`` names it, ``args[1]`` says why."""


@dataclass(frozen=True)
class Checked:
    """What a receipt showed: the key that signed it, and whether the rules were re-applied."""

    key_id: str
    rescored: bool
    """False where the answer's ruleset is not one this installation knows (an operator's own)."""


def _member(document: Any, *path: str) -> Any:
    value = document
    for name in path:
        if not isinstance(value, dict) or name not in value:
            raise ReceiptFault("shape", f"the receipt has no {'.'.join(path)}")
        value = value[name]
    return value


def _digest_matches(headers: Mapping[str, str], body: bytes) -> None:
    field = headers.get("content-digest")
    if field is None:
        raise ReceiptFault("content digest", "the answer has no content-digest header")
    wanted = ":" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
    found = dict(part.strip().split("=", 1) for part in field.split(",") if "=" in part)
    if found.get("sha-256") != wanted:
        raise ReceiptFault("content digest", "the answer's body is not the one its content-digest names")


def _rooms_bound(path: str, request: Any, answer: Any) -> None:
    if path == "/v1/score/batch":
        rooms, results = request.get("rooms") if isinstance(request, dict) else None, answer.get("results")
        if not isinstance(rooms, list) or not isinstance(results, list) or len(rooms) != len(results):
            raise ReceiptFault("room digest", "the batch's answer does not hold one result a room")
        pairs = list(zip(rooms, results, strict=True))
    else:
        pairs = [(request, answer)]
    for k, (room, result) in enumerate(pairs):
        stated = result.get("room_digest") if isinstance(result, dict) else None
        if stated is None:
            raise ReceiptFault("room digest", f"result {k} states no room_digest")
        if stated != room_digest(room):
            raise ReceiptFault("room digest", f"result {k}'s room_digest is not the request's room")


def check(receipt: Any, jwks: Mapping[str, Any], rescore: Callable[[str, Any, Any], bool | None]) -> Checked:
    """Every check, in order: the shape, the content digest, the signature with a published key, the
    rooms' digests, and re-scoring under the pinned ruleset (``rescore(path, request, answer)``: True
    when it gives the same ledger, False when not, None when the ruleset is not known here)."""
    if _member(receipt, "receipt") != 1:
        raise ReceiptFault("shape", "this is not a receipt of version 1")
    path = _member(receipt, "request", "path")
    if path not in SIGNED_PATHS:
        raise ReceiptFault("shape", f"{path!r} is not a signed route ({', '.join(SIGNED_PATHS)})")
    request_body, answer_body = _member(receipt, "request", "body"), _member(receipt, "response", "body")
    status, headers = _member(receipt, "response", "status"), _member(receipt, "response", "headers")
    if not (isinstance(request_body, str) and isinstance(answer_body, str) and isinstance(headers, dict)):
        raise ReceiptFault("shape", "request.body and response.body are the bodies as text, response.headers an object")
    if type(status) is not int:
        raise ReceiptFault("shape", "response.status is the answer's status, a number")
    lowered = {str(name).lower(): str(value) for name, value in headers.items()}
    body = answer_body.encode("utf-8")
    _digest_matches(lowered, body)
    try:
        key_id = verify(status, lowered, body, jwks)
    except Unverified as failed:
        raise ReceiptFault("signature", failed.args[0]) from None
    try:
        request, answer = json.loads(request_body), json.loads(answer_body)
    except ValueError:
        raise ReceiptFault("room digest", "the request or the answer is not JSON") from None
    _rooms_bound(path, request, answer)
    same = rescore(path, request, answer)
    if same is False:
        raise ReceiptFault("rescore", "the rules, applied again to the request, give another ledger")
    return Checked(key_id, same is True)


def from_exchange(method: str, path: str, request_body: bytes, saved_answer: bytes) -> dict[str, Any]:
    """A receipt from a stored request body and an answer as ``curl -i`` saves it (status line,
    header lines, a blank line, the body)."""
    head, separator, body = saved_answer.replace(b"\r\n", b"\n").partition(b"\n\n")
    if not separator:
        raise ReceiptFault("shape", "the saved answer has no blank line between its headers and its body")
    lines = head.decode("latin-1").split("\n")
    while lines and lines[0].startswith("HTTP/") and " 100 " in lines[0]:  # an interim 100 Continue
        lines = lines[lines.index("") + 1 :] if "" in lines else lines[1:]
    status_line, *header_lines = lines
    parts = status_line.split(" ")
    if not status_line.startswith("HTTP/") or len(parts) < 2 or not parts[1].isdigit():
        raise ReceiptFault("shape", f"{status_line[:40]!r} is not an HTTP status line")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        if name.strip().lower() in ("content-digest", "signature-input", "signature", "content-type"):
            headers[name.strip().lower()] = value.strip()
    return {
        "receipt": 1,
        "request": {"method": method, "path": path, "body": request_body.decode("utf-8")},
        "response": {"status": int(parts[1]), "headers": headers, "body": body.decode("utf-8")},
    }


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


def rescorer(catalogue: Any) -> Callable[[str, Any, Any], bool | None]:
    """Re-scores a receipt's rooms under the rulesets its answers pin (id, version and digest) with
    ``catalogue``; None where one of them is not known here."""
    from service.contract import RoomRejected
    from service.documents import score_document

    def one(room: Any, answered: Any) -> bool | None:
        pinned = answered.get("ruleset") if isinstance(answered, dict) else None
        request = dict(room) if isinstance(room, dict) else room
        if isinstance(pinned, dict) and isinstance(request, dict) and isinstance(request.get("ruleset"), str):
            known = catalogue.get(f"{pinned['id']}@{pinned['version']}")
            if known is None or known.digest != pinned.get("digest"):
                return None
            request["ruleset"] = f"{pinned['id']}@{pinned['version']}"
        try:
            again = score_document(request, catalogue)
        except RoomRejected as rejected:
            codes = sorted((f.pointer, f.code) for f in rejected.faults)
            return _ledger(answered) == ("refused", codes)
        if isinstance(pinned, dict) and again["ruleset"].get("digest") != pinned.get("digest"):
            return None
        return _ledger(answered) == _ledger(again)

    def rescore(path: str, request: Any, answer: Any) -> bool | None:
        if path == "/v1/score/batch":
            outcomes = [one(room, result) for room, result in zip(request["rooms"], answer["results"], strict=True)]
        elif path == "/v1/verify":
            room = {k: v for k, v in request.items() if k != "claimed"}
            outcomes = [one(room, answer.get("result", answer))]
        else:
            outcomes = [one(request, answer)]
        if False in outcomes:
            return False
        return None if None in outcomes else True

    return rescore
