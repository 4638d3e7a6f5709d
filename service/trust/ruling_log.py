"""Signed rulings in the transparency log (service/transparency/): the statement each is logged as, and
a receipt checked against the log (its tree read whole) or against the tlog-proof it carries.

A statement is the canonical JSON (RFC 8785) of ``{round_id, room_digest, content_digest, keyid,
created, route}``, one for each room an answer rules on: never the players' cards, only the room's
digest. The service writes it from the answer it signed; a verifier writes the same bytes from the
receipt, so a receipt's rulings are found in the log by their leaf hashes.
"""

from __future__ import annotations

import re
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec
import orjson

from service.support.rerolls import RoundIndex, rerolled
from service.texts import Text
from service.transparency.merkle import ProofError, leaf_hash
from service.transparency.note import NoteError, Verifier
from service.transparency.proof import TlogProof
from service.transparency.tiles import TiledTree, TreeFault, check_tree
from service.trust.canonical_json import canonical
from service.trust.rescoring import verified_room
from service.trust.signing import room_digest_if_any
from service.validation.limits import DIGEST, recorded_round

MERGE_DELAY: Final = 60
"""Seconds within which a signed ruling is in the log's tree (docs/receipts.md, the log): a ruling absent
from a tree that holds rulings signed this long after it was not logged as promised."""
BATCH: Final = "/v1/score/batch"
_ROOM_DIGEST: Final = re.compile(rb'"room_digest"\s*:\s*"(sha256:[0-9a-f]{64})"')
_CREATED: Final = re.compile(r";created=([0-9]{1,15})\b")  # as the signer writes it: more is no time
_KEY_ID: Final = re.compile(r';keyid="([^"]*)"')
NOT_IN_LOG: Final = "not_in_log"
BAD_LOG_PROOF: Final = "bad_log_proof"


def statement(round_id: Any, room: str, content_digest: str, keyid: str, created: int, route: str) -> bytes:
    return canonical({
        "round_id": round_id if isinstance(round_id, str) else None,
        "room_digest": room, "content_digest": content_digest, "keyid": keyid, "created": created, "route": route,
    })  # fmt: skip


class _Ruling(msgspec.Struct):
    """An answer as its statements read it: each room's digest, and whether it was settled (a ledger)."""

    room_digest: str | None = None
    ledger: msgspec.Raw = msgspec.Raw(b"")
    results: list[_Ruling] | None = None
    result: _Ruling | None = None
    """A verify's settlement of its room."""


_RULINGS: Final = msgspec.json.Decoder(_Ruling)
VERIFY: Final = "/v1/verify"


def statements(
    route: str, request: Any, body: bytes, content_digest: str, keyid: str, created: int, first_form: bool = False
) -> list[bytes]:
    """The statements of one signed answer: a room each (a batch's in its order), each room's digest as
    the answer states it, its round as the request names it. A room refused (no ledger) names no round,
    as rounds scored once records none for it, nor does a receipt checked on /v1/verify; a verify's room
    is its request less the claim, as a score of that room would state it, so that the log sees a round
    settled on another room through /v1/verify too. ``first_form``: the statements as the service wrote
    them until 2026-12-07 (a refusal and a receipt's other members named a round, a verify's digest
    covered its claim, and a batch with a room past canonical JSON, which has no digest, named none of
    its rounds), which a receipt of then is found by."""
    if first_form:
        return _first_form(route, request, body, content_digest, keyid, created)
    try:
        answer = _RULINGS.decode(body)
    except msgspec.DecodeError:  # not the service's writing: as first written
        return _first_form(route, request, body, content_digest, keyid, created)
    if route == VERIFY:
        return _verified(request, answer, content_digest, keyid, created)
    if route == BATCH and answer.results is not None:
        rooms = request.get("rooms") if isinstance(request, dict) else None
        results = answer.results
        pairs = zip(rooms, results, strict=True) if isinstance(rooms, list) and len(rooms) == len(results) else ()
    elif route == BATCH:  # its envelope refused: the batch is one document, bound whole, of no round
        pairs = zip([None], [answer], strict=True)
    else:
        pairs = zip([request], [answer], strict=True)
    return [
        statement(_round_of(room) if ruled.ledger else None, ruled.room_digest, content_digest, keyid, created, route)
        for room, ruled in pairs
        if ruled.room_digest is not None
    ]


def _verified(request: Any, answer: _Ruling, content_digest: str, keyid: str, created: int) -> list[bytes]:
    if answer.room_digest is None:  # past canonical JSON: bound to nothing, logged as nothing
        return []
    settled = answer.result is not None and bool(answer.result.ledger) and isinstance(request, dict)
    if not settled or "receipt" in request:
        return [statement(None, answer.room_digest, content_digest, keyid, created, VERIFY)]
    digest = room_digest_if_any(verified_room(request)) or answer.room_digest
    return [statement(_round_of(request), digest, content_digest, keyid, created, VERIFY)]


