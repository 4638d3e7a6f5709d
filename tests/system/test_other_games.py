"""The other games' rules shipped as operator files (examples/rulesets/, docs/rules.md §12.3): each
passes `maubinh rulesets check`, and the command line scores under them as worked by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import C, P, Q, room, seat

MAUBINH = str(Path(sys.executable).with_name("maubinh"))
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rulesets"
E1 = [
    seat("P", "AS AD 7C 7D 2H | KS KH 9H 5D 3S | QH JD 4C"),
    seat("Q", "9S 9D 9C 4S 4D | 8S 8H 6C 6D TS | AH 3D 2C"),
]


def test_every_example_passes_rulesets_check_under_its_own_id() -> None:
    files = sorted(EXAMPLES.glob("*.json"))
    assert [f.stem for f in files] == ["go-module", "js-web-game", "poker-trainer-2-4"]
    checked = subprocess.run(
        [MAUBINH, "rulesets", "check", *map(str, files)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stderr
    assert [line.split()[2] for line in checked.stdout.splitlines()] == [f"{f.stem}@1" for f in files]


def _score(request: dict[str, Any]) -> dict[str, Any]:
    env = {**os.environ, "MAUBINH_RULESETS_DIR": str(EXAMPLES)}
    done = subprocess.run(
        [MAUBINH, "score", "-"], input=json.dumps(request), capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(
    ("ruleset", "p_units"),
    [
        # Q wins every chi (worth 1: no entry) = 3, and a scoop on the fixed basis 3 × (2 − 1) = 3.
        ("go-module", -6),
        # 3 chi, scoop total 3 × (2 − 1) = 3.
        ("js-web-game", -6),
        # Rows worth 4 + 2 + 2 = 8, scoop on the fixed basis 4 × (2 − 1) = 4.
        ("poker-trainer-2-4", -12),
    ],
)
def test_e1_under_each_game_s_rules(ruleset: str, p_units: int) -> None:
    result = _score(room(ruleset, *E1))
    assert [p["units"] for p in result["players"]] == [p_units, -p_units]
    assert result["ruleset"]["id"] == ruleset


def test_the_go_module_s_sap_lang_pays_the_total_again() -> None:
    """Bonuses on top: Q's chi from each other seat are worth 5 (quads), 3 (full house), 1: 9. A scoop is
    a fixed 3 × (2 − 1) = 3. A sweeps a room of 3 (s = 3): each opponent pays its 9 again × (3 − 1) = 18.
    B nets 1 from C. A (9 + 3 + 18) × 2 = 60; B −30 + 1; C −30 − 1."""
    result = _score(room("go-module", seat("A", Q), seat("B", P), seat("C", C)))
    assert [p["units"] for p in result["players"]] == [60, -29, -31]
    sweep = [line for line in result["ledger"] if line["rule"].startswith("scoop.sweep_pays")]
    assert [(line["payer"], line["units"]) for line in sweep] == [("B", 18), ("C", 18)]
