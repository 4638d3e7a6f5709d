"""Resolving house-rule variants (docs/rules.md §11.2–§11.3): names, digests, faults, cache, properties."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import pytest
from helpers import DECK_TEXT, golden_cases, room, seat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.contract import RoomRejected
from service.documents import arrange_document, evaluate_document, score_document
from service.rulesets import RulesetError, check_document, with_defaults
from service.rulesets.catalogue import VARIANT_CACHE_SIZE, Catalogue, builtin_catalogue, merge_patch
from service.serialize import dumps

ROOMS = [c["request"] for c in golden_cases() if "error" not in c["expect"]]


def _with_ruleset(request: dict[str, Any], ruleset: Any, **extra: Any) -> dict[str, Any]:
    return {**copy.deepcopy(request), "ruleset": ruleset, **extra}


def _refused(request: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(RoomRejected) as refused:
        score_document(request)
    return [(f.pointer, f.code) for f in refused.value.faults]


@pytest.mark.parametrize("request_", ROOMS[:40], ids=lambda r: r.get("round_id", "room"))
def test_an_empty_patch_scores_byte_identically_apart_from_the_ruleset_block(request_: dict[str, Any]) -> None:
    base = score_document(request_)
    patched = score_document(_with_ruleset(request_, {"base": request_["ruleset"], "patch": {}}))
    block = patched.pop("ruleset")
    assert block["base"] == base.pop("ruleset")
    assert block["changes"] == []
    assert (block["id"], block["digest"]) == (block["base"]["id"], block["base"]["digest"])
    assert dumps(patched) == dumps(base)


SECOND_FAMILY_DEFAULTS = {
    "scoop": {"sweep_pays": "scoop"},
    "fouls": {"both_fouled": "nothing"},
    "instant_wins": {"collision": "stronger", "settles_pair": True},
}
"""docs/rules.md §12.1's knobs at their defaults (the ace knobs, for a ruleset with aces, below)."""


def _restating_defaults(ruleset_id: str) -> dict[str, Any]:
    if ruleset_id == "maubinh-chi-at":
        return {**SECOND_FAMILY_DEFAULTS, "aces": {"mode": "collectors", "skip_when_instant_win": False}}
    return SECOND_FAMILY_DEFAULTS


@pytest.mark.parametrize("request_", ROOMS, ids=lambda r: r.get("round_id", "room"))
def test_a_patch_restating_the_second_family_s_defaults_scores_byte_identically_to_v2(request_: dict[str, Any]) -> None:
    """Over @2, a patch stating every §12 knob at its default is @2 itself (its digest, no ~custom), and
    @2, that variant and @3 pay every room with the same bytes."""
    ruleset_id = request_["ruleset"]
    two = score_document(_with_ruleset(request_, f"{ruleset_id}@2"))
    restated = score_document(
        _with_ruleset(request_, {"base": f"{ruleset_id}@2", "patch": _restating_defaults(ruleset_id)})
    )
    three = score_document(_with_ruleset(request_, f"{ruleset_id}@3"))
    block = restated.pop("ruleset")
    assert (block["id"], block["version"], block["digest"]) == (ruleset_id, "2", two.pop("ruleset")["digest"])
    assert three.pop("ruleset")["version"] == "3"
    assert dumps(restated) == dumps(two) == dumps(three)


def test_a_variant_of_version_2_keeps_the_digest_it_had_before_version_3() -> None:
    """Worked out apart from the code, as docs/rules.md §11.2 defines a digest:
    ``jq -cSj '.id = "maubinh-2020~custom" | .scoop.multiplier = 2' service/rulesets/builtin/maubinh-2020/2.json
    | sha256sum`` (a version-2 document states every knob of its time, so nothing else is filled)."""
    resolved = builtin_catalogue().resolve({"base": "maubinh-2020@2", "patch": {"scoop": {"multiplier": 2}}})
    assert resolved.digest == "sha256:8a6ef12871be47824fce017331f4762fb36ff4550d55d55818511a736b9e8272"
    assert "sweep_pays" not in resolved.data["scoop"]
    assert resolved.sweep_pays == "scoop"


