"""Rulesets are data: checked against their schema at load, digested canonically, never named in code."""

import ast
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from service.rulesets import RulesetError, build_ruleset, check_document, with_defaults
from service.rulesets.catalogue import BuiltinRuleset, builtin_catalogue

FILES = Path(__file__).resolve().parents[2] / "service" / "rulesets" / "builtin"
IDS = ("maubinh-2020", "maubinh-bao", "maubinh-chi-at")


def raw(ruleset_id: str, version: str = "2") -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FILES / ruleset_id / f"{version}.json").read_text("utf-8"))
    return loaded


LATEST = {"maubinh-2020": "3", "maubinh-bao": "3", "maubinh-chi-at": "4"}
"""maubinh-chi-at@4 is @3 renamed: "sập làng" names only the sweep (docs/glossary.md)."""


def test_each_builtin_keeps_every_version_and_a_bare_id_is_the_latest() -> None:
    assert {r.id: r.version for r in builtin_catalogue().latest.values()} == LATEST
    for ruleset_id, latest in LATEST.items():
        assert [r.version for r in builtin_catalogue().versions(ruleset_id)] == [
            str(n) for n in range(1, int(latest) + 1)
        ]
        assert builtin_catalogue().get(f"{ruleset_id}@1") is not builtin_catalogue().get(ruleset_id)
        assert builtin_catalogue().get(f"{ruleset_id}@{latest}") is builtin_catalogue().get(ruleset_id)
    assert builtin_catalogue().get("maubinh-2020@4") is None


def test_a_builtin_is_built_once_from_its_file_and_a_misplaced_file_is_refused() -> None:
    shipped = BuiltinRuleset("maubinh-bao", "2.json")
    assert shipped.ruleset() is shipped.ruleset()
    assert shipped.ruleset().digest == build_ruleset(raw("maubinh-bao", "2")).digest
    renamed = BuiltinRuleset("maubinh-bao", "2.json")
    renamed.version = "3"  # as if builtin/maubinh-bao/3.json held version 2
    with pytest.raises(RulesetError) as refused:
        renamed.ruleset()
    assert [fault.message.key for fault in refused.value.faults] == ["ruleset.builtin_misplaced"]


def test_a_renamed_version_scores_as_the_one_it_renames() -> None:
    three, four = raw("maubinh-chi-at", "3"), raw("maubinh-chi-at", "4")
    assert {k: v for k, v in four.items() if k not in ("title", "version", "choices")} == {
        k: v for k, v in three.items() if k not in ("title", "version", "choices")
    }
    assert four["choices"][:-1] == three["choices"] and four["choices"][-1]["id"] == "title.scoop_table"


def test_version_1_is_the_document_served_before_house_rules_byte_for_byte() -> None:
    """A version once served never changes: @1's digest is the one every earlier result carried."""
    assert builtin_catalogue().get("maubinh-2020@1").digest == (  # type: ignore[union-attr]
        "sha256:8bd9b2807170ced54e4e4badda713d079f590838299742965ca5ad4ac14d3a6d"
    )
    assert "basis" not in raw("maubinh-2020", "1")["scoop"]


@pytest.mark.parametrize("ruleset_id", IDS)
def test_version_2_is_version_1_plus_the_knobs_at_their_defaults(ruleset_id: str) -> None:
    one, two = raw(ruleset_id, "1"), raw(ruleset_id, "2")
    assert two["scoop"] == {**one["scoop"], "basis": "total", "sweep_multiplier": 1}
    assert two["bonuses"] == {**one["bonuses"], "mode": "replace"}
    assert two["fouls"] == {**one["fouls"], "fixed_units": None}
    same = ("players", "wheel", "labels", "timeout", "instant_wins", "aces", "title", "id")
    assert {k: two[k] for k in same} == {k: one[k] for k in same}
    assert two == with_defaults(two, version=2), "version 2 states every knob of its time"


@pytest.mark.parametrize("ruleset_id", IDS)
def test_version_3_is_version_2_plus_the_second_family_at_their_defaults(ruleset_id: str) -> None:
    two, three = raw(ruleset_id, "2"), raw(ruleset_id, "3")
    assert three["scoop"] == {**two["scoop"], "sweep_pays": "scoop"}
    assert three["fouls"] == {**two["fouls"], "both_fouled": "nothing"}
    assert three["instant_wins"] == {**two["instant_wins"], "collision": "stronger", "settles_pair": True}
    if two["aces"] is None:
        assert three["aces"] is None
    else:
        assert three["aces"] == {**two["aces"], "mode": "collectors", "skip_when_instant_win": False}
    same = ("players", "wheel", "labels", "timeout", "bonuses", "title", "id", "sources")
    assert {k: three[k] for k in same} == {k: two[k] for k in same}
    assert three["choices"][: len(two["choices"])] == two["choices"]
    assert three == with_defaults(three), "version 3 states every knob"


