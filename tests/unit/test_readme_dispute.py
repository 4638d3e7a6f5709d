"""The README's dispute, worked in Vietnamese: the curl it shows gets the answer it shows. Every text of
its shortened answer is one the service says, so that a support desk matching them is not misled."""

import json
import re
from pathlib import Path

from service.api import create_app

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_the_readme_s_vietnamese_dispute_says_what_the_service_says() -> None:
    sent = re.search(r"curl -s http://127\.0\.0\.1:8000/v1/verify .*? -d '(\{.*?\})'\n", README, re.S)
    assert sent is not None
    shown = README[sent.end() : README.index("So the backend paid the three chi")]
    texts = [t for t in re.findall(r'"((?:[^"\\]|\\.)*)"', shown) if not t.isascii()]
    assert len(texts) >= 8  # the players' lines, the ledger's, the chi lines and the scoop line
    answer = (
        create_app({"log_requests": False})
        .test_client()
        .post("/v1/verify", json=json.loads(sent[1]), headers={"Accept-Language": "vi"})
    )
    said = json.dumps(answer.get_json(), ensure_ascii=False)
    assert answer.status_code == 200
    assert [t for t in texts if json.dumps(t, ensure_ascii=False) not in said] == []
