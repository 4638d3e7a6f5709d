"""Writes tests/receipts/vectors.json: a request, its canonical form and room digest, the answer, its
content digest, signature base and signature, under the test-only key tests/receipts/test-vector-key.pem
with a fixed `created`, so that another implementation can check its own against them (Ed25519
signatures are deterministic). Run after changing what an answer holds; a test checks the file is this
script's output."""

import datetime
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.trust.signing import COVERED, LABEL, ROUTE, TAG, Signer, load_private_key, room_digest  # noqa: E402

TARGET = ROOT / "tests" / "receipts" / "vectors.json"
KEY = ROOT / "tests" / "receipts" / "test-vector-key.pem"
CREATED = int(datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC).timestamp())


def vectors() -> str:
    import rfc8785

    from service.documents import score_document
    from service.serialize import dumps

    request = {
        "round_id": "vector-1",
        "ruleset": "maubinh-2020@3",
        "stake": 1000,
        "players": [
            {"id": "P", "back": ["AS", "AD", "7C", "7D", "2H"], "middle": ["KS", "KH", "9H", "5D", "3S"],
             "front": ["QH", "JD", "4C"]},
            {"id": "Q", "back": ["9S", "9D", "9C", "4S", "4D"], "middle": ["8S", "8H", "6C", "6D", "TS"],
             "front": ["AH", "3D", "2C"]},
        ],
    }  # fmt: skip
    answer = score_document(request)
    answer["room_digest"] = room_digest(request)
    body = dumps(answer)
    signer = Signer(load_private_key(str(KEY)), [])
    signed = signer.headers(200, "application/json", body, "/v1/score", created=CREATED)
    headers = {"content-type": "application/json"} | {name.lower(): value for name, value in signed.items()}
    params = headers["signature-input"].split("=", 1)[1]
    base = "\n".join(
        ['"@status": 200', '"content-type": application/json', f'"content-digest": {headers["content-digest"]}',
         f"{ROUTE}: /v1/score", f'"@signature-params": {params}']
    )  # fmt: skip
    document = {
        "about": "maubinh signed-answer test vectors (docs/receipts.md); the key is a test key, published nowhere",
        "key": {"private_pem": KEY.read_text(), "jwks": signer.jwks},
        "request": {"method": "POST", "path": "/v1/score", "body": json.dumps(request)},
        "canonical_request": rfc8785.dumps(request).decode(),
        "room_digest": answer["room_digest"],
        "response": {"status": 200, "headers": headers, "body": body.decode()},
        "signature_base": base,
        "covered": [*COVERED, ROUTE],
        "label": LABEL,
        "tag": TAG,
    }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


if __name__ == "__main__":
    TARGET.write_text(vectors(), "utf-8")