def _round_of(room: Any) -> Any:
    return room.get("round_id") if isinstance(room, dict) else None


def _first_form(route: str, request: Any, body: bytes, content_digest: str, keyid: str, created: int) -> list[bytes]:
    digests = [m.decode() for m in _ROOM_DIGEST.findall(body)]
    if route == BATCH:
        rooms = request.get("rooms") if isinstance(request, dict) else None
        ids = [_round_of(r) for r in rooms] if isinstance(rooms, list) else []
        if len(ids) != len(digests):
            ids = [None] * len(digests)
    else:
        ids = [_round_of(request)] * len(digests)
    return [statement(i, d, content_digest, keyid, created, route) for i, d in zip(ids, digests, strict=True)]


def receipt_statements(receipt: Mapping[str, Any], request: Any, first_form: bool = False) -> tuple[list[bytes], int]:
    """The statements the service logged for the answer a receipt holds (already checked), and its ``created``."""
    headers = {str(k).lower(): v for k, v in receipt["response"]["headers"].items()}
    signature_input = headers.get("signature-input", "")
    created, keyid = _CREATED.search(signature_input), _KEY_ID.search(signature_input)
    when = int(created[1]) if created else 0
    body = receipt["response"]["body"].encode("utf-8", "surrogatepass")
    found = statements(receipt["request"]["path"], request, body, headers.get("content-digest", ""),
                       keyid[1] if keyid else "", when, first_form)  # fmt: skip
    return found, when


@dataclass
class LogIndex:
    """A log's tree read whole and checked (every tile recomputed from the entries, the root against a
    checkpoint whose note verifies): each entry's index by its leaf hash, and the latest ``created`` it holds.

    The leaf hashes are kept as 16 bytes each in the log's order, then sorted once, with each one's index
    beside it: 24 bytes an entry (a dict of them took 138), so a year of a busy service's rulings is
    held in a few GB, not in tens."""

    size: int
    hashes: bytearray = field(default_factory=bytearray)
    latest: int = 0
    _sorted: tuple[Any, Any] | None = None

    @classmethod
    def of(cls, tree: TiledTree, root: bytes) -> LogIndex:
        index = cls(tree.size)
        for _, entry in check_tree(tree, root):
            index.hashes += leaf_hash(entry)[:KEPT]
            try:
                created = orjson.loads(entry).get("created")
            except (orjson.JSONDecodeError, AttributeError):
                created = None
            if type(created) is int and created > index.latest:
                index.latest = created
        return index

    def at(self, leaf: bytes) -> int | None:
        """The index of the (last) entry whose leaf hash is ``leaf``, or None where none is."""
        import numpy as np

        if self._sorted is None:
            keys = np.frombuffer(self.hashes, dtype=f"S{KEPT}")
            order = np.argsort(keys, kind="stable")
            self._sorted, self.hashes = (keys[order], order), bytearray()
        keys, order = self._sorted
        found = int(np.searchsorted(keys, np.bytes_(leaf[:KEPT]), side="right")) - 1
        same = found >= 0 and keys[found : found + 1].tobytes() == leaf[:KEPT]  # an item alone drops trailing NULs
        return int(order[found]) if same else None


KEPT: Final = 16
"""The bytes of a leaf hash an index keeps: two of a billion entries share them by a chance near 2^-69."""


@dataclass(frozen=True)
class InLog:
    """What the log shows of a receipt's rulings: None for ``code`` when it passes, with what to add to
    its verdict (``said``, or None)."""

    code: str | None
    said: Text | None


def in_log(receipt: Mapping[str, Any], request: Any, index: LogIndex | None, verifier: Verifier | None) -> InLog:
    """A receipt's rulings checked against the tlog-proofs it carries (``receipt["log"]["proofs"]``, one a
    statement, with ``verifier``, no network) or else against ``index``: absent after the merge delay is
    :data:`NOT_IN_LOG`."""
    found, created = receipt_statements(receipt, request)
    first = receipt_statements(receipt, request, first_form=True)[0]
    if found != first and len(found) == len(first):  # a receipt of before 2026-12-07 is found as then logged
        forms = [(now, then) for now, then in zip(found, first, strict=True)]
    else:
        forms = [(now, now) for now in found]
    carried = receipt.get("log", {}).get("proofs") if isinstance(receipt.get("log"), dict) else None
    if carried is not None and verifier is not None:
        if not isinstance(carried, list) or len(carried) != len(found):
            return InLog(BAD_LOG_PROOF, Text("receipts.log_proof_bad", why="one proof a ruling"))
        at = []
        for text, (ruling, as_then) in zip(carried, forms, strict=True):
            if not isinstance(text, str):
                return InLog(BAD_LOG_PROOF, Text("receipts.log_proof_bad", why="a proof is text"))
            try:
                proof = TlogProof.parse(text)
                try:
                    proof.verify(ruling, verifier)
                except ProofError:
                    if as_then == ruling:
                        raise
                    proof.verify(as_then, verifier)
            except (ProofError, NoteError) as error:
                return InLog(BAD_LOG_PROOF, Text("receipts.log_proof_bad", why=str(error.args[0])[:200]))
            at.append(proof.index)
        return InLog(None, Text("receipts.log_proven", indexes=", ".join(map(str, at))))
    if index is None or not found:  # not found: no ruling the log holds (an answer bound to no room)
        return InLog(None, None)
    where = [_found(index, ruling, as_then) for ruling, as_then in forms]
    if None not in where:
        return InLog(None, Text("receipts.log_included", indexes=", ".join(map(str, where)), size=index.size))
    if index.latest >= created + MERGE_DELAY:
        missing = sum(1 for w in where if w is None)
        return InLog(NOT_IN_LOG, Text("receipts.log_missing", missing=missing, rulings=len(found), size=index.size,
                                      later=index.latest - created, delay=MERGE_DELAY))  # fmt: skip
    return InLog(None, Text("receipts.log_pending", delay=MERGE_DELAY))


