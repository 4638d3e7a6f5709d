"""The compiled modules (setup.py: mypyc) and the same source run as plain Python answer byte for byte
alike, on the golden rooms and on random rooms of 2–4 players under built-in, operator and inline
variant rulesets, in both languages. The pure form is what a Spark cluster imports from --py-files,
and the speed work on the compiled path (bench/instructions.py) must not change a byte."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from rooms import four_player_rooms

ROOT = Path(__file__).resolve().parents[2]
RULESETS = ["maubinh-2020", "maubinh-bao", "maubinh-chi-at", "maubinh-2020@1", "maubinh-chi-at@2", "go-module"]
PATCHES = [
    {"scoop": {"multiplier": 2}},
    {"scoop": {"multiplier": 3, "sweep_multiplier": 2}},
    {"fouls": {"foul_is_scoop": False, "fixed_units": 6}},
]


def _corpus(path: Path) -> Path:
    lines = [
        json.loads(line)["request"]
        for name in ("public", "house-public", "house2-public")
        for line in (ROOT / "tests" / "golden" / f"{name}.jsonl").read_text().splitlines()
        if line.strip()
    ]
    rng = random.Random(23)
    for k, room in enumerate(four_player_rooms(600, seed=29)):
        room["players"] = room["players"][: rng.choice((2, 3, 4))]
        room["ruleset"] = (
            {"base": rng.choice(RULESETS[:3]), "patch": rng.choice(PATCHES)} if k % 4 == 0 else rng.choice(RULESETS)
        )
        lines.append(room)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _answers(python_path: Path | None, corpus: Path, language: str) -> bytes:
    env = {**os.environ, "MAUBINH_RULESETS_DIR": str(ROOT / "examples" / "rulesets")}
    if python_path is not None:
        env["PYTHONPATH"] = str(python_path)
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "score", "--jsonl", str(corpus), "--jobs", "1", "--lang", language],
        capture_output=True, env=env, check=True, cwd=python_path or ROOT,
    )  # fmt: skip
    return done.stdout


@pytest.mark.parametrize("language", ["en", "vi"])
def test_compiled_and_pure_python_answer_alike(tmp_path: Path, language: str) -> None:
    compiled = {p.name for p in (ROOT / "service").rglob("*.so")}
    if not compiled:
        if os.environ.get("MAUBINH_REQUIRE_COMPILED") == "1":
            pytest.fail("MAUBINH_REQUIRE_COMPILED=1 but nothing is compiled: `make test` compiles with mypyc")
        pytest.skip("nothing is compiled here (MAUBINH_PURE_PYTHON=1); MAUBINH_REQUIRE_COMPILED=1 fails instead")
    pure = tmp_path / "pure"
    shutil.copytree(ROOT / "service", pure / "service", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    corpus = _corpus(tmp_path / "rooms.jsonl")
    ours, theirs = _answers(None, corpus, language), _answers(pure, corpus, language)
    assert len(ours.splitlines()) == len(corpus.read_text().splitlines())
    assert ours == theirs
