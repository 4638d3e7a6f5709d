"""docs/glossary.md holds: no text says a thing with a word the glossary rules out, and each ledger
step has the one name the glossary gives it, in the ledger and in the viewer alike."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from service.texts import choices_in_vietnamese, phrasebook

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


def _ruled_out_in(texts: dict[str, str], column: int) -> list[str]:
    """The detector: each text that uses a word the glossary rules out, with the word to say instead."""
    return [
        f"{key}: {word!r} (say {instead!r})"
        for key, text in texts.items()
        for instead, word in _forbidden(column)
        if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE)
    ]


@pytest.mark.parametrize(("language", "column"), [("vi", 2), ("en", 3)])
def test_no_text_uses_a_word_the_glossary_rules_out(language: str, column: int) -> None:
    assert len(_forbidden(column)) >= (8 if language == "vi" else 6)  # the check has teeth
    assert _ruled_out_in(read_texts(language), column) == []


SERVICE = Path(__file__).parents[2] / "service"
VIETNAMESE = re.compile("[àáạảãâầấậẩẫăằắặẳẵèéẹẻẽêềếệểễìíịỉĩòóọỏõôồốộổỗơờớợởỡùúụủũưừứựửữỳýỵỷỹđ]", re.IGNORECASE)
"""A letter only Vietnamese writes: a string holding one is a Vietnamese text."""


def vietnamese_in_modules() -> dict[str, str]:
    """Every string constant of every module of the service that holds Vietnamese words (hand_words.py,
    strict_json.py, cards.py, the ruleset checks …), found by reading them all, not from a list."""
    found = {}
    for path in sorted(SERVICE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and VIETNAMESE.search(node.value):
                found[f"{path.relative_to(SERVICE)}:{node.lineno}"] = node.value
    return found


def read_texts(language: str) -> dict[str, str]:
    """Every text a person reads in ``language``: the phrasebook (faults, ledger, viewer, report, problem
    pages), the viewer's example rooms' names, the words the pipeline names hands and patterns by, and,
    in Vietnamese, every Vietnamese string of the service's modules and the built-in rulesets' choices
    (review 7: "phạt lủng" and "người thoát" were in them, unread by this test)."""
    from service.game.patterns import PATTERN_NAMES

    texts = dict(phrasebook(language))
    examples = json.loads((SERVICE / "static" / "examples.json").read_text("utf-8"))
    for example in examples if isinstance(examples, list) else examples.get("examples", []):
        texts[f"examples.json: {example.get('name')}"] = example.get(f"name_{language}", example.get("name", ""))
    column = 1 if language == "vi" else 0
    texts.update({f"patterns.py: {pattern}": names[column] for pattern, names in PATTERN_NAMES.items()})
    if language == "vi":
        texts.update(vietnamese_in_modules())
        texts.update({f"choices.vi.json: {english}": said for english, said in choices_in_vietnamese().items()})
    return texts


def test_the_modules_read_are_found_not_listed() -> None:
    """Before: a hand-kept list left out hand_words.py, strict_json.py, cards.py and rulesets/checks.py."""
    modules = {where.split(":")[0] for where in vietnamese_in_modules()}
    assert {
        "game/hand_words.py",
        "support/strict_json.py",
        "game/cards.py",
        "rulesets/checks.py",
        "scoring/claims.py",
    } <= modules


def test_the_rule_out_check_catches_what_the_review_found() -> None:
    """The review's worst finding, "Đã chia" for claimed, run through the detector: found, at its key,
    in any case, and a text without it passes."""
    found = _ruled_out_in({"verify.claimed": "P: Đã chia −3.000", "verify.fine": "P: game ghi −3.000"}, 2)
    assert found == ["verify.claimed: 'đã chia' (say 'đã ghi, kết quả game đã ghi')"]


@pytest.mark.parametrize("language", ["en", "vi"])
def test_each_step_has_one_name(language: str) -> None:
    texts = phrasebook(language)
    steps = {row[0].strip("`"): row[1 if language == "en" else 2] for row in _rows("Ledger steps")}
    assert set(steps) == {"instant_win", "chi", "bonus", "scoop", "foul", "ace"}
    for step, name in steps.items():
        assert texts[f"step.{step}"] == name
        assert texts[f"viewer.step_{step}"].lower().startswith(name.lower()), step
