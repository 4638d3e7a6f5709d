"""A receipt binds the route its request was sent to (issue 52, second round): the signature covers the
request's ``@path`` (RFC 9421 §2.4, ``"@path";req``), so a receipt of ``/v1/score`` relabelled
``/v1/verify`` (or back) fails. A receipt signed before routes were bound still verifies, reported as
unbound, and its answer must have the shape of the route it names."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from helpers import golden_cases

from service.api import create_app
from service.cli import main
from service.rulesets.catalogue import builtin_catalogue
from service.trust import receipts, rescoring
from service.trust.signing import load_private_key

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
CLAIM = {**E1, "claimed": {"amounts": {"P": -9000, "Q": 9000}}}


def key(path: Path) -> Path:
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(path)], check=True, capture_output=True)
    return path


@pytest.fixture
def pem(tmp_path: Path) -> Path:
    return key(tmp_path / "k.pem")


@pytest.fixture
def signed(pem: Path) -> FlaskClient:
    return create_app({"log_requests": False, "signing_key_file": str(pem)}).test_client()


def receipt(client: FlaskClient, path: str, body: Any) -> dict[str, Any]:
    raw = json.dumps(body).encode()
    answer = client.post(path, data=raw, content_type="application/json")
    saved = f"HTTP/1.1 {answer.status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in answer.headers.items()) + "\r\n"
    return receipts.from_exchange("POST", path, raw, saved.encode() + answer.get_data())


def relabelled(made: dict[str, Any], path: str) -> dict[str, Any]:
    moved = copy.deepcopy(made)
    moved["request"]["path"] = path
    return moved


def checked(made: dict[str, Any], jwks: Any) -> receipts.Checked:
    return receipts.check(made, jwks, rescoring.rescorer(builtin_catalogue()))


def signed_before_routes_were_bound(pem: Path, made: dict[str, Any]) -> dict[str, Any]:
    """The receipt as a service of before this change signed it: the status, the content type and the
    content digest, no route (the signature base written out as that service wrote it)."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    from service.trust.signing import public_jwk

    private = load_private_key(str(pem))
    kid = public_jwk(private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))["kid"]
    headers = dict(made["response"]["headers"])
    params = (
        f'("@status" "content-type" "content-digest");created=1796083200;keyid="{kid}";alg="ed25519";'
        'tag="maubinh-answer"'
    )
    base = (
        f'"@status": {made["response"]["status"]}\n"content-type": {headers["content-type"]}\n'
        f'"content-digest": {headers["content-digest"]}\n"@signature-params": {params}'
    )
    signature = base64.b64encode(private.sign(base.encode())).decode()
    headers.update({"signature-input": f"maubinh={params}", "signature": f"maubinh=:{signature}:"})
    return {**made, "response": {**made["response"], "headers": headers}}


def test_the_signature_covers_the_route(signed: FlaskClient) -> None:
    answer = signed.post("/v1/score", json=E1)
    assert '"@path";req' in answer.headers["Signature-Input"]
    made = receipt(signed, "/v1/score", E1)
    result = checked(made, signed.get("/.well-known/jwks.json").get_json())
    assert result.route_bound and result.rescored


@pytest.mark.parametrize(
    ("sent_to", "body", "relabelled_as"),
    [
        ("/v1/score", E1, "/v1/verify"),
        ("/v1/verify", CLAIM, "/v1/score"),
        ("/v1/score", {**E1, "stake": -1}, "/v1/verify"),
    ],
    ids=["score as verify", "verify as score", "a refusal of score as one of verify"],
)
def test_a_receipt_relabelled_to_another_route_fails_its_signature(
    signed: FlaskClient, sent_to: str, body: Any, relabelled_as: str
) -> None:
    """Before: a /v1/score receipt relabelled /v1/verify passed every check."""
    jwks = signed.get("/.well-known/jwks.json").get_json()
    made = receipt(signed, sent_to, body)
    answer = signed.post("/v1/verify", json=relabelled(made, relabelled_as)).get_json()["receipt"]
    assert not answer["verified"] and [c["outcome"] for c in answer["checks"]][:2] == ["passed", "failed"]
    with pytest.raises(receipts.ReceiptFault) as refused:
        checked(relabelled(made, relabelled_as), jwks)
    assert refused.value.check == "signature"
    assert checked(made, jwks).route_bound


