"""Signed answers and receipts (service/trust/signing.py, service/trust/receipts.py), in process; the interop check
with an independent verifier is tests/system/test_receipts_interop.py."""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from helpers import golden_cases
from werkzeug.test import TestResponse

from service.api import create_app
from service.rulesets.catalogue import builtin_catalogue
from service.trust import receipts, rescoring

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]


def key(path: Path) -> Path:
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(path)], check=True, capture_output=True)
    return path


@pytest.fixture
def signed(tmp_path: Path) -> FlaskClient:
    return create_app({"log_requests": False, "signing_key_file": str(key(tmp_path / "k.pem"))}).test_client()


def receipt(client: FlaskClient, path: str, body: Any) -> dict[str, Any]:
    raw = json.dumps(body).encode()
    return receipt_of(path, raw, client.post(path, data=raw, content_type="application/json"))


def receipt_of(path: str, raw: bytes, answer: TestResponse) -> dict[str, Any]:
    saved = f"HTTP/1.1 {answer.status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in answer.headers.items()) + "\r\n"
    return receipts.from_exchange("POST", path, raw, saved.encode() + answer.get_data())


def checked(made: dict[str, Any], jwks: Any) -> receipts.Checked:
    return receipts.check(made, jwks, rescoring.rescorer(builtin_catalogue()))


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/score", E1),
        ("/v1/score", {**E1, "ruleset": "nope"}),
        ("/v1/score/batch", {"rooms": [E1, {**E1, "stake": 7}]}),
        ("/v1/verify", {**E1, "claimed": {"amounts": {"P": -3000, "Q": 3000}}}),
    ],
    ids=["score", "refused room", "batch", "verify"],
)
def test_a_signed_answer_makes_a_receipt_that_checks(signed: FlaskClient, path: str, body: Any) -> None:
    jwks = signed.get("/.well-known/jwks.json").get_json()
    made = receipt(signed, path, body)
    result = checked(made, jwks)
    assert result.key_id == jwks["keys"][0]["kid"] and result.rescored


def _tampered(made: dict[str, Any], change: Any) -> dict[str, Any]:
    copied = copy.deepcopy(made)
    change(copied)
    return copied


TAMPERS = {
    "a byte of the room": (lambda r: r["request"].update(body=r["request"]["body"].replace("1000", "1001", 1)), "room_digest"),
    "a byte of the answer": (lambda r: r["response"].update(body=r["response"]["body"].replace("-9000", "-9001", 1)), "content_digest"),
    "the status": (lambda r: r["response"].update(status=201), "signature"),
    "created": (lambda r: r["response"]["headers"].update({"signature-input": r["response"]["headers"]["signature-input"].replace(";created=1", ";created=2")}), "signature"),
    "no signature header": (lambda r: r["response"]["headers"].pop("signature"), "signature"),
    "no content digest": (lambda r: r["response"]["headers"].pop("content-digest"), "content_digest"),
}  # fmt: skip


@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_each_tamper_is_refused_naming_its_check(signed: FlaskClient, tamper: str) -> None:
    jwks = signed.get("/.well-known/jwks.json").get_json()
    change, check = TAMPERS[tamper]
    with pytest.raises(receipts.ReceiptFault) as refused:
        checked(_tampered(receipt(signed, "/v1/score", E1), change), jwks)
    assert refused.value.args[0] == check


def test_an_unknown_key_a_removed_key_and_a_moved_signature_are_refused(signed: FlaskClient, tmp_path: Path) -> None:
    jwks = signed.get("/.well-known/jwks.json").get_json()
    made = receipt(signed, "/v1/score", E1)
    for keys in (
        {"keys": []},
        create_app({"signing_key_file": str(key(tmp_path / "other.pem"))})
        .test_client()
        .get("/.well-known/jwks.json")
        .get_json(),
    ):
        with pytest.raises(receipts.ReceiptFault) as unknown:
            checked(made, keys)
        assert (unknown.value.check, unknown.value.why.key) == ("signature", "receipts.why_unknown_key")
    other = receipt(signed, "/v1/score", {**E1, "stake": 2000})
    moved = _tampered(
        other,
        lambda r: r["response"]["headers"].update(
            {k: made["response"]["headers"][k] for k in ("signature", "signature-input")}
        ),
    )
    with pytest.raises(receipts.ReceiptFault) as refused:
        checked(moved, jwks)
    assert (refused.value.check, refused.value.why.key) == ("signature", "receipts.why_bad_signature")


