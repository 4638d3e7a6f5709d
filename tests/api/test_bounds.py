"""Bounds a hostile caller meets in process: whole-string patterns, exact amounts, bodies past their
limit however framed, metric labels a caller cannot mint, and batch tools that never stop on a line.

The real server's side (memory, time, health probes, slow clients) is tests/system/test_hostile.py.
"""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from helpers import golden_cases
from werkzeug.test import EnvironBuilder, run_wsgi_app

from service import documents
from service.api import create_app
from service.api.logs import request_id
from service.bulk import jsonl, spreadsheet
from service.rulesets import check_document, with_defaults
from service.rulesets.catalogue import builtin_catalogue
from service.rulesets.operator_folder import OperatorFileError, catalogue_for

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
"""docs/rules.md §10 E1 at stake 1000: P pays Q 9000 in all (chi 3000, scoop 6000)."""
MAX = 2**53 - 1


def problems(answer: Any) -> set[tuple[str, str]]:
    return {(e["pointer"], e["code"]) for e in answer.get_json()["errors"]}


# Every pattern matches the whole string: Python's `$` also matches before a final newline.


def test_a_player_id_or_digest_with_a_trailing_newline_is_refused(client: FlaskClient) -> None:
    body = copy.deepcopy(E1)
    body["players"][0]["id"] = "P\n"
    body["ruleset_digest"] = builtin_catalogue().get("maubinh-2020").digest + "\n"  # type: ignore[union-attr]
    answer = client.post("/v1/score", json=body)
    assert answer.status_code == 422
    assert {"/players/0/id", "/ruleset_digest"} <= {pointer for pointer, _ in problems(answer)}


@pytest.mark.parametrize("new_id", ["maubinh-2020\n", "club\n"])
def test_a_patch_id_with_a_trailing_newline_is_refused(client: FlaskClient, new_id: str) -> None:
    answer = client.post("/v1/score", json={**E1, "ruleset": {"base": "maubinh-2020", "patch": {"id": new_id}}})
    assert answer.status_code == 422
    assert ("/ruleset/patch/id", "invalid_ruleset") in problems(answer)


def test_a_request_id_with_a_trailing_newline_is_replaced() -> None:
    assert request_id("abc-1") == "abc-1"
    assert request_id("abc-1\n") != "abc-1\n"


@pytest.mark.parametrize(("field", "value"), [("id", "club\n"), ("version", "2\n")])
def test_the_schema_patterns_match_whole_strings(field: str, value: str) -> None:
    document = with_defaults(dict(builtin_catalogue().get("maubinh-2020").data))  # type: ignore[union-attr]
    assert check_document(document) == []
    document[field] = value
    assert [fault.path for fault in check_document(document)] == [(field,)]


# Claimed amounts: within ±(2^53 − 1), checked before any arithmetic on them.


def verify(client: FlaskClient, claimed: Any) -> Any:
    return client.post("/v1/verify", json={**E1, "claimed": claimed})


def test_a_claimed_amount_of_4300_digits_is_a_422_at_its_pointer(client: FlaskClient) -> None:
    huge = "1" + "0" * 4299  # parses (Python's limit is 4,300 digits); its difference would not print
    body = json.dumps(E1)[:-1] + f', "claimed": {{"amounts": {{"P": -{huge}, "Q": {huge}}}}}}}'
    answer = client.post("/v1/verify", data=body, content_type="application/json")
    assert answer.status_code == 422
    assert problems(answer) == {
        ("/claimed/amounts/P", "amount_out_of_range"),
        ("/claimed/amounts/Q", "amount_out_of_range"),
    }


def test_claimed_amounts_at_and_past_the_bound(client: FlaskClient) -> None:
    at_bound = verify(client, {"amounts": {"P": -MAX, "Q": MAX}})
    assert at_bound.status_code == 200  # P: -MAX against -9000 differs by MAX - 9000, within the bound
    assert at_bound.get_json()["players"][0]["difference"] == -MAX + 9000
    past = verify(client, {"amounts": {"P": -(MAX + 1), "Q": MAX + 1}})
    assert past.status_code == 422
    assert problems(past) == {
        ("/claimed/amounts/P", "amount_out_of_range"),
        ("/claimed/amounts/Q", "amount_out_of_range"),
    }


