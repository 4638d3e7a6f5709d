"""Receipts end to end against a real `maubinh serve` that signs: curl -i saves an answer, `maubinh
receipts make` turns it into a receipt, `maubinh receipts verify` checks it against the service's URL;
and an independent verifier (node:crypto only, tests/system/interop/verify_answer.mjs) agrees with the
service's signatures and with the shipped test vectors."""

from __future__ import annotations

import importlib.util
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import golden_cases, shell_lines
from server import start

ROOT = Path(__file__).resolve().parents[2]
MAUBINH = str(Path(sys.executable).with_name("maubinh"))
VERIFIER = ROOT / "tests" / "system" / "interop" / "verify_answer.mjs"
VECTORS = ROOT / "tests" / "receipts" / "vectors.json"
SERVICE = "http://127.0.0.1:8000"
E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]


def node(document: dict[str, object]) -> subprocess.CompletedProcess[str]:
    if shutil.which("node") is None:
        pytest.fail("the interop verifier needs node (make test needs it for the npm tools too)")
    return subprocess.run(
        ["node", str(VERIFIER)], input=json.dumps(document), capture_output=True, text=True, check=False
    )


def test_a_receipt_saved_with_curl_checks_against_the_service_s_url(tmp_path: Path) -> None:
    key = tmp_path / "signing.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(key)], check=True, capture_output=True)
    base, process = start({"MAUBINH_SIGNING_KEY_FILE": str(key)})
    try:
        (tmp_path / "room.json").write_text(json.dumps(E1))
        page = (ROOT / "docs" / "receipts.md").read_text("utf-8")
        lines = shell_lines(page.split("## Receipts\n", 1)[1].split("\n## ", 1)[0])
        assert len(lines) == 4  # curl -i, receipts make, receipts verify, POST /v1/verify: as the page writes them
        said = []
        for line in lines:
            done = subprocess.run(
                ["bash", "-c", line.replace(".venv/bin/maubinh", MAUBINH).replace(SERVICE, base)],
                cwd=tmp_path, capture_output=True, text=True, check=False,
            )  # fmt: skip
            assert done.returncode == 0, f"{line}\n{done.stderr}"
            said.append(done.stdout)
        assert "the rules applied again give the same ledger" in said[2]
        checked = json.loads(said[3])["receipt"]
        assert checked["verified"] and [c["outcome"] for c in checked["checks"]] == ["passed"] * 4
        made = (tmp_path / "receipt.json").read_text()
        receipt = json.loads(made)
        jwks = json.loads(
            subprocess.run(["curl", "-s", f"{base}/.well-known/jwks.json"], capture_output=True, check=True).stdout
        )
        response = receipt["response"]
        path = receipt["request"]["path"]
        agreed = node(
            {"status": response["status"], "headers": response["headers"], "body": response["body"], "jwks": jwks,
             "path": path}
        )  # fmt: skip
        assert agreed.returncode == 0 and agreed.stdout.startswith("ok "), agreed.stdout + agreed.stderr
        tampered = node({**response, "body": response["body"].replace("-9000", "-9001", 1), "jwks": jwks, "path": path})
        assert tampered.returncode == 1
        relabelled = node({**response, "jwks": jwks, "path": "/v1/verify"})  # the route is signed too
        assert relabelled.returncode == 1 and "does not verify" in relabelled.stdout
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)
    said = process.stderr.read().decode() if process.stderr else ""
    assert "answers are signed" in said


def test_the_test_vectors_are_their_script_s_output_and_an_independent_verifier_takes_them() -> None:
    spec = importlib.util.spec_from_file_location("receipt_vectors", ROOT / "scripts" / "receipt_vectors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert VECTORS.read_text("utf-8") == module.vectors(), "run scripts/receipt_vectors.py"
    vectors = json.loads(VECTORS.read_text("utf-8"))
    page = (ROOT / "docs" / "receipts.md").read_text("utf-8")
    shown = [vectors["canonical_request"], vectors["room_digest"], *vectors["response"]["headers"].values()]
    assert [value for value in shown if value not in page] == []  # docs/receipts.md shows the vectors too
    response = vectors["response"]
    agreed = node(
        {
            "status": response["status"],
            "headers": response["headers"],
            "body": response["body"],
            "jwks": vectors["key"]["jwks"],
            "path": vectors["request"]["path"],
        }
    )
    assert agreed.returncode == 0, agreed.stdout