def test_without_a_key_answers_are_unsigned_and_state_no_room_digest(client: FlaskClient) -> None:
    answer = client.post("/v1/score", json=E1)
    assert not {"Signature", "Signature-Input", "Content-Digest"} & set(answer.headers.keys())
    assert "room_digest" not in answer.get_json()


def test_refusals_that_rule_on_no_room_are_not_signed(signed: FlaskClient) -> None:
    assert "Signature" not in signed.post("/v1/score", data=b"{", content_type="application/json").headers
    assert "Signature" not in signed.post("/v1/evaluate", json={"ruleset": "maubinh-2020"}).headers


def _contract(path: str) -> dict[str, Any]:
    import yaml

    spec = yaml.safe_load((Path(__file__).resolve().parents[2] / "openapi.yaml").read_text())
    schema = spec["paths"][path]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    return {"components": spec["components"], **schema}


def test_verify_checks_a_receipt_in_place_of_a_claim_and_says_each_check(signed: FlaskClient) -> None:
    import jsonschema

    made = receipt(signed, "/v1/score", E1)
    answer = signed.post("/v1/verify", json=made, headers={"Accept-Language": "vi"})
    checked_here = answer.get_json()["receipt"]
    assert answer.status_code == 200 and "Signature" in answer.headers
    assert [(c["check"], c["outcome"]) for c in checked_here["checks"]] == [
        ("content_digest", "passed"), ("signature", "passed"), ("room_digest", "passed"), ("rescore", "passed")
    ]  # fmt: skip
    assert checked_here["verified"] and checked_here["rescored"]
    assert checked_here["key_id"] == signed.get("/.well-known/jwks.json").get_json()["keys"][0]["kid"]
    assert checked_here["message"].startswith("đã xác minh: ký bởi ")
    jsonschema.validate(answer.get_json(), _contract("/v1/verify"))

    moved = _tampered(made, lambda r: r["request"].update(body=r["request"]["body"].replace("1000", "1001", 1)))
    refused = signed.post("/v1/verify", json=moved).get_json()
    assert [(c["check"], c["outcome"]) for c in refused["receipt"]["checks"]] == [
        ("content_digest", "passed"), ("signature", "passed"), ("room_digest", "failed"), ("rescore", "not_run")
    ]  # fmt: skip
    assert not refused["receipt"]["verified"] and refused["receipt"]["key_id"] is None
    assert refused["receipt"]["message"] == (
        "not verified: room digest: result 0's room_digest is not the digest of the request's room"
    )
    jsonschema.validate(refused, _contract("/v1/verify"))

    huge = _tampered(
        made, lambda r: r["request"].update(body=r["request"]["body"].replace("{", '{"x":1' + "0" * 400 + ",", 1))
    )
    undigested = signed.post("/v1/verify", json=huge)  # a number no double holds has no canonical form, so no digest
    assert undigested.status_code == 200
    assert [c["outcome"] for c in undigested.get_json()["receipt"]["checks"]] == [
        "passed",
        "passed",
        "failed",
        "not_run",
    ]