def test_a_patch_restating_the_base_has_the_base_s_digest_however_it_is_written() -> None:
    base = builtin_catalogue().get("maubinh-2020")
    assert base is not None
    for patch in (
        {"scoop": {"multiplier": 3}},
        {"scoop": {"multiplier": 3.0, "basis": "total"}, "bonuses": {"front": {"three_of_a_kind": 3}}},
        {"fouls": {"fixed_units": None}, "wheel": "second"},
    ):
        resolved = builtin_catalogue().resolve({"base": "maubinh-2020", "patch": patch})
        assert (resolved.id, resolved.digest) == (base.id, base.digest)


def test_equal_variants_written_differently_share_one_digest_and_one_resolution() -> None:
    one = builtin_catalogue().resolve({"base": "maubinh-2020", "patch": {"scoop": {"multiplier": 2, "basis": "chi"}}})
    two = builtin_catalogue().resolve(
        {"base": "maubinh-2020@3", "patch": {"scoop": {"basis": "chi", "multiplier": 2.0}}}
    )
    assert one is two
    assert one.id == "maubinh-2020~custom"
    three = builtin_catalogue().resolve({"base": "maubinh-2020", "patch": {"scoop": {"multiplier": 2}}})
    assert three.digest != one.digest


def test_a_variant_names_its_base_and_every_change() -> None:
    patch = {
        "scoop": {"multiplier": 2, "table": None},
        "fouls": {"foul_is_scoop": False, "fixed_units": 6},
        "aces": None,
    }
    request = room({"base": "maubinh-chi-at@1", "patch": patch}, seat("P", "AS AD 7C 7D 2H | KS KH 9H 5D 3S | QH JD 4C"),
                   seat("Q", "9S 9D 9C 4S 4D | 8S 8H 6C 6D TS | AH 3D 2C"))  # fmt: skip
    block = score_document(request)["ruleset"]
    base = builtin_catalogue().get("maubinh-chi-at@1")
    assert base is not None
    assert block["base"] == {"id": "maubinh-chi-at", "version": "1", "digest": base.digest}
    assert (block["id"], block["version"]) == ("maubinh-chi-at~custom", "1")
    changed = {c["field"]: (c["base"], c["value"]) for c in block["changes"]}
    assert changed["scoop.multiplier"] == (None, 2)
    assert changed["scoop.table"][1] is None
    assert changed["fouls.fixed_units"] == (None, 6)
    assert changed["fouls.foul_is_scoop"] == (True, False)
    assert changed["aces.no_ace_pays"] == (4, None)
    assert changed["id"] == ("maubinh-chi-at", "maubinh-chi-at~custom")


def test_a_patch_may_name_its_variant_but_not_after_a_known_ruleset() -> None:
    named = builtin_catalogue().resolve({"base": "maubinh-bao", "patch": {"id": "club-hanoi", "title": "CLB Hà Nội"}})
    assert (named.id, named.title, named.base.id if named.base else None) == ("club-hanoi", "CLB Hà Nội", "maubinh-bao")
    request = room({"base": "maubinh-bao", "patch": {"id": "maubinh-2020"}}, seat("P"), seat("Q"))
    assert ("/ruleset/patch/id", "invalid_ruleset") in _refused(request)


def test_a_patch_deleting_the_id_is_told_to_leave_it_out() -> None:
    """A merge patch's null deletes: the refusal said what an id may be written with, which null is not."""
    with pytest.raises(RoomRejected) as refused:
        score_document(room({"base": "maubinh-bao", "patch": {"id": None}}, seat("P"), seat("Q")))
    [fault] = [f for f in refused.value.faults if f.pointer == "/ruleset/patch/id"]
    said = fault.message.render("en")
    assert "null would delete" in said and "maubinh-bao~custom" in said


