"""The key set a receipt is checked with (issue 52, second round): a key is known by its RFC 7638
thumbprint, never by the ``kid`` it states, and one unusable key is skipped, named, without costing
the others."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import golden_cases

from service.api import create_app
from service.cli import main
from service.trust import receipts
from service.trust.signing import Signer, load_private_key, room_digest

E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]


def key(path: Path) -> Path:
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(path)], check=True, capture_output=True)
    return path


def receipt_of(signer: Signer, body: bytes, answer: bytes, path: str = "/v1/score") -> dict[str, Any]:
    headers = {"content-type": "application/json"} | {
        name.lower(): value for name, value in signer.headers(200, "application/json", answer, path).items()
    }
    return {
        "receipt": 1,
        "request": {"method": "POST", "path": path, "body": body.decode()},
        "response": {"status": 200, "headers": headers, "body": answer.decode()},
    }


def genuine(tmp_path: Path) -> tuple[Signer, dict[str, Any]]:
    """The service's signer, and a receipt of E1 as the service signed it."""
    service_key = key(tmp_path / "service.pem")
    app = create_app({"log_requests": False, "signing_key_file": str(service_key)})
    answer = app.test_client().post("/v1/score", json=E1)
    signer = app.extensions["maubinh.signer"]
    return signer, receipt_of(signer, json.dumps(E1).encode(), answer.get_data())


FORGED_ROOM = {**E1, "stake": 1_000_000}
"""A round the service never scored: E1 at a thousand times its stake."""


def forged(tmp_path: Path, service_kid: str) -> tuple[dict[str, Any], dict[str, str]]:
    """What an attacker makes: a true answer to a room the service never scored, signed with the
    attacker's own key under the service's key id, and the attacker's public key under that id. Every
    other check holds: only the key set can tell."""
    attacker = Signer(load_private_key(str(key(tmp_path / "attacker.pem"))), [])
    attacker.key_id = service_kid  # the service's kid in Signature-Input
    answer = create_app({"log_requests": False}).test_client().post("/v1/score", json=FORGED_ROOM).get_json()
    answer["room_digest"] = room_digest(FORGED_ROOM)
    made = receipt_of(attacker, json.dumps(FORGED_ROOM).encode(), json.dumps(answer).encode())
    return made, {**attacker.jwks["keys"][0], "kid": service_kid}


def checked(made: dict[str, Any], jwks: Any) -> receipts.Checked:
    return receipts.check(made, jwks, lambda path, request, answer: True)


def test_a_key_published_under_another_key_s_kid_verifies_nothing(tmp_path: Path) -> None:
    """Before: the attacker's key, listed under the service's kid, verified the forged receipt, and the
    verdict said it was signed by the service's key."""
    signer, _ = genuine(tmp_path)
    made, impostor = forged(tmp_path, signer.key_id)
    for keys in ([impostor], [signer.jwks["keys"][0], impostor], [impostor, signer.jwks["keys"][0]]):
        with pytest.raises(receipts.ReceiptFault) as refused:
            checked(made, {"keys": keys})
        assert refused.value.check == "signature"


def test_the_cli_refuses_the_forged_receipt_and_names_the_impostor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    signer, _ = genuine(tmp_path)
    made, impostor = forged(tmp_path, signer.key_id)
    (tmp_path / "forged.json").write_text(json.dumps(made))
    (tmp_path / "keys.json").write_text(json.dumps({"keys": [signer.jwks["keys"][0], impostor]}))
    assert main(["receipts", "verify", str(tmp_path / "forged.json"), "--keys", str(tmp_path / "keys.json")]) == 1
    said = capsys.readouterr()
    assert said.out == ""  # before: "verified: signed by <the service's kid>, …, the same ledger"
    assert "keys[1]" in said.err and "thumbprint" in said.err
    assert "not verified: signature" in said.err


def test_a_key_is_matched_by_its_thumbprint_with_or_without_a_kid(tmp_path: Path) -> None:
    signer, made = genuine(tmp_path)
    published = signer.jwks["keys"][0]
    expected = base64.urlsafe_b64encode(
        hashlib.sha256(('{"crv":"Ed25519","kty":"OKP","x":"' + published["x"] + '"}').encode()).digest()
    ).rstrip(b"=")
    assert published["kid"] == expected.decode()  # RFC 7638 §3.2, by hand
    bare = {k: v for k, v in published.items() if k != "kid"}
    assert checked(made, {"keys": [bare]}).key_id == published["kid"]
    assert checked(made, {"keys": [published]}).key_id == published["kid"]


UNUSABLE = {
    "an RSA key": {"kty": "RSA", "kid": "rsa-1", "n": "sXch", "e": "AQAB"},
    "an X25519 key": {"kty": "OKP", "crv": "X25519", "kid": "x-1", "x": "hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"},
    "x not base64url": {"kty": "OKP", "crv": "Ed25519", "kid": "bad-x", "x": "!!!"},
    "x too short": {"kty": "OKP", "crv": "Ed25519", "kid": "short-x", "x": "AAAA"},
    "no x": {"kty": "OKP", "crv": "Ed25519", "kid": "no-x"},
    "not an object": "ed25519",
    "x not text": {"kty": "OKP", "crv": "Ed25519", "kid": "num-x", "x": 7},
}