def test_a_receipt_of_an_unknown_ruleset_verifies_without_the_rules_applied_again(tmp_path: Path) -> None:
    house = tmp_path / "rulesets"
    (house / "club-x").mkdir(parents=True)
    patch = {"id": "club-x", "title": "Club X", "scoop": {"multiplier": 3}}
    (house / "club-x" / "1.json").write_text(json.dumps({"base": "maubinh-2020@3", "patch": patch}))
    key_file = str(key(tmp_path / "k.pem"))
    serving = create_app({"log_requests": False, "signing_key_file": key_file, "rulesets_dir": str(house)})
    made = receipt(serving.test_client(), "/v1/score", {**E1, "ruleset": "club-x@1"})
    elsewhere = create_app({"log_requests": False, "signing_key_file": key_file}).test_client()
    rows = elsewhere.post("/v1/verify", json=made).get_json()["receipt"]
    assert rows["verified"] and not rows["rescored"]
    assert rows["checks"][-1]["outcome"] == "not_known"
    assert (
        rows["checks"][-1]["message"] == "the rules were not applied again: the answer's ruleset is not known here, "
        "or it refused a room for its round (the service's record of rounds, not a rule)"
    )
    # the same service, to a caller whose key may not use club-x: "not known" says it may be "not yours"
    callers = tmp_path / "callers.toml"
    callers.write_text(f'[callers.a]\nkeys = [{{ sha256 = "{hashlib.sha256(b"mbk_a-key").hexdigest()}" }}]\n')
    config = {"log_requests": False, "signing_key_file": key_file, "rulesets_dir": str(house)}
    limited = create_app({**config, "callers_file": str(callers)}).test_client()
    rows = limited.post("/v1/verify", json=made, headers={"Authorization": "Bearer mbk_a-key"}).get_json()["receipt"]
    assert rows["checks"][-1]["outcome"] == "not_known"
    assert "not among the operator rulesets your key may use" in rows["checks"][-1]["message"]


@pytest.mark.parametrize(
    ("change", "pointer", "code"),
    [
        (lambda r: r["response"].pop("headers"), "/response/headers", "required"),
        (lambda r: r.update(receipt=2), "/receipt", "not_one_of"),
        (lambda r: r["request"].update(path="/v1/score/batch"), "/request/path", "not_one_of"),
        (lambda r: r["response"].update(status="200"), "/response/status", "wrong_type"),
        (lambda r: r["request"].update(body={"a": 1}), "/request/body", "wrong_type"),
        (lambda r: r.update(receipt=True), "/receipt", "not_one_of"),
        (lambda r: r["response"]["headers"].update({"x-extra": {}}), "/response/headers/x-extra", "wrong_type"),
        (lambda r: r["request"].update(method="GET"), "/request/method", "not_one_of"),
    ],
    ids=[
        "no headers",
        "version 2",
        "a batch",
        "status as text",
        "body as an object",
        "version true",
        "a header not text",
        "GET",
    ],
)
def test_a_receipt_of_the_wrong_shape_is_refused_pointing_at_the_member(
    signed: FlaskClient, change: Any, pointer: str, code: str
) -> None:
    answer = signed.post("/v1/verify", json=_tampered(receipt(signed, "/v1/score", E1), change))
    assert answer.status_code == 422
    assert [(f["pointer"], f["code"]) for f in answer.get_json()["errors"]] == [(pointer, code)]


def test_a_receipt_signed_by_a_key_the_service_does_not_publish_is_not_verified(
    signed: FlaskClient, tmp_path: Path
) -> None:
    other = create_app({"log_requests": False, "signing_key_file": str(key(tmp_path / "o.pem"))}).test_client()
    checked_here = signed.post("/v1/verify", json=receipt(other, "/v1/score", E1)).get_json()["receipt"]
    failed = [c for c in checked_here["checks"] if c["outcome"] == "failed"]
    assert [c["check"] for c in failed] == ["signature"] and "no published key has the id" in failed[0]["message"]


def test_a_number_too_large_for_any_float_is_refused_as_unreadable(signed: FlaskClient) -> None:
    answer = signed.post("/v1/score", data=b'{"stake": 1e400}', content_type="application/json")
    assert answer.status_code == 400 and "Signature" not in answer.headers
    assert "the number 1e400 is too large to read" in answer.get_json()["detail"]


