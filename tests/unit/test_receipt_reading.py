"""A receipt's text read quickly (service/trust/receipt_reading.py) reads as the strict reader reads it:
the same document for a line in the service's own writing, and for any other the strict reader's own
verdict, document or refusal; a signed answer's members the checks use are the answer's own."""

from __future__ import annotations

import json
import random
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from receipt_month import Maker, room

from service.support import strict_json
from service.support.strict_json import BadDocument
from service.trust import receipt_reading
from service.trust.receipt_reading import read_receipt, read_signed_answer

MAKER = Maker()
RNG = random.Random(7)
SCORE = MAKER.receipt(room(RNG, "round-1"))
LINE = orjson.dumps(SCORE)
BODY = json.dumps(SCORE["request"]["body"])


def _read(read: Any, text: bytes) -> Any:
    try:
        return read(text)
    except BadDocument as refused:
        return ("refused", refused.args[0].key, refused.args[0].fields)


VARIANTS: dict[str, bytes] = {
    "the service's writing": LINE,
    "spaces between tokens": json.dumps(SCORE, ensure_ascii=False).encode(),
    "members in another order": LINE.replace(b'{"receipt":1,', b"{").replace(b"}}", b'},"receipt":1}', 1),
    "a member written twice": LINE.replace(b'"body":' + BODY.encode(), b'"body":"{}","body":' + BODY.encode(), 1),
    "a header written twice": LINE.replace(b'"headers":{', b'"headers":{"content-type":"text/plain",', 1),
    "a member more": LINE.replace(b'{"receipt":1,', b'{"receipt":1,"log":{"proofs":[]},', 1),
    "a member fewer": LINE.replace(b'"method":"POST",', b"", 1),
    "the version as a float": LINE.replace(b'{"receipt":1,', b'{"receipt":1.0,', 1),
    "the version past any integer": LINE.replace(b'{"receipt":1,', b'{"receipt":1' + b"0" * 30 + b",", 1),
    "the status as text": LINE.replace(b'"status":200', b'"status":"200"', 1),
    "a body not text": LINE.replace(b'"body":' + BODY.encode(), b'"body":{"players":[]}', 1),
    "an escape written otherwise": LINE.replace(b'"method":"POST"', b'"method":"P\\u004fST"', 1),
    "a key escaped": LINE.replace(b'"method":', b'"m\\u0065thod":', 1),
    "a lone surrogate in a body": LINE.replace(b'"body":"{', b'"body":"\\ud800{', 1),
    "a byte that is no UTF-8": LINE.replace(b'"body":"{', b'"body":"\xff{', 1),
    "a header that is no UTF-8": LINE.replace(b'"content-type":"', b'"content-type":"\xff', 1),
    "a header name past the key cap": LINE.replace(b'"headers":{', b'"headers":{"' + b"x" * 300 + b'":"1",', 1),
    "a body not text, a key twice in it": LINE.replace(b'"body":' + BODY.encode(), b'"body":{"a":1,"a":2}', 1),
    "a body not text, a number inexact": LINE.replace(b'"body":' + BODY.encode(), b'"body":10.000000000000000001', 1),
    "a body not text, past 64 bits": LINE.replace(b'"body":' + BODY.encode(), b'"body":' + b"9" * 30, 1),
    "a body nested past any depth": LINE.replace(b'"body":' + BODY.encode(), b'"body":' + b"[" * 3000 + b"]" * 3000, 1),
    "a byte order mark": b"\xef\xbb\xbf" + LINE,
    "more after the receipt": LINE + b" {}",
    "cut short": LINE[:-40],
    "not JSON": b"{not json",
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_receipt_reads_as_the_strict_reader_reads_it(variant: str) -> None:
    text = VARIANTS[variant]
    assert variant == "the service's writing" or text != LINE
    assert _read(read_receipt, text) == _read(strict_json.loads, text)


def test_the_service_s_writing_is_read_without_the_strict_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: bytes) -> Any:
        raise AssertionError("read strictly")

    monkeypatch.setattr(receipt_reading, "loads", refuse)
    assert read_receipt(LINE) == SCORE
    with pytest.raises(AssertionError):
        read_receipt(VARIANTS["spaces between tokens"])


def _kept(full: Any, read: Any) -> Any:
    """``full`` cut to the members that ``read`` holds, at every depth: what ``read`` should equal."""
    if isinstance(read, dict):
        assert set(read) <= set(full)
        return {name: _kept(full[name], read[name]) for name in read}
    if isinstance(read, list):
        return [_kept(whole, part) for whole, part in zip(full, read, strict=True)]
    return full


READ = {"ruleset", "room_digest", "players", "ledger", "errors", "agrees", "result", "receipt", "results"}


def _answers() -> dict[str, bytes]:
    verify = room(RNG, "round-3")
    scored = json.loads(MAKER.receipt(verify)["response"]["body"])
    verify["claimed"] = {"amounts": {p["id"]: p["amount"] for p in scored["players"]}}
    made = {
        "a score": SCORE,
        "a room refused": MAKER.receipt({**room(RNG, "round-2"), "stake": 0}),
        "a batch": MAKER.receipt({"rooms": [room(RNG, f"b-{k}") for k in range(3)]}, "/v1/score/batch"),
        "a verify": MAKER.receipt(verify, "/v1/verify"),
    }
    return {name: receipt["response"]["body"].encode() for name, receipt in made.items()}


ANSWERS = _answers()


@pytest.mark.parametrize("route", ANSWERS)
def test_an_answer_is_read_for_the_members_the_checks_use_as_they_are(route: str) -> None:
    full, read = orjson.loads(ANSWERS[route]), read_signed_answer(ANSWERS[route])
    assert read == _kept(full, read)
    assert set(full) & READ == set(read)
    ruling = read["results"][0] if "results" in read else read.get("result", read)
    kept = ruling.get("ledger") or ruling.get("errors")
    assert kept, "a ruling's lines, or its refusal, are kept"
    assert "explanation" not in json.dumps(read)


def test_an_answer_of_another_shape_is_read_whole() -> None:
    answer = orjson.loads(ANSWERS["a score"])
    for other in ({**answer, "players": [None]}, {**answer, "ledger": {"1": 2}}, [1, 2]):
        assert read_signed_answer(orjson.dumps(other)) == other
    with pytest.raises(BadDocument):
        read_signed_answer(b"{not json")


TOKENS = (
    b'"',
    b"\\",
    b"\\u0041",
    b"\\ud800",
    b",",
    b":",
    b"{",
    b"}",
    b" ",
    b"1.0",
    b"\xff",
    b"\xc3\xa9",
    b'"body":"x"',
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(LINE)), st.integers(0, 3), st.sampled_from(TOKENS)), max_size=3))
def test_a_receipt_edited_anywhere_reads_as_the_strict_reader_reads_it(edits: list[tuple[int, int, bytes]]) -> None:
    """Each edit cuts up to 3 bytes at a place and puts a token there: whatever the line becomes, the
    quick reading is the strict one."""
    text = LINE
    for at, cut, token in edits:
        text = text[:at] + token + text[at + cut :]
    assert _read(read_receipt, text) == _read(strict_json.loads, text)
