"""An operator's folder of rulesets (MAUBINH_RULESETS_DIR), with versions of their own and a lock.

Layout, as the built-ins' (docs/rules.md §11.4):
- ``DIR/<id>/<n>.json``: version ``n`` of ``<id>``, each ``{"base": "…@k", "patch": {"id": "<id>", …}}``;
  ``<id>@<n>`` always means that file's rules, a bare ``<id>`` the highest ``n``;
- ``DIR/<name>.json``: a flat file, version 1 of the id its patch sets (the first layout; move it to
  ``DIR/<id>/1.json`` as it is, and its rules and digest stay the same);
- ``DIR/rulesets.lock``: ``{"<id>@<n>": "sha256:…"}``, written by ``maubinh rulesets lock DIR``. A
  locked version whose file changed or is gone, or a lock that is not one, stops the folder; a
  version not yet locked loads, and ``maubinh rulesets check DIR`` lists it as unlocked.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import Any

from service.rulesets import Ruleset, RulesetError, RulesetFault
from service.rulesets.catalogue import Catalogue, builtin_catalogue
from service.support.strict_json import BadDocument, loads
from service.texts import Named, Text, os_error

LOCK_FILE = "rulesets.lock"
VERSION_FILE = re.compile(r"[1-9][0-9]{0,5}\.json")
"""A version's file name: ``n.json``, n from 1 to 999999 (the schema's version pattern)."""
LOCKED = re.compile(r"[a-z0-9][a-z0-9-]{0,63}@[1-9][0-9]{0,5}")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
MAX_OPERATOR_FILE_BYTES = 64 * 1024
"""An operator's file holds one patch, as a request does: the same 64 KiB. The lock too."""


class OperatorFileError(RulesetError):
    """An operator's file (a ruleset or the lock) that cannot be loaded: the service starts unready."""

    def __init__(self, path: FilePath, faults: list[RulesetFault]) -> None:
        super().__init__(faults)
        self.path = path

    def __str__(self) -> str:
        return self.said().en

    def said(self) -> Named:
        """Each fault on its line, with the file and the pointer, in each language."""
        lines = [(f"{self.path}: {_pointer(f.path)}", f.message) for f in self.faults]
        english = "\n".join(at + message for at, message in lines)
        vietnamese = "\n".join(at + (m.render("vi") if isinstance(m, Text) else m) for at, m in lines)
        return Named(english, vietnamese)


def _pointer(path: tuple[str | int, ...]) -> str:
    """Where in the file a fault is, before its message; nothing for the file as a whole (a bare "/"
    read as one more prefix)."""
    return f"/{'/'.join(map(str, path))}: " if path else ""


def _refused(path: FilePath, message: Text, *at: str | int) -> OperatorFileError:
    return OperatorFileError(path, [RulesetFault(tuple(at), message)])


def _operator_file_text(path: FilePath) -> bytes:
    """A regular file's bytes, at most MAX_OPERATOR_FILE_BYTES: opened without blocking, so that a FIFO
    (or a device) named ``*.json`` is refused instead of hanging the start; links are followed, as
    Kubernetes mounts a ConfigMap's files through them."""
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise _refused(path, Text("ruleset.operator_not_file"))
            text = file.read(MAX_OPERATOR_FILE_BYTES + 1)
    except OSError as error:
        raise _refused(path, Text("ruleset.operator_unreadable", error=os_error(error))) from None
    if len(text) > MAX_OPERATOR_FILE_BYTES:
        raise _refused(path, Text("ruleset.operator_too_large", most=MAX_OPERATOR_FILE_BYTES))
    return text


def _json_object(path: FilePath, unreadable: str, not_object: str) -> dict[str, Any]:
    """An operator's file as one JSON object, read as strictly as a request body (a key twice is
    refused); the two keys say what is wrong when it is not."""
    try:
        document = loads(_operator_file_text(path))
    except BadDocument as error:
        raise _refused(path, Text(unreadable, error=error.args[0])) from None
    if not isinstance(document, dict):
        raise _refused(path, Text(not_object))
    return document


def load_operator_file(path: FilePath, catalogue: Catalogue, version: int = 1) -> tuple[FilePath, Ruleset]:
    """One operator file, ``{"base": …, "patch": {"id": …, …}}``, resolved against ``catalogue`` as
    ``version`` of its id, and parsed as strictly as a request body (a key twice is refused)."""
    document = _json_object(path, "ruleset.operator_unreadable", "ruleset.operator_shape")
    try:
        return path, catalogue.resolve(document, must_name=True, version=version)
    except RulesetError as error:
        raise OperatorFileError(path, error.faults) from None


def version_of(path: FilePath) -> int:
    """The version a file stands for: ``n`` for ``<id>/n.json``, else 1 (a flat file)."""
    return int(path.stem) if VERSION_FILE.fullmatch(path.name) else 1