def test_a_refused_room_with_a_number_past_2_to_the_53_is_signed_and_bound(signed: FlaskClient) -> None:
    """JCS writes such a number as ECMAScript's nearest double; the refusal still binds the room."""
    import rfc8785

    answer = signed.post("/v1/score", json={**E1, "stake": 2**60 + 1})
    assert answer.status_code == 422
    as_double = rfc8785.dumps({**E1, "stake": float(2**60 + 1)})
    assert answer.get_json()["room_digest"] == "sha256:" + hashlib.sha256(as_double).hexdigest()


@pytest.mark.parametrize("leaf", ["1.5", str(2**60), '{"\\ud83d\\ude00": 1, "\\ue000": 2}'])
def test_a_room_nested_as_deep_as_the_reader_allows_is_refused_signed_not_failed(
    signed: FlaskClient, leaf: str
) -> None:
    """The canonical form of any document the strict reader takes: deep, with fractions, past 2^53."""
    jwks = signed.get("/.well-known/jwks.json").get_json()
    for depth in (400, 900, 985):  # up to where the reader itself refuses (400, unsigned)
        room = '{"ruleset": "maubinh-2020", "x": ' + "[" * depth + leaf + "]" * depth + "}"
        batch_body = '{"rooms": [' + room + "]}"
        single = signed.post("/v1/score", data=room, content_type="application/json")
        batch = signed.post("/v1/score/batch", data=batch_body, content_type="application/json")
        assert single.status_code in ((422,) if depth == 400 else (422, 400))
        assert batch.status_code in ((200,) if depth == 400 else (200, 400))
        for path, raw, answer in (("/v1/score", room, single), ("/v1/score/batch", batch_body, batch)):
            if answer.status_code == 400:  # the reader's own refusal rules on no room: unsigned
                assert "Signature" not in answer.headers
                continue
            assert {"Signature", "Signature-Input", "Content-Digest"} <= set(answer.headers.keys())
            assert checked(receipt_of(path, raw.encode(), answer), jwks).key_id == jwks["keys"][0]["kid"]
        assert single.status_code == 400 or single.get_json()["room_digest"].startswith("sha256:")


@pytest.mark.parametrize(
    ("saved", "why"),
    [
        (b"HTTP/1.1 401 UNAUTHORIZED\r\ncontent-type: application/problem+json\r\n\r\n{}", "receipts.why_unauthorized"),
        (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{}", "receipts.why_unsigned"),
    ],
)
def test_an_unsigned_answer_makes_no_receipt(saved: bytes, why: str) -> None:
    """`receipts make` wrote a receipt from a 401 (docs' frictions): it proves nothing, and now says why."""
    with pytest.raises(receipts.ReceiptFault) as refused:
        receipts.from_exchange("POST", "/v1/score", json.dumps(E1).encode(), saved)
    assert (refused.value.check, refused.value.why.key) == ("shape", why)
    if why == "receipts.why_unauthorized":
        assert "Authorization: Bearer $KEY" in refused.value.why


def test_a_room_holding_a_number_past_every_double_is_refused_unbound(signed: FlaskClient) -> None:
    """Such a room has no canonical form (RFC 8785), so no digest: refused (an unknown member), its refusal
    signed without one, alone or in a batch, where the other rooms keep theirs."""
    huge = json.dumps(E1).replace("{", '{"x":1' + "0" * 400 + ",", 1)
    alone = signed.post("/v1/score", data=huge, content_type="application/json")
    assert alone.status_code == 422 and "room_digest" not in alone.get_json() and "Signature" in alone.headers
    batch = '{"rooms":[' + huge + "," + json.dumps(E1) + "]}"
    results = signed.post("/v1/score/batch", data=batch, content_type="application/json").get_json()["results"]
    assert "room_digest" not in results[0] and results[0]["errors"] and results[1]["room_digest"].startswith("sha256:")
