"""Where rulesets come from (docs/rules.md §11): built-in versions, operators' files and requests' variants.

A reference is an id (the latest version), a pinned id (``maubinh-2020@1``) or a house-rule
variant ``{"base": <id or id@version>, "patch": <RFC 7396 merge patch>}``. A variant is
resolved once per distinct (base, canonical patch) and kept in an LRU bounded in entries and
bytes, so a backend that sends the same house rules with every room pays for resolving them once.
A refused patch is never kept: its cheap limits (depth, members) are checked before anything else.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from threading import Lock
from typing import Any

from service import package_files
from service.rulesets import (
    Change,
    Path,
    Ruleset,
    RulesetError,
    RulesetFault,
    build_ruleset,
    canonical_json,
    digest_of,
    patch_bound_faults,
    with_defaults,
)
from service.rulesets.checks import same_json, unknown_deletions
from service.support.suggest import near
from service.texts import Text

RULESETS_DIR_ENV = "MAUBINH_RULESETS_DIR"
"""The environment variable naming an operator's folder of ruleset files (service and CLI alike)."""
RESERVED = ("version", "sources", "choices")
"""Document keys that are the service's own: a patch that sets them is refused (§11)."""
PLAIN_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
"""Matched whole (``fullmatch``): ``$`` would also match before a final newline."""
CUSTOM_SUFFIX = "~custom"
VARIANT_CACHE_SIZE = 256
VARIANT_CACHE_BYTES = 4 * 1024 * 1024
"""What the cached variants may hold, counted as their patches' and documents' canonical JSON."""
LISTED_MEMBERS = 8
"""A refused reference names at most this many of its unknown members."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396: objects merge key by key, ``null`` deletes, anything else (arrays too) replaces.

    >>> merge_patch({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": None, "e": 4}, "f": [5]})
    {'a': 1, 'b': {'d': 3, 'e': 4}, 'f': [5]}
    """
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def _integral(value: Any) -> Any:
    """JSON's ``2.0`` is the integer 2 (as in JSON Schema): normalised so that equal patches are equal."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def _patch_path(path: Path, patch: Any) -> Path | None:
    """The deepest part of ``patch`` on ``path``: the fault's place in what the caller wrote."""
    found: list[str | int] = []
    node = patch
    for step in path:
        in_object = isinstance(node, dict) and isinstance(step, str) and step in node
        in_array = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        if not (in_object or in_array):
            break
        node = node[step]
        found.append(step)
    return tuple(found) if found else None


