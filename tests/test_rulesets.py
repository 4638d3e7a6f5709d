"""Rulesets are data: checked against their schema at load, digested canonically, never named in code."""

import ast
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from service.rulesets import RulesetError, all_rulesets, build_ruleset

FILES = Path(__file__).resolve().parents[1] / "service" / "rulesets"


def raw(ruleset_id: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FILES / f"{ruleset_id}.json").read_text("utf-8"))
    return loaded


def test_the_three_rulesets_load_with_their_versions() -> None:
    assert {r.id: r.version for r in all_rulesets().values()} == {
        "maubinh-2020": "1",
        "maubinh-bao": "1",
        "maubinh-chi-at": "1",
    }


@pytest.mark.parametrize("ruleset_id", ["maubinh-2020", "maubinh-bao", "maubinh-chi-at"])
def test_digest_is_sha256_of_the_canonical_json(ruleset_id: str) -> None:
    canonical = json.dumps(raw(ruleset_id), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert all_rulesets()[ruleset_id].digest == "sha256:" + hashlib.sha256(canonical).hexdigest()


def test_the_digest_changes_with_any_number() -> None:
    changed = raw("maubinh-2020")
    changed["bonuses"]["front"]["three_of_a_kind"] = 4
    assert build_ruleset(changed).digest != all_rulesets()["maubinh-2020"].digest


@pytest.mark.parametrize(
    ("mutate", "says"),
    [
        (lambda d: d["bonuses"]["back"].update(four_of_a_kind=1), "/bonuses/back/four_of_a_kind"),
        (lambda d: d["bonuses"]["back"].update(pentagon=3), "/bonuses/back"),
        (lambda d: d.update(colour="red"), "colour"),
        (lambda d: d.update(wheel="highest"), "/wheel"),
        (
            lambda d: d["instant_wins"]["table"].append({"pattern": "royal_dragon", "units": 1, "strength": 1}),
            "/instant_wins/table/6/pattern",
        ),
        (lambda d: d.pop("choices"), "choices"),
        (lambda d: d["players"].update(min=4, max=2), "players.min > players.max"),
        (lambda d: d["instant_wins"]["table"].append(dict(d["instant_wins"]["table"][0])), "listed twice"),
        (
            lambda d: d.update(scoop={"table": [{"room_size": 4, "by_scoopers": [2, 2, 4]}]}),
            "no scoop multiplier for room_size 2",
        ),
    ],
)
def test_a_broken_ruleset_is_refused_saying_where(mutate: Any, says: str) -> None:
    data = copy.deepcopy(raw("maubinh-2020"))
    mutate(data)
    with pytest.raises(RulesetError, match=says.replace("[", r"\[")):
        build_ruleset(data)


REQUIRED_CHOICES = {
    "maubinh-2020": {
        "foul.equal_hands_legal",
        "status.left_is_fouled",
        "status.timeout",
        "scoop.whole_total",
        "scoop.foul_is_scoop",
        "scoop.left_is_scooped",
        "instant_win.same_strength_first_in_table",
        "instant_win.straight_flush_counts_both",
        "bonus.paid_on_foul_win",
        "ledger.order",
    },
    "maubinh-chi-at": {
        "instant_win.order",
        "instant_win.ends_round",
        "bonus.trip_aces_front",
        "bonus.royal_flush_middle",
        "scoop.table",
        "scoop.foul_is_scoop",
        "scoop.left_is_scooped",
        "scoop.room_size_counts_everyone",
        "aces.four_aces_arranged_skip",
        "aces.fouled_by_status_four_aces",
        "ledger.order",
    },
    "maubinh-bao": {
        "wheel.lowest",
        "labels.counted_from_front",
        "instant_win.thirteen_same_color",
        "instant_win.order",
        "instant_win.declared",
        "instant_win.declared_but_fouled",
        "scoop.multiplier",
        "fouls.penalty",
        "status.timeout",
        "ledger.order",
    },
}


@pytest.mark.parametrize("ruleset_id", sorted(REQUIRED_CHOICES))
def test_every_choice_rules_md_marks_is_carried_with_its_reason(ruleset_id: str) -> None:
    choices = {c["id"]: c for c in raw(ruleset_id)["choices"]}
    assert REQUIRED_CHOICES[ruleset_id] <= set(choices)
    assert all(c["reason"] and c["decision"] and c["rule"].startswith("RULES") for c in choices.values())


def _code_strings(tree: ast.AST) -> list[str]:
    """Every string literal in the code, leaving out docstrings."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_code_names_a_ruleset() -> None:
    """The pipeline reads fields; a ruleset id in a code string would be a branch on it."""
    source = Path(__file__).resolve().parents[1] / "service"
    for path in source.rglob("*.py"):
        strings = _code_strings(ast.parse(path.read_text("utf-8")))
        for ruleset_id in all_rulesets():
            assert not [s for s in strings if ruleset_id in s], f"{path.relative_to(source.parent)} names {ruleset_id}"