def test_a_difference_past_the_bound_is_refused(client: FlaskClient) -> None:
    """P claims +MAX where the rules give -9000: each amount is exact, their difference (MAX + 9000) is not."""
    answer = verify(client, {"amounts": {"P": MAX, "Q": -MAX}})
    assert answer.status_code == 422
    assert problems(answer) == {("/claimed/amounts/P", "amount_out_of_range")}


def test_claimed_ledger_amounts_are_bounded_alone_and_together(client: FlaskClient) -> None:
    right = {"P": -9000, "Q": 9000}
    one = verify(client, {"amounts": right, "ledger": [{"payer": "P", "payee": "Q", "amount": MAX + 1}]})
    assert problems(one) == {("/claimed/ledger/0/amount", "amount_out_of_range")}
    line = {"payer": "P", "payee": "Q", "amount": MAX, "step": "chi"}
    two = verify(client, {"amounts": right, "ledger": [line, line]})
    assert problems(two) == {("/claimed/ledger", "amount_out_of_range")}


def test_verify_jsonl_goes_on_past_a_refused_and_a_broken_line(monkeypatch: pytest.MonkeyPatch) -> None:
    agreeing = json.dumps({**E1, "claimed": {"amounts": {"P": -9000, "Q": 9000}}}).encode()
    huge = "1" + "0" * 4299
    refused = json.dumps(E1)[:-1].encode() + f', "claimed": {{"amounts": {{"P": -{huge}, "Q": {huge}}}}}}}'.encode()
    out = io.BytesIO()
    summary = jsonl.run("verify", [agreeing, refused, b"{not json", agreeing], out, jobs=1)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert (summary.lines, summary.refused, summary.agreed) == (4, 2, 2)
    assert [a["status"] for a in answers] == [422, 400]

    def broken(raw: Any, *args: Any) -> dict[str, Any]:
        if raw.get("round_id") == "defect":
            raise RuntimeError("a defect")
        return documents.score_document(raw, *args)

    monkeypatch.setitem(documents.OPERATIONS, "score", broken)
    out = io.BytesIO()
    lines = [json.dumps(E1).encode(), json.dumps({**E1, "round_id": "defect"}).encode(), json.dumps(E1).encode()]
    summary = jsonl.run("score", lines, out, jobs=1)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert summary.lines == 3
    assert [a.get("status", 200) for a in answers] == [200, 500, 200]
    assert "a defect" not in out.getvalue().decode()


# A body past its route's limit is a 413 however it is framed.


def padded(document: dict[str, Any], size: int) -> bytes:
    text = json.dumps(document).encode()
    return text + b" " * (size - len(text))


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_past_the_limit_is_413_however_framed(client: FlaskClient, chunked: bool) -> None:
    limit = 64 * 1024

    def post(body: bytes) -> Any:
        if chunked:
            headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
            return client.post("/v1/score", input_stream=io.BytesIO(body), headers=headers)
        return client.post("/v1/score", data=body, content_type="application/json")

    at_limit = padded(E1, limit)
    assert post(at_limit).status_code == 200
    assert post(at_limit + b"garbage").status_code == 413


def test_a_body_that_ends_before_its_declared_length_is_a_400(client: FlaskClient) -> None:
    body = json.dumps(E1).encode()
    environ = EnvironBuilder("/v1/score", method="POST", data=body, content_type="application/json").get_environ()
    environ["CONTENT_LENGTH"] = str(len(body) + 10)  # the client closed 10 bytes early
    answer, status, _ = run_wsgi_app(client.application, environ)  # the test client would mend the length
    problem = json.loads(b"".join(answer))
    assert status == "400 BAD REQUEST"
    assert problem["type"] == "/problems/bad-json"
    assert (
        problem["detail"]
        == f"The body ended after {len(body)} of the {len(body) + 10} bytes its Content-Length declared."
    )


def test_the_batch_route_refuses_a_chunked_body_past_its_own_limit() -> None:
    client = create_app({"log_requests": False, "max_batch_bytes": 4096}).test_client()
    headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    fits = padded({"rooms": [E1]}, 4096)
    assert client.post("/v1/score/batch", input_stream=io.BytesIO(fits), headers=headers).status_code == 200
    over = client.post("/v1/score/batch", input_stream=io.BytesIO(fits + b"]"), headers=headers)
    assert over.status_code == 413


# Metric labels come from bounded sets, whatever ids the callers' patches give.


