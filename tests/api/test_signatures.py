"""Signed answers and receipts (service/signing.py, service/receipts.py), in process; the interop check
with an independent verifier is tests/system/test_receipts_interop.py."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from helpers import golden_cases

from service import receipts
from service.api import create_app
from service.rulesets.catalogue import builtin_catalogue

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]


def key(path: Path) -> Path:
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(path)], check=True, capture_output=True)
    return path


@pytest.fixture
def signed(tmp_path: Path) -> FlaskClient:
    return create_app({"log_requests": False, "signing_key_file": str(key(tmp_path / "k.pem"))}).test_client()


def receipt(client: FlaskClient, path: str, body: Any) -> dict[str, Any]:
    raw = json.dumps(body).encode()
    answer = client.post(path, data=raw, content_type="application/json")
    saved = f"HTTP/1.1 {answer.status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in answer.headers.items()) + "\r\n"
    return receipts.from_exchange("POST", path, raw, saved.encode() + answer.get_data())


def checked(made: dict[str, Any], jwks: Any) -> receipts.Checked:
    return receipts.check(made, jwks, receipts.rescorer(builtin_catalogue()))


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
        assert (unknown.value.check, unknown.value.why.key) == ("signature", "receipts.why.unknown_key")
    other = receipt(signed, "/v1/score", {**E1, "stake": 2000})
    moved = _tampered(
        other,
        lambda r: r["response"]["headers"].update(
            {k: made["response"]["headers"][k] for k in ("signature", "signature-input")}
        ),
    )
    with pytest.raises(receipts.ReceiptFault) as refused:
        checked(moved, jwks)
    assert (refused.value.check, refused.value.why.key) == ("signature", "receipts.why.bad_signature")


def test_without_a_key_answers_are_unsigned_and_state_no_room_digest(client: FlaskClient) -> None:
    answer = client.post("/v1/score", json=E1)
    assert not {"Signature", "Signature-Input", "Content-Digest"} & set(answer.headers.keys())
    assert "room_digest" not in answer.get_json()


def test_refusals_that_rule_on_no_room_are_not_signed(signed: FlaskClient) -> None:
    assert "Signature" not in signed.post("/v1/score", data=b"{", content_type="application/json").headers
    assert "Signature" not in signed.post("/v1/evaluate", json={"ruleset": "maubinh-2020"}).headers
