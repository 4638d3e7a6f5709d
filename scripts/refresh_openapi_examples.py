"""Rewrite the response examples in openapi.yaml from the service's real output.

An example is one line, `value: <JSON>`, after a `# example:<name>` marker: the answer to the
request example of the same operation and name. tests/test_api.py fails when one no longer
equals what the service answers, naming this script.
Run: .venv/bin/python scripts/refresh_openapi_examples.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from service.documents import score_document, verify_document

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {  # marker: (path, example name, operation)
    "score-e1": ("/v1/score", "E1", score_document),
    "score-house-rules": ("/v1/score", "house-rules", score_document),
    "verify-missing-scoop": ("/v1/verify", "missing-scoop", verify_document),
}


def refresh(text: str) -> str:
    spec = yaml.safe_load(text)
    for marker, (path, name, operation) in EXAMPLES.items():
        request = spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]["examples"][name]["value"]
        answer = json.dumps(operation(request), ensure_ascii=False)
        pattern = re.compile(rf"(# example:{marker}\n\s*value: ).*\n")
        if not pattern.search(text):
            raise SystemExit(f"no '# example:{marker}' marker in openapi.yaml")
        text = pattern.sub(lambda found, answer=answer: found.group(1) + answer + "\n", text)
    return text


if __name__ == "__main__":
    target = ROOT / "openapi.yaml"
    target.write_text(refresh(target.read_text("utf-8")), "utf-8")
    print("openapi.yaml examples refreshed")