def test_variants_count_under_their_base_not_their_own_ids(client: FlaskClient) -> None:
    rooms = [{**E1, "ruleset": {"base": "maubinh-2020@1", "patch": {"id": f"x{k}", "title": "t"}}} for k in range(50)]
    answer = client.post("/v1/score/batch", json={"rooms": rooms})
    assert [r["ruleset"]["id"] for r in answer.get_json()["results"]] == [f"x{k}" for k in range(50)]
    client.post("/v1/score", json={**E1, "ruleset": {"base": "maubinh-2020", "patch": {"title": "t"}}})
    client.post("/v1/score", json=E1)
    text = client.get("/metrics").get_data(as_text=True)
    labels = {line.split('ruleset="')[1].split('"')[0] for line in text.splitlines() if 'ruleset="' in line}
    assert {"maubinh-2020", "maubinh-2020~custom"} <= labels
    assert not any(label.startswith("x") for label in labels)  # the registry is the process's: other tests count too


# Objects and arrays past their bound are refused on their size alone, before marshmallow lists a fault each.


@pytest.mark.parametrize(
    ("change", "pointer"),
    [
        (lambda body: body.update({f"k{k}": 1 for k in range(40)}), ""),
        (lambda body: body["players"][1].update({f"k{k}": 1 for k in range(40)}), "/players/1"),
        (lambda body: body["claimed"].update({f"k{k}": 1 for k in range(40)}), "/claimed"),
        (lambda body: body["claimed"]["amounts"].update({f"p{k}": 0 for k in range(40)}), "/claimed/amounts"),
        (
            lambda body: body["claimed"].update(ledger=[{"payer": "P", "payee": "Q", "amount": 1}] * 1001),
            "/claimed/ledger",
        ),
        (lambda body: body["claimed"].update(ledger=[{f"k{k}": 1 for k in range(40)}]), "/claimed/ledger/0"),
    ],
)
def test_a_request_object_past_its_bound_is_one_fault(client: FlaskClient, change: Any, pointer: str) -> None:
    body = copy.deepcopy({**E1, "claimed": {"amounts": {"P": -9000, "Q": 9000}}})
    change(body)
    answer = client.post("/v1/verify", json=body)
    assert answer.status_code == 422
    assert problems(answer) == {(pointer, "too_many")}


def test_a_batch_room_with_forty_thousand_unknown_fields_is_one_fault(client: FlaskClient) -> None:
    hostile = {**E1, **{f"k{k}": 0 for k in range(40_000)}}
    answer = client.post("/v1/score/batch", json={"rooms": [hostile, E1]})
    results = answer.get_json()["results"]
    assert [(e["pointer"], e["code"]) for e in results[0]["errors"]] == [("", "too_many")]
    assert results[1]["players"][0]["amount"] == -9000


def test_a_batch_reads_at_most_256_values_a_room_it_may_hold() -> None:
    """3 rooms → 768 values. A legitimate batch of three rooms holds ~80 each; 800 empty objects are refused
    before they are parsed (parsed, each would cost ~75 bytes: 4 MiB of them, 100 MB)."""
    client = create_app({"log_requests": False, "max_batch_rooms": 3}).test_client()
    assert client.post("/v1/score/batch", json={"rooms": [E1, E1, E1]}).status_code == 200
    hostile = client.post("/v1/score/batch", json={"rooms": [{"round_id": [{}] * 800}]})
    assert hostile.status_code == 413
    assert "768" in hostile.get_json()["detail"]


# Operators' files: read as strictly as requests, regular files only, within a size limit.


def _operator_fault(tmp_path: Path, write: Any) -> str:
    write(tmp_path / "club.json")
    with pytest.raises(OperatorFileError) as refused:
        catalogue_for(str(tmp_path))
    assert refused.value.path.name == "club.json"
    return str(refused.value)


def test_an_operator_file_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    text = '{"base": "maubinh-2020@2", "patch": {"id": "club-a", "title": "A", "title": "B"}}'
    assert "'title' appears twice" in _operator_fault(tmp_path, lambda path: path.write_text(text))


def test_an_operator_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    assert "not a regular file" in _operator_fault(tmp_path, os.mkfifo)


def test_an_operator_file_past_64_kib_is_refused_unread(tmp_path: Path) -> None:
    document = {"base": "maubinh-2020@2", "patch": {"id": "club-a", "title": "x" * 70_000}}
    assert "more than 65,536 bytes" in _operator_fault(tmp_path, lambda path: path.write_text(json.dumps(document)))


