"""Writes service/data/hand-strengths.json: the hand tables both wheels share, built by
service.game.hand_strengths.build_wheel_free_strengths, for a process to read rather than build at start-up.

Run from a checkout after changing how hands rank: .venv/bin/python scripts/build_hand_strengths.py
(tests/unit/test_hands.py fails until the file is this script's output)."""

from __future__ import annotations

import json
from pathlib import Path

from service.game.hand_strengths import STRENGTHS_FILE, build_wheel_free_strengths, strengths_written

TARGET = Path(__file__).resolve().parents[1] / "service" / "data" / STRENGTHS_FILE


def text() -> str:
    """The file's text: one table a line, so that a change shows as a change of that table."""
    document = strengths_written(build_wheel_free_strengths())
    lines = ",\n".join(
        f"{json.dumps(name)}: {json.dumps(table, separators=(',', ':'))}" for name, table in document.items()
    )
    return "{\n" + lines + "\n}\n"


if __name__ == "__main__":
    TARGET.write_text(text(), encoding="utf-8")
    print(f"wrote {TARGET}")
