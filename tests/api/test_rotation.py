"""A signing key rotated as docs/receipts.md says (issue 52, second round): publish first, sign later.

Pods are apps in process, each with the settings a step of the procedure gives it; a rolling update is
old and new pods side by side. Before, the procedure signed with the new key in the rollout that first
published it: the old pods refused the new pods' receipts (and so did every key set fetched before,
for as long as it was cached)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from helpers import golden_cases

from service.api import create_app
from service.cli import main
from service.rulesets.catalogue import builtin_catalogue
from service.trust import receipts, rescoring

ROOT = Path(__file__).resolve().parents[2]
E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
SERVICE = "https://maubinh.example"


def rotation_section() -> str:
    page = (ROOT / "docs" / "receipts.md").read_text("utf-8")
    return page.split("### Rotation in Kubernetes\n", 1)[1].split("\n## ", 1)[0]


def steps() -> list[str]:
    """The procedure's numbered steps, each with its lines."""
    return re.split(r"\n(?=\d\. )", rotation_section())[1:]


def pod(signing: Path, published: Path | None) -> Flask:
    settings: dict[str, Any] = {"log_requests": False, "signing_key_file": str(signing)}
    if published is not None:
        settings["published_keys_file"] = str(published)
    return create_app(settings)


def receipt_of(app: Flask) -> dict[str, Any]:
    raw = json.dumps(E1).encode()
    answer = app.test_client().post("/v1/score", data=raw, content_type="application/json")
    saved = f"HTTP/1.1 {answer.status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in answer.headers.items()) + "\r\n"
    return receipts.from_exchange("POST", "/v1/score", raw, saved.encode() + answer.get_data())


def key_set(app: Flask) -> Any:
    return app.test_client().get("/.well-known/jwks.json").get_json()


def takes(verifier: Flask | Any, made: dict[str, Any]) -> bool:
    """Whether a pod (its POST /v1/verify) or a key set a verifier holds takes the receipt."""
    if isinstance(verifier, Flask):
        return bool(verifier.test_client().post("/v1/verify", json=made).get_json()["receipt"]["verified"])
    try:
        receipts.check(made, verifier, rescoring.rescorer(builtin_catalogue()))
    except receipts.ReceiptFault:
        return False
    return True


def keyid(made: dict[str, Any]) -> str:
    found = re.search(r'keyid="([^"]+)"', made["response"]["headers"]["signature-input"])
    assert found is not None
    return found[1]


def genkey(path: Path) -> Path:
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(path)], check=True, capture_output=True)
    return path


def test_the_procedure_publishes_the_key_a_rollout_and_the_cache_s_age_before_it_signs() -> None:
    """The page's order and its wait, held to the service's Cache-Control."""
    cached = create_app({"log_requests": False}).test_client().get("/.well-known/jwks.json").headers["Cache-Control"]
    age = int(cached.rsplit("max-age=", 1)[1])
    publish, wait, sign = steps()
    assert "maubinh receipts publish new.pem" in publish and "signing.pem=new.pem" not in publish
    assert "rollout status" in publish
    assert f"Wait {age} seconds after `rollout status`" in wait
    assert "signing.pem=new.pem" in sign
    assert f"max-age`, {age} seconds" in " ".join(rotation_section().split())


def test_every_pod_and_every_key_set_takes_every_receipt_through_a_rotation_as_documented(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    current = genkey(tmp_path / "signing.pem")
    (tmp_path / "empty.json").write_text('{"keys": []}')
    before = pod(current, tmp_path / "empty.json")

    # step 1, as the page writes it: the served key set with the new key added, then a rollout
    genkey(tmp_path / "new.pem")
    (tmp_path / "served.json").write_text(json.dumps(key_set(before)))
    line = next(line.strip() for line in steps()[0].splitlines() if "maubinh receipts publish" in line)
    words = shlex.split(line.split(">", 1)[0])
    words = [
        str(tmp_path / "served.json") if w == SERVICE else str(tmp_path / w) if w == "new.pem" else w for w in words
    ]
    assert main(words[1:]) == 0
    said = capsys.readouterr()
    (tmp_path / "published.json").write_text(said.out)
    assert "300 s" in said.err
    publishing = pod(current, tmp_path / "published.json")
    # step 3: the new key signs, the same set published
    signing = pod(tmp_path / "new.pem", tmp_path / "published.json")

    old_receipt, new_receipt = receipt_of(before), receipt_of(signing)
    assert keyid(receipt_of(publishing)) == keyid(old_receipt) != keyid(new_receipt)  # step 1 still signs as before
    # the rollout of step 3: pods of step 1 and step 3 side by side, and the key sets fetched since step 1
    for verifier in (publishing, signing, key_set(publishing), key_set(signing)):
        assert takes(verifier, new_receipt) and takes(verifier, old_receipt)
    # the rollout of step 1 changes no signature: before and publishing sign alike and take each other's
    assert takes(before, receipt_of(publishing)) and takes(publishing, old_receipt)


def test_signing_in_the_rollout_that_publishes_is_what_the_procedure_avoids(tmp_path: Path) -> None:
    """The one-step rotation, for the record: an old pod, and a key set fetched before, refuse a new
    pod's receipt."""
    current = genkey(tmp_path / "signing.pem")
    before = pod(current, None)
    (tmp_path / "served.json").write_text(json.dumps(key_set(before)))
    at_once = pod(genkey(tmp_path / "new.pem"), tmp_path / "served.json")
    assert not takes(before, receipt_of(at_once)) and not takes(key_set(before), receipt_of(at_once))
