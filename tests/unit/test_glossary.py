"""docs/glossary.md holds: no text says a thing with a word the glossary rules out, and each ledger
step has the one name the glossary gives it, in the ledger and in the viewer alike."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from service.texts import phrasebook

GLOSSARY = (Path(__file__).parents[2] / "docs" / "glossary.md").read_text(encoding="utf-8")


def _rows(heading: str) -> list[list[str]]:
    """The table rows under a ``## heading``, each a list of its cells."""
    section = GLOSSARY.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row] for row in rows[2:]]


def _forbidden(column: int) -> list[tuple[str, str]]:
    """(the service's word, a word ruled out) for every term of the glossary's term tables."""
    return [
        (row[1], word.strip())
        for heading in ("The game", "Hands", "The service")
        for row in _rows(heading)
        for word in row[column].split(";")
        if word.strip()
    ]


@pytest.mark.parametrize(("language", "column"), [("vi", 2), ("en", 3)])
def test_no_text_uses_a_word_the_glossary_rules_out(language: str, column: int) -> None:
    ruled_out = _forbidden(column)
    assert len(ruled_out) >= (8 if language == "vi" else 6)  # the check has teeth
    found = [
        f"{key}: {word!r} (say {instead!r})"
        for key, text in read_texts(language).items()
        for instead, word in ruled_out
        if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE)
    ]
    assert not found


def read_texts(language: str) -> dict[str, str]:
    """Every text a person reads in ``language``: the phrasebook (faults, ledger, viewer, report, problem
    pages), the viewer's example rooms' names, and the words the pipeline names hands and patterns by."""
    from service.patterns import PATTERN_NAMES

    texts = dict(phrasebook(language))
    examples = json.loads((Path(__file__).parents[2] / "service" / "static" / "examples.json").read_text("utf-8"))
    for example in examples if isinstance(examples, list) else examples.get("examples", []):
        texts[f"examples.json: {example.get('name')}"] = example.get(f"name_{language}", example.get("name", ""))
    column = 1 if language == "vi" else 0
    texts.update({f"patterns.py: {pattern}": names[column] for pattern, names in PATTERN_NAMES.items()})
    return texts


def test_the_rule_out_check_catches_what_the_review_found() -> None:
    """The review's worst finding, "Đã chia" for claimed, is one of the words ruled out."""
    assert ("đã ghi, kết quả game đã ghi", "đã chia") in _forbidden(2)


@pytest.mark.parametrize("language", ["en", "vi"])
def test_each_step_has_one_name(language: str) -> None:
    texts = phrasebook(language)
    steps = {row[0].strip("`"): row[1 if language == "en" else 2] for row in _rows("Ledger steps")}
    assert set(steps) == {"instant_win", "chi", "bonus", "scoop", "foul", "ace"}
    for step, name in steps.items():
        assert texts[f"step.{step}"] == name
        assert texts[f"viewer.step_{step}"].lower().startswith(name.lower()), step