def _found(index: LogIndex, ruling: bytes, as_then: bytes) -> int | None:
    at = index.at(leaf_hash(ruling))
    return at if at is not None or as_then == ruling else index.at(leaf_hash(as_then))


KEY_ID_SHOWN: Final = 64
"""An unknown key's id as the report names it: its first 64 characters (a thumbprint has 43), so that a
log of long made-up ids costs no more than a log of short ones."""
UNKNOWN_KEYS_NAMED: Final = 1000
OTHER_KEYS: Final = "…"
"""Past :data:`UNKNOWN_KEYS_NAMED` unknown keys, the rest's entries are listed under this id, which no
thumbprint can be (base64url): the report stays a few bytes an entry whatever the log holds."""


@dataclass
class Findings:
    """What a monitor found reading every entry: rounds ruled on more than one room, rulings signed by a
    key not in the published set, entries that are no statement. Each ruling that names a round is
    noted in 24 bytes (:class:`RoundIndex`, and its entry's index), so a log of any size is watched in
    bounded memory; the few rounds that may be ruled twice are read again, exactly, for the report."""

    entries: int = 0
    rounds: RoundIndex = field(default_factory=RoundIndex)
    at: array[int] = field(default_factory=lambda: array("Q"))
    unknown_keys: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    unreadable: list[int] = field(default_factory=list)

    def see(self, at: int, entry: bytes, keys: Iterable[str] | None) -> None:
        self.entries += 1
        read = _statement(entry)
        if read is None:
            self.unreadable.append(at)
            return
        round_id, room, keyid = read
        if (recorded := recorded_round(round_id)) is not None:  # as rounds scored once: "" names no round
            self.rounds.add(((recorded, room),))
            self.at.append(at)
        if keys is not None and (not isinstance(keyid, str) or keyid not in keys):  # a list: unhashable
            shown = keyid[:KEY_ID_SHOWN] if isinstance(keyid, str) else f"<{type(keyid).__name__}>"
            if shown not in self.unknown_keys and len(self.unknown_keys) >= UNKNOWN_KEYS_NAMED:
                shown = OTHER_KEYS
            self.unknown_keys[shown].append(at)

    def report(self, entry: Callable[[int], bytes]) -> dict[str, Any]:
        """``entry(index)`` reads an entry again: those of the rounds whose hashes hold two rooms."""
        rooms = []
        for at in sorted(self.at[k] for k in self.rounds.noted(self.rounds.suspects())):
            read = _statement(entry(at))
            if read is not None and (recorded := recorded_round(read[0])) is not None:
                rooms.append((recorded, read[1], at))
        twice = {
            round_id: {"rooms": sorted({room for room, _ in held}), "entries": [at for _, at in held]}
            for round_id, held in rerolled(rooms).items()
        }
        return {"entries": self.entries, "rounds_scored_twice": twice, "unknown_keys": dict(self.unknown_keys),
                "unreadable_entries": self.unreadable}  # fmt: skip


def _statement(entry: bytes) -> tuple[Any, str, Any] | None:
    """An entry's round id, room digest and key id, or None where it is no statement (a room digest that is
    no SHA-256 one included: a report names each room of a round, and no entry's may cost it more)."""
    try:
        read = orjson.loads(entry)
        round_id, room, keyid = read.get("round_id"), read["room_digest"], read["keyid"]
    except (orjson.JSONDecodeError, AttributeError, KeyError, TypeError):
        return None
    return (round_id, room, keyid) if isinstance(room, str) and DIGEST.fullmatch(room) else None


__all__ = ["BAD_LOG_PROOF", "MERGE_DELAY", "NOT_IN_LOG", "Findings", "InLog", "LogIndex", "TreeFault", "in_log"]