def _leaves(document: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(document, dict):
        for key, value in document.items():
            yield from _leaves(value, f"{prefix}.{key}" if prefix else key)
    else:
        yield prefix, document


def changes_between(base: Mapping[str, Any], variant: Mapping[str, Any]) -> tuple[Change, ...]:
    """Every leaf (an array counts as one) that differs, in the variant's order then the base's."""
    before, after = dict(_leaves(dict(base))), dict(_leaves(dict(variant)))
    fields = list(after) + [f for f in before if f not in after]
    return tuple(Change(f, before.get(f), after.get(f)) for f in fields if not same_json(before.get(f), after.get(f)))


class BuiltinRuleset:
    """A ruleset shipped in this package, read and built at its first use, then kept: a command scoring
    one room needs one of them, and building them all was a start-up cost (bench/cli.py)."""

    def __init__(self, folder: str, name: str) -> None:
        self.id, self.version = folder, name.removesuffix(".json")
        self._file = ("builtin", folder, name)
        self._built: Ruleset | None = None
        self._lock = Lock()

    def ruleset(self) -> Ruleset:
        if (built := self._built) is not None:
            return built
        with self._lock:
            if self._built is None:
                document = json.loads(package_files.read_bytes(__package__, *self._file))
                if (document.get("id"), document.get("version")) != (self.id, self.version):
                    misplaced = Text("ruleset.builtin_misplaced", file="/".join(self._file))
                    raise RulesetError([RulesetFault((), misplaced)])
                self._built = build_ruleset(document, checked=True)
            return self._built


class _Shelf(Mapping[str, Ruleset]):
    """Rulesets by key, a built-in one built when it is first looked up."""

    def __init__(self, entries: Mapping[str, Ruleset | BuiltinRuleset]) -> None:
        self.entries = entries

    def __getitem__(self, key: str) -> Ruleset:
        entry = self.entries[key]
        return entry.ruleset() if isinstance(entry, BuiltinRuleset) else entry

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


class Catalogue:
    """Every ruleset a process knows, by id and version, and the variants resolved from them."""

    def __init__(self, rulesets: Iterable[Ruleset | BuiltinRuleset]) -> None:
        versions: dict[str, dict[str, Ruleset | BuiltinRuleset]] = {}
        for ruleset in rulesets:
            versions.setdefault(ruleset.id, {})[ruleset.version] = ruleset
        self._versions = {rid: _Shelf(entries) for rid, entries in versions.items()}
        self.latest: Mapping[str, Ruleset] = _Shelf(
            {rid: entries[max(entries, key=int)] for rid, entries in sorted(versions.items())}
        )
        self._variants: OrderedDict[tuple[str, str, bytes], tuple[Ruleset, int]] = OrderedDict()
        self._variant_bytes = 0
        self._lock = Lock()

    def versions(self, ruleset_id: str) -> list[Ruleset]:
        shelf = self._versions.get(ruleset_id, _Shelf({}))
        return [shelf[v] for v in sorted(shelf, key=int)]

    def get(self, reference: str) -> Ruleset | None:
        """By id (the latest version) or pinned id ``id@version``."""
        ruleset_id, at, version = reference.partition("@")
        if not at:
            return self.latest.get(ruleset_id)
        shelf = self._versions.get(ruleset_id)
        return shelf.get(version) if shelf is not None else None

    def unknown(self, reference: str) -> Text:
        ruleset_id, at, version = reference.partition("@")
        if at and ruleset_id in self._versions:
            known = ", ".join(f"@{v}" for v in sorted(self._versions[ruleset_id], key=int))
            return Text("ruleset.unknown_version", ruleset=ruleset_id, version=version[:16], known=known)
        known = ", ".join(self.latest)
        if (meant := near(ruleset_id, self.latest)) is not None:
            pinned = f"{meant}@{version}" if at and version in self._versions[meant] else meant
            return Text("ruleset.unknown_near", reference=reference[:80], near=pinned, known=known)
        return Text("ruleset.unknown", reference=reference[:80], known=known)

    def resolve(self, reference: Any, *, must_name: bool = False, version: int | None = None) -> Ruleset:
        """The ruleset a request names; :class:`RulesetError` with paths relative to the reference.
        ``must_name``: a variant must set its own id; ``version``: and is that version of it (an
        operator's file), else it carries its base's."""
        if isinstance(reference, str):
            found = self.get(reference)
            if found is None:
                raise RulesetError([RulesetFault((), self.unknown(reference), "unknown_ruleset")])
            return found
        if not isinstance(reference, dict) or set(reference) != {"base", "patch"}:
            message = Text("ruleset.reference")
            if isinstance(reference, dict):
                extra = [key for key in reference if key not in ("base", "patch")]
                missing = sorted({"base", "patch"} - set(reference))
                if extra:
                    listed = ", ".join(key[:64] for key in extra[:LISTED_MEMBERS])
                    message = Text(
                        "ruleset.reference_extra", members=listed + (", …" if len(extra) > LISTED_MEMBERS else "")
                    )
                else:
                    message = Text("ruleset.reference_missing", members=", ".join(missing))
            raise RulesetError([RulesetFault((), message)])
        base_ref, patch = reference["base"], reference["patch"]
        faults = []
        base = self.get(base_ref) if isinstance(base_ref, str) else None
        if base is None:
            message = self.unknown(base_ref) if isinstance(base_ref, str) else Text("ruleset.base")
            faults.append(RulesetFault(("base",), message, "unknown_ruleset"))
        if not isinstance(patch, dict):
            faults.append(RulesetFault(("patch",), Text("ruleset.patch")))
        if faults or base is None or not isinstance(patch, dict):
            raise RulesetError(faults)
        return self.variant(base, patch, must_name=must_name, version=version)

    def variant(
        self, base: Ruleset, patch: dict[str, Any], *, must_name: bool = False, version: int | None = None
    ) -> Ruleset:
        """``base`` patched, from the cache when this patch was resolved before.

        The cache is asked first by the patch as written (its canonical JSON: a request body's
        patch is already bounded in bytes and values, so this costs microseconds), then, on a miss,
        by the patch with its cheap bounds checked and its numbers normalised, under which it is
        resolved. A backend sending the same house rules with every room pays only the first."""
        flag = (b"!" if must_name else b"") + (b"@%d" % version if version is not None else b"")
        written = (base.id, base.version, canonical_json(patch) + flag)
        if (cached := self._cached(written)) is not None:
            return cached
        if bounds := patch_bound_faults(patch):
            raise RulesetError([RulesetFault(("patch", *fault.path), fault.message, fault.code) for fault in bounds])
        patch = _integral(patch)
        key = (base.id, base.version, canonical_json(patch) + flag)
        resolved = self._cached(key) if key != written else None
        if resolved is None:
            resolved = self._resolve_variant(base, patch, must_name, version)
            self._keep(key, resolved)
        if key != written:
            self._keep(written, resolved)
        return resolved

    def _cached(self, key: tuple[str, str, bytes]) -> Ruleset | None:
        with self._lock:
            cached = self._variants.get(key)
            if cached is None:
                return None
            self._variants.move_to_end(key)
            return cached[0]

    def _keep(self, key: tuple[str, str, bytes], resolved: Ruleset) -> None:
        size = len(key[2]) + len(canonical_json(dict(resolved.data)))
        with self._lock:
            if key in self._variants:
                return
            self._variants[key] = (resolved, size)
            self._variant_bytes += size
            while len(self._variants) > VARIANT_CACHE_SIZE or self._variant_bytes > VARIANT_CACHE_BYTES:
                self._variant_bytes -= self._variants.popitem(last=False)[1][1]

    def _resolve_variant(
        self, base: Ruleset, patch: dict[str, Any], must_name: bool, version: int | None = None
    ) -> Ruleset:
        faults = [RulesetFault(("patch", key), Text("ruleset.reserved", key=key)) for key in RESERVED if key in patch]
        faults += [RulesetFault(("patch", *f.path), f.message, f.code) for f in unknown_deletions(patch)]
        new_id = patch.get("id")
        if "id" in patch:
            if new_id is None:  # a merge patch's null deletes: a ruleset without an id is none
                faults.append(RulesetFault(("patch", "id"), Text("ruleset.id_null", name=f"{base.id}{CUSTOM_SUFFIX}")))
            elif not isinstance(new_id, str) or not PLAIN_ID.fullmatch(new_id):
                faults.append(RulesetFault(("patch", "id"), Text("ruleset.id_pattern")))
            elif new_id in self.latest:
                faults.append(RulesetFault(("patch", "id"), Text("ruleset.id_taken", id=new_id)))
        elif must_name:
            faults.append(RulesetFault(("patch", "id"), Text("ruleset.operator_id")))
        refused = {key for key in (*RESERVED, "id") if any(f.path == ("patch", key) for f in faults)}
        usable = {key: value for key, value in patch.items() if key not in refused}
        base_document = with_defaults(base.data)
        merged = with_defaults(merge_patch(base_document, usable))
        written = with_defaults(merge_patch(dict(base.data), usable), version=int(base.version))
        if version is not None:  # an operator's own version; the knobs its base's version knew
            written["version"] = str(version)
        if "id" not in patch and not faults:
            if same_json(merged, base_document):
                return build_ruleset(base.data, digest=base.digest, base=base.ref)
            merged["id"] = written["id"] = f"{base.id}{CUSTOM_SUFFIX}"
        try:
            resolved = build_ruleset(
                written,
                base=base.ref,
                changes=changes_between(base_document, merged),
                digest=digest_of(written),
                merged_from=base_document,
            )
        except RulesetError as error:
            faults += [self._in_patch(fault, patch) for fault in error.faults]
        if faults:
            raise RulesetError(faults)
        return resolved

    @staticmethod
    def _in_patch(fault: RulesetFault, patch: dict[str, Any]) -> RulesetFault:
        found = _patch_path(fault.path, patch)
        return RulesetFault(("patch", *found) if found else (), fault.message, fault.code)

    def limited_to(self, operator_ids: frozenset[str]) -> Catalogue:
        """This catalogue with the built-ins and only ``operator_ids`` of the operator's rulesets: to a
        caller limited so, any other is an unknown id (its variants' cache is its own)."""
        builtin = builtin_catalogue().latest
        kept = [rid for rid in self._versions if rid in builtin or rid in operator_ids]
        if len(kept) == len(self._versions):
            return self  # nothing to hide: the same catalogue, its caches warm
        return Catalogue(entry for rid in kept for entry in self._versions[rid].entries.values())

    def with_rulesets(self, added: list[Ruleset]) -> Catalogue:
        """This catalogue plus ``added`` (an operator's folder: operator_folder.catalogue_for)."""
        return Catalogue([*(entry for shelf in self._versions.values() for entry in shelf.entries.values()), *added])


@cache
def builtin_catalogue() -> Catalogue:
    """Every version of every ruleset shipped in this package, each built at its first use, once per
    process. They are not checked against the schema here (tests/unit/test_rulesets.py does, for every
    version), so that a command scoring one room does not import jsonschema."""
    return Catalogue(
        BuiltinRuleset(folder, name)
        for folder in package_files.names(__package__, "builtin")
        for name in package_files.names(__package__, "builtin", folder)
        if name.endswith(".json")
    )