def test_a_receipt_signed_before_routes_were_bound_verifies_and_says_it_is_unbound(
    signed: FlaskClient, pem: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jwks = signed.get("/.well-known/jwks.json").get_json()
    old = signed_before_routes_were_bound(pem, receipt(signed, "/v1/score", E1))
    result = checked(old, jwks)
    assert not result.route_bound and result.rescored
    answer = signed.post("/v1/verify", json=old).get_json()["receipt"]
    assert answer["verified"] and answer["route_bound"] is False
    assert "does not cover the route" in answer["message"]
    assert signed.post("/v1/verify", json=receipt(signed, "/v1/score", E1)).get_json()["receipt"]["route_bound"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "keys.json").write_text(json.dumps(jwks))
    for language, said in (("en", "does not cover the route"), ("vi", "không bao gồm đường dẫn")):
        assert main(["receipts", "verify", str(tmp_path / "old.json"), "--keys", str(tmp_path / "keys.json"),
                     "--lang", language]) == 0  # fmt: skip
        assert said in capsys.readouterr().out


@pytest.mark.parametrize(
    ("sent_to", "body", "relabelled_as"),
    [("/v1/score", E1, "/v1/verify"), ("/v1/verify", CLAIM, "/v1/score")],
    ids=["score as verify", "verify as score"],
)
def test_an_unbound_receipt_relabelled_fails_on_its_answer_s_shape(
    signed: FlaskClient, pem: Path, sent_to: str, body: Any, relabelled_as: str
) -> None:
    """Before routes were bound, the answer's shape is what tells the routes apart: a score answer is
    not a verify answer, and the other way round."""
    jwks = signed.get("/.well-known/jwks.json").get_json()
    old = signed_before_routes_were_bound(pem, receipt(signed, sent_to, body))
    assert checked(old, jwks).rescored
    with pytest.raises(receipts.ReceiptFault) as refused:
        checked(relabelled(old, relabelled_as), jwks)
    assert (refused.value.check, refused.value.why.key) == ("room_digest", "receipts.why_answer_not_of_route")


def test_the_vectors_sign_the_route() -> None:
    vectors = json.loads((Path(__file__).resolve().parents[1] / "receipts" / "vectors.json").read_text("utf-8"))
    assert '"@path";req: /v1/score' in vectors["signature_base"].splitlines()
    made = {"receipt": 1, "request": vectors["request"], "response": vectors["response"]}
    assert checked(made, vectors["key"]["jwks"]).route_bound


BIG = int("9" * 400)
"""A stake past every double: the room has no canonical JSON, so no digest, and is refused unbound."""


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/v1/verify", {"receipt": 1, "request": {"method": "POST", "path": "/v1/score", "body": "{}"},
                        "response": {"status": 200, "headers": {}, "body": "{}"}}, 200),
        ("/v1/verify", {**E1, "claimed": {"amounts": {"P": -9000, "Q": 8999}}}, 422),
        ("/v1/score/batch", {"rooms": 5}, 422),
        ("/v1/score/batch", {"rooms": [E1], "extra": 1}, 422),
        ("/v1/score/batch", {"rooms": [E1] * 501}, 422),
        ("/v1/score/batch", {"rooms": [E1, {**E1, "stake": BIG}]}, 200),
        ("/v1/score", {**E1, "stake": BIG}, 422),
        ("/v1/verify", None, 422),
        ("/v1/verify", [1], 422),
        ("/v1/verify", {"receipt": 1, "request": {}, "response": {}, "x": BIG}, 422),
        ("/v1/verify", {"receipt": 1, "request": {"method": "POST", "path": "/v1/score", "body": "{}"},
                        "response": {"status": 200, "headers": {}, "body": "{}"}, "x": BIG}, 200),
    ],
    ids=["a receipt checked", "a claim refused", "rooms not a list", "a member more", "501 rooms",
         "a batch with a room past doubles", "a room past doubles", "a verify of null", "a verify of a list",
         "a receipt refused", "a receipt checked past doubles"],
)  # fmt: skip
def test_every_signed_answer_s_receipt_verifies(signed: FlaskClient, path: str, body: Any, status: int) -> None:
    """Found by an attack on the API: each of these genuine signed answers failed as if tampered with
    (its rules applied again to a receipt, to a refused claim's room alone, to a batch's refused envelope
    as rooms; a refused room without a digest as a room missing one)."""
    from service.trust.receipt_lines import ReceiptLines

    made = receipt(signed, path, body)
    assert made["response"]["status"] == status
    jwks = signed.get("/.well-known/jwks.json").get_json()
    checker = ReceiptLines(jwks, builtin_catalogue(), "en")
    line = json.dumps(made).encode()
    for record, _ in [checker(line), *checker.many([line])]:
        assert record["verified"], record["message"]


