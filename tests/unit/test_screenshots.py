"""A screenshot in docs/ is never older than the texts it shows: docs/screenshots.json keeps the digest
of the words each was taken with (scripts/screenshots.py), and the code as it is must give the same."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from screenshots import RECORD, SHOTS, digests  # noqa: E402


def test_every_screenshot_was_taken_with_the_texts_it_shows() -> None:
    taken = json.loads(RECORD.read_text("utf-8"))
    assert set(taken) == set(SHOTS) and all((ROOT / "docs" / name).is_file() for name in SHOTS)
    stale = [name for name, digest in digests().items() if taken[name] != digest]
    assert stale == [], f"retake {stale} with scripts/screenshots.py: the texts they show have changed"
