"""Retake the docs' screenshots (the viewer's two, the audit report's), and note beside each of the viewer's
the digest of the texts it shows.

    .venv/bin/python scripts/screenshots.py

A screenshot shows texts that change (the phrasebook's words, an answer's explanations): each is
taken of a real `maubinh serve` in Debian's Chromium, and `docs/screenshots.json` keeps, for each, the
SHA-256 of the texts it was taken with. tests/unit/test_screenshots.py recomputes those digests from
the code as it is and fails, naming this script, when a picture is older than the texts it shows.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers import golden_cases  # noqa: E402

from service.documents import score_document, verify_document  # noqa: E402
from service.serialize import dumps  # noqa: E402
from service.texts import Language, phrasebook  # noqa: E402

DOCS = ROOT / "docs"
RECORD = DOCS / "screenshots.json"
E1 = next(c for c in golden_cases() if c["name"] == "worked-example/E1")["request"]
NO_SCOOP = {
    "amounts": {"P": -3000, "Q": 3000},
    "ledger": [{"payer": "P", "payee": "Q", "amount": 1000, "step": "chi"}] * 3,
}
"""The README's dispute: E1 settled without its sập."""


def shown_texts(language: Language, answer: dict[str, Any]) -> str:
    """What a viewer screenshot shows in words: the viewer's phrasebook in ``language`` and the answer
    it renders, as bytes are served; their digest changes when any word on the picture may."""
    viewer = {k: v for k, v in phrasebook(language).items() if k.startswith("viewer.")}
    text = json.dumps(viewer, ensure_ascii=False, sort_keys=True).encode() + dumps(answer, language)
    return "sha256:" + hashlib.sha256(text).hexdigest()


SHOTS: dict[str, tuple[Language, Callable[[], dict[str, Any]]]] = {
    "viewer.png": ("en", lambda: score_document(E1, None, "en")),
    "viewer-verify-vi.png": ("vi", lambda: verify_document({**E1, "claimed": NO_SCOOP}, None, "vi")),
}
"""Each screenshot of docs/: its language and the answer it shows."""


def digests() -> dict[str, str]:
    return {name: shown_texts(language, answer()) for name, (language, answer) in SHOTS.items()}


def _audit_report() -> Path:
    """docs/audits.md's report of the sample month (examples/audit/), written to a temporary folder."""
    import os
    import subprocess
    import tempfile

    where = Path(tempfile.mkdtemp(prefix="maubinh-report-"))
    env = {**os.environ, "MAUBINH_RULESETS_DIR": str(ROOT / "examples" / "audit" / "rulesets")}
    maubinh = str(Path(sys.executable).with_name("maubinh"))
    command = [maubinh, "verify", "--jsonl", "examples/audit/claims.jsonl", "--report", str(where / "report.html")]
    command += ["-o", str(where / "disagreements.jsonl")]
    subprocess.run(command, env=env, check=False, capture_output=True, cwd=ROOT)
    return where / "report.html"


def main() -> None:
    from playwright.sync_api import sync_playwright
    from server import start

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("Debian's chromium is needed: apt-get install chromium")
    base, process = start({"MAUBINH_WORKERS": "1"})
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            english = browser.new_context(viewport={"width": 1100, "height": 900})
            page = english.new_page()
            page.goto(base + "/viewer")
            page.get_by_label("Room JSON").fill(json.dumps(E1, indent=1))
            page.get_by_role("button", name="Score this room").click()
            page.locator("#result").wait_for()
            page.screenshot(path=str(DOCS / "viewer.png"), full_page=True)
            vietnamese = browser.new_context(locale="vi-VN", viewport={"width": 1100, "height": 900})
            page = vietnamese.new_page()
            page.goto(base + "/viewer")
            page.get_by_label("JSON của ván bài").fill(json.dumps(E1, indent=1))
            page.get_by_text("Đối chiếu: kết quả game đã ghi").click()
            page.get_by_label("JSON của kết quả game đã ghi").fill(json.dumps(NO_SCOOP))
            page.get_by_role("button", name="Đối chiếu kết quả này").click()
            page.locator("#verdict").wait_for()
            page.locator("#verdict").screenshot(path=str(DOCS / "viewer-verify-vi.png"))
            page = browser.new_context(viewport={"width": 1000, "height": 900}).new_page()
            page.goto(_audit_report().as_uri())
            page.screenshot(
                path=str(DOCS / "audit-report.png"),
                full_page=True,
                clip={"x": 0, "y": 0, "width": 1000, "height": 2200},
            )
            browser.close()
    finally:
        process.terminate()
        process.wait(timeout=15)
    RECORD.write_text(json.dumps(digests(), indent=2) + "\n", encoding="utf-8")
    print(f"retook {', '.join(SHOTS)}; their texts' digests are in {RECORD.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
