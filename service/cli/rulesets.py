"""``maubinh rulesets``: list or print the rulesets; ``check`` and ``lock`` an operator's files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from service.cli.shared import EXIT_REJECTED, EXIT_USAGE, Helped, language_option, say, write_document
from service.rulesets.catalogue import Catalogue, builtin_catalogue
from service.rulesets.operator_folder import (
    LOCK_FILE,
    OperatorFileError,
    load_folder,
    load_operator_file,
    lock_text,
    version_of,
    write_lock,
)
from service.serialize import problem_json, ruleset_json, rulesets_json
from service.texts import Language, Named, Text, os_error


def run(words: list[str], catalogue: Catalogue, language: Language) -> int:
    if not words:
        write_document(rulesets_json(catalogue))
        return 0
    if words[0] == "check":
        return _check(words[1:], language)
    if words[0] == "lock":
        return _lock(words[1:], language)
    if len(words) > 1:
        say("rulesets", "cli.rulesets_usage", language)
        return EXIT_USAGE
    ruleset = catalogue.get(words[0])
    if ruleset is None:
        write_document(problem_json(404, Text("problem.not_found"), catalogue.unknown(words[0])), language)
        return EXIT_REJECTED
    write_document(ruleset_json(ruleset))
    return 0


def _check(paths: list[str], language: Language) -> int:
    """For an operator's CI: each file resolved as the service would (``<id>/n.json`` as version n),
    or a whole folder with its lock; each version's id, digest and whether it is locked, or the faults."""
    if not paths:
        say("rulesets check", "cli.check_usage", language)
        return EXIT_USAGE
    if len(paths) == 1 and Path(paths[0]).is_dir():
        try:
            folder = load_folder(paths[0], builtin_catalogue())
        except OperatorFileError as error:
            print(_said(error.said(), language), file=sys.stderr)
            return EXIT_REJECTED
        unlocked = {file for file, _ in folder.unlocked()}
        for file, ruleset in folder.rulesets:
            state = Text("cli.unlocked" if file in unlocked else "cli.locked").render(language)
            print(f"{file}: ok {ruleset.id}@{ruleset.version} {ruleset.digest} {state}")
        return 0
    bad = 0
    for path in paths:
        try:
            _, ruleset = load_operator_file(Path(path), builtin_catalogue(), version_of(Path(path)))
        except OperatorFileError as error:
            bad += 1
            print(_said(error.said(), language), file=sys.stderr)
            continue
        print(f"{path}: ok {ruleset.id}@{ruleset.version} {ruleset.digest}")
    return EXIT_REJECTED if bad else 0


def _said(named: Named, language: Language) -> str:
    return named.vi if language == "vi" else named.en


def _lock(paths: list[str], language: Language) -> int:
    """Write DIR/rulesets.lock: every version's digest, the locked ones as they were."""
    if len(paths) == 1 and not Path(paths[0]).is_dir():  # the reader's own path, said back with what is wrong
        missing = "cli.lock_no_folder" if not Path(paths[0]).exists() else "cli.lock_not_folder"
        say("rulesets lock", missing, language, path=paths[0])
        return EXIT_USAGE
    if len(paths) != 1:
        say("rulesets lock", "cli.lock_usage", language)
        return EXIT_USAGE
    try:
        folder = load_folder(paths[0], builtin_catalogue())
    except OperatorFileError as error:
        say("rulesets lock", "cli.not_locking", language, faults=error.said())
        return EXIT_REJECTED
    try:
        write_lock(Path(paths[0]), lock_text(folder))
    except OSError as error:
        say("rulesets lock", "cli.cannot_write", language, file=Path(paths[0]) / LOCK_FILE, error=os_error(error))
        return EXIT_USAGE
    for _, ruleset in folder.unlocked():
        print(f"{Text('cli.locked').render(language)} {ruleset.id}@{ruleset.version} {ruleset.digest}")
    return 0


def arguments(rulesets: argparse.ArgumentParser, helped: Helped, language: Language) -> None:
    rulesets.add_argument(
        "words", nargs="*", metavar=helped("cli.metavar_rulesets"), help=helped("cli.help_rulesets_words")
    )  # review 7: the one argument had no words of its own, and lock went unnamed
    language_option(rulesets, language)