FAULTS = [
    ({"sap_lang": 2}, "/ruleset/patch/sap_lang"),
    ({"version": "9"}, "/ruleset/patch/version"),
    ({"sources": []}, "/ruleset/patch/sources"),
    ({"choices": None}, "/ruleset/patch/choices"),
    ({"id": "Club Hà Nội"}, "/ruleset/patch/id"),
    ({"scoop": {"multiplier": 0}}, "/ruleset/patch/scoop/multiplier"),
    ({"scoop": {"multiplier": 101}}, "/ruleset/patch/scoop/multiplier"),
    ({"scoop": {"sweep_multiplier": 101}}, "/ruleset/patch/scoop/sweep_multiplier"),
    ({"scoop": {"basis": "bonus"}}, "/ruleset/patch/scoop/basis"),
    ({"scoop": {"table": [{"room_size": 2, "by_scoopers": [2]}]}}, "/ruleset/patch/scoop"),
    ({"scoop": {"multiplier": None}}, "/ruleset/patch/scoop"),
    ({"scoop": {"multiplier": None, "table": [{"room_size": 2, "by_scoopers": [2]}]}}, "/ruleset/patch/scoop/table"),
    (
        {
            "players": {"min": 3},
            "scoop": {
                "multiplier": None,
                "table": [{"room_size": 3, "by_scoopers": [2]}, {"room_size": 4, "by_scoopers": [2, 2, 2]}],
            },
        },
        "/ruleset/patch/scoop/table/0/by_scoopers",
    ),
    (
        {"instant_wins": {"table": [{"pattern": "dragon", "units": 1001, "strength": 1}]}},
        "/ruleset/patch/instant_wins/table/0/units",
    ),
    (
        {"instant_wins": {"table": [{"pattern": "dragon", "units": 1, "strength": 101}]}},
        "/ruleset/patch/instant_wins/table/0/strength",
    ),
    (
        {"instant_wins": {"table": [{"pattern": "dragon", "units": 1, "strength": 1}] * 2}},
        "/ruleset/patch/instant_wins/table/1/pattern",
    ),
    ({"instant_wins": {"table": []}}, "/ruleset/patch/instant_wins/table"),
    ({"bonuses": {"middle": {"full_house": 1001}}}, "/ruleset/patch/bonuses/middle/full_house"),
    ({"bonuses": {"middle": {"quads": 3}}}, "/ruleset/patch/bonuses/middle/quads"),
    ({"bonuses": {"mode": "double"}}, "/ruleset/patch/bonuses/mode"),
    ({"fouls": {"fixed_units": 5}}, "/ruleset/patch/fouls/fixed_units"),
    ({"fouls": {"fixed_units": 0, "foul_is_scoop": False}}, "/ruleset/patch/fouls/fixed_units"),
    ({"fouls": {"foul_multiplier": 0}}, "/ruleset/patch/fouls/foul_multiplier"),
    (
        {"aces": {"room_size": 3, "no_ace_pays": 4, "collector_min_aces": 2, "four_aces_receives": 16}},
        "/ruleset/patch/aces/room_size",
    ),
    (
        {"aces": {"room_size": 4, "no_ace_pays": 1001, "collector_min_aces": 2, "four_aces_receives": 16}},
        "/ruleset/patch/aces/no_ace_pays",
    ),
    (
        {"aces": {"room_size": 4, "no_ace_pays": 4, "collector_min_aces": 5, "four_aces_receives": 16}},
        "/ruleset/patch/aces/collector_min_aces",
    ),
    ({"aces": {"no_ace_pays": 4}}, "/ruleset/patch/aces"),
    ({"players": {"min": 4, "max": 3}}, "/ruleset/patch/players"),
    ({"players": {"min": 1}}, "/ruleset/patch/players/min"),
    ({"labels": {"front": ""}}, "/ruleset/patch/labels/front"),
    ({"labels": {"back": "x" * 33}}, "/ruleset/patch/labels/back"),
    ({"wheel": None}, "/ruleset/patch/wheel"),
    ({"timeout": "forfeit"}, "/ruleset/patch/timeout"),
    ({"title": ""}, "/ruleset/patch/title"),
    # §12.2
    ({"scoop": {"basis": "fixed"}}, "/ruleset/patch/scoop"),
    ({"scoop": {"basis": "fixed", "fixed_units": None}}, "/ruleset/patch/scoop/fixed_units"),
    ({"scoop": {"fixed_units": 3}}, "/ruleset/patch/scoop/fixed_units"),
    ({"scoop": {"basis": "fixed", "fixed_units": 1001}}, "/ruleset/patch/scoop/fixed_units"),
    ({"scoop": {"sweep_multiplier": [{"room_size": 3, "multiplier": 2}]}}, "/ruleset/patch/scoop/sweep_multiplier"),
    (
        {"scoop": {"sweep_multiplier": [{"room_size": 3, "multiplier": 2}, {"room_size": 4, "multiplier": 101}]}},
        "/ruleset/patch/scoop/sweep_multiplier/1/multiplier",
    ),
    ({"scoop": {"sweep_multiplier": "2"}}, "/ruleset/patch/scoop/sweep_multiplier"),
    ({"scoop": {"sweep_pays": "double"}}, "/ruleset/patch/scoop/sweep_pays"),
    ({"fouls": {"both_fouled": "split"}}, "/ruleset/patch/fouls/both_fouled"),
    ({"instant_wins": {"collision": "sum"}}, "/ruleset/patch/instant_wins/collision"),
    ({"instant_wins": {"settles_pair": "no"}}, "/ruleset/patch/instant_wins/settles_pair"),
    ({"instant_wins": {"settles_pair": False, "ends_round": True}}, "/ruleset/patch/instant_wins/settles_pair"),
    ({"aces": {"room_size": 4, "mode": "pot"}}, "/ruleset/patch/aces/mode"),
    ({"aces": {"room_size": 4, "mode": "balance", "units_per_ace": 0}}, "/ruleset/patch/aces/units_per_ace"),
    ({"aces": {"room_size": 4, "mode": "balance"}}, "/ruleset/patch/aces"),
    (
        {"aces": {"room_size": 4, "mode": "balance", "units_per_ace": 1, "no_ace_pays": 4}},
        "/ruleset/patch/aces/no_ace_pays",
    ),
    ({"aces": {"skip_when_instant_win": "yes"}}, "/ruleset/patch/aces/skip_when_instant_win"),
]


