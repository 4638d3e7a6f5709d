"""What a ruleset document must be (docs/rules.md §11.3, §12.2): the schema (service/rulesets/schema.json)
with its defaults, a patch's cheap bounds, §11.3's invariants beyond the schema, and each refusal
in words of each language."""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from service import package_files
from service.rulesets.model import Path, RulesetFault
from service.texts import Named, Text, listed


@cache
def schema() -> dict[str, Any]:
    """The ruleset schema (service/rulesets/schema.json), also served inside openapi.yaml's terms."""
    loaded: dict[str, Any] = json.loads(package_files.read_bytes(__package__, "schema.json"))
    return loaded


def _whole_pattern(pattern: str) -> re.Pattern[str]:
    """A schema ``pattern`` as ECMA-262 (JSON Schema's dialect) reads it: a final ``$`` ends the
    string. Python's ``$`` also matches before a final newline, which would let ``"id\\n"`` pass."""
    return re.compile(pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern)


@cache
def _validator() -> Any:
    """jsonschema is imported here, not at start: scoring under a built-in never needs it."""
    import jsonschema

    def pattern(validator: Any, expected: str, instance: Any, _schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not _whole_pattern(expected).search(instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {expected!r}")

    strict = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": pattern})  # type: ignore[no-untyped-call]
    return strict(schema())


def _resolve_ref(node: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        resolved: Mapping[str, Any] = schema()["$defs"][ref.removeprefix("#/$defs/")]
        return {**resolved, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def with_defaults(
    document: Mapping[str, Any], node: Mapping[str, Any] | None = None, *, version: int | None = None
) -> dict[str, Any]:
    """A copy with every key the schema gives a ``default`` filled in where absent (§11: a deleted
    nullable key is null again; a knob left out is its default). Values of the wrong type are kept
    as they are, for :func:`check_document` to report.

    ``version``: fill only the knobs that version of the built-ins knew (``x-since-version``), as a
    variant of it is written out: its document, and so its digest, stays what it was before later
    knobs existed. Left out, every default is filled, as the pipeline reads a document."""
    node = _resolve_ref(schema() if node is None else node)
    out = dict(document)
    for key, declared in node.get("properties", {}).items():
        child = _resolve_ref(declared)
        known = version is None or child.get("x-since-version", 1) <= version
        if key not in out and "default" in child and known:
            out[key] = copy.deepcopy(child["default"])
        elif isinstance(out.get(key), dict) and "properties" in child:
            out[key] = with_defaults(out[key], child, version=version)
    return out


JSON_TYPES = {
    "integer": Named("an integer", "số nguyên"),
    "number": Named("a number", "số"),
    "string": Named("a string", "chuỗi"),
    "boolean": Named("true or false", "true hoặc false"),
    "object": Named("an object", "đối tượng JSON"),
    "array": Named("an array", "mảng"),
    "null": Named("null", "null"),
}
SCHEMA_TEXTS = {
    "type": "ruleset.schema_type",
    "minimum": "ruleset.schema_minimum",
    "maximum": "ruleset.schema_maximum",
    "enum": "ruleset.schema_enum",
    "const": "ruleset.schema_const",
    "minItems": "ruleset.schema_min_items",
    "maxItems": "ruleset.schema_max_items",
    "maxProperties": "ruleset.schema_max_properties",
    "minLength": "ruleset.schema_min_length",
    "maxLength": "ruleset.schema_max_length",
    "pattern": "ruleset.schema_pattern",
}
"""Each keyword schema.json uses → the text that refuses a value for it (others: ruleset.schema_other)."""


SHOWN_CHARS = 80
"""A refused value is shown up to this long (cut with "…"), so that the reason after it is never lost."""


def schema_text(error: Any, where: str) -> Text:
    """A JSON Schema refusal in words of each language (jsonschema's own messages are English only)."""
    key = SCHEMA_TEXTS.get(error.validator, "ruleset.schema_other")
    expected = error.validator_value
    if error.validator == "type":
        kinds = [JSON_TYPES[kind] for kind in ([expected] if isinstance(expected, str) else expected)]
        expected = Named(" or ".join(k.en for k in kinds), " hoặc ".join(k.vi for k in kinds))
    elif isinstance(expected, list):
        expected = ", ".join(json.dumps(v, ensure_ascii=False) for v in expected)
    value = json.dumps(error.instance, ensure_ascii=False)
    value = value if len(value) <= SHOWN_CHARS else value[: SHOWN_CHARS - 1] + "…"
    where_text = Named(where, where) if where else Named("the ruleset", "bộ luật")
    return Text(key, where=where_text, value=value, expected=expected, english=error.message[:200])


MOST_FAULTS = 16
"""A ruleset's faults are counted up to here: past it, one more says only that there are more."""
MAX_PATCH_DEPTH = 8
"""Objects and arrays nested deeper than this are refused before anything walks them: the schema's
deepest value (``scoop.table[i].by_scoopers[j]``) sits four containers down."""
MAX_PATCH_VALUES = 2000
"""A patch holding more values than this is refused unread: a whole ruleset document holds ~300."""


def patch_bound_faults(patch: Any) -> list[RulesetFault]:
    """The cheap limits of a patch, checked before it is merged or checked row by row: no object or
    array with more members than the schema's ``maxProperties`` or ``maxItems`` allows where it
    stands (refused on its length alone), then at most MAX_PATCH_VALUES values, none nested past
    MAX_PATCH_DEPTH. Each check stops at its bound, so none costs more than the bound."""
    if sizes := list(_size_faults(patch, schema(), ())):
        return sizes
    stack: list[tuple[Any, Path]] = [(patch, ())]
    for _ in range(MAX_PATCH_VALUES):
        if not stack:
            return []
        node, path = stack.pop()
        if len(path) > MAX_PATCH_DEPTH:
            return [RulesetFault(path, Text("ruleset.too_deep", most=MAX_PATCH_DEPTH), "too_deep")]
        if isinstance(node, dict):
            stack.extend((value, (*path, key)) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, (*path, k)) for k, value in enumerate(node))
    if not stack:
        return []
    return [RulesetFault((), Text("ruleset.too_many_values", most=MAX_PATCH_VALUES), "too_many")]


def _size_faults(node: Any, declared: Mapping[str, Any], path: Path) -> Iterator[RulesetFault]:
    declared = _resolve_ref(declared)
    if isinstance(node, dict):
        most = declared.get("maxProperties")
        if most is not None and len(node) > most:
            where = Named(".".join(map(str, path)) or "the patch", ".".join(map(str, path)) or "patch")
            names = ", ".join(declared.get("properties") or declared.get("propertyNames", {}).get("enum", []))
            message = Text("ruleset.too_many_members", where=where, expected=most, names=names, count=len(node))
            yield RulesetFault(path, message)
            return
        extra = declared.get("additionalProperties")
        for key, value in node.items():
            child = declared.get("properties", {}).get(key, extra if isinstance(extra, dict) else None)
            if child is not None and isinstance(value, dict | list):
                yield from _size_faults(value, child, (*path, key))
    elif isinstance(node, list):
        most = declared.get("maxItems")
        if most is not None and len(node) > most:
            at = ".".join(map(str, path))
            yield RulesetFault(
                path, Text("ruleset.too_many_items", where=Named(at, at), expected=most, count=len(node))
            )
            return
        if isinstance(items := declared.get("items"), dict):
            for k, value in enumerate(node):
                if isinstance(value, dict | list):
                    yield from _size_faults(value, items, (*path, k))


def unknown_deletions(node: Any, declared: Mapping[str, Any] | None = None, path: Path = ()) -> Iterator[RulesetFault]:
    """Unknown keys a patch sets to null: the merge would drop them unseen, though a ruleset has no
    such field (a non-null one is refused by the schema once merged). The walk follows the schema."""
    declared = _resolve_ref(schema() if declared is None else declared)
    if not isinstance(node, dict):
        return
    known = declared.get("properties", {})
    closed = declared.get("additionalProperties") is False
    for key, value in node.items():
        if key in known:
            yield from unknown_deletions(value, known[key], (*path, key))
        elif closed and value is None:
            yield RulesetFault((*path, key), Text("ruleset.unknown_field", key=key), "unknown_field")


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: Python's ``==`` holds ``True == 1`` and ``False == 0``, which JSON and the
    schema tell apart (a patch's 0 for a base's false was taken as no change, and never checked)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _schema_errors(document: Any, checked: Mapping[str, Any] | None) -> Iterator[Any]:
    """jsonschema's errors for ``document``. With ``checked``, a document that passed and that this one
    was merged from, only the top-level fields that differ from it are checked again (nothing in the
    schema relates two of them), with the document's own keys and required fields."""
    validator = _validator()
    if checked is None:
        yield from validator.iter_errors(document)
        return
    root = schema()
    if not isinstance(document, dict):
        yield from validator.iter_errors(document)
        return
    shallow = {k: ({p: True for p in v} if k == "properties" else v) for k, v in root.items()}
    yield from validator.evolve(schema=shallow).iter_errors(document)
    for key, declared in root["properties"].items():
        if key in document and (key not in checked or not same_json(checked[key], document[key])):
            for error in validator.evolve(schema=declared).iter_errors(document[key]):
                error.path.appendleft(key)
                yield error


def _schema_faults(document: Any, checked: Mapping[str, Any] | None = None) -> Iterator[RulesetFault]:
    for error in _schema_errors(document, checked):
        path: Path = tuple(error.absolute_path)
        if error.validator == "maxProperties" and _resolve_ref(error.schema).get("additionalProperties") is False:
            continue  # too many members of a closed object means unknown ones, each named below
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = _resolve_ref(error.schema).get("properties", {})
            for key in error.instance:
                if key not in known:
                    yield RulesetFault((*path, key), Text("ruleset.unknown_field", key=key), "unknown_field")
            continue
        if error.validator == "required" and isinstance(error.instance, dict):
            for key in error.validator_value:
                if key not in error.instance:
                    yield RulesetFault((*path, key), Text("ruleset.required", field=".".join(map(str, (*path, key)))))
            continue
        if "propertyNames" in error.schema_path:
            yield RulesetFault((*path, str(error.instance)), Text("ruleset.not_a_hand", key=error.instance))
            continue
        yield RulesetFault(path, schema_text(error, ".".join(map(str, path))))


def _scoop_table_faults(document: Mapping[str, Any]) -> Iterator[RulesetFault]:
    scoop, players = document["scoop"], document["players"]
    if ("multiplier" in scoop) == ("table" in scoop):
        yield RulesetFault(("scoop",), Text("ruleset.scoop_one_of"))
        return
    if "table" not in scoop:
        return
    sizes = [row["room_size"] for row in scoop["table"]]
    wanted = list(range(players["min"], players["max"] + 1))
    if sorted(sizes) != wanted:
        yield RulesetFault(
            ("scoop", "table"),
            Text("ruleset.scoop_table_rows", low=players["min"], high=players["max"], sizes=listed(sorted(sizes))),
        )
    for k, row in enumerate(scoop["table"]):
        if len(row["by_scoopers"]) != row["room_size"] - 1:
            yield RulesetFault(
                ("scoop", "table", k, "by_scoopers"),
                Text(
                    "ruleset.scoop_row",
                    size=row["room_size"],
                    needed=row["room_size"] - 1,
                    count=len(row["by_scoopers"]),
                ),
            )


def _sweep_table_faults(document: Mapping[str, Any]) -> Iterator[RulesetFault]:
    """§12.2: a sweep table has one row per room size a room can be swept in, max(3, min)…max."""
    table, players = document["scoop"]["sweep_multiplier"], document["players"]
    if not isinstance(table, list):
        return
    sizes = sorted(row["room_size"] for row in table)
    low = max(3, players["min"])
    if sizes != list(range(low, players["max"] + 1)):
        yield RulesetFault(
            ("scoop", "sweep_multiplier"),
            Text("ruleset.sweep_table_rows", low=low, high=players["max"], sizes=listed(sizes)),
        )


def _scoop_basis_faults(scoop: Mapping[str, Any]) -> Iterator[RulesetFault]:
    """§12.2: ``scoop.fixed_units`` is there exactly when the basis is ``fixed``."""
    if (scoop["basis"] == "fixed") != ("fixed_units" in scoop):
        yield RulesetFault(("scoop", "fixed_units"), Text("ruleset.scoop_fixed_units", basis=scoop["basis"]))


ACE_KEYS = {
    "collectors": {"room_size", "mode", "no_ace_pays", "collector_min_aces", "four_aces_receives"},
    "balance": {"room_size", "mode", "units_per_ace"},
}
"""§12.2: the keys of an ``aces`` document by its mode (``skip_when_instant_win`` may join either)."""


def _ace_faults(aces: Mapping[str, Any] | None) -> Iterator[RulesetFault]:
    if aces is None:
        return
    wanted = ACE_KEYS[aces["mode"]]
    have = set(aces) - {"skip_when_instant_win"}
    for key in sorted(have - wanted):
        yield RulesetFault(("aces", key), Text("ruleset.aces_key_extra", key=key, mode=aces["mode"]))
    for key in sorted(wanted - have):
        yield RulesetFault(("aces", key), Text("ruleset.aces_key_missing", key=key, mode=aces["mode"]))


def _invariant_faults(document: Mapping[str, Any]) -> Iterator[RulesetFault]:
    """§11.3 and §12.2 beyond the schema; runs only on a document the schema accepts."""
    players = document["players"]
    if players["min"] > players["max"]:
        yield RulesetFault(("players",), Text("ruleset.players_order", low=players["min"], high=players["max"]))
    else:
        yield from _scoop_table_faults(document)
        yield from _sweep_table_faults(document)
    yield from _scoop_basis_faults(document["scoop"])
    instant_wins = document["instant_wins"]
    if not instant_wins["settles_pair"] and instant_wins["ends_round"]:
        yield RulesetFault(("instant_wins", "settles_pair"), Text("ruleset.settles_pair_ends_round"))
    yield from _ace_faults(document["aces"])
    seen: set[str] = set()
    for k, row in enumerate(document["instant_wins"]["table"]):
        if row["pattern"] in seen:
            yield RulesetFault(
                ("instant_wins", "table", k, "pattern"), Text("ruleset.pattern_twice", pattern=row["pattern"])
            )
        seen.add(row["pattern"])
    fouls = document["fouls"]
    if fouls.get("fixed_units") is not None and (fouls["foul_is_scoop"] or fouls["foul_multiplier"] != 1):
        yield RulesetFault(
            ("fouls", "fixed_units"),
            Text("ruleset.fixed_foul"),
        )


def check_document(document: Any, checked: Mapping[str, Any] | None = None) -> list[RulesetFault]:
    """Every fault of a (defaults-filled) ruleset document, up to MOST_FAULTS: the schema, then §11.3's
    invariants. ``checked``: the document this one was merged from, which passed (see _schema_errors)."""
    faults = list(dict.fromkeys(itertools.islice(_schema_faults(document, checked), MOST_FAULTS + 1)))
    if len(faults) > MOST_FAULTS:
        faults = [*faults[:MOST_FAULTS], RulesetFault((), Text("ruleset.more_faults", most=MOST_FAULTS), "too_many")]
    if not faults:
        faults = list(_invariant_faults(document))
    return faults
