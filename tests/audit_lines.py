"""Lines of the sample month (examples/audit/claims.jsonl) with one bad line among them, for the tests of
what the bulk commands read (tests/unit/test_refused_round_ids.py, test_line_cap.py)."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MONTH = ROOT / "examples" / "audit" / "claims.jsonl"
RULES = ROOT / "examples" / "audit" / "rulesets"
FIRST = 300
"""The sample month's first rounds the tests run over (the whole month takes a few seconds more)."""


def sample(tmp_path: Path, *extra: bytes) -> tuple[Path, int]:
    """The month's first rounds, then the extra lines, then one more round: (the file, its lines)."""
    lines = MONTH.read_bytes().splitlines(keepends=True)
    made = [*lines[:FIRST], *extra, lines[FIRST]]
    path = tmp_path / "claims.jsonl"
    path.write_bytes(b"".join(made))
    return path, len(made)


def with_round_id(round_id: str) -> bytes:
    """The month's first round with the round id given (JSON-escaped as json.dumps writes it)."""
    line = MONTH.read_bytes().splitlines()[0]
    return line.replace(b'"round_id":"2026-11-01/0"', b'"round_id":' + json.dumps(round_id).encode()) + b"\n"