@pytest.mark.parametrize(("patch", "pointer"), FAULTS, ids=[p for _, p in FAULTS])
def test_every_kind_of_fault_is_a_422_at_its_pointer_in_the_patch(patch: dict[str, Any], pointer: str) -> None:
    request = room({"base": "maubinh-2020", "patch": patch}, seat("P", "AS AD 7C 7D 2H | KS KH 9H 5D 3S | QH JD 4C"),
                   seat("Q", "9S 9D 9C 4S 4D | 8S 8H 6C 6D TS | AH 3D 2C"))  # fmt: skip
    assert pointer in [p for p, _ in _refused(request)]


def test_every_fault_of_a_patch_is_named_at_once() -> None:
    patch = {"version": "3", "sap_lang": 1, "scoop": {"multiplier": 0}, "labels": {"front": ""}}
    pointers = [p for p, _ in _refused(room({"base": "maubinh-2020", "patch": patch}, seat("P"), seat("Q")))]
    assert {"/ruleset/patch/version", "/ruleset/patch/sap_lang", "/ruleset/patch/scoop/multiplier",
            "/ruleset/patch/labels/front"} <= set(pointers)  # fmt: skip


def _swapped_leaves(document: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Each boolean of ``document`` as the number Python's ``==`` takes it for, and each 0 or 1 as a boolean."""
    if isinstance(document, Mapping):
        return [found for key, value in document.items() for found in _swapped_leaves(value, (*path, key))]
    if isinstance(document, bool):
        return [(path, int(document))]
    if type(document) is int and document in (0, 1):
        return [(path, bool(document))]
    return []


def _patch_at(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    patch: Any = value
    for key in reversed(path):
        patch = {key: patch}
    return dict(patch)


SWAPS = [
    (base, path, value)
    for base in ("maubinh-2020", "maubinh-chi-at", "maubinh-bao")
    for path, value in _swapped_leaves(with_defaults(builtin_catalogue().resolve(base).data))
]


@pytest.mark.parametrize(("base", "path", "value"), SWAPS, ids=[f"{b}:{'.'.join(p)}={v}" for b, p, v in SWAPS])
def test_a_boolean_written_as_a_number_or_a_number_as_a_boolean_is_refused_at_its_pointer(
    base: str, path: tuple[str, ...], value: Any
) -> None:
    """Python's == holds 0 == False: such a patch was taken as no change to the base's value and never
    checked, and reached the settlement (a 500), or left the base's digest; alone or beside a change."""
    pointer = "/ruleset/patch/" + "/".join(path)
    for patch in (_patch_at(path, value), merge_patch(_patch_at(path, value), {"labels": {"back": "X"}})):
        request = room({"base": base, "patch": patch}, seat("P", "2S 3D 5H 7C 9S | AS AD KS QD JC | 4H 4C 8D"),
                       seat("Q", "9D 9C 9H 4S 4D | 8S 8H 6C 6D TS | AH 3S 2C"))  # fmt: skip
        assert (pointer, "invalid_ruleset") in _refused(request)


@pytest.mark.parametrize(
    ("reference", "pointer"),
    [
        ("maubinh-2020@9", "/ruleset"),
        ("nope", "/ruleset"),
        (7, "/ruleset"),
        ({"base": "maubinh-2020@9", "patch": {}}, "/ruleset/base"),
        ({"base": 3, "patch": {}}, "/ruleset/base"),
        ({"base": "maubinh-2020", "patch": "x"}, "/ruleset/patch"),
        ({"base": "maubinh-2020"}, "/ruleset"),
        ({"base": "maubinh-2020", "patch": {}, "x": 1}, "/ruleset"),
    ],
)
def test_a_bad_reference_is_a_422_at_its_pointer(reference: Any, pointer: str) -> None:
    assert pointer in [p for p, _ in _refused(room(reference, seat("P"), seat("Q")))]


def test_a_variant_can_narrow_the_player_count() -> None:
    request = room({"base": "maubinh-2020", "patch": {"players": {"min": 3}}}, seat("P"), seat("Q"))
    assert ("/players", "player_count") in _refused(request)


def test_ruleset_digest_pins_the_rules_a_caller_expects() -> None:
    request = copy.deepcopy(ROOMS[0])
    ruleset = builtin_catalogue().resolve(request["ruleset"])
    assert score_document({**request, "ruleset_digest": ruleset.digest})["ruleset"]["digest"] == ruleset.digest
    wrong = "sha256:" + "0" * 64
    assert _refused({**request, "ruleset_digest": wrong}) == [("/ruleset_digest", "ruleset_digest_mismatch")]
    assert _refused({**request, "ruleset_digest": "md5:abc"}) == [("/ruleset_digest", "pattern_mismatch")]
    pinned_old = _with_ruleset(request, f"{ruleset.id}@1", ruleset_digest=ruleset.digest)
    assert _refused(pinned_old) == [("/ruleset_digest", "ruleset_digest_mismatch")]


def test_evaluate_and_arrange_take_the_same_ruleset_forms() -> None:
    hands = {
        "back": ["9S", "9D", "9C", "9H", "4D"],
        "middle": ["8S", "8H", "8C", "6C", "6D"],
        "front": ["AH", "3D", "2C"],
    }
    ruleset = {
        "base": "maubinh-bao",
        "patch": {"instant_wins": {"table": [{"pattern": "four_of_a_kind", "units": 7, "strength": 1}]}},
    }
    evaluated = evaluate_document({"ruleset": ruleset, **hands})
    assert evaluated["ruleset"]["id"] == "maubinh-bao~custom"
    assert [(p["pattern"], p["units"]) for p in evaluated["instant_wins"]] == [("four_of_a_kind", 7)]
    cards = [c for position in hands.values() for c in position]
    arranged = arrange_document({"ruleset": ruleset, "cards": cards, "alternatives": 0})
    assert arranged["ruleset"] == evaluated["ruleset"]
    assert arranged["declare"]["declare_units"] == 7


def test_the_variant_cache_is_bounded_and_keeps_no_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    catalogue = Catalogue(list(builtin_catalogue().latest.values()))
    for k in range(VARIANT_CACHE_SIZE + 50):
        catalogue.resolve({"base": "maubinh-2020", "patch": {"title": f"house {k}"}})
    assert len(catalogue._variants) == VARIANT_CACHE_SIZE
    fresh = Catalogue(list(builtin_catalogue().latest.values()))
    for k in range(20):
        with pytest.raises(RulesetError):
            fresh.resolve({"base": "maubinh-2020", "patch": {"title": f"bad {k}", "scoop": {"multiplier": 0}}})
    assert not fresh._variants
    monkeypatch.setattr("service.rulesets.catalogue.VARIANT_CACHE_BYTES", 20_000)
    for k in range(20):
        fresh.resolve({"base": "maubinh-2020", "patch": {"title": f"house {k}"}})
    assert 0 < fresh._variant_bytes <= 20_000
    assert fresh._variant_bytes == sum(size for _, size in fresh._variants.values())
    assert len(fresh._variants) < 20


@pytest.mark.parametrize(
    ("patch", "pointer", "code"),
    [
        (
            {"instant_wins": {"table": [{"pattern": "dragon", "units": 5000, "strength": 1}] * 100_000}},
            "/patch/instant_wins/table",
            "invalid_ruleset",
        ),
        ({"title": "t", **{f"k{k}": 1 for k in range(6000)}}, "/patch", "invalid_ruleset"),
        ({"bonuses": {"back": {f"x{k}": 1 for k in range(14)}}}, "/patch/bonuses/back", "invalid_ruleset"),
        ({"title": [[1, 2]] * 1000}, "/patch", "too_many"),
        (
            {"scoop": {"x": {"x": {"x": {"x": {"x": {"x": {"x": {"x": {}}}}}}}}}},
            "/patch/scoop/x/x/x/x/x/x/x/x",
            "too_deep",
        ),
    ],
)
def test_a_patch_past_its_bounds_is_refused_on_them_alone(patch: dict[str, Any], pointer: str, code: str) -> None:
    """Counted before anything is merged or checked row by row: one fault, wherever the bound broke."""
    with pytest.raises(RulesetError) as refused:
        Catalogue(list(builtin_catalogue().latest.values())).resolve({"base": "maubinh-2020", "patch": patch})
    assert [("/" + "/".join(map(str, f.path)), f.code) for f in refused.value.faults] == [(pointer, code)]


def test_a_ruleset_lists_at_most_16_faults_then_says_there_are_more() -> None:
    """12 instant-win rows with 3 bad values each: 36 faults, of which 16 are listed, then one more line."""
    document = with_defaults(dict(builtin_catalogue().get("maubinh-2020").data))  # type: ignore[union-attr]
    document["instant_wins"]["table"] = [{"pattern": "nope", "units": 0, "strength": 0}] * 12
    faults = check_document(document)
    assert len(faults) == 17
    assert [f.path for f in faults[:3]] == [("instant_wins", "table", 0, k) for k in ("pattern", "units", "strength")]
    assert faults[-1].code == "too_many"


def test_merge_patch_follows_rfc_7396_appendix_a() -> None:
    """A few of RFC 7396's own examples."""
    assert merge_patch({"a": "b"}, {"a": "c"}) == {"a": "c"}
    assert merge_patch({"a": "b"}, {"a": None}) == {}
    assert merge_patch({"a": [{"b": "c"}]}, {"a": [1]}) == {"a": [1]}
    assert merge_patch({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}) == {"a": {"b": "d"}}
    assert merge_patch({"e": None}, {"a": 1}) == {"e": None, "a": 1}
    assert merge_patch({"a": "foo"}, None) is None
    assert merge_patch({}, {"a": {"bb": {"ccc": None}}}) == {"a": {"bb": {}}}


# Random valid patches keep every result zero-sum, itemised and deterministic.

SWEEP = st.one_of(
    st.integers(1, 100),
    st.tuples(st.integers(1, 100), st.integers(1, 100)).map(
        lambda s: [{"room_size": 3, "multiplier": s[0]}, {"room_size": 4, "multiplier": s[1]}]
    ),
)
BASIS = st.one_of(
    st.fixed_dictionaries({"basis": st.sampled_from(["total", "chi"]), "fixed_units": st.none()}),
    st.fixed_dictionaries({"basis": st.just("fixed"), "fixed_units": st.integers(1, 1000)}),
)
SCOOP = st.one_of(
    st.fixed_dictionaries({"multiplier": st.integers(1, 100), "table": st.none()}),
    st.just({"multiplier": None, "table": [{"room_size": n, "by_scoopers": [2] * (n - 1)} for n in (2, 3, 4)]}),
).flatmap(
    lambda s: st.fixed_dictionaries(
        {}, optional={"basis": BASIS, "sweep_multiplier": SWEEP, "sweep_pays": st.sampled_from(["scoop", "total"])}
    ).map(lambda extra: {**s, **extra.pop("basis", {}), **extra})
)
BONUS_KEYS = ["pair", "two_pair", "three_of_a_kind", "straight", "flush", "full_house", "four_of_a_kind",
              "straight_flush", "high_card", "trip_aces"]  # fmt: skip
BONUS_ROW = st.dictionaries(st.sampled_from(BONUS_KEYS), st.one_of(st.none(), st.integers(1, 1000)), max_size=4)
BOTH_FOULED = {"both_fouled": st.sampled_from(["nothing", "compare"])}
FOULS = st.one_of(
    st.fixed_dictionaries(
        {"foul_is_scoop": st.booleans(), "foul_multiplier": st.integers(1, 5), "left_is_scooped": st.booleans()},
        optional=BOTH_FOULED,
    ),
    st.fixed_dictionaries(
        {"foul_is_scoop": st.just(False), "foul_multiplier": st.just(1), "fixed_units": st.integers(1, 1000)},
        optional=BOTH_FOULED,
    ),
)
SKIP = {"skip_when_instant_win": st.booleans()}
ACES = st.one_of(
    st.none(),
    st.fixed_dictionaries({"room_size": st.just(4), "no_ace_pays": st.integers(0, 1000),
                           "collector_min_aces": st.integers(1, 4), "four_aces_receives": st.integers(0, 1000)},
                          optional=SKIP),
    st.fixed_dictionaries({"room_size": st.just(4), "mode": st.just("balance"), "units_per_ace": st.integers(1, 1000),
                           "no_ace_pays": st.none(), "collector_min_aces": st.none(),
                           "four_aces_receives": st.none()}, optional=SKIP),
)  # fmt: skip
INSTANT_WINS = st.fixed_dictionaries(
    {"collision": st.sampled_from(["stronger", "difference"])},
    optional={"settles_pair": st.booleans(), "ends_round": st.booleans()},
).map(lambda d: {**d, "ends_round": False} if d.get("settles_pair") is False else d)
PATCHES = st.fixed_dictionaries(
    {},
    optional={
        "scoop": SCOOP,
        "bonuses": st.fixed_dictionaries(
            {},
            optional={
                "mode": st.sampled_from(["replace", "add"]),
                "back": BONUS_ROW,
                "middle": BONUS_ROW,
                "front": BONUS_ROW,
            },
        ),
        "fouls": FOULS,
        "aces": ACES,
        "instant_wins": INSTANT_WINS,
        "wheel": st.sampled_from(["second", "lowest"]),
        "timeout": st.sampled_from(["foul", "as_arranged"]),
    },
)


@st.composite
def deals(draw: st.DrawFn) -> list[dict[str, Any]]:
    deck = draw(st.permutations(DECK_TEXT))
    players = []
    for k in range(draw(st.integers(2, 4))):
        hand = list(deck[13 * k : 13 * k + 13])
        status = draw(st.sampled_from(["arranged", "arranged", "arranged", "left"]))
        if status == "left":
            players.append({"id": f"p{k}", "status": "left", "cards": hand})
        else:
            players.append({"id": f"p{k}", "back": hand[:5], "middle": hand[5:10], "front": hand[10:]})
    return players


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(["maubinh-2020", "maubinh-chi-at", "maubinh-2020@1"]), patch=PATCHES, players=deals(),
       stake=st.integers(1, 10**6))  # fmt: skip
def test_random_valid_patches_score_deterministically_in_positive_lines_that_make_each_player_s_units(
    base: str, patch: dict[str, Any], players: list[dict[str, Any]], stake: int
) -> None:
    """No crash under any valid patch, the same bytes twice, each player's units its lines' sum (so
    zero-sum by construction: the golden §11 and §12 variants check the amounts against an independent
    reckoning, tests/unit/test_golden.py)."""
    request = {"ruleset": {"base": base, "patch": patch}, "stake": stake, "players": players}
    first = score_document(json.loads(json.dumps(request)))
    again = score_document(json.loads(json.dumps(request)))
    assert dumps(first) == dumps(again)
    assert sum(p["units"] for p in first["players"]) == 0
    for player in first["players"]:
        paid = sum(line["units"] for line in first["ledger"] if line["payer"] == player["id"])
        received = sum(line["units"] for line in first["ledger"] if line["payee"] == player["id"])
        assert player["units"] == received - paid
        assert player["amount"] == player["units"] * stake
    assert all(line["units"] > 0 and line["rule"] for line in first["ledger"])
