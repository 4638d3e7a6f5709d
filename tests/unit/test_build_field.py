"""scripts/build_field.py: seeded fictitious play that writes the same bytes for the same arguments."""

from __future__ import annotations

import hashlib
import importlib.util
from itertools import pairwise
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build_field.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_field", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_rebuild_with_the_same_arguments_gives_the_same_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build = _script()
    digests = []
    for attempt in ("first", "second"):
        monkeypatch.setattr(build, "OUT", tmp_path / attempt)
        (tmp_path / attempt).mkdir()
        path = build.build_strong("maubinh-2020", 150, 2, 5, 50, 0.0)
        digests.append(hashlib.sha256(path.read_bytes()).hexdigest())
    assert digests[0] == digests[1]
    with np.load(tmp_path / "first" / "field-strong-maubinh-2020.npz") as table:
        assert int(table["samples"]) == 300 and int(table["rounds"]) == 2
        assert int(table["front_counts"].sum()) == 300  # every hand counted once per position
        assert list(table["front_strengths"]) == sorted(table["front_strengths"])


def test_fictitious_play_lowers_the_model_regret_round_after_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The play itself, on a small field: each round's advisor answers the average of the rounds before,
    and its regret against its own play falls round after round."""
    build = _script()
    monkeypatch.setattr(build, "OUT", tmp_path)
    path = build.build_strong("maubinh-2020", 200, 4, 7, 100, 0.0)
    with np.load(path) as table:
        regret = [float(r) for r in table["regret"]]
    assert len(regret) == 4
    assert all(later < earlier for earlier, later in pairwise(regret)), regret
    assert regret[-1] < regret[0] / 3, regret


def test_the_shipped_tables_record_a_falling_regret_small_at_the_end() -> None:
    """What scripts/build_field.py recorded as it built the tables the advisor ships with."""
    for ruleset in ("maubinh-2020", "maubinh-chi-at", "maubinh-bao"):
        with np.load(SCRIPT.parents[1] / "service" / "data" / f"field-strong-{ruleset}.npz") as table:
            regret = list(table["regret"])
        assert regret[0] > 0.3 and regret[-1] < 0.02 and regret[-1] < regret[0] / 20, (ruleset, regret)