DIGESTS = {
    "maubinh-2020@1": "8bd9b2807170ced54e4e4badda713d079f590838299742965ca5ad4ac14d3a6d",
    "maubinh-2020@2": "5c12226c416fa167fd30537298b4f7a457491129eb120fff9294deb89b735575",
    "maubinh-bao@1": "5a43321ac8d96543748ef643b32dd65451201a80aada80a3cfc92a4104ecd4dd",
    "maubinh-bao@2": "b1ade1403b863170f634953612e794a45ac59f1192b92aefdb5698f82c2e5e10",
    "maubinh-chi-at@1": "7766fe97d9de6363504cfb0e0456a79296ebe161e1789c64e32a58a7ff48cf1f",
    "maubinh-chi-at@2": "426ca53f5c21b8b4d989beea0cc75b29c6c7ed5b72db1c728067b0f851544957",
    "maubinh-2020@3": "d4a4ec5ac26c9b94ff6932eea434b95400e239f6f8862e2a6587c4986baacc83",
    "maubinh-bao@3": "196fdd900cc24557df2d987316dcee902726c32083e973b800ddd240befc41ae",
    "maubinh-chi-at@3": "20e8807b822633541590e30677d86af5fa3c913426237b9adb1e56ef7f04cf8b",
    "maubinh-chi-at@4": "462035d77372506aa1b06f1d178c0bc39ef4fe55ccd960099fa3fdf4172057d5",
}
"""Each worked out apart from the code: ``jq -cSj . service/rulesets/builtin/<id>/<version>.json | sha256sum``
(keys sorted, no white space, UTF-8), which is what docs/rules.md §11.2 says a digest is."""


@pytest.mark.parametrize("reference", list(DIGESTS))
def test_each_version_has_its_pinned_digest(reference: str) -> None:
    assert builtin_catalogue().get(reference).digest == "sha256:" + DIGESTS[reference]  # type: ignore[union-attr]


def test_the_digest_changes_with_any_number() -> None:
    changed = raw("maubinh-2020")
    changed["bonuses"]["front"]["three_of_a_kind"] = 4
    assert build_ruleset(changed).digest != builtin_catalogue().latest["maubinh-2020"].digest


@pytest.mark.parametrize(
    ("mutate", "path", "says"),
    [
        (lambda d: d["bonuses"]["back"].update(four_of_a_kind=0), ("bonuses", "back", "four_of_a_kind"), "minimum"),
        (lambda d: d["bonuses"]["back"].update(pentagon=3), ("bonuses", "back", "pentagon"), "not a hand"),
        (lambda d: d.update(colour="red"), ("colour",), "not a ruleset field"),
        (lambda d: d.update(wheel="highest"), ("wheel",), "not one of"),
        (
            lambda d: d["instant_wins"]["table"].append({"pattern": "royal_dragon", "units": 1, "strength": 1}),
            ("instant_wins", "table", 6, "pattern"),
            "not one of",
        ),
        (lambda d: d.pop("choices"), ("choices",), "choices is required"),
        (lambda d: d["players"].update(min=4, max=2), ("players",), "players.min 4 is above players.max 2"),
        (
            lambda d: d["instant_wins"]["table"].append(dict(d["instant_wins"]["table"][0])),
            ("instant_wins", "table", 6, "pattern"),
            "appears twice",
        ),
        (
            lambda d: d.update(scoop={"table": [{"room_size": 4, "by_scoopers": [2, 2, 4]}]}),
            ("scoop", "table"),
            "one row for each room size 2 to 4",
        ),
        (lambda d: d["scoop"].update(table=[]), ("scoop", "table"), "too few items; at least 1"),
        (lambda d: d["labels"].update(back="x" * 33), ("labels", "back"), "too long; at most 32 characters"),
        (lambda d: d["fouls"].update(fixed_units=5), ("fouls", "fixed_units"), "foul_is_scoop false"),
    ],
)
def test_a_broken_ruleset_is_refused_saying_where(mutate: Any, path: tuple[Any, ...], says: str) -> None:
    data = copy.deepcopy(raw("maubinh-2020"))
    mutate(data)
    with pytest.raises(RulesetError) as refused:
        build_ruleset(data)
    assert any(f.path == path and says in f.message for f in refused.value.faults), refused.value.faults


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
    assert all(c["reason"] and c["decision"] and c["rule"].startswith("docs/rules.md") for c in choices.values())
    assert {"house.defaults", "house.unchanged_variant_is_base", "house.pointer_into_patch"} <= set(choices)


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
    source = Path(__file__).resolve().parents[2] / "service"
    for path in source.rglob("*.py"):
        strings = _code_strings(ast.parse(path.read_text("utf-8")))
        for ruleset_id in builtin_catalogue().latest:
            assert not [s for s in strings if ruleset_id in s], f"{path.relative_to(source.parent)} names {ruleset_id}"


@pytest.mark.parametrize("ruleset_id", IDS)
@pytest.mark.parametrize("version", ["1", "2"])
def test_every_shipped_version_passes_every_check(ruleset_id: str, version: str) -> None:
    """The catalogue loads the shipped documents unchecked (start-up speed); here they are checked."""
    assert check_document(with_defaults(raw(ruleset_id, version))) == []