@pytest.mark.parametrize("unusable", list(UNUSABLE))
def test_one_unusable_key_is_skipped_and_named_and_the_others_still_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unusable: str
) -> None:
    """Before: one such key made every receipt fail ("the key set is not a set of Ed25519 keys")."""
    signer, made = genuine(tmp_path)
    keys = {"keys": [UNUSABLE[unusable], signer.jwks["keys"][0]]}
    assert checked(made, keys).key_id == signer.key_id
    (tmp_path / "receipt.json").write_text(json.dumps(made))
    (tmp_path / "keys.json").write_text(json.dumps(keys))
    assert main(["receipts", "verify", str(tmp_path / "receipt.json"), "--keys", str(tmp_path / "keys.json")]) == 0
    said = capsys.readouterr()
    assert said.out.startswith(f"verified: signed by {signer.key_id}")
    warning = [line for line in said.err.splitlines() if "keys[0]" in line]
    assert len(warning) == 1 and "skipped" in warning[0]
    kid = UNUSABLE[unusable].get("kid") if isinstance(UNUSABLE[unusable], dict) else None  # type: ignore[union-attr]
    assert kid is None or kid in warning[0]


def test_the_warning_is_in_vietnamese_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    signer, made = genuine(tmp_path)
    (tmp_path / "receipt.json").write_text(json.dumps(made))
    (tmp_path / "keys.json").write_text(json.dumps({"keys": [UNUSABLE["an RSA key"], signer.jwks["keys"][0]]}))
    argv = ["receipts", "verify", str(tmp_path / "receipt.json"), "--keys", str(tmp_path / "keys.json"), "--lang", "vi"]
    assert main(argv) == 0
    said = capsys.readouterr()
    assert "keys[0]" in said.err and "bỏ qua" in said.err and said.out.startswith("đã xác minh")


def test_a_key_set_of_unusable_keys_only_verifies_nothing(tmp_path: Path) -> None:
    _, made = genuine(tmp_path)
    with pytest.raises(receipts.ReceiptFault) as refused:
        checked(made, {"keys": [UNUSABLE["an RSA key"]]})
    assert (refused.value.check, refused.value.why.key) == ("signature", "receipts.why_unknown_key")


def test_the_thumbprint_is_rfc_8037_s_own_vector() -> None:
    """RFC 8037 appendix A.3: the Ed25519 key of A.2 has the RFC 7638 thumbprint below."""
    from service.trust.signing import KeySet, thumbprint

    x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
    assert thumbprint("Ed25519", "OKP", x) == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    read = KeySet.read({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "not-its-thumbprint"}]})
    assert read.keys == {} and "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k" in read.skipped[0]


IDENTITY = base64.urlsafe_b64encode(bytes([1]) + bytes(31)).rstrip(b"=").decode()
"""The curve's neutral point as a public key (small order): under it, the signature R = that point, S = 0
satisfies OpenSSL's check of any message, so anyone can sign for it."""


def identity_forgery(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A genuine receipt re-signed for the neutral point (its parameters reordered, so that no fast path
    reads it), and that key as a set publishes it."""
    from service.trust.signing import LABEL, TAG, thumbprint

    _, made = genuine(tmp_path)
    kid = thumbprint("Ed25519", "OKP", IDENTITY)
    headers = made["response"]["headers"]
    created = headers["signature-input"].split("created=")[1].split(";")[0]
    covered = headers["signature-input"].split("=", 1)[1].split(")")[0] + ")"
    headers["signature-input"] = f'{LABEL}={covered};keyid="{kid}";created={created};alg="ed25519";tag="{TAG}"'
    headers["signature"] = f"{LABEL}=:" + base64.b64encode(bytes([1]) + bytes(63)).decode() + ":"
    return made, {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": IDENTITY}]}


def test_a_small_order_key_is_skipped_and_its_forgery_verifies_nowhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: such a key was published and used, and OpenSSL (the library's path, which a reordered
    Signature-Input took) verified a signature made with no private key; libsodium, the fast path's,
    refused it, so the verdict depended on the path."""
    from service.trust.signing import KeySet

    made, keys = identity_forgery(tmp_path)
    read = KeySet.read(keys)
    assert read.keys == {} and "small order" in read.skipped[0].render("en")
    with pytest.raises(receipts.ReceiptFault) as refused:
        checked(made, keys)
    assert refused.value.check == "signature"
    (tmp_path / "forged.json").write_text(json.dumps(made))
    (tmp_path / "keys.json").write_text(json.dumps(keys))
    for form in ("text", "jsonl"):
        argv = ["receipts", "verify", str(tmp_path / "forged.json"), "--keys", str(tmp_path / "keys.json")]
        assert main([*argv, "--format", form]) == 1
    assert "verified: signed" not in capsys.readouterr().out


def test_the_library_s_path_gives_libsodium_s_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the key let through, the signature is still checked by libsodium, the signer's library."""
    from service.trust import signing

    monkeypatch.setattr(signing, "crypto_core_ed25519_is_valid_point", lambda raw: True)
    made, keys = identity_forgery(tmp_path)
    assert list(signing.KeySet.read(keys).keys)  # the weak key taken: only the signature check is left
    with pytest.raises(receipts.ReceiptFault) as refused:
        checked(made, keys)
    assert (refused.value.check, refused.value.why.key) == ("signature", "receipts.why_bad_signature")