def test_a_batch_refused_for_a_member_under_a_larger_limit_verifies(pem: Path) -> None:
    """MAUBINH_MAX_BATCH_ROOMS is the operator's, and no receipt states it: 501 rooms and a member more,
    refused for the member under a limit of 1,000, is not taken for a batch too large."""
    from service.trust.receipt_lines import ReceiptLines

    client = create_app({"log_requests": False, "signing_key_file": str(pem), "max_batch_rooms": 1000}).test_client()
    made = receipt(client, "/v1/score/batch", {"rooms": [E1] * 501, "x": 1})
    assert made["response"]["status"] == 422 and "batch_too_large" not in made["response"]["body"]
    checker = ReceiptLines(client.get("/.well-known/jwks.json").get_json(), builtin_catalogue(), "en")
    assert checker(json.dumps(made).encode())[0]["verified"]


def test_a_whole_request_refused_is_checked_again_as_refused() -> None:
    """A verify's claim or a batch's envelope refused: the same faults again, or the ruling differs."""
    rescore = rescoring.rescorer(builtin_catalogue())
    unbalanced = {"errors": [{"pointer": "/claimed/amounts", "code": "claim_not_zero_sum"}]}
    assert rescore("/v1/verify", {**E1, "claimed": {"amounts": {"P": -9000, "Q": 8999}}}, unbalanced) is True
    assert rescore("/v1/verify", CLAIM, unbalanced) is False
    not_a_list = {"errors": [{"pointer": "/rooms", "code": "wrong_type"}]}
    assert rescore("/v1/score/batch", {"rooms": 5}, not_a_list) is True
    assert rescore("/v1/score/batch", {"rooms": [E1]}, not_a_list) is False
    too_many = {"errors": [{"pointer": "/rooms", "code": "batch_too_large"}]}
    assert rescore("/v1/score/batch", {"rooms": [E1] * 3}, too_many) is True  # the operator's limit: below 3
    assert rescore("/v1/score/batch", {"rooms": [E1]}, too_many) is False  # one room is never too many
    its_round = {"errors": [{"pointer": "/rooms/0/round_id", "code": "round_already_scored"}]}
    assert rescore("/v1/score/batch", {"rooms": [{**E1, "round_id": "r"}]}, its_round) is None  # the record's


def test_a_receipt_of_a_receipt_check_says_it_holds_no_room(signed: FlaskClient) -> None:
    checked = receipt(signed, "/v1/verify", {"receipt": 1, "request": {"method": "POST", "path": "/v1/score",
                      "body": "{}"}, "response": {"status": 200, "headers": {}, "body": "{}"}})  # fmt: skip
    answer = signed.post("/v1/verify", json=checked).get_json()["receipt"]
    assert answer["verified"] and not answer["rescored"]
    assert answer["checks"][-1] == {
        "check": "rescore", "outcome": "not_known",
        "message": "the rules were not applied again: the answer checked a receipt, which holds no room",
    }  # fmt: skip
    assert "answered a receipt sent to be checked" in answer["message"]