# What an outsider's attack found after the first bounds (each was a 500, a cost past its bound, or a leak).


def test_a_lone_surrogate_is_a_400_not_a_500(client: FlaskClient) -> None:
    """``"\\ud800"`` parses in Python but no UTF-8 text holds it: the canonical patch could not be encoded."""
    for body in (
        json.dumps({**E1, "ruleset": {"base": "maubinh-2020", "patch": {"title": "\ud800"}}}),
        json.dumps({**E1, "round_id": "\udfff"}),
    ):
        answer = client.post("/v1/score", data=body, content_type="application/json")
        assert answer.status_code == 400
        assert "surrogate" in answer.get_json()["detail"]
    paired = client.post("/v1/score", json={**E1, "round_id": "😀"})
    assert paired.status_code == 200 and paired.get_json()["round_id"] == "😀"


def test_a_body_saved_with_a_byte_order_mark_is_read(client: FlaskClient) -> None:
    """RFC 8259 §8.1 lets a parser ignore one; before, it was "Expecting value at line 1, column 1"."""
    plain = client.post("/v1/score", json=E1)
    marked = client.post("/v1/score", data=b"\xef\xbb\xbf" + json.dumps(E1).encode(), content_type="application/json")
    assert marked.status_code == 200 and marked.data == plain.data


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b'{"round_id": "x', "not JSON: Unterminated string starting at line 1, column 14"),
        (b'{"round_id": "\x01"}', "not JSON: Invalid control character at line 1, column 15"),
        (
            b" \r\n",
            "no JSON value: the body is empty or white space only (send one JSON object; a line of JSON lines holds one too)",
        ),
        (
            b'{"stake": ' + b"1" * 4301 + b"}",
            "a number of more than 4,300 digits; no number this service reads is so long, at /stake",
        ),
    ],
    ids=["unterminated", "control character", "white space only", "4301 digits"],
)
def test_a_bad_json_detail_says_it_once_in_our_words(client: FlaskClient, body: bytes, detail: str) -> None:
    """Before: "starting at at line" and Python's advice to call sys.set_int_max_str_digits()."""
    answer = client.post("/v1/score", data=body, content_type="application/json")
    assert answer.status_code == 400
    assert answer.get_json()["detail"] == detail


def test_a_key_past_256_characters_is_refused_as_it_is_read(client: FlaskClient) -> None:
    answer = client.post("/v1/score/batch", json={"rooms": [{**E1, "😀" + "/" * 300: 1}, E1]})
    assert answer.status_code == 400
    assert "256" in answer.get_json()["detail"]


def test_an_unknown_patch_key_set_to_null_is_a_fault(client: FlaskClient) -> None:
    for patch, pointer in (
        ({"zzz": None}, "/ruleset/patch/zzz"),
        ({"scoop": {"zzz": None, "multiplier": 2}}, "/ruleset/patch/scoop/zzz"),
    ):
        answer = client.post("/v1/score", json={**E1, "ruleset": {"base": "maubinh-2020", "patch": patch}})
        assert answer.status_code == 422
        assert problems(answer) == {(pointer, "unknown_field")}