@dataclass(frozen=True)
class Folder:
    """What an operator's folder holds: each version's file and ruleset, and its lock (None: none)."""

    rulesets: tuple[tuple[FilePath, Ruleset], ...]
    lock: dict[str, str] | None

    def unlocked(self) -> list[tuple[FilePath, Ruleset]]:
        return [(path, r) for path, r in self.rulesets if self.lock is None or f"{r.id}@{r.version}" not in self.lock]


def _version_files(directory: FilePath) -> list[tuple[FilePath, int, str | None]]:
    """(file, version, the folder's id or None for a flat file), in a stable order."""
    found: list[tuple[FilePath, int, str | None]] = [(p, 1, None) for p in sorted(directory.glob("*.json"))]
    for folder in sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for path in sorted(folder.iterdir()):
            if not VERSION_FILE.fullmatch(path.name):
                raise _refused(path, Text("ruleset.operator_version_name"))
            found.append((path, int(path.stem), folder.name))
    return found


def read_lock(directory: FilePath) -> dict[str, str] | None:
    """``DIR/rulesets.lock``, checked: an object of ``"<id>@<n>": "sha256:…"``; None when there is none."""
    path = directory / LOCK_FILE
    if not path.exists():
        return None
    lock = _json_object(path, "ruleset.lock_unreadable", "ruleset.lock_shape")
    for reference, digest in lock.items():
        if not LOCKED.fullmatch(reference) or not isinstance(digest, str) or not DIGEST.fullmatch(digest):
            raise _refused(path, Text("ruleset.lock_shape"), reference[:80])
    return dict(lock)


def load_folder(directory: str | FilePath, catalogue: Catalogue) -> Folder:
    """Every version in ``directory``, resolved against ``catalogue`` (the built-ins), and checked
    against its lock; :class:`OperatorFileError` names the first bad file with all of its faults."""
    directory = FilePath(directory)
    if not directory.is_dir():
        raise _refused(directory, Text("ruleset.operator_folder_missing"))
    loaded: list[tuple[FilePath, Ruleset]] = []
    where: dict[str, FilePath] = {}
    try:
        files = _version_files(directory)
    except OSError as error:  # a folder it may not list
        raise _refused(directory, Text("ruleset.operator_folder_unreadable", error=os_error(error))) from error
    for path, version, folder_id in files:
        _, ruleset = load_operator_file(path, catalogue, version)
        if folder_id is not None and ruleset.id != folder_id:
            raise _refused(path, Text("ruleset.operator_folder_id", id=ruleset.id, folder=folder_id), "patch", "id")
        reference = f"{ruleset.id}@{ruleset.version}"
        if reference in where:
            message = Text("ruleset.operator_id_twice", id=reference, file=where[reference].relative_to(directory))
            raise _refused(path, message, "patch", "id")
        where[reference] = path
        loaded.append((path, ruleset))
    lock = read_lock(directory)
    for reference, digest in (lock or {}).items():
        found = next((r for _, r in loaded if f"{r.id}@{r.version}" == reference), None)
        if found is None:
            raise _refused(directory / LOCK_FILE, Text("ruleset.locked_gone", reference=reference), reference)
        if found.digest != digest:
            message = Text("ruleset.locked_changed", reference=reference, locked=digest, found=found.digest)
            raise _refused(where[reference], message)
    return Folder(tuple(loaded), lock)


def lock_text(folder: Folder) -> str:
    """The lock of every version in the folder, as ``maubinh rulesets lock`` writes it: the lock it
    had, plus the versions it lacked (a locked version is never rewritten: load_folder refused it)."""
    lock = {**(folder.lock or {}), **{f"{r.id}@{r.version}": r.digest for _, r in folder.rulesets}}
    ordered = sorted(lock.items(), key=lambda item: (item[0].partition("@")[0], int(item[0].partition("@")[2])))
    return json.dumps(dict(ordered), indent=2) + "\n"


def write_lock(directory: FilePath, text: str) -> None:
    """``DIR/rulesets.lock`` written whole, or not at all: a new file in DIR renamed over the old name,
    so that a ``rulesets.lock`` that is a symlink is replaced, never written through (it could point
    outside DIR), and a reader never sees half a lock."""
    import tempfile  # here: only `rulesets lock` needs it, and every command would import it

    handle, temporary = tempfile.mkstemp(prefix=".rulesets.lock.", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, FilePath(directory) / LOCK_FILE)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def catalogue_for(directory: str | None) -> Catalogue:
    """The built-in rulesets plus an operator's folder, if any; a bad file raises OperatorFileError."""
    if not directory:
        return builtin_catalogue()
    builtins = builtin_catalogue()
    return builtins.with_rulesets([ruleset for _, ruleset in load_folder(directory, builtins).rulesets])