def test_unknown_fields_are_listed_by_name_whatever_the_process() -> None:
    """marshmallow gathers unknown fields in a set: without a tie-break, their order varied by process."""
    code = (
        "import json, sys\nfrom service.documents import answer, score_document\n"
        f"body = json.dumps({{**{E1!r}, 'r': 1, 'q': 1, 'zz': 1, 'a': 1}}).encode()\n"
        "print([e['pointer'] for e in answer(score_document, body)[1]['errors']])\n"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert runs == {"['/a', '/q', '/r', '/zz']\n"}


def test_invented_methods_count_as_other(client: FlaskClient) -> None:
    for method in ("XABC", "XDEF"):
        assert client.open("/healthz", method=method).status_code == 405
    text = client.get("/metrics").get_data(as_text=True)
    assert 'method="other"' in text and "XABC" not in text


def test_a_flood_of_accept_language_reads_its_first_choices(client: FlaskClient) -> None:
    answer = client.get("/healthz", headers={"Accept-Language": "vi," + "a," * 40_000})
    assert answer.headers["Content-Language"] == "vi"


def test_caller_text_in_a_csv_cell_never_becomes_a_formula() -> None:
    answer = documents.score_document({**E1, "round_id": '=HYPERLINK("http://x")'})
    rows = spreadsheet.ledger_rows(answer).decode().splitlines()
    assert all(row.startswith("\"'=HYPERLINK(") for row in rows)


@pytest.mark.parametrize("language", ["en", "vi"])
def test_no_text_cell_of_a_csv_starts_a_formula_whatever_the_column(language: str) -> None:
    """Before: the explanation column was never escaped: a house rule's label ``=HYPERLINK(…)`` began
    its cell, and so did a player id starting with ``-``."""
    import csv
    import io

    labels = {"back": '=HYPERLINK("http://x","x")', "middle": "+1+1", "front": "@SUM(A1)"}
    room = {**E1, "round_id": "\t=cmd", "ruleset": {"base": "maubinh-2020", "patch": {"labels": labels}}}
    room["players"] = [{**player, "id": new} for player, new in zip(E1["players"], ("-P", "-Q"), strict=True)]
    status, answer = documents.answer(documents.score_document, json.dumps(room).encode(), language=language)
    assert status == 200
    text = spreadsheet.ledger_rows(answer).decode()
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == len(answer["ledger"]) >= 4
    starts = tuple(spreadsheet.FORMULA_STARTS)
    cells = [cell for row in rows for column, cell in enumerate(row) if column not in (1, 6, 7)]  # seq, units, amount
    assert not [cell for cell in cells if cell.startswith(starts)]
    if language == "vi":  # the Vietnamese explanation opens with the house's own name for the chi
        assert any(row[9].startswith("'" + labels["back"] + " (5 lá):") for row in rows)  # a label with no number
    for line in text.splitlines():  # every text cell quoted: a ';' splitting it cannot start one either
        assert line.startswith('"') and ',"' in line


def test_an_unknown_patch_key_is_one_fault_not_a_dump_of_the_ruleset(client: FlaskClient) -> None:
    """The root's maxProperties (14) would also refuse the merged document, quoting it whole."""
    answer = client.post("/v1/score", json={**E1, "ruleset": {"base": "maubinh-2020", "patch": {"foo": 1}}})
    assert problems(answer) == {("/ruleset/patch/foo", "unknown_field")}


@pytest.mark.parametrize(
    ("patch", "pointer", "message"),
    [
        ({"scoop": {"multiplier": "2"}}, "/ruleset/patch/scoop/multiplier", 'scoop.multiplier: "2" must be an integer'),
        ({"wheel": True}, "/ruleset/patch/wheel", 'wheel: true is not one of the values allowed: "second", "lowest"'),
        (
            {"scoop": {"multiplier": 10**300}},
            "/ruleset/patch/scoop/multiplier",
            "scoop.multiplier: " + "1" + "0" * 78 + "… is more than the maximum, 100",
        ),
    ],
    ids=["type", "enum", "long value"],
)
def test_a_patch_fault_is_in_our_words_and_keeps_its_reason(
    client: FlaskClient, patch: dict[str, Any], pointer: str, message: str
) -> None:
    """Before: jsonschema's English (``True is not one of ['second', 'lowest']``), cut at 200 characters
    after the value it echoed, so that a long value lost the reason."""
    answer = client.post("/v1/score", json={**E1, "ruleset": {"base": "maubinh-2020", "patch": patch}})
    assert answer.status_code == 422
    assert [(f["pointer"], f["message"]) for f in answer.get_json()["errors"]] == [(pointer, message)]


def test_a_number_whose_fraction_reading_would_lose_is_refused(client: FlaskClient) -> None:
    """Before: ``10.000000000000000001`` read as the float 10.0 and passed for the stake 10, and a claimed
    4503599627370497.5 for 4503599627370498."""
    unstaked = json.dumps({k: v for k, v in E1.items() if k != "stake"})[:-1]
    body = unstaked + ', "stake": 10.000000000000000001}'
    answer = client.post("/v1/score", data=body, content_type="application/json")
    assert answer.status_code == 400
    assert answer.get_json()["detail"] == (
        "the number 10.000000000000000001 has more digits than it can be read with: it would pass for 10, at /stake"
    )
    exact = unstaked + ', "stake": 1.0e3}'
    assert client.post("/v1/score", data=exact, content_type="application/json").get_json()["stake"] == 1000
